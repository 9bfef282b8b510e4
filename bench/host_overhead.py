"""gmprof's own host time at a sample's real size, without a GPU: the kernels are not run.

`gmprof profile samples/NAME --size SIZE --backend cpu` runs in this process with every kernel
launch replaced by nothing (the sizeof kernel excepted: it gives the user's types' sizes), so
what is left is gmprof's own Python and numpy: reading the source, static counts, copies,
output comparison, counter read-back, decoding, merging and the report. The self-check then
fails (the outputs were never computed); that is expected and not counted as an error.

Prints, per sample, the process CPU seconds (the box may be shared: CPU time is steadier than
wall time), the wall seconds per phase (gmprof/timing.py) and, with --profile N, the N
functions with the most cumulative time.

    python3 bench/host_overhead.py [--size large] [--profile 25] [NAME ...]
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def skip_kernels():
    """Launches do nothing but the sizeof kernel's (which the runtime reads)."""
    from gmprof.runtime import cpu_backend

    real = cpu_backend.CpuModuleAdapter.launch

    def launch(self, name, grid, block, args, shared_mem=0, timeout=None):
        if name == "__gmprof_sizeof":
            return real(self, name, grid, block, args, shared_mem, timeout)
        self.memory_errors = []
        return 0.0

    cpu_backend.CpuModuleAdapter.launch = launch


def one(name: str, size: str, profile: int) -> dict:
    from gmprof import cli, timing

    timing.reset()
    argv = ["profile", str(ROOT / "samples" / name), "--size", size, "--backend", "cpu",
            "--error-exitcode", "0"]
    prof = cProfile.Profile() if profile else None
    out, err = io.StringIO(), io.StringIO()
    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if prof:
            prof.enable()
        rc = cli.main(argv)
        if prof:
            prof.disable()
    row = {"sample": name, "size": size, "rc": rc, "cpu_s": round(time.process_time() - c0, 2),
           "wall_s": round(time.perf_counter() - t0, 2), "phases_s": timing.seconds()}
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(profile)
        row["profile"] = s.getvalue()
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--size", default="large")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="print the N functions with the most cumulative time")
    ap.add_argument("--json", help="write the rows here too")
    args = ap.parse_args(argv)
    # phases are timed only when GMPROF_TIMING is set before gmprof is imported
    os.environ.setdefault("GMPROF_TIMING", os.devnull)
    names = args.names or sorted(p.name for p in (ROOT / "samples").iterdir()
                                 if (p / "driver.py").is_file())
    skip_kernels()
    rows = []
    for name in names:
        row = one(name, args.size, args.profile)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "profile"}), flush=True)
        if "profile" in row:
            print(row["profile"])
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
