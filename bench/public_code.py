"""Public CUDA code bases through gmprof: parse rate, and whether instrumented code compiles.

For each tree given (a checkout of NVIDIA's cuda-samples, Rodinia, SHOC, PolyBench-ACC, ...; never
committed here), every .cu file is read with the suite's include directories (the file's own
directory and its parent, and the directories named common, include, inc, util(s) or utilities
beside it or beside its ancestors)
and, with nvcc -arch=sm_90 (device code only, `-cubin`, so missing host libraries do not count):
the original compiled, and the instrumented file (`gmprof instrument`, in default and in basic
mode) compiled. Reported per suite:

- kernels (`__global__`) and device functions that parsed, of those the frontend found;
- files whose original compiles, and of those how many compile instrumented, per mode; for the
  other files (host code that CUDA 13 no longer compiles, host libraries not installed), the same
  for their device code alone, as `gmprof profile` compiles it (host code blanked);
- silently uninstrumented: kernels that the text shows (a regex over comment- and string-blanked
  text of every file read) but that gmprof neither read nor named in a warning, plus functions
  that did not parse without a warning naming them. The target is 0.

Every failure is listed with its first error line. Run (2 processes; about 10 minutes for the
four suites on 2 cores):

    python3 bench/public_code.py samples=/tmp/cuda-samples rodinia=/tmp/rodinia \\
        shoc=/tmp/shoc polybench=/tmp/PolyBench-ACC [--jobs 2] [--limit N] [--no-compile]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_BLANKABLE = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_DEFINE_LINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n\\]|\\\n?)*", re.M)
_KERNEL = re.compile(r"\b__global__\b[^;{}]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\{")
_INCLUDE_NAMES = {"common", "include", "inc", "util", "utils", "utilities"}
MODES = ("default", "basic")


def text_kernels(text: str) -> list[str]:
    """Names of the `__global__` definitions in a text, by regex (independent of gmprof)."""
    code = _DEFINE_LINE.sub(" ", _BLANKABLE.sub(" ", text))
    return [m.group(1) for m in _KERNEL.finditer(code)]


def include_dirs(root: Path, path: Path) -> list[Path]:
    """The file's directory and its parent, then every directory named common, include, inc,
    util(s) or utilities beside the file or beside one of its ancestors up to the tree's root
    (cuda-samples' Common/, Rodinia's cuda/util, SHOC's src/common and src/cuda/common,
    PolyBench's CUDA/utilities)."""
    dirs = [path.parent, path.parent.parent]
    anc = path.parent
    while True:
        dirs += sorted(d for d in anc.iterdir() if d.is_dir() and d.name.lower() in _INCLUDE_NAMES)
        if anc == root or root not in anc.parents:
            break
        anc = anc.parent
    out = []
    for d in dirs:
        if d not in out and d.is_dir():
            out.append(d)
    return out


def nvcc(src: Path, includes: list[Path], out_dir: Path) -> str | None:
    """None if it compiles, else the first error line."""
    cmd = ["nvcc", "-cubin", "-arch=sm_90", "-std=c++17", "-w", "-o", str(out_dir / "o.cubin"),
           str(src)] + [f"-I{d}" for d in includes]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "nvcc timed out"
    if r.returncode == 0:
        return None
    lines = [ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln]
    return (lines[0] if lines else (r.stderr or r.stdout).strip()[-200:]).strip()


def one_file(args) -> dict:
    root, path, compile_ = args
    from gmprof.errors import GmprofError
    from gmprof.mode import Mode
    from gmprof.passes.pipeline import Pipeline
    from gmprof.passes.targets import NVCC, NVRTC

    rel = str(path.relative_to(root))
    includes = include_dirs(root, path)
    rec = {"file": rel, "functions": [], "warnings": Counter(), "error": None,
           "silent": [], "original": None, "instrumented": {}, "seconds": 0.0}
    t0 = time.perf_counter()
    try:
        pipeline = Pipeline()
        tu = pipeline.load(path, include_dirs=includes)
        program = pipeline.analyze(tu)
    except GmprofError as exc:
        rec["error"] = exc.render().splitlines()[0]
        tu = None
    except Exception as exc:  # noqa: BLE001 - a crash is a finding, listed
        rec["error"] = f"crash: {exc.__class__.__name__}: {exc}"
        tu = None
    rec["seconds"] = time.perf_counter() - t0
    if tu is not None:
        named = " ".join(w.message for w in tu.warnings)
        for w in tu.warnings:
            rec["warnings"][w.kind] += 1
        for fn in tu.functions:
            where = f"{os.path.relpath(fn.source.name, root) if os.path.isabs(fn.source.name) else fn.source.name}"
            rec["functions"].append((where, fn.segment.start, fn.name, fn.space,
                                     fn.parsed is not None, fn.error.message if fn.error else ""))
            if fn.parsed is None and f"{fn.name}:" not in named:
                rec["silent"].append(f"{fn.name}: not parsed, no warning")
        seen = Counter(f.name.rsplit("::", 1)[-1] for f in tu.functions if f.is_kernel)
        for f in tu.files:
            for name in text_kernels(f.text):
                if seen[name] > 0:
                    seen[name] -= 1
                elif name not in named:
                    rec["silent"].append(f"{name} ({f.name}): in the text, not read, no warning")
    if not compile_ or shutil.which("nvcc") is None:
        return rec
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rec["original"] = nvcc(path, includes, tmp)
        if tu is None:
            return rec
        device_only = rec["original"] is not None
        if device_only:
            # host code that no longer compiles (cudaThreadSynchronize, missing host libraries):
            # compare the device code alone, as gmprof profile compiles it (host code blanked)
            src = tmp / f"native_{path.name}"
            src.write_text(pipeline.emit(program, None, NVRTC, header=False))
            rec["device_original"] = nvcc(src, includes, tmp)
            if rec["device_original"] is not None:
                return rec
        for mode in MODES:
            try:
                plan = pipeline.plan(program, Mode.parse(mode))
                text, _ = pipeline.instrumented_source(program, plan,
                                                       NVRTC if device_only else NVCC)
            except Exception as exc:  # noqa: BLE001
                rec["instrumented"][mode] = f"gmprof: {exc.__class__.__name__}: {exc}"
                continue
            src = tmp / f"inst_{mode}_{path.name}"
            src.write_text(text)
            rec["instrumented"][mode] = nvcc(src, includes, tmp)
    return rec


def run_suite(name: str, root: Path, jobs: int, limit: int | None, compile_: bool) -> list:
    files = sorted(root.rglob("*.cu"))[:limit] if limit else sorted(root.rglob("*.cu"))
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(one_file, [(root, f, compile_) for f in files]))


