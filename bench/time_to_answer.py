"""Time to an answer: the whole processes a user waits for, side by side in one run.

Per sample (its launches at --size, default large on a GPU):
  native        a plain CuPy process launching the sample's kernels (tests/samples/gpu_run.py)
  gmprof 1st    `gmprof profile samples/NAME --size SIZE --no-self-check` with an empty gmprof
                cache (the native process does not check against the numpy reference either)
  gmprof 2nd    the same again (caches warm), and its own overhead: 2nd - native
  ncu           `ncu --set full` over the native process (same launches), if ncu is installed
  sanitizer     `compute-sanitizer` (memcheck) over the native process, if installed

Each figure is the wall time of one whole process (the median of --repeat when > 1). The gmprof
runs also say where their own seconds went, by phase (GMPROF_TIMING, gmprof/timing.py: start-up,
parse, analyze, static counts, instrument, compile, launch/copy/compare, read back, decode,
merge, self-check, report, other). Writes OUT/time-to-answer.md and .json, naming the device,
and the table to --doc (default docs/results/time_to_answer.md on a GPU). On a machine without
a GPU, --backend cpu times the gmprof columns on the CPU backend only (the others need a GPU).

    python3 bench/time_to_answer.py --out DIR [--samples jcb_v1,spmv,co] [--size large]
        [--repeat 1] [--deadline SECONDS] [--backend gpu|cpu] [--doc FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def samples() -> list[str]:
    return sorted(p.name for p in (ROOT / "samples").iterdir() if (p / "driver.py").is_file())


def timed(command, env, log, timeout) -> tuple[float | None, int | str]:
    t0 = time.monotonic()
    try:
        r = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout)
        rc = r.returncode
        log.write(f"$ {' '.join(command)}\nrc={rc}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}\n")
    except subprocess.TimeoutExpired:
        log.write(f"$ {' '.join(command)}\ntimed out after {timeout} s\n")
        return None, "timeout"
    return time.monotonic() - t0, rc


def device_name(backend: str) -> str:
    if backend == "cpu":
        import platform

        return f"CPU backend ({platform.machine()}, {os.cpu_count()} cores)"
    r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "GPU"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gmprof-time"))
    ap.add_argument("--samples", help="comma-separated (default: every sample)")
    ap.add_argument("--size", help="default: large on a GPU, small on the CPU backend")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each process (median)")
    ap.add_argument("--backend", default="gpu", choices=("gpu", "cpu"))
    ap.add_argument("--deadline", type=float, default=540,
                    help="seconds after which no new sample starts (listed as not run)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one process may run")
    ap.add_argument("--doc", help="also write the table here (default on a GPU: "
                    "docs/results/time_to_answer.md; '' for none)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.samples.split(",") if args.samples else samples()
    size = args.size or ("large" if args.backend == "gpu" else "small")
    gpu = args.backend == "gpu"
    ncu = shutil.which("ncu") if gpu else None
    sanitizer = shutil.which("compute-sanitizer") if gpu else None
    start = time.monotonic()
    rows = []
    log = open(out / "time-to-answer.log", "w")
    for name in names:
        row = {"sample": name}
        if time.monotonic() - start > args.deadline:
            row["note"] = "not run (deadline)"
            rows.append(row)
            continue
        cache = tempfile.mkdtemp(prefix="gmprof-cache-")
        env = dict(os.environ, GMPROF_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        native_cmd = [PY, "tests/samples/gpu_run.py", "--size", size, "--repeat", "0", name]
        # the native process does not check its outputs against the sample's numpy
        # reference: neither does this one (the two kernels' outputs are still compared)
        gm_cmd = [PY, "-m", "gmprof", "profile", f"samples/{name}", "--size", size,
                  "--backend", args.backend, "--no-self-check"]

        def measure(key, command, runs, phases=False):
            times, status = [], 0
            for _ in range(runs):
                spent = Path(cache) / f"{key}.timing.json"
                run_env = dict(env, GMPROF_TIMING=str(spent)) if phases else env
                t, rc = timed(command, run_env, log, args.timeout)
                if phases and spent.is_file():
                    try:
                        row[key[:-2] + "_phases"] = json.loads(spent.read_text())[
                            "phases"]
                    except (OSError, ValueError, KeyError):
                        pass
                if t is None or rc != 0:
                    status = rc
                    break
                times.append(t)
            row[key] = statistics.median(times) if times and status == 0 else None
            if status != 0:
                row.setdefault("errors", []).append(f"{key}: rc={status}")

        if gpu:
            measure("native_s", native_cmd, args.repeat)
        measure("gmprof_first_s", gm_cmd, 1, phases=True)
        measure("gmprof_second_s", gm_cmd, args.repeat, phases=True)
        if ncu:
            rep = Path(cache) / "ncu"
            measure("ncu_s", [ncu, "--set", "full", "-f", "-o", str(rep)] + native_cmd, 1)
        if sanitizer:
            measure("sanitizer_s", [sanitizer, "--error-exitcode", "3"] + native_cmd, 1)
        if row.get("native_s") is not None and row.get("gmprof_second_s") is not None:
            row["gmprof_own_s"] = row["gmprof_second_s"] - row["native_s"]
        if row.get("ncu_s") is not None and row.get("gmprof_second_s") is not None:
            row["meets_ncu"] = row["gmprof_second_s"] <= row["ncu_s"]
        shutil.rmtree(cache, ignore_errors=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    log.close()
    meta = {"device": device_name(args.backend), "backend": args.backend, "size": size,
            "repeat": args.repeat, "command": " ".join([Path(PY).name] + sys.argv),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (out / "time-to-answer.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    text = markdown(rows, meta)
    (out / "time-to-answer.md").write_text(text)
    doc = args.doc if args.doc is not None else (
        str(ROOT / "docs" / "results" / "time_to_answer.md") if gpu else "")
    if doc:
        Path(doc).write_text("# Time to an answer (issue 16)\n\n" + text)
    print(text)
    return 0


def markdown(rows, meta) -> str:
    def s(v):
        return "" if v is None else f"{v:.1f} s"

    lines = [f"Time to an answer on {meta['device']} ({meta['backend']} backend, size "
             f"{meta['size']}, whole processes, median of {meta['repeat']}; "
             f"`{meta['command']}`, {meta['date']}).", "",
             "| sample | native process | gmprof 1st | gmprof 2nd | gmprof own (2nd - native) "
             "| ncu --set full | compute-sanitizer | 2nd <= ncu |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "note" in r:
            lines.append(f"| {r['sample']} | {r['note']} | | | | | | |")
            continue
        meets = {True: "yes", False: "no"}.get(r.get("meets_ncu"), "")
        lines.append(f"| {r['sample']} | {s(r.get('native_s'))} | {s(r.get('gmprof_first_s'))} "
                     f"| {s(r.get('gmprof_second_s'))} | {s(r.get('gmprof_own_s'))} "
                     f"| {s(r.get('ncu_s'))} | {s(r.get('sanitizer_s'))} | {meets} |")
        if r.get("errors"):
            lines.append(f"|  | errors: {'; '.join(r['errors'])} | | | | | | |")
    lines += phase_table(rows)
    return "\n".join(lines) + "\n"


def phase_table(rows) -> list[str]:
    """gmprof's own seconds by phase, per sample and run (gmprof/timing.py): where the time
    between the native process and gmprof's goes."""
    runs = [(r["sample"], which, r[key]) for r in rows
            for which, key in (("1st", "gmprof_first_phases"), ("2nd", "gmprof_second_phases"))
            if r.get(key)]
    if not runs:
        return []
    names = list(dict.fromkeys(k for _, _, p in runs for k in p))
    lines = ["", "gmprof's seconds by phase (wall, each phase less its inner phases; "
             "launch/copy/compare holds the kernels' own time and the native helper launches; "
             "self-check is the sample's numpy reference and comparison):", "",
             "| sample | run | " + " | ".join(names) + " | sum |",
             "|---|---|" + "---|" * (len(names) + 1)]
    for sample, which, p in runs:
        lines.append(f"| {sample} | {which} | " + " | ".join(
            f"{p[k]:.2f}" if k in p else "" for k in names) + f" | {sum(p.values()):.1f} |")
    return lines


if __name__ == "__main__":
    sys.exit(main())
