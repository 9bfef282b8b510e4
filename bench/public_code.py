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

NAME=DIR@K runs nvcc on every K-th file of that suite only (a sample, labelled so in the
output); every file is still read.
"""
from __future__ import annotations

import argparse
import hashlib
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
# the name is the identifier right before the parameter list, the parenthesised group that the
# body follows (so `__global__ void LAUNCH_BOUNDS(256, 2) k(...) {` names k)
_KERNEL = re.compile(r"\b__global__\b[^;{}]*?\b([A-Za-z_]\w*)\s*"
                     r"\((?:[^;{}()]|\([^;{}()]*\))*\)[^;{}()]*\{")
_ACCESS_TEXT = re.compile(r"[\w\])]\s*\[|->|[=(,;{}]\s*\*\s*[\w(]")
_INCLUDE_NAMES = {"common", "include", "inc", "util", "utils", "utilities"}
MODES = ("default", "basic")


def text_kernels(text: str) -> list[tuple[str, int]]:
    """Names and offsets of the `__global__` definitions in a text, by regex (independent of
    gmprof)."""
    code = _DEFINE_LINE.sub(lambda m: " " * len(m.group()),
                            _BLANKABLE.sub(lambda m: " " * len(m.group()), text))
    return [(m.group(1), m.start()) for m in _KERNEL.finditer(code)]


def _inactive(tu, source, offset: int) -> bool:
    """Is the offset in code that gmprof's #if evaluation left out (the other branch of
    `#if __CUDA_ARCH__ >= 120`)? Such kernels are not counted: nvcc does not compile them."""
    for seg in tu.segments.get(source, ()):
        if seg.start <= offset < seg.end:
            return not tu.active.get(seg, True)
    return False


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


CACHE = Path(os.environ.get("GMPROF_PUBLIC_CACHE", "/tmp/gmprof-public-code-cache"))


def nvcc(src: Path, includes: list[Path], out_dir: Path, depends: list[str] = ()) -> str | None:
    """None if it compiles, else the first error line. Results are cached (GMPROF_PUBLIC_CACHE,
    default /tmp/gmprof-public-code-cache) by the command, the source's text and the texts of
    the local headers it reads (`depends`)."""
    flags = ["-cubin", "-arch=sm_90", "-std=c++17", "-w"] + [f"-I{d}" for d in includes]
    cmd = ["nvcc", *flags, "-o", str(out_dir / "o.cubin"), str(src)]
    key = hashlib.sha256("\0".join([" ".join(flags), src.read_text(errors="replace"),
                                     *depends]).encode()).hexdigest()
    cached = CACHE / key
    if cached.exists():
        text = cached.read_text()
        return text or None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "nvcc timed out"
    if r.returncode == 0:
        result = None
    else:
        lines = [ln for ln in (r.stderr + r.stdout).splitlines() if "error" in ln]
        result = (lines[0] if lines else (r.stderr or r.stdout).strip()[-200:]).strip()
        result = result.replace(str(out_dir) + "/", "") or "nvcc failed"
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(result or "")
    return result


def one_file(args) -> dict:
    root, path, compile_ = args
    from gmprof.errors import GmprofError
    from gmprof.mode import Mode
    from gmprof.passes.pipeline import Pipeline
    from gmprof.passes.targets import NVCC, NVRTC

    rel = str(path.relative_to(root))
    includes = include_dirs(root, path)
    rec = {"file": rel, "functions": [], "warnings": Counter(), "error": None,
           "silent": [], "no_sites": [], "inactive_kernels": 0, "original": None, "instrumented": {}, "seconds": 0.0}
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
        # parsed functions with no access site although their text shows a subscript, `->` or
        # a dereference: each is either right (a local array, a member call) or a lost access
        sites = {id(facts.function): len(facts.sites) for facts in program.functions}
        for fn in tu.functions:
            if fn.parsed is None or sites.get(id(fn), 0) or f"{fn.name}:" in named:
                continue
            body = _BLANKABLE.sub(" ", fn.view)
            body = body[body.find("{"):]
            if _ACCESS_TEXT.search(body):
                rec["no_sites"].append(f"{fn.name} ({os.path.basename(fn.source.name)}:"
                                       f"{fn.source.line_col(fn.segment.start)[0]})")
        seen = Counter(f.name.rsplit("::", 1)[-1] for f in tu.functions if f.is_kernel)
        for f in dict.fromkeys(tu.files):  # a header included twice (guarded) is read once
            for name, offset in text_kernels(f.text):
                if seen[name] > 0:
                    seen[name] -= 1
                elif _inactive(tu, f, offset):
                    rec["inactive_kernels"] += 1
                elif name not in named:
                    rec["silent"].append(f"{name} ({f.name}): in the text, not read, no warning")
    rec["compiled"] = compile_
    if not compile_ or shutil.which("nvcc") is None:
        return rec
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        depends = [f.text for f in tu.files] if tu is not None else []
        rec["original"] = nvcc(path, includes, tmp, depends)
        if tu is None:
            return rec
        device_only = rec["original"] is not None
        if device_only:
            # host code that no longer compiles (cudaThreadSynchronize, missing host libraries):
            # compare the device code alone, as gmprof profile compiles it (host code blanked)
            src = tmp / f"native_{path.name}"
            src.write_text(pipeline.emit(program, None, NVRTC, header=False))
            rec["device_original"] = nvcc(src, includes, tmp, depends)
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
            rec["instrumented"][mode] = nvcc(src, includes, tmp, depends)
    return rec


def run_suite(name: str, root: Path, jobs: int, limit: int | None, compile_: bool,
              every: int = 1) -> list:
    """every: compile only every `every`-th file (in sorted order, from the first); all are
    read."""
    files = sorted(root.rglob("*.cu"))[:limit] if limit else sorted(root.rglob("*.cu"))
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(one_file, [(root, f, compile_ and i % every == 0)
                                        for i, f in enumerate(files)]))


def render(name: str, root: Path, recs: list, compile_: bool, every: int = 1) -> str:
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
        # a file gmprof cannot read counts against it (it is not instrumented at all)
        compiled = [r for r in recs if r.get("compiled")]
        if len(compiled) < len(recs):
            out.append(f"| (nvcc run on a sample: every {every}-th file in sorted order) | "
                       f"{len(compiled)} | {len(recs)} | {_rate(len(compiled), len(recs))} |")
        ok = [r for r in compiled if r["original"] is None]
        dev = [r for r in compiled if r["original"] is not None and r["error"] is None
               and r.get("device_original", "no") is None]
        for label, sel, what in (
                ("files whose original compiles (nvcc -cubin -arch=sm_90)", ok, "whole file"),
                ("other files whose device code alone compiles", dev, "device code")):
            out.append(f"| {label} | {len(sel)} | {len(compiled)} | "
                       f"{_rate(len(sel), len(compiled))} |")
            for mode in MODES:
                good = sum(1 for r in sel if r["error"] is None and
                           r["instrumented"].get(mode, "") is None)
                out.append(f"| of those, {what} compiles instrumented ({mode}) | {good} | "
                           f"{len(sel)} | {_rate(good, len(sel))} |")
    out.append(f"| silently uninstrumented (no warning names them) | {len(silent)} | | |")
    inactive = sum(r["inactive_kernels"] for r in recs)
    if inactive:
        out.append(f"| (kernels in `#if` branches nvcc's device pass leaves out, not counted) "
                   f"| {inactive} | | |")
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
    no_sites = sorted({(r["file"].rsplit("/", 1)[0], s) for r in recs for s in r["no_sites"]})
    if no_sites:
        out.append(f"\nParsed, no site, no warning, though the text shows `[`, `->` or `*` "
                   f"({len(no_sites)}):\n")
        for d, s in no_sites:
            out.append(f"- `{d}`: {s}")
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
        directory, _, every = directory.partition("@")
        every = int(every or 1)
        root = Path(directory or name)
        if not root.is_dir():
            print(f"public_code: {root}: no such directory", file=sys.stderr)
            return 2
        recs = run_suite(name, root, args.jobs, args.limit, not args.no_compile, every)
        print(render(name, root, recs, not args.no_compile, every), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
