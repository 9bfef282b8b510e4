"""One device-machine call that runs several GPU checks in turn, each a subprocess with its own
time limit, its output kept in OUT/<step>.log and a summary in OUT/session.json. Steps whose
script is not in this checkout are reported as skipped, so one command serves as the work lands.

    python3 bench/gpu_session.py --out $OUT --steps tests,counts,oracle --budget 560

Steps (name: command):
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

# name -> (script that must exist, command, seconds it may take at most)
STEPS = {
    "tests": ("tests", [PY, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider",
                        "-o", "addopts="], 240),
    "counts": ("bench/check_counts.py", [PY, "bench/check_counts.py", "--backend", "gpu"], 120),
    "oracle": ("bench/oracle.py", [PY, "bench/oracle.py", "--backend", "gpu", "--count", "300"],
               240),
    # the generated-kernel oracle at scale on the machine's CPU cores (CPU backend, issue 11)
    "scale": ("bench/oracle.py", [PY, "bench/oracle.py", "--backend", "cpu",
                                  "--jobs", str(os.cpu_count() or 1)], 580),
    "time": ("bench/time_to_answer.py", [PY, "bench/time_to_answer.py", "--out", "{out}/time"],
             540),
    "overheads": ("bench/overheads.py", [PY, "bench/overheads.py", "--backend", "gpu",
                                         "--modes", "default:shm,default:dm,default:both",
                                         "--repeat", "5"], 540),
    # range and gather counting (issue 17): the dm column with and without them, same run
    "ranges": ("bench/overheads.py", [PY, "bench/overheads.py", "--backend", "gpu",
                                      "--samples", "co,spmv", "--modes",
                                      "default:dm,default/noranges:dm,default:both",
                                      "--repeat", "5"], 300),
    # issue 24: counts past 2^32 (the oracle's large regime, the samples at their large size)
    # and bo_v1's large launch all static (its dm overhead)
    "large_oracle": ("tests/oracle/large.py", [PY, "bench/oracle.py", "--large", "200",
                                               "--scale", "large", "--backend", "gpu"], 580),
    "bo_large": ("bench/overheads.py", [PY, "bench/overheads.py", "--backend", "gpu",
                                        "--samples", "bo_v1", "--modes",
                                        "default:dm,default:both", "--repeat", "5"], 300),
    "large_samples": ("bench/check_large.py", [PY, "bench/check_large.py", "--backend", "gpu"],
                      580),
    "whole": ("bench/whole_programs.py", [PY, "bench/whole_programs.py", "--out",
                                          "{out}/whole"], 540),
    # issue 27: default mode with and without --access-stats, the paper's six at large size
    "stats": ("bench/stats_overhead.sh", ["sh", "bench/stats_overhead.sh"], 420),
    # issue 26: counts and overheads unchanged, before (a checkout in .before) and after
    "ba_oracle": ("bench/before_after.sh", ["bash", "bench/before_after.sh", ".before", "oracle",
                                            "{out}/before_after"], 540),
    "ba_overheads": ("bench/before_after.sh", ["bash", "bench/before_after.sh", ".before",
                                               "overheads", "{out}/before_after"], 540),
    # issue 28: the v1 -> v2 advice table with GPU times, and the sampling intervals' coverage
    "advice": ("bench/advice_pairs.py", [PY, "bench/advice_pairs.py", "--backend", "gpu",
                                         "--markdown"], 300),
    "sampling": ("bench/sampling_coverage.py", [PY, "bench/sampling_coverage.py", "--backend",
                                                "gpu", "--seeds", "20"], 420),
    "ncu": ("bench/ncu_access.py", [PY, "bench/ncu_access.py", "--out", "{out}/ncu_access.md"],
            300),
    # issue 27: measured warp requests as the hardware makes them (co's walks: 2,304 each)
    "convergence": ("bench/warp_convergence.py", [PY, "bench/warp_convergence.py", "--samples",
                                                  "co,em_v1,spmv", "--size", "small",
                                                  "--repeat", "2"], 240),
    # issue 25: Rodinia's applications built from their own sources (suites/rodinia-trim)
    "rodinia": ("bench/rodinia.py", [PY, "bench/rodinia.py", "--suite", "suites/rodinia-trim",
                                     "--backend", "gpu", "--out", "{out}/rodinia", "--jobs", "8",
                                     "--timeout", "120"], 540),
}
__doc__ += "".join(f"  {k}: {' '.join(v[1][1:])}\n" for k, v in STEPS.items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gmprof-gpu-session"))
    ap.add_argument("--steps", default=",".join(STEPS), help="comma-separated, in order")
    ap.add_argument("--budget", type=float, default=560,
                    help="seconds for the whole call; a step gets what is left, at most its own "
                         "limit")
    ap.add_argument("--extra", action="append", default=[], metavar="STEP=ARGS",
                    help="more arguments for a step, e.g. whole='--samples /x/cuda-samples'")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    extra = {}
    for e in args.extra:
        name, _, rest = e.partition("=")
        extra.setdefault(name, []).extend(rest.split())
    start = time.monotonic()
    summary = []
    for name in [s for s in args.steps.split(",") if s]:
        needs, command, limit = STEPS[name]
        left = args.budget - (time.monotonic() - start)
        entry = {"step": name}
        if not (ROOT / needs).exists():
            entry["status"] = f"skipped: {needs} is not in this checkout"
        elif left < 20:
            entry["status"] = "skipped: the call's budget is spent"
        else:
            command = [c.format(out=out) for c in command] + extra.get(name, [])
            t0 = time.monotonic()
            log = out / f"{name}.log"
            with open(log, "w") as f:
                try:
                    rc = subprocess.run(command, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT,
                                        timeout=min(limit, left - 10)).returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
            entry.update(status=f"rc={rc}", seconds=round(time.monotonic() - t0, 1),
                         command=" ".join(command))
            tail = log.read_text(errors="replace").splitlines()[-15:]
            print(f"== {name}: {entry['status']} in {entry['seconds']} s", flush=True)
            print("\n".join(tail), flush=True)
        summary.append(entry)
        print(json.dumps(entry), flush=True)
    (out / "session.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
