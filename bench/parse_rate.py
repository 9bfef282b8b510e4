"""Parse rate on real CUDA code: how many `__global__` functions the frontend reads.

Loads every .cu file under a directory (a checkout of NVIDIA's cuda-samples, say) with
`gmprof.frontend.program.load`, the file's own directory and every `Common/` directory of the
tree as -I include dirs, and counts kernels (`__global__`) and device functions (`__device__`,
`__host__ __device__`) and how many of them parsed. A function that several .cu files see (a
header, or a .cu included into another) is counted once, and as parsed only if every load that
saw it parsed it. Samples that use cooperative groups (a file in the sample's directory, or in
its translation unit, that includes cooperative_groups.h or says `cg::` /
`cooperative_groups::`) are reported apart and left out of the headline rate.

Functions defined under a `Common/` directory belong to no sample and are never excluded.

Nothing here may stop on one file: a GmprofError for a whole file (not UTF-8, an #error, an
unbalanced #if) and any other exception are counted and listed, and the kernels of such a file
(counted by the regex below) count as failures. As an independent check on the segmenter, the
`__global__` definitions of every file loaded are also counted with a regex over comment- and
string-blanked text; kernels the text shows but the frontend never reported (inside inactive #if
branches, or missed) are listed.

Times are for `load` only, after one warm-up that builds the LALR tables (reported apart).

Prints a markdown summary. Run:  python3 bench/parse_rate.py /tmp/cuda-samples [--all-failures]
"""
from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gmprof.errors import GmprofError  # noqa: E402
from gmprof.frontend.parser import get_parser  # noqa: E402
from gmprof.frontend.program import load  # noqa: E402

_CG = re.compile(r"#\s*include\s*[<\"]cooperative_groups|\bcg::|\bcooperative_groups::")
_SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".inl", ".inc")

# Comments, strings and character literals, blanked before the independent kernel count.
_BLANKABLE = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
# `__global__` up to the first '{' or ';' (a definition ends its head with '{').
_GLOBAL_HEAD = re.compile(r"\b__global__\b[^;{}]*([;{])")
_DEFINE_LINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n\\]|\\\n?)*", re.M)


@dataclass
class FunctionRecord:
    name: str
    space: str
    where: str  # file:line:col of the definition
    cg: bool
    parsed: bool = True
    reason: str | None = None  # the first failure message
    reason_at: str | None = None  # file:line:col of the failure
    reason_line: str = ""  # the source line at the failure
    macros_on_line: tuple = ()  # function-like or non-constant macros named on that line


@dataclass
class Report:
    files: int = 0
    seconds: float = 0.0
    build_seconds: float = 0.0  # building the LALR tables, once
    lines: int = 0  # lines read, every file of every translation unit (headers again each time)
    parses: int = 0  # device functions parsed, repeats included
    slowest: list = field(default_factory=list)  # (seconds, file)
    file_errors: list = field(default_factory=list)  # (file, message)
    crashes: list = field(default_factory=list)  # (file, traceback tail)
    functions: dict = field(default_factory=dict)  # key -> FunctionRecord
    text_kernels: dict = field(default_factory=dict)  # file -> independent count
    headers_alone: list = field(default_factory=list)  # headers no .cu reached, loaded alone
    cg_samples: set = field(default_factory=set)


