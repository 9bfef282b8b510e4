"""Where a whole program's instrumented seconds go, kernel by kernel, on a GPU: one cuda-sample
built natively and with `gmprof nvcc` (as bench/whole_programs.py builds it), each run once
plainly (wall time) and once under Nsight Compute with only gpu__time_duration collected, and
the kernels' summed durations printed side by side (gmprof's own kernels, the fill and the fold,
under their names). Nsight Compute serialises launches, so its sums are each kernel's own time,
not the program's overlap.

    python3 bench/program_kernels.py eigenvalues [--suite suites/cs] [--timeout 120]
                                                 [--launch-count 5000]
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import whole_programs as W  # noqa: E402


def kernel_times(cmd, cwd, env, timeout, launch_count) -> dict:
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    p = subprocess.run([ncu, "--csv", "--metrics", "gpu__time_duration.sum", "--launch-count",
                        str(launch_count), *cmd], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith('"')]
    out: dict = defaultdict(lambda: [0, 0.0])
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        name = r.get("Kernel Name", "?").split("(")[0]
        v = float(r.get("Metric Value", "0").replace(",", "") or 0)
        unit = r.get("Metric Unit", "ns")
        scale = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0,
                 "ms": 1.0, "second": 1e3, "s": 1e3}.get(unit, 1e-6)
        out[name][0] += 1
        out[name][1] += v * scale
    if p.returncode != 0 and not out:
        print(p.stderr[-2000:])
    return dict(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample")
    ap.add_argument("--suite", default=str(ROOT / "suites" / "cs"))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--launch-count", type=int, default=5000)
    args = ap.parse_args()
    suite = Path(args.suite).resolve()
    d = W.candidates(suite)[args.sample]
    runs, _ = W.test_args(suite, args.sample)
    work = Path(tempfile.mkdtemp(prefix="gmprof-pk-"))
    from gmprof.program.build import find_nvcc

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    flags = ["-I", str(suite / "Common"), "-I", str(d), "-O2", "-std=c++17", *W.cmake_flags(d),
             "-arch=native", "-Wno-deprecated-gpu-targets"]
    native, inst = work / "native", work / "gmprof"
    log: list = []
    for exe, cmd in ((native, [find_nvcc()]), (inst, [*W.gmprof_cmd(), "nvcc"])):
        t = time.time()
        b = W.sh([*cmd, *flags, *W.sources(d), "-o", str(exe)], log, cwd=d, env=env)
        print(f"build {exe.name}: exit {b.returncode} in {time.time() - t:.1f} s", flush=True)
        if b.returncode:
            print("\n".join(log)[-3000:])
            return 1
    argv = runs[0] if runs else []
    for exe in (native, inst):
        t = time.time()
        p = subprocess.run([str(exe), *argv], cwd=d, env=dict(env, GMPROF_TIMING="1"),
                           capture_output=True, text=True, timeout=args.timeout)
        print(f"wall {exe.name}: {time.time() - t:.2f} s, exit {p.returncode}", flush=True)
        if exe is inst:
            print("\n".join(ln for ln in p.stderr.splitlines() if "gmprof" in ln)[-3000:])
    times = {}
    for exe in (native, inst):
        times[exe.name] = kernel_times([str(exe), *argv], d, env, args.timeout,
                                       args.launch_count)
    for exe in (native, inst):  # each kernel's registers, as ptxas allocated them
        cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
        r = subprocess.run([cuobjdump, "--dump-resource-usage", str(exe)], capture_output=True,
                           text=True)
        fn = None
        for ln in r.stdout.splitlines():
            if "Function" in ln:
                fn = ln.split("Function", 1)[1].strip(" :")
            elif "REG:" in ln and fn:
                print(f"{exe.name:7s} {fn[:70]:70s} {ln.strip()[:90]}")
    names = sorted(set(times["native"]) | set(times["gmprof"]),
                   key=lambda n: -times["gmprof"].get(n, [0, 0])[1])
    print(f"{'kernel':50s} {'launches':>9s} {'native ms':>10s} {'gmprof ms':>10s}")
    for n in names:
        a, b = times["native"].get(n, [0, 0.0]), times["gmprof"].get(n, [0, 0.0])
        print(f"{n[:50]:50s} {a[0]:>4d}/{b[0]:<4d} {a[1]:10.3f} {b[1]:10.3f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
