#!/usr/bin/env python3
"""Whole programs from NVIDIA's cuda-samples, built natively and with `gmprof nvcc`, run, their
outputs compared and their reports decoded; a table (markdown and JSON) of what worked.

    python3 bench/whole_programs.py [--suite PATH/cuda-samples] --out DIR
        [--backend gpu|cpu] [--only NAME,...] [--jobs N] [--timeout S] [--deadline S]

The suite is a checkout of github.com/NVIDIA/cuda-samples: never committed here, pass its path.
The samples are those whose CMakeLists.txt needs no package but the CUDA toolkit and links no
library but the CUDA runtime (no cuBLAS, cuFFT, NPP, GL, Vulkan, MPI, OpenMP, driver API).
Each is built from the sources of its add_executable line, with the flags its CMakeLists.txt
adds that change what compiles (--extended-lambda, CUDA_SEPARABLE_COMPILATION as -rdc=true,
the suite's Common/ on the include path):

  native   the real nvcc (GPU backend), or `gmprof nvcc --gmprof-native` (g++ against the CPU
           backend's CUDA runtime, no profiling) on the CPU backend;
  gmprof   `gmprof nvcc` (default mode: every launch of every kernel gmprof instruments is
           profiled).

Both binaries run in the sample's directory under one argv[0] with the suite's test arguments
(test_args.json). Standard output is compared line by line after masking what legitimately
differs between two runs (lines that report times, rates or clocks have their numbers masked;
addresses), and the exit statuses must be equal. The instrumented run writes a report file per
process; `gmprof report --json` decodes and merges them, and the table counts the kernels and
launches profiled. A sample is ok when both build, the outputs and statuses are equal, and a
report with at least one profiled launch was decoded. Every failure has its reason.

`--trim DEST` writes a copy of the suite with only what these samples need (Common/ without GL,
the samples' directories without Windows projects and documents, test_args.json; about 45 MB)
and exits: small enough to carry to a GPU machine (suites/ is ignored by git).

Writes DIR/whole-programs.md and DIR/whole-programs.json (and DIR/logs/NAME.txt: the commands,
their standard error and the output difference). --deadline stops starting new samples (they
are listed as not run), so a run fits a time limit; --jobs runs samples in parallel.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run first (the rest follow in the suite's order): the classic introductory and
# concept samples, most of which end in seconds.
FIRST = [
    "vectorAdd", "matrixMul", "simpleTemplates", "template", "clock", "simplePrintf",
    "simpleVoteIntrinsics", "simpleAtomicIntrinsics", "asyncAPI", "simpleStreams",
    "simpleMultiCopy", "simpleHyperQ", "simpleOccupancy", "simpleZeroCopy", "simpleCallback",
    "systemWideAtomics", "mergeSort", "deviceQuery", "reduction", "scan", "shfl_scan",
    "histogram", "scalarProd", "sortingNetworks", "threadFenceReduction", "eigenvalues",
    "interval", "convolutionSeparable", "transpose", "alignedTypes", "BlackScholes",
    "binomialOptions", "fastWalshTransform", "quasirandomGenerator", "SobolQRNG", "dwtHaar1D",
    "FDTD3d", "dxtc", "HSOpticalFlow", "stereoDisparity", "LargeKernelParameter",
    "simpleAttributes", "simpleAssert", "StreamPriorities", "simpleCudaGraphs",
    "jacobiCudaGraphs", "warpAggregatedAtomicsCG", "binaryPartitionCG",
    "simpleCooperativeGroups", "newdelete", "streamOrderedAllocation", "graphMemoryNodes",
    "globalToShmemAsyncCopy", "simpleAWBarrier", "inlinePTX", "lineOfSight",
]
_OK_LIBS = {"CUDA::cudart", "CUDA::cudart_static"}

# what may differ between two correct runs: numbers on lines about time, rates and clocks;
# addresses
# (and what no two runs share: iterations a CPU loop made while it waited for the GPU
# (asyncAPI), the tensor-core samples' TFLOPS/TOPS, a process id in a shared memory name)
_TIMED = re.compile(r"(?i)(time|elapsed|throughput|bandwidth|gflop|flop/s|gb/s|mb/s|msec|"
                    r"\bms\b|\bsec\b|seconds|usec|\bus\b|speedup|rate|clock|cycles|perf|"
                    r"processing|ops/s|samples/s|per second|tflops|\btops\b|"
                    r"iterations while waiting|lshmName)")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


def normalise(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if _TIMED.search(line):
            line = _NUMBER.sub("#", line)
        out.append(_ADDRESS.sub("0x#", line))
    return out


_VALUE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _skeletons(lines: list[str]) -> list[str]:
    return sorted(_VALUE.sub("#", x) for x in lines)


def same_but_nondeterministic(native: list[str], again: list[str], gmprof: list[str]):
    """The instrumented output checked against two native runs that differ: lines the two
    native runs print alike must be printed alike; in a line they print differently, the
    numbers that differ are free (a timing, a time-seeded result) and the rest must match; a
    line whose words differ natively is free as a whole. Where that fails and the native runs
    print the same lines in another order (kernel printf from several blocks or child grids),
    the instrumented run must print the same lines, numbers free, in any order. Returns how
    many lines were free, or None when the output differs otherwise (or the runs print
    different numbers of lines: nothing to line up)."""
    if not len(native) == len(again) == len(gmprof):
        return None
    free = 0
    for x, y, z in zip(native, again, gmprof):
        if x == y:
            if z != x:
                break
            continue
        free += 1
        skeleton = _VALUE.sub("#", x)
        if skeleton == _VALUE.sub("#", y) and _VALUE.sub("#", z) != skeleton:
            break
    else:
        return free
    if _skeletons(native) == _skeletons(again) == _skeletons(gmprof):
        return sum(x != y for x, y in zip(native, again))
    return None


# -- the suite --------------------------------------------------------------------------------

def _cmake(directory: Path) -> str:
    try:
        return re.sub(r"#.*", "", (directory / "CMakeLists.txt").read_text())
    except OSError:
        return ""


def candidates(suite: Path) -> dict[str, Path]:
    """name -> directory of every sample that needs no library but the CUDA runtime."""
    out = {}
    for cm in sorted((suite / "Samples").glob("*/*/CMakeLists.txt")):
        text = _cmake(cm.parent)
        if "add_executable" not in text:
            continue
        if set(re.findall(r"find_package\((\w+)", text)) - {"CUDAToolkit"}:
            continue
        libs = set()
        for m in re.finditer(r"target_link_libraries\(([^)]*)\)", text):
            libs |= {x for x in m.group(1).split()[1:] if x not in ("PRIVATE", "PUBLIC",
                                                                   "INTERFACE")}
        if libs - _OK_LIBS:
            continue
        out[cm.parent.name] = cm.parent
    return out


def revision(suite: Path) -> str:
    """The checkout's commit, or the one its --trim copy was made from (.revision)."""
    if (suite / ".git").exists():
        return subprocess.run(["git", "-C", str(suite), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "?"
    try:
        return (suite / ".revision").read_text().strip()
    except OSError:
        return "(revision unknown)"


def trim(suite: Path, dest: Path) -> None:
    """A copy of the suite with what the candidates need (see the module's docstring)."""
    skip_dirs = {"doc", "GL", "lib", "UtilNPP"}
    skip_ext = {".sln", ".vcxproj", ".filters", ".docx", ".doc", ".pdf", ".user"}

    def ignore(directory, names):
        return [n for n in names if n in skip_dirs or Path(n).suffix in skip_ext]

    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(suite / "Common", dest / "Common", ignore=ignore, dirs_exist_ok=True)
    shutil.copy(suite / "test_args.json", dest / "test_args.json")
    (dest / ".revision").write_text(revision(suite) + "\n")
    for d in candidates(suite).values():
        shutil.copytree(d, dest / d.relative_to(suite), ignore=ignore, dirs_exist_ok=True)


def sources(directory: Path) -> list[str]:
    """The sources of the sample's add_executable line (else every .cu/.cpp beside it)."""
    m = re.search(r"add_executable\(\s*[\w.+-]+\s+([^)]*)\)", _cmake(directory))
    if m:
        files = [f for f in m.group(1).split() if re.search(r"\.(cu|cpp|cc|c)$", f)]
        if files and all((directory / f).is_file() for f in files):
            return files
    return sorted(p.name for p in directory.iterdir() if p.suffix in (".cu", ".cpp"))


def cmake_flags(directory: Path) -> list[str]:
    """The flags of the sample's CMakeLists.txt that change what compiles."""
    text = _cmake(directory)
    flags = []
    if "--extended-lambda" in text:
        flags.append("--extended-lambda")
    if re.search(r"CUDA_SEPARABLE_COMPILATION\s+ON", text):
        flags.append("-rdc=true")
    # the sample's own include directories (FDTD3d's inc/); ../../../Common is on the path
    for m in re.finditer(r"target_include_directories\(\s*[\w.+-]+([^)]*)\)", text):
        for word in m.group(1).split():
            if word not in ("PRIVATE", "PUBLIC", "INTERFACE") and "$" not in word and \
                    (directory / word).is_dir():
                flags += ["-I", str((directory / word).resolve())]
    return flags


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


# -- one sample -------------------------------------------------------------------------------

def sh(cmd, log, cwd=None, env=None, timeout=None, argv0=None) -> subprocess.CompletedProcess:
    log.append("$ " + " ".join(map(str, cmd)))
    link = None
    if argv0 and argv0.startswith("./") and cwd is not None:
        # a program that runs itself again by argv[0] (simpleIPC's spawnProcess execs
        # "./simpleIPC") finds the binary being run there, for the time of this run
        link = Path(cwd) / argv0[2:]
        if link.is_symlink():
            link.unlink()
        if link.exists():
            link = None
        else:
            link.symlink_to(Path(cmd[0]).resolve())
    try:
        # argv0: both builds of a program run under one name (programs print argv[0])
        p = subprocess.run([argv0, *cmd[1:]] if argv0 else cmd, executable=cmd[0] if argv0
                           else None, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else \
            (exc.stdout or "")
        p = subprocess.CompletedProcess(cmd, 124, out, f"timed out after {timeout} s")
    except OSError as exc:
        p = subprocess.CompletedProcess(cmd, 127, "", f"cannot run: {exc.strerror}")
    if link is not None:
        link.unlink(missing_ok=True)
    log.append(f"(status {p.returncode})")
    if p.stderr.strip():
        log.append(p.stderr.rstrip()[-6000:])
    return p


def first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"\berror\b", ln, re.I) and "warning" not in ln.lower():
            return ln[:240]
    return (lines[-1] if lines else "").strip()[:240]


def gmprof_cmd() -> list[str]:
    return [sys.executable, "-m", "gmprof.cli"]


_RUNNING = contextlib.nullcontext()  # main() makes it a semaphore with --run-jobs


def run_sample(suite: Path, name: str, d: Path, backend: str, work: Path, timeout: float,
               arch: str) -> dict:
    res = {"sample": name, "dir": str(d.relative_to(suite)), "build": "-", "run": "-",
           "output": "-", "report": "-", "kernels": 0, "launches": 0, "profiled": 0,
           "reason": "", "log": []}
    log = res["log"]
    runs, skip = test_args(suite, name)
    if skip:
        res["reason"] = "skipped by the suite's test_args.json"
        return res
    srcs = sources(d)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GMPROF_BACKEND=backend)
    flags = ["-I", str(suite / "Common"), "-I", str(d), "-O2", "-std=c++17", *cmake_flags(d)]
    if backend == "gpu":
        flags += [f"-arch={arch}", "-Wno-deprecated-gpu-targets"]
    native, inst = work / f"{name}.native", work / f"{name}.gmprof"
    t0 = time.time()
    if backend == "gpu":
        from gmprof.program.build import find_nvcc

        nb = sh([find_nvcc(), *flags, *srcs, "-o", str(native)], log, cwd=d, env=env)
    else:
        nb = sh([*gmprof_cmd(), "nvcc", "--gmprof-native", *flags, *srcs, "-o", str(native)],
                log, cwd=d, env=env)
    if nb.returncode != 0:
        res["build"] = "native fails"
        res["reason"] = first_error(nb.stderr + nb.stdout)
        return res
    t1 = time.time()
    ib = sh([*gmprof_cmd(), "nvcc", *flags, *srcs, "-o", str(inst)], log, cwd=d, env=env)
    res["build_s"] = {"native": round(t1 - t0, 1), "gmprof": round(time.time() - t1, 1)}
    if ib.returncode != 0:
        res["build"] = "fails"
        res["reason"] = first_error(ib.stderr + ib.stdout)
        return res
    res["build"] = "ok"
    if "compiled as it was, without profiling" in ib.stderr or \
            "compiled without profiling" in ib.stderr:
        res["build"] = "ok (a file unprofiled)"
        res["reason"] = first_error(ib.stderr)
    res["run"] = "ok"
    res["output"] = "same"
    res["run_s"] = {"native": 0.0, "gmprof": 0.0}
    with _RUNNING:
        return _run_and_report(res, runs, d, work, name, native, inst, env, log, timeout)


def _run_and_report(res, runs, d, work, name, native, inst, env, log, timeout):
    reports = []
    for k, args in enumerate(runs):
        pattern = str(work / f"report-{k}-%p.json")
        t2 = time.time()
        rn = sh([str(native), *args], log, cwd=d, env=env, timeout=timeout, argv0=f"./{name}")
        t3 = time.time()
        ri = sh([str(inst), *args], log, cwd=d, timeout=timeout, argv0=f"./{name}",
                env=dict(env, GMPROF_OUTPUT=pattern, GMPROF_QUIET="1"))
        res["run_s"]["native"] += round(t3 - t2, 2)
        res["run_s"]["gmprof"] += round(time.time() - t3, 2)
        # with GMPROF_TIMING=1 in the environment: the host runtime's seconds per phase
        res.setdefault("host_timing", []).extend(
            ln for ln in ri.stderr.splitlines() if ln.startswith("gmprof timing: "))
        if rn.returncode == 124:
            res["run"], res["output"] = "native timeout", "-"
            res["reason"] = f"the native program ran past {timeout} s"
            return res
        if ri.returncode == 124:
            res["run"], res["output"] = "timeout", "-"
            res["reason"] = f"ran past {timeout} s (natively {t3 - t2:.1f} s)"
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
            # the program's own nondeterminism (a time-seeded rand(), timings the mask misses,
            # the order child launches run in): a second native run differs from the first
            # too. Not ok (the instrumented output is not verified), listed apart
            again = sh([str(native), *args], log, cwd=d, env=env, timeout=timeout,
                       argv0=f"./{name}")
            if again.returncode == rn.returncode and normalise(again.stdout) != a:
                res["output"] = "differs, as two native runs do"
                first = next((f"native: {x!r} / native again: {y!r}" for x, y in
                              zip(a, normalise(again.stdout)) if x != y), "")
                diff = f"nondeterministic: {first}"
                free = same_but_nondeterministic(a, normalise(again.stdout), b)
                if free is not None:
                    # verified but for what two native runs print differently
                    res["output"] = f"same but {free} nondeterministic line(s)"
                    diff = ""
            res["reason"] = res["reason"] or diff[:300]
            import difflib

            log.append("output difference:\n" + "\n".join(list(difflib.unified_diff(
                a, b, "native", "gmprof", lineterm="", n=1))[:80]))
        reports += sorted(str(p) for p in work.glob(f"report-{k}-*.json"))
    if not reports:
        res["report"] = "none written"
        res["reason"] = res["reason"] or "no report file written"
        return res
    # (decoding a 16M-element array's counters takes a while on a slow machine)
    rp = sh([*gmprof_cmd(), "report", "--json", *reports], log, cwd=d, env=env,
            timeout=3 * timeout)
    if rp.returncode != 0:
        res["report"] = "decode fails"
        res["reason"] = res["reason"] or first_error(rp.stderr)
        return res
    doc = json.loads(rp.stdout)
    res["report"] = "ok"
    res["kernels"] = len(doc["kernels"])
    res["kernel_names"] = [k["kernel"] for k in doc["kernels"]]
    procs = doc["program"]["processes"]
    res["launches"] = sum(p["launches"] for p in procs)
    res["profiled"] = sum(p["profiled"] for p in procs)
    if res["profiled"] == 0 and not res["reason"]:
        res["reason"] = "no launch profiled (" + ("; ".join(doc["program"]["notes"])[:200] or
                                                  "no instrumented kernel launched") + ")"
    # launches made from device code by profiled kernels (dynamic parallelism) ran unprofiled
    res["device_launches"] = sum(r["count"] for p in procs for r in p.get("device_launches", []))
    if res["device_launches"] and not res["reason"]:
        res["reason"] = (f"{res['device_launches']} launch(es) from device code (dynamic "
                         "parallelism) ran the original kernel, unprofiled")
    return res


def ok(r: dict) -> bool:
    return r["build"].startswith("ok") and r["run"] == "ok" and \
        r["output"].startswith("same") and r["report"] == "ok" and r["profiled"] > 0


# -- the table --------------------------------------------------------------------------------

def markdown(results: list[dict], meta: dict) -> str:
    good = [r for r in results if ok(r)]
    ran = [r for r in results if r["reason"] != "not run (--deadline)"]
    lines = [
        "# Whole programs: NVIDIA cuda-samples built with `gmprof nvcc`", "",
        f"`bench/whole_programs.py` on the {meta['backend']} backend ({meta['device']}), "
        f"cuda-samples {meta['suite_rev']}, {meta['date']}. Each program was built natively and "
        "with `gmprof nvcc` (default mode, every launch profiled); both ran with the suite's "
        "test arguments; standard output (numbers on lines about times and rates, and "
        "addresses, masked) and exit statuses were compared; the instrumented run's report "
        "files were decoded and merged with `gmprof report`.", "",
        f"**{len(good)} of {len(ran)}** programs run built, ran with unchanged output and exit "
        f"status, and reported ({len(results)} candidates: no library but the CUDA runtime).",
        "",
    ]
    nondet = [r["sample"] for r in results if r["output"] == "differs, as two native runs do"]
    if nondet:
        lines += [f"{len(nondet)} more ran and reported but print what differs between two native "
                  f"runs too (not verified): {', '.join(nondet)}.", ""]
    masked = [r["sample"] for r in results if r["output"].startswith("same but")]
    if masked:
        lines += [f"Of the ok programs, {len(masked)} print lines that differ between two native "
                  "runs (timings, time-seeded results): checked with those numbers free and "
                  f"the rest of the output equal: {', '.join(masked)}.", ""]
    timed = [(r["sample"], r["run_s"]["gmprof"] / r["run_s"]["native"]) for r in results
             if r["run"] == "ok" and r.get("run_s", {}).get("native") and
             r["run_s"].get("gmprof")]  # (a run timed at 0.0 s has no ratio)
    if timed:
        geo = math.exp(sum(math.log(x) for _, x in timed) / len(timed))
        worst = sorted(timed, key=lambda t: -t[1])[:5]
        lines += [f"Wall time, instrumented / native, over the {len(timed)} programs that ran: "
                  f"geometric mean {geo:.2f}x; highest " +
                  ", ".join(f"{n} {x:.1f}x" for n, x in worst) + ".", ""]
    lines += [
        "| sample | build | run | output | report | kernels | launches profiled | wall s "
        "native / gmprof | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        note = r["reason"].replace("|", "\\|").replace("\n", " ")[:180]
        t = r.get("run_s") or {}
        wall = f"{t['native']:.2f} / {t['gmprof']:.2f}" if t.get("native") is not None and \
            r["run"] not in ("-",) else "-"
        lines.append(f"| {r['sample']} | {r['build']} | {r['run']} | {r['output']} | "
                     f"{r['report']} | {r['kernels']} | {r['profiled']} of {r['launches']} | "
                     f"{wall} | {note} |")
    lines += ["", "Command:", "", "```", meta["command"], "```", ""]
    return "\n".join(lines)


def device_name(backend: str) -> tuple[str, str]:
    """(device, arch) on a GPU: nvidia-smi's name and compute capability."""
    if backend != "gpu":
        return "CPU backend", ""
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                           capture_output=True, text=True)
        name, cap = [x.strip() for x in q.stdout.strip().splitlines()[0].split(",")]
        return name, "sm_" + cap.replace(".", "")
    except (OSError, IndexError, ValueError):
        return "GPU", "sm_90"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", "--samples", default=str(ROOT / "suites" / "cuda-samples"),
                    help="a cuda-samples checkout, or its --trim copy (default: suites/"
                         "cuda-samples here)")
    ap.add_argument("--out", help="directory for the table and logs")
    ap.add_argument("--trim", metavar="DEST", help="only copy what the samples need to DEST")
    ap.add_argument("--backend", choices=("gpu", "cpu"), default=None)
    ap.add_argument("--only", help="comma-separated sample names")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--timeout", type=float, default=120, help="seconds per program run")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds after which no sample is started")
    ap.add_argument("--arch", help="nvcc -arch (default: the GPU's)")
    ap.add_argument("--run-jobs", type=int, default=0,
                    help="programs running at once (builds still use --jobs; default: as many "
                         "as --jobs). Wall times are only comparable with few: 14 programs "
                         "sharing one GPU and the CPUs with builds made ratios swing both ways")
    args = ap.parse_args(argv)
    global _RUNNING
    if args.run_jobs > 0:
        _RUNNING = threading.Semaphore(args.run_jobs)
    start = time.time()
    sys.path.insert(0, str(ROOT))
    from gmprof.program.build import choose_backend

    suite = Path(args.suite).resolve()
    if not (suite / "Samples").is_dir():
        print(f"no cuda-samples checkout at {suite}", file=sys.stderr)
        return 2
    if args.trim:
        trim(suite, Path(args.trim))
        print(f"wrote {args.trim}")
        return 0
    if not args.out:
        ap.error("--out is required")
    backend = choose_backend(args.backend)
    device, arch = device_name(backend)
    arch = args.arch or arch
    found = candidates(suite)
    if args.only:
        names = args.only.split(",")
    else:
        names = [n for n in FIRST if n in found] + [n for n in found if n not in FIRST]
    rev = revision(suite)
    out = Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="gmprof-wp-"))

    def one(name):
        if args.deadline is not None and time.time() - start > args.deadline:
            return {"sample": name, "build": "-", "run": "-", "output": "-", "report": "-",
                    "kernels": 0, "launches": 0, "profiled": 0,
                    "reason": "not run (--deadline)", "log": []}
        d = found.get(name)
        if d is None:
            return {"sample": name, "build": "-", "run": "-", "output": "-", "report": "-",
                    "kernels": 0, "launches": 0, "profiled": 0,
                    "reason": "not a candidate in this checkout", "log": []}
        w = tmp / name
        w.mkdir()
        try:
            r = run_sample(suite, name, d, backend, w, args.timeout, arch)
        except Exception as exc:  # a bench bug must not lose the other samples' results
            r = {"sample": name, "build": "-", "run": "-", "output": "-", "report": "-",
                 "kernels": 0, "launches": 0, "profiled": 0,
                 "reason": f"bench error: {exc!r}"[:240], "log": []}
        shutil.rmtree(w, ignore_errors=True)
        (out / "logs" / f"{name}.txt").write_text("\n".join(r["log"]) + "\n")
        print(f"{name:28s} build={r['build']:<10s} run={r['run']:<8s} "
              f"output={r['output']:<8s} report={r['report']} "
              f"profiled={r['profiled']}/{r['launches']} {r['reason'][:100]}", flush=True)
        return r

    meta = {"backend": backend, "device": device, "suite_rev": rev,
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "command": "python3 bench/whole_programs.py " + " ".join(
                sys.argv[1:] if argv is None else argv)}
    done: dict = {}
    lock = threading.Lock()

    def write_tables():
        # after every sample: a run stopped by its caller's time limit keeps what it did
        with lock:
            results = [done[n] for n in names if n in done]
            meta["seconds"] = round(time.time() - start)
            meta["finished"] = len(results) == len(names)
            (out / "whole-programs.md").write_text(markdown(results, meta))
            (out / "whole-programs.json").write_text(json.dumps(
                {"meta": meta, "results": results}, indent=2))
            return results

    def one_and_write(name):
        r = one(name)
        r.pop("log", None)
        done[name] = r
        write_tables()
        return r

    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one_and_write, names))
    shutil.rmtree(tmp, ignore_errors=True)
    results = write_tables()
    print(f"{sum(ok(r) for r in results)} of {len(results)} programs ok in {meta['seconds']} s; "
          f"wrote {out}/whole-programs.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