def _rel(path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except (ValueError, OSError):
        return str(path)


def uses_cooperative_groups(text: str) -> bool:
    return _CG.search(_BLANKABLE.sub(_keep_includes, text)) is not None


def _keep_includes(m: re.Match) -> str:
    # blank comments but keep string literals: `#include "cooperative_groups.h"` must count
    return m.group(0) if m.group(0).startswith('"') else " "


def text_kernel_count(text: str) -> int:
    """`__global__` definitions, counted without the frontend (comments, strings and #define
    lines blanked; a head that reaches '{' before ';' is a definition)."""
    code = _BLANKABLE.sub(" ", text)
    code = _DEFINE_LINE.sub(" ", code)
    return sum(1 for m in _GLOBAL_HEAD.finditer(code) if m.group(1) == "{")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def sample_uses_cg(directory: Path, cache: dict) -> bool:
    if directory not in cache:
        cache[directory] = any(
            uses_cooperative_groups(_read_text(p)) for p in sorted(directory.rglob("*"))
            if p.suffix in _SOURCE_SUFFIXES and p.is_file())
    return cache[directory]


def measure(root: Path, limit: int | None = None) -> Report:
    report = Report()
    sources = sorted(root.rglob("*.cu"))
    if limit:
        sources = sources[:limit]
    common = sorted(d for d in root.rglob("Common") if d.is_dir())
    cg_cache: dict = {}
    t0 = time.perf_counter()
    get_parser()
    report.build_seconds = time.perf_counter() - t0
    for path in sources:
        _load_one(report, root, path, [path.parent, *common], common, cg_cache)
    if limit is None:
        # Headers with kernels that no .cu file reached (loaded at run time by NVRTC samples,
        # or included through a path the -I dirs above do not cover) are loaded on their own.
        for path in sorted(p for p in root.rglob("*") if p.suffix in _SOURCE_SUFFIXES[1:]):
            if _rel(path, root) not in report.text_kernels and path.is_file() and \
                    text_kernel_count(_read_text(path)):
                report.headers_alone.append(_rel(path, root))
                _load_one(report, root, path, [path.parent, path.parent.parent, *common],
                          common, cg_cache)
    return report


def _load_one(report: Report, root: Path, path: Path, includes: list, common: list,
              cg_cache: dict) -> None:
    report.files += 1
    t0 = time.perf_counter()
    failed = None
    try:
        tu = load(path, include_dirs=includes)
    except GmprofError as exc:
        failed = exc.render().splitlines()[0]
        report.file_errors.append((_rel(path, root), failed))
    except Exception:  # noqa: BLE001 - the point is to survive anything and say so
        tail = " | ".join(traceback.format_exc().strip().splitlines()[-3:])
        failed = "crash: " + tail
        report.crashes.append((_rel(path, root), tail))
    finally:
        elapsed = time.perf_counter() - t0
        report.seconds += elapsed
        report.slowest.append((elapsed, _rel(path, root)))
    if failed is not None:
        _whole_file_failure(report, root, path, failed, sample_uses_cg(path.parent, cg_cache))
        return
    own = [f for f in tu.files if f.path is not None and
           not any(_is_under(f.path, c) for c in common)]
    cg = sample_uses_cg(path.parent, cg_cache) or any(
        uses_cooperative_groups(f.text) for f in own)
    if cg:
        report.cg_samples.add(_rel(path.parent, root))
    report.lines += sum(f.text.count("\n") + 1 for f in tu.files)
    report.parses += sum(1 for fn in tu.functions if fn.parsed is not None)
    for f in tu.files:
        if f.path is not None:
            report.text_kernels.setdefault(_rel(f.path, root), text_kernel_count(f.text))
    for fn in tu.functions:
        key = (_rel(fn.source.path or fn.source.name, root), fn.segment.start)
        loc = fn.location
        # a function in Common/ belongs to no sample, whichever sample included it
        fn_cg = cg and not (fn.source.path is not None and
                            any(_is_under(fn.source.path, c) for c in common))
        rec = report.functions.get(key)
        if rec is None:
            rec = FunctionRecord(fn.name, fn.space, f"{key[0]}:{loc.line}:{loc.col}", fn_cg)
            report.functions[key] = rec
        rec.cg = rec.cg or fn_cg
        if fn.parsed is None and rec.parsed:
            rec.parsed = False
            err = fn.error
            rec.reason = err.message if err is not None else "not parsed"
            if err is not None and err.location is not None:
                el = err.location
                rec.reason_at = f"{_rel(el.file, root)}:{el.line}:{el.col}"
                rec.reason_line = (el.source_line or "").strip()
                rec.macros_on_line = tuple(
                    name for name in re.findall(r"[A-Za-z_]\w*", rec.reason_line)
                    if name in tu.macros and (tu.macros[name].function_like or
                                              not re.fullmatch(r"[\w.+\-*/() ]*",
                                                               tu.macros[name].body)))


def _whole_file_failure(report: Report, root: Path, path: Path, message: str, cg: bool) -> None:
    """A file that could not be loaded at all: its kernels (by the regex) are failures."""
    name = _rel(path, root)
    count = text_kernel_count(_read_text(path))
    report.text_kernels.setdefault(name, count)
    if cg:
        report.cg_samples.add(_rel(path.parent, root))
    for k in range(count):
        report.functions[(name, f"whole-file-{k}")] = FunctionRecord(
            f"(kernel {k + 1} of {count})", "global", name, cg, parsed=False,
            reason=f"whole file not loaded: {message}", reason_at=name)


def _is_under(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


# Failure categories, tried in order on (message, the source line at the failure, function's
# name): the first that matches names the failure. They describe the construct, not the parser
# state, so a reader can tell what kind of code is out of reach.
_CATEGORIES = [
    ("whole file not loaded", lambda m, line, macros: m.startswith("whole file not loaded")),
    ("builder crash (internal)", lambda m, line, macros: m.startswith("internal error")),
    ("conditional compilation", lambda m, line, macros: "#if" in m or "#error" in m),
    ("lambda", lambda m, line, macros:
     re.search(r"\[[=&]?[\w\s,&=]*\]\s*(\(|\{|mutable)", line) is not None),
    ("inline PTX / asm", lambda m, line, macros: re.search(r"\basm\b|__asm", line) is not None),
    ("kernel launch in device code", lambda m, line, macros: "<<<" in line),
    ("new / delete", lambda m, line, macros: re.search(r"\b(new|delete)\b", line) is not None),
    ("operator overloading", lambda m, line, macros: re.search(r"\boperator\b", line)
     is not None),
    ("member function defined outside its class", lambda m, line, macros: "'::" in m),
    ("C++ statement forms (range-for, structured bindings, if constexpr)",
     lambda m, line, macros: re.search(r"\bfor\s*\([^;]*[^:]:[^:]|\bauto\s*\[|constexpr", line)
     is not None),
    ("texture/surface reference", lambda m, line, macros: "texture" in line),
    ("macro in a place only its expansion explains", lambda m, line, macros: bool(macros)),
    ("template / type-name guess", lambda m, line, macros: "template name" in m or "'<'" in m
     or "'>'" in m or "type name" in m),
    ("other syntax", lambda m, line, macros: True),
]


def categorize(rec: FunctionRecord) -> str:
    message = rec.reason or ""
    for name, test in _CATEGORIES:
        if test(message, rec.reason_line, rec.macros_on_line):
            return name
    return "other syntax"


def _rate(parsed: int, total: int) -> str:
    return f"{100.0 * parsed / total:.1f}%" if total else "n/a"


def render(report: Report, root: Path, examples: int, all_failures: bool,
           seconds_wall: float) -> str:
    out = []
    funcs = list(report.functions.values())

    def counts(space_filter, cg_filter):
        sel = [f for f in funcs if space_filter(f.space) and cg_filter(f.cg)]
        return sum(f.parsed for f in sel), len(sel)

    is_kernel = lambda s: s == "global"  # noqa: E731
    is_device = lambda s: s in ("device", "host_device")  # noqa: E731
    no_cg = lambda cg: not cg  # noqa: E731
    only_cg = lambda cg: cg  # noqa: E731
    every = lambda cg: True  # noqa: E731

    out.append(f"# gmprof frontend parse rate: `{root}`\n")
    out.append(f"{report.files} files loaded in {report.seconds:.1f} s "
               f"({report.lines:,} lines read, headers again for each file that includes them; "
               f"{report.parses:,} device functions parsed, repeats included; "
               f"{report.build_seconds:.1f} s more to build the LALR tables once; "
               f"{seconds_wall:.1f} s wall in all); "
               f"{len(report.file_errors)} whole-file errors, {len(report.crashes)} crashes; "
               f"{len(report.cg_samples)} sample directories use cooperative groups.\n")
    out.append("| functions | parsed | total | rate |")
    out.append("|---|---:|---:|---:|")
    for label, space, cg in [
        ("**`__global__`, outside cooperative-groups samples**", is_kernel, no_cg),
        ("`__global__`, cooperative-groups samples", is_kernel, only_cg),
        ("`__global__`, all", is_kernel, every),
        ("`__device__` / `__host__ __device__`, outside CG samples", is_device, no_cg),
        ("`__device__` / `__host__ __device__`, all", is_device, every),
    ]:
        p, t = counts(space, cg)
        out.append(f"| {label} | {p} | {t} | {_rate(p, t)} |")
    out.append("")

    text_total = sum(report.text_kernels.values())
    found = Counter(k[0] for k, f in report.functions.items() if f.space == "global")
    missing = {name: n - found.get(name, 0) for name, n in report.text_kernels.items()
               if n > found.get(name, 0)}
    extra = {name: n - report.text_kernels.get(name, 0) for name, n in found.items()
             if n > report.text_kernels.get(name, 0)}
    if report.headers_alone:
        out.append(f"{len(report.headers_alone)} headers with kernels that no .cu file "
                   f"includes were loaded on their own: " +
                   ", ".join(f"`{h}`" for h in report.headers_alone) + ".\n")
    out.append(f"Independent check: a regex finds {text_total} `__global__` definitions in the "
               f"{len(report.text_kernels)} files loaded; the frontend reported "
               f"{sum(found.values())}.")
    if missing:
        out.append("Files with kernels the text shows but the frontend did not report "
                   "(inactive `#if` branches, or missed): " +
                   ", ".join(f"`{k}` ({v})" for k, v in sorted(missing.items())) + ".")
    if extra:
        out.append("Files where the frontend reported more kernels than the regex found: " +
                   ", ".join(f"`{k}` ({v})" for k, v in sorted(extra.items())) + ".")
    out.append("")

    failed = [f for f in funcs if not f.parsed]
    for title, sel in (("kernels outside cooperative-groups samples",
                        [f for f in failed if f.space == "global" and not f.cg]),
                       ("device functions outside cooperative-groups samples",
                        [f for f in failed if f.space != "global" and not f.cg]),
                       ("functions in cooperative-groups samples",
                        [f for f in failed if f.cg])):
        if not sel:
            continue
        out.append(f"## Failures: {title} ({len(sel)})\n")
        groups = defaultdict(list)
        for f in sel:
            groups[categorize(f)].append(f)
        out.append("| category | count | examples |")
        out.append("|---|---:|---|")
        for cat, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = members if all_failures else members[:examples]
            ex = "<br>".join(f"`{f.reason_at or f.where}` {f.name}: {_md(f.reason)}"
                             for f in shown)
            out.append(f"| {cat} | {len(members)} | {ex} |")
        out.append("")
    if report.file_errors:
        out.append(f"## Whole-file errors ({len(report.file_errors)})\n")
        for name, message in report.file_errors:
            out.append(f"- `{name}`: {_md(message)}")
        out.append("")
    if report.crashes:
        out.append(f"## Crashes ({len(report.crashes)})\n")
        for name, message in report.crashes:
            out.append(f"- `{name}`: {_md(message)}")
        out.append("")
    slow = sorted(report.slowest, reverse=True)[:3]
    if slow:
        out.append("Slowest files: " + ", ".join(f"`{n}` {s:.2f} s" for s, n in slow) + ".")
    return "\n".join(out)


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, help="a tree of CUDA sources (e.g. cuda-samples)")
    ap.add_argument("--examples", type=int, default=3, help="example locations per category")
    ap.add_argument("--all-failures", action="store_true", help="list every failure")
    ap.add_argument("--limit", type=int, default=None, help="only the first N .cu files")
    args = ap.parse_args(argv)
    if not args.directory.is_dir():
        print(f"parse_rate: {args.directory}: no such directory", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    report = measure(args.directory, args.limit)
    wall = time.perf_counter() - t0
    print(render(report, args.directory, args.examples, args.all_failures, wall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