def render(name: str, root: Path, recs: list, compile_: bool) -> str:
    out = [f"## {name} (`{root}`)\n"]
    funcs = {}
    for r in recs:
        for where, start, fname, space, parsed, err in r["functions"]:
            key = (where, start)
            old = funcs.get(key)
            funcs[key] = (fname, space, parsed and (old is None or old[2]), err or
                          (old[3] if old else ""))
    kernels = [f for f in funcs.values() if f[1] == "global"]
    devices = [f for f in funcs.values() if f[1] != "global"]
    errors = [r for r in recs if r["error"]]
    silent = [(r["file"], s) for r in recs for s in r["silent"]]
    pk = sum(f[2] for f in kernels)
    pd = sum(f[2] for f in devices)
    out.append("| measure | count | of | rate |")
    out.append("|---|---:|---:|---:|")
    out.append(f"| `__global__` functions parsed | {pk} | {len(kernels)} | "
               f"{_rate(pk, len(kernels))} |")
    out.append(f"| `__device__` functions parsed | {pd} | {len(devices)} | "
               f"{_rate(pd, len(devices))} |")
    out.append(f"| .cu files read without a whole-file error | {len(recs) - len(errors)} | "
               f"{len(recs)} | {_rate(len(recs) - len(errors), len(recs))} |")
    if compile_:
        ok = [r for r in recs if r["original"] is None and r["error"] is None]
        dev = [r for r in recs if r["original"] is not None and r["error"] is None
               and r.get("device_original", "no") is None]
        for label, sel, what in (
                ("files whose original compiles (nvcc -cubin -arch=sm_90)", ok, "whole file"),
                ("other files whose device code alone compiles", dev, "device code")):
            out.append(f"| {label} | {len(sel)} | {len(recs)} | {_rate(len(sel), len(recs))} |")
            for mode in MODES:
                good = sum(1 for r in sel if r["instrumented"].get(mode) is None)
                out.append(f"| of those, {what} compiles instrumented ({mode}) | {good} | "
                           f"{len(sel)} | {_rate(good, len(sel))} |")
    out.append(f"| silently uninstrumented (no warning names them) | {len(silent)} | | |")
    kinds = Counter()
    for r in recs:
        kinds.update(r["warnings"])
    out.append("")
    out.append("Warnings by kind: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
                                       or "none") + ".\n")
    failed = [f for f in funcs.values() if not f[2]]
    if failed:
        out.append(f"Functions not parsed ({len(failed)}):\n")
        for fname, space, _, err in sorted(failed):
            out.append(f"- `{fname}` ({space}): {err}")
        out.append("")
    for r in errors:
        out.append(f"- whole file `{r['file']}`: {r['error']}")
    if compile_:
        bad = [(r["file"], m, e) for r in recs
               for m, e in r["instrumented"].items() if e is not None]
        if bad:
            out.append(f"\nInstrumented files that do not compile ({len(bad)}):\n")
            for f, m, e in bad:
                out.append(f"- `{f}` [{m}]: {e}")
    if silent:
        out.append(f"\nSilently uninstrumented ({len(silent)}):\n")
        for f, s in silent:
            out.append(f"- `{f}`: {s}")
    secs = sum(r["seconds"] for r in recs)
    out.append(f"\nRead and analysed in {secs:.1f} s of CPU ({len(recs)} files).\n")
    return "\n".join(out)


def _rate(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suites", nargs="+", metavar="NAME=DIR")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, help="only the first N .cu files of each suite")
    ap.add_argument("--no-compile", action="store_true", help="parse only (no nvcc)")
    args = ap.parse_args(argv)
    print("# gmprof on public CUDA code\n")
    for spec in args.suites:
        name, _, directory = spec.partition("=")
        root = Path(directory or name)
        if not root.is_dir():
            print(f"public_code: {root}: no such directory", file=sys.stderr)
            return 2
        recs = run_suite(name, root, args.jobs, args.limit, not args.no_compile)
        print(render(name, root, recs, not args.no_compile), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
