#!/usr/bin/env python3
"""Whole programs from NVIDIA's cuda-samples, built with `gmprof nvcc`, run natively and
instrumented, outputs compared, reports decoded; writes docs/whole-programs.md.

    python3 bench/whole_programs.py --suite /tmp/suites/cuda-samples [--backend gpu|cpu]
        [--only NAME,...] [--timeout 300] [--out docs/whole-programs.md] [--json results.json]

The suite is a checkout of github.com/NVIDIA/cuda-samples (never committed here: fetch it and
`git clone` it to /tmp/suites/cuda-samples). Each sample is built from its directory's sources
(the add_executable line of its CMakeLists.txt) with the suite's Common/ on the include path:
natively (the real nvcc on a GPU; gmprof nvcc --gmprof-native on the CPU backend) and with
gmprof nvcc. Both binaries run with the suite's test arguments (test_args.json) in the sample's
directory; standard output is compared line by line after masking what legitimately differs
between two runs (times, rates, addresses, process ids), and the exit statuses must be equal.
Each instrumented run writes a report; the script decodes it with `gmprof report` and counts the
kernels and launches profiled. Failures are listed with their reason.

On the CPU backend only programs inside its runtime subset can run (no textures, graphs,
cooperative groups, libraries, multiple GPUs); those fail at build time with a plain error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Programs that need no extra library (cuBLAS, cuFFT, NPP, GL, Vulkan, MPI, ...), no display
# and no second GPU, and end on their own. Ordered roughly by how much of CUDA they use.
SAMPLES = [
    "vectorAdd", "matrixMul", "simpleTemplates", "template", "clock", "simplePrintf",
    "simpleVoteIntrinsics", "simpleAtomicIntrinsics", "asyncAPI", "simpleStreams",
    "simpleMultiCopy", "simpleHyperQ", "simpleOccupancy", "simpleZeroCopy", "simpleCallback",
    "systemWideAtomics", "mergeSort", "deviceQuery", "reduction", "scan", "shfl_scan",
    "histogram", "scalarProd", "sortingNetworks", "threadFenceReduction", "eigenvalues",
    "interval", "convolutionSeparable", "transpose", "alignedTypes", "BlackScholes",
    "binomialOptions", "fastWalshTransform", "quasirandomGenerator", "SobolQRNG", "dwtHaar1D",
    "FDTD3d", "dxtc", "HSOpticalFlow", "stereoDisparity", "LargeKernelParameter",
    "UnifiedMemoryPerf", "simpleAttributes", "simpleAssert", "StreamPriorities",
    "simpleCudaGraphs", "jacobiCudaGraphs", "warpAggregatedAtomicsCG", "binaryPartitionCG",
    "simpleCooperativeGroups", "newdelete", "streamOrderedAllocation", "graphMemoryNodes",
    "globalToShmemAsyncCopy", "simpleAWBarrier", "inlinePTX", "cppIntegration", "cppOverload",
    "MonteCarloMultiGPU", "simpleMultiGPU", "UnifiedMemoryStreams", "lineOfSight",
]

# what may differ between two correct runs: timings, rates, sizes of time, addresses, pids
_MASKS = [
    re.compile(r"(?i)(time|elapsed|throughput|bandwidth|gflop|gb/s|mb/s|msec|\bms\b|\bsec\b|"
               r"seconds|usec|speedup|rate|clock|cycles|perf|kernel time|processing)"),
    re.compile(r"0x[0-9a-fA-F]{6,}"),
    re.compile(r"\bpid\b|\bPID\b|process id"),
]
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def normalise(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if any(m.search(line) for m in _MASKS[:1]):
            line = _NUMBER.sub("#", line)
        line = _MASKS[1].sub("0x#", line)
        out.append(line)
    return out


def find_sample(suite: Path, name: str) -> Path | None:
    for d in sorted((suite / "Samples").glob(f"*/{name}")):
        if d.is_dir():
            return d
    return None


def sources(directory: Path) -> list[str]:
    """The sources of the sample's add_executable line (else every .cu/.cpp beside it)."""
    cm = directory / "CMakeLists.txt"
    if cm.is_file():
        text = cm.read_text()
        m = re.search(r"add_executable\(\s*[\w.+-]+\s+([^)]*)\)", text)
        if m:
            files = [f for f in m.group(1).split() if re.search(r"\.(cu|cpp|cc|c)$", f)]
            if files and all((directory / f).is_file() for f in files):
                return files
    return sorted(p.name for p in directory.iterdir() if p.suffix in (".cu", ".cpp"))


