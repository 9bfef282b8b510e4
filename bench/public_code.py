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
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
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


NVCC_TIMEOUT = int(os.environ.get("GMPROF_PUBLIC_NVCC_TIMEOUT", "300"))
CACHE = Path(os.environ.get("GMPROF_PUBLIC_CACHE", "/tmp/gmprof-public-code-cache"))


def nvcc(src: Path, includes: list[Path], out_dir: Path, depends: list[str] = ()) -> str | None:
    """None if it compiles, else the first error line. Results are cached (GMPROF_PUBLIC_CACHE,
    default /tmp/gmprof-public-code-cache) by the command, the source's text and the texts of
    the local headers it reads (`depends`)."""
    flags = ["-cubin", "-arch=sm_90", "-std=c++17", "-w"] + [f"-I{d}" for d in includes]
    cmd = ["nvcc", *flags, "-o", str(out_dir / f"{src.stem}.cubin"), str(src)]
    # the headers' texts keep undecodable bytes as surrogates (a cp1252 comment byte)
    key = hashlib.sha256("\0".join([" ".join(flags), src.read_text(errors="replace"),
                                     *depends]).encode(errors="surrogateescape")).hexdigest()
    cached = CACHE / key
    if cached.exists():
        text = cached.read_text()
        return text or None
    # its own process group, so that a timeout ends ptxas and cicc too, not nvcc alone
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=NVCC_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return f"nvcc timed out after {NVCC_TIMEOUT} s"
    r = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
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
            src.write_text(pipeline.emit(program, None, NVRTC, header=False),
                           errors="surrogateescape")  # comment bytes kept as read
            rec["device_original"] = nvcc(src, includes, tmp, depends)
            if rec["device_original"] is not None:
                return rec
        jobs = {}
        for mode in MODES:
            try:
                plan = pipeline.plan(program, Mode.parse(mode))
                text, _ = pipeline.instrumented_source(program, plan,
                                                       NVRTC if device_only else NVCC)
            except Exception as exc:  # noqa: BLE001
                rec["instrumented"][mode] = f"gmprof: {exc.__class__.__name__}: {exc}"
                continue
            src = tmp / f"inst_{mode}_{path.name}"
            src.write_text(text, errors="surrogateescape")
            jobs[mode] = src
        # the modes compile side by side: a file whose instrumented code takes ptxas minutes
        # then costs that once, not once per mode, at the end of a run on many cores
        with ThreadPoolExecutor(len(MODES)) as threads:
            done = {m: threads.submit(nvcc, src, includes, tmp, depends)
                    for m, src in jobs.items()}
            for mode, fut in done.items():
                rec["instrumented"][mode] = fut.result()
    return rec


_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def _weight(path: Path, root: Path, seen: set | None = None) -> int:
    """Bytes of the file and of the local headers it includes (`#include "x"` found beside the
    includer, transitively): a cheap estimate of its cost, so that the largest start first."""
    seen = set() if seen is None else seen
    if path in seen or not path.is_file():
        return 0
    seen.add(path)
    data = path.read_bytes()
    return len(data) + sum(_weight(path.parent / m.decode(errors="replace"), root, seen)
                           for m in _QUOTED_INCLUDE.findall(data))


def run_suites(suites: list, jobs: int, limit: int | None, compile_: bool) -> list[list]:
    """The records of every suite's files, in sorted order per suite. suites: (name, root,
    every) with every = compile only every `every`-th file (in sorted order, from the first);
    all are read. One pool serves all suites, the largest files first, so that many cores stay
    busy to the end."""
    tasks = []
    for s, (name, root, every) in enumerate(suites):
        files = sorted(root.rglob("*.cu"))
        files = files[:limit] if limit else files
        tasks += [(s, i, (root, f, compile_ and i % every == 0)) for i, f in enumerate(files)]
    out = [[None] * sum(1 for t in tasks if t[0] == s) for s in range(len(suites))]
    order = sorted(tasks, key=lambda t: -_weight(t[2][1], t[2][0]))
    done = 0
    t0 = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        futures = {pool.submit(one_file, t[2]): t for t in order}
        for fut in as_completed(futures):
            s, i, (root, f, _) = futures[fut]
            try:
                out[s][i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a crash is a finding, listed
                out[s][i] = {"file": str(f.relative_to(root)), "functions": [],
                             "warnings": Counter(), "silent": [], "no_sites": [],
                             "inactive_kernels": 0, "original": None, "instrumented": {},
                             "seconds": 0.0, "compiled": False,
                             "error": f"crash: {exc.__class__.__name__}: {exc}"}
            done += 1
            if done % 25 == 0 or done == len(tasks):
                print(f"public_code: {done}/{len(tasks)} files, {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
    return out


def summary(name: str, root: Path, recs: list, compile_: bool, every: int = 1) -> dict:
    """The suite's numbers and failures, as plain data (the JSON written by --out)."""
    funcs = {}
    for r in recs:
        for where, start, fname, space, parsed, err in r["functions"]:
            key = (where, start)
            old = funcs.get(key)
            funcs[key] = (fname, space, parsed and (old is None or old[2]), err or
                          (old[3] if old else ""))
    kernels = [f for f in funcs.values() if f[1] == "global"]
    devices = [f for f in funcs.values() if f[1] != "global"]
    out = {"suite": name, "root": str(root), "files": len(recs),
           "kernels": [sum(f[2] for f in kernels), len(kernels)],
           "device_functions": [sum(f[2] for f in devices), len(devices)],
           "files_read": [sum(1 for r in recs if not r["error"]), len(recs)],
           "file_errors": [[r["file"], r["error"]] for r in recs if r["error"]],
           "not_parsed": [[f[0], f[1], f[3]] for f in sorted(funcs.values()) if not f[2]],
           "silent": [[r["file"], s] for r in recs for s in r["silent"]],
           "inactive_kernels": sum(r["inactive_kernels"] for r in recs),
           "no_sites": [list(x) for x in sorted({(r["file"].rsplit("/", 1)[0], s)
                                                  for r in recs for s in r["no_sites"]})],
           "warnings": dict(sorted(sum((Counter(r["warnings"]) for r in recs),
                                       Counter()).items())),
           "cpu_seconds": round(sum(r["seconds"] for r in recs), 1),
           "compile": None}
    if compile_:
        compiled = [r for r in recs if r.get("compiled")]
        ok = [r for r in compiled if r["original"] is None]
        dev = [r for r in compiled if r["original"] is not None and r["error"] is None
               and r.get("device_original", "no") is None]
        c = {"sample_every": every, "compiled": len(compiled),
             "original_compiles": len(ok), "device_code_compiles": len(dev),
             "original_fails": [[r["file"], r["original"]] for r in compiled
                                if r["original"] is not None and r.get("device_original", "no")
                                is not None]}
        for key, sel in (("whole", ok), ("device", dev)):
            for mode in MODES:
                c[f"{key}_{mode}"] = [sum(1 for r in sel if r["error"] is None
                                          and r["instrumented"].get(mode, "") is None), len(sel)]
        # a file gmprof cannot read counts against it (it is not instrumented at all)
        c["instrumented_fails"] = [[r["file"], m, e] for r in ok + dev
                                   for m, e in (r["instrumented"].items() if not r["error"]
                                                else [(m, r["error"]) for m in MODES])
                                   if e is not None]
        out["compile"] = c
    return out


def render(s: dict) -> str:
    out = [f"## {s['suite']} (`{s['root']}`)\n"]
    out.append("| measure | count | of | rate |")
    out.append("|---|---:|---:|---:|")
    for label, key in (("`__global__` functions parsed", "kernels"),
                       ("`__device__` functions parsed", "device_functions"),
                       (".cu files read without a whole-file error", "files_read")):
        a, b = s[key]
        out.append(f"| {label} | {a} | {b} | {_rate(a, b)} |")
    c = s["compile"]
    if c:
        if c["compiled"] < s["files"]:
            out.append(f"| (nvcc run on a sample: every {c['sample_every']}-th file in sorted "
                       f"order) | {c['compiled']} | {s['files']} | "
                       f"{_rate(c['compiled'], s['files'])} |")
        for label, key, what in (
                ("files whose original compiles (nvcc -cubin -arch=sm_90)", "whole",
                 "whole file"),
                ("other files whose device code alone compiles", "device", "device code")):
            n = c["original_compiles" if key == "whole" else "device_code_compiles"]
            out.append(f"| {label} | {n} | {c['compiled']} | {_rate(n, c['compiled'])} |")
            for mode in MODES:
                a, b = c[f"{key}_{mode}"]
                out.append(f"| of those, {what} compiles instrumented ({mode}) | {a} | {b} | "
                           f"{_rate(a, b)} |")
    out.append(f"| silently uninstrumented (no warning names them) | {len(s['silent'])} | | |")
    if s["inactive_kernels"]:
        out.append(f"| (kernels in `#if` branches nvcc's device pass leaves out, not counted) "
                   f"| {s['inactive_kernels']} | | |")
    out.append("")
    out.append("Warnings by kind: " + (", ".join(f"{k} {v}" for k, v in s["warnings"].items())
                                       or "none") + ".\n")
    if s["not_parsed"]:
        out.append(f"Functions not parsed ({len(s['not_parsed'])}):\n")
        out += [f"- `{f}` ({space}): {err}" for f, space, err in s["not_parsed"]]
        out.append("")
    out += [f"- whole file `{f}`: {e}" for f, e in s["file_errors"]]
    if c and c["original_fails"]:
        out.append(f"\nFiles whose original does not compile, device code alone neither "
                   f"(not counted; {len(c['original_fails'])}):\n")
        out += [f"- `{f}`: {e}" for f, e in c["original_fails"]]
    if c and c["instrumented_fails"]:
        out.append(f"\nInstrumented files that do not compile ({len(c['instrumented_fails'])}):\n")
        out += [f"- `{f}` [{m}]: {e}" for f, m, e in c["instrumented_fails"]]
    if s["no_sites"]:
        out.append(f"\nParsed, no site, no warning, though the text shows `[`, `->` or `*` "
                   f"({len(s['no_sites'])}):\n")
        out += [f"- `{d}`: {x}" for d, x in s["no_sites"]]
    if s["silent"]:
        out.append(f"\nSilently uninstrumented ({len(s['silent'])}):\n")
        out += [f"- `{f}`: {x}" for f, x in s["silent"]]
    out.append(f"\nRead and analysed in {s['cpu_seconds']:.1f} s of CPU ({s['files']} files).\n")
    return "\n".join(out)


def _rate(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suites", nargs="+", metavar="NAME=DIR[@K]",
                    help="a suite's name and its directory; @K compiles every K-th file only")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--limit", type=int, help="only the first N .cu files of each suite")
    ap.add_argument("--no-compile", action="store_true", help="parse only (no nvcc)")
    ap.add_argument("--out", type=Path, metavar="FILE.md",
                    help="also write the report to FILE.md and its numbers and failures to "
                         "FILE.json (schema gmprof.public_code/1)")
    args = ap.parse_args(argv)
    suites = []
    for spec in args.suites:
        name, _, directory = spec.partition("=")
        directory, _, every = directory.partition("@")
        root = Path(directory or name)
        if not root.is_dir():
            print(f"public_code: {root}: no such directory", file=sys.stderr)
            return 2
        suites.append((name, root.resolve(), int(every or 1)))
    compile_ = not args.no_compile
    if compile_ and shutil.which("nvcc") is None:
        print("public_code: no nvcc on PATH (use --no-compile)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    recs = run_suites(suites, args.jobs, args.limit, compile_)
    wall = time.perf_counter() - t0
    sums = [summary(name, root, r, compile_, every) for (name, root, every), r in zip(suites, recs)]
    nvcc_version = ""
    if compile_:
        v = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
        nvcc_version = (v.strip().splitlines() or [""])[-1]
    head = (f"# gmprof on public CUDA code\n\n`python3 bench/public_code.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}`: {wall:.0f} s wall, "
            f"{args.jobs} jobs, {os.cpu_count()} CPUs"
            + (f", {nvcc_version}" if nvcc_version else ", no compile") + ".\n")
    text = head + "\n" + "\n".join(render(s) for s in sums)
    print(text, flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"schema": "gmprof.public_code/1", "wall_seconds": round(wall, 1),
             "jobs": args.jobs, "nvcc": nvcc_version, "suites": sums}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