def test_args(suite: Path, name: str) -> tuple[list[list[str]], bool]:
    """(argument lists, one per run; skipped?) from the suite's test_args.json."""
    try:
        table = json.loads((suite / "test_args.json").read_text())
    except (OSError, json.JSONDecodeError):
        table = {}
    entry = table.get(name, {})
    if entry.get("skip"):
        return [], True
    if "runs" in entry:
        return [r.get("args", []) for r in entry["runs"]], False
    return [entry.get("args", [])], False


def sh(cmd, cwd=None, env=None, timeout=None, argv0=None) -> subprocess.CompletedProcess:
    try:
        # argv0: both builds of a program run under one name (programs print argv[0])
        return subprocess.run([argv0, *cmd[1:]] if argv0 else cmd, executable=cmd[0] if argv0
                              else None, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(cmd, 124, exc.stdout or "", f"timed out after {timeout} s")


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:200]
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "").strip()[:200]


def gmprof_cmd() -> list[str]:
    return [sys.executable, "-m", "gmprof.cli"]


def run_sample(suite: Path, name: str, backend: str, work: Path, timeout: float,
               arch: str) -> dict:
    res = {"sample": name, "build": "-", "run": "-", "output": "-", "kernels": 0, "launches": 0,
           "profiled": 0, "reason": ""}
    d = find_sample(suite, name)
    if d is None:
        res["reason"] = "not in this checkout"
        return res
    res["dir"] = str(d.relative_to(suite))
    runs, skip = test_args(suite, name)
    if skip:
        res["reason"] = "skipped by the suite's test_args.json"
        return res
    srcs = sources(d)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GMPROF_BACKEND=backend)
    flags = ["-I", str(suite / "Common"), "-I", str(d), "-O2", "-std=c++17"]
    if backend == "gpu":
        flags += [f"-arch={arch}", "-Wno-deprecated-gpu-targets"]
    native, inst = work / f"{name}.native", work / f"{name}.gmprof"
    t0 = time.time()
    if backend == "gpu":
        from gmprof.program.build import find_nvcc

        nb = sh([find_nvcc(), *flags, *srcs, "-o", str(native)], cwd=d, env=env)
    else:
        nb = sh([*gmprof_cmd(), "nvcc", "--gmprof-native", *flags, *srcs, "-o", str(native)],
                cwd=d, env=env)
    if nb.returncode != 0:
        res["build"] = "native fails"
        res["reason"] = first_error(nb.stderr + nb.stdout)
        return res
    ib = sh([*gmprof_cmd(), "nvcc", *flags, *srcs, "-o", str(inst)], cwd=d, env=env)
    res["build_s"] = round(time.time() - t0, 1)
    if ib.returncode != 0:
        res["build"] = "fails"
        res["reason"] = first_error(ib.stderr + ib.stdout)
        return res
    res["build"] = "ok"
    if "compiled as it was, without profiling" in ib.stderr:
        res["build"] = "ok (unprofiled file)"
        res["reason"] = first_error(ib.stderr.split("compiled as it was")[0])
    reports = []
    res["run"] = "ok"
    res["output"] = "same"
    for k, args in enumerate(runs):
        out_pattern = str(work / f"{name}-{k}-%p.json")
        rn = sh([str(native), *args], cwd=d, env=dict(env, GMPROF_OUTPUT=str(work / "n-%p.json")),
                timeout=timeout, argv0=f"./{name}")
        t1 = time.time()
        ri = sh([str(inst), *args], cwd=d, env=dict(env, GMPROF_OUTPUT=out_pattern,
                                                    GMPROF_QUIET="1"), timeout=timeout,
                argv0=f"./{name}")
        res["run_s"] = round(time.time() - t1, 1)
        if ri.returncode == 124:
            res["run"] = "timeout"
            res["reason"] = ri.stderr
            return res
        if rn.returncode != ri.returncode:
            res["run"] = f"status {ri.returncode} (native {rn.returncode})"
            res["reason"] = first_error(ri.stderr) or first_error(ri.stdout)
        a, b = normalise(rn.stdout), normalise(ri.stdout)
        if a != b and sorted(a) == sorted(b):
            # the same lines in another order: kernel printf from different threads, whose
            # order CUDA leaves unspecified
            res["output"] = "same lines, reordered"
        elif a != b:
            res["output"] = "differs"
            diff = next((f"native: {x!r} / gmprof: {y!r}" for x, y in zip(a, b) if x != y),
                        f"{len(a)} lines natively, {len(b)} with gmprof")
            res["reason"] = res["reason"] or diff[:300]
        reports += [str(p) for p in work.glob(f"{name}-{k}-*.json")]
    if reports:
        rp = sh([*gmprof_cmd(), "report", "--json", *reports], cwd=d, env=env, timeout=timeout)
        if rp.returncode == 0:
            data = json.loads(rp.stdout)
            res["kernels"] = len(data["kernels"])
            res["launches"] = sum(p["launches"] for p in data["processes"])
            res["profiled"] = sum(p["profiled"] for p in data["processes"])
            res["kernel_names"] = sorted(data["kernels"])
        else:
            res["report"] = "fails"
            res["reason"] = res["reason"] or first_error(rp.stderr)
    else:
        res["reason"] = res["reason"] or "no report written"
    return res


def ok(r: dict) -> bool:
    return r["build"].startswith("ok") and r["run"] == "ok" and r["output"].startswith("same") and \
        r.get("report") != "fails" and r["profiled"] > 0


def markdown(results: list[dict], backend: str, device: str, suite_rev: str) -> str:
    good = [r for r in results if ok(r)]
    lines = [
        "# Whole programs: NVIDIA cuda-samples built with `gmprof nvcc`", "",
        f"Generated by `bench/whole_programs.py` on the {backend} backend ({device}), "
        f"cuda-samples {suite_rev}. Each program was built natively and with `gmprof nvcc` "
        "(default mode, every launch profiled), both binaries were run with the suite's test "
        "arguments, and their standard output (times, rates and addresses masked) and exit "
        "statuses compared; the instrumented run's report was decoded with `gmprof report`.", "",
        f"**{len(good)} of {len(results)}** programs build, run with unchanged output, and "
        "report.", "",
        "| sample | build | run | output | kernels | launches profiled | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        note = r["reason"].replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| {r['sample']} | {r['build']} | {r['run']} | {r['output']} | "
                     f"{r['kernels']} | {r['profiled']} of {r['launches']} | {note} |")
    lines += ["", "How it was run:", "", "```",
              f"python3 bench/whole_programs.py --suite /tmp/suites/cuda-samples --backend {backend}",
              "```", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="/tmp/suites/cuda-samples")
    ap.add_argument("--backend", choices=("gpu", "cpu"), default=None)
    ap.add_argument("--only", help="comma-separated sample names")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", default=str(ROOT / "docs" / "whole-programs.md"))
    ap.add_argument("--json", help="also write the results as JSON")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from gmprof.program.build import choose_backend

    suite = Path(args.suite)
    if not (suite / "Samples").is_dir():
        print(f"no cuda-samples checkout at {suite} (fetch github:NVIDIA/cuda-samples and "
              "git clone it there)", file=sys.stderr)
        return 2
    backend = choose_backend(args.backend)
    names = args.only.split(",") if args.only else SAMPLES
    rev = sh(["git", "-C", str(suite), "rev-parse", "--short", "HEAD"]).stdout.strip() or "?"
    device = "CPU backend"
    if backend == "gpu":
        q = sh(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
        device = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() \
            else "GPU"
    results = []
    with tempfile.TemporaryDirectory(prefix="gmprof-wp-") as tmp:
        for name in names:
            w = Path(tmp) / name
            w.mkdir()
            r = run_sample(suite, name, backend, w, args.timeout, args.arch)
            results.append(r)
            print(f"{name:28s} build={r['build']:<10s} run={r['run']:<8s} output={r['output']:<8s}"
                  f" kernels={r['kernels']} profiled={r['profiled']}/{r['launches']} "
                  f"{r['reason'][:100]}", flush=True)
            shutil.rmtree(w, ignore_errors=True)
    text = markdown(results, backend, device, rev)
    Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"{sum(ok(r) for r in results)} of {len(results)} programs ok; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
