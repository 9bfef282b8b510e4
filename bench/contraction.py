"""Whether gmprof's instrumented copy of a kernel is compiled to the same floating-point
arithmetic as the kernel itself: nvcc contracts a multiply and an add into one fma (`-fmad=true`,
its default) by heuristics that see the code around them, so hooks placed among the user's
statements can change which products are fused, and so the values the program computes
(Rodinia myocyte on the GPU, docs/whole-programs.md). Needs nvcc, no GPU: the file and gmprof's
translation of it (the GPU backend's, as `gmprof nvcc` writes it) are compiled to PTX with
`-arch=sm_90 -O3 -lineinfo`, and per kernel (with the device functions it calls and nvcc left
out of line) the fma / mul / add / sub instructions are counted; with --lines, the source lines
whose arithmetic differs (opcodes and immediate operands, registers left out), which points at
the statements concerned where the totals alone cancel out. Exit status 1 when a kernel's
arithmetic differs.

    python3 bench/contraction.py FILE.cu [--mode default] [-I DIR] [-D NAME[=VALUE]]
        [--nvcc-flags=-O3,...] [--lines] [--keep DIR] [--stand-in FORM] [--at-run-end]

--stand-in and --at-run-end are experiments on the hooks' form and place (what they count is
then wrong): the device-memory hooks (dm, dm_pair, dm_range) replaced by a stand-in (`empty`;
`atomic`, one atomicAdd; `branch`, an atomicAdd under an if; `asm`, one `red.global` in inline
asm; `call`, a __noinline__ function's call; `count`, two atomicAdds, the site's and the
element's found without a branch), and each run of consecutive simple statements'
hooks moved after the run's last statement (valid only where the run changes nothing the
hooks' addresses read).

Static counts: they show that the arithmetic was compiled differently, not which values
change (unrolling and duplication move them too); PTX, not SASS (ptxas may still contract a
`mul.f32` and an `add.f32` that have no rounding modifier). Template kernels launched only
through host templates are not instantiated here (gmprof nvcc discovers them).
"""
from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_HEADER = re.compile(r"^(?:\.visible\s+|\.weak\s+)?(\.entry|\.func)\s+(?:\([^)]*\)\s*)?([\w$.]+)")
_ARITH = re.compile(r"((?:fma|mul|add|sub)(?:\.rn|\.rz|\.rm|\.rp)?(?:\.ftz)?(?:\.sat)?\.f(?:32|64))"
                    r"\s+([^;]*);")
_IMMEDIATE = re.compile(r"^(?:0[fFdD][0-9A-Fa-f]+|-?[0-9.]+)$")
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
KINDS = ("fma", "mul", "add", "sub")


@dataclass
class Function:
    """One PTX function: its arithmetic per source line and the functions it calls."""
    name: str
    entry: bool
    by_line: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    calls: set = field(default_factory=set)


def parse_ptx(text: str) -> dict:
    """name -> Function, from PTX compiled with -lineinfo (without it, every op is line 0)."""
    files, funcs = {}, {}
    cur, loc, call_pending = None, ("?", 0), False
    for line in text.split("\n"):
        m = _FILE.match(line)
        if m:
            files[m.group(1)] = Path(m.group(2)).name
            continue
        m = _HEADER.match(line)
        if m:
            if line.rstrip().endswith(";"):  # a declaration, its body comes later
                continue
            cur = funcs.setdefault(m.group(2), Function(m.group(2), m.group(1) == ".entry"))
            loc, call_pending = ("?", 0), False
            continue
        if cur is None:
            continue
        s = line.strip()
        if call_pending and s:
            cur.calls.add(s.rstrip(",").strip())
            call_pending = False
            continue
        if s.startswith("call"):
            rest = re.sub(r"^call(?:\.uni)?\s*(?:\([^)]*\),)?\s*", "", s)
            if rest:
                cur.calls.add(rest.split(",")[0].strip())
            else:
                call_pending = True
            continue
        m = _LOC.match(s)
        if m:
            loc = (m.group(1), int(m.group(2)))
            continue
        m = _ARITH.match(s)
        if m:
            ops = [o.strip() for o in m.group(2).split(",")[1:]]
            shape = ",".join(o if _IMMEDIATE.match(o) else "r" for o in ops)
            cur.by_line[loc][f"{m.group(1)} {shape}"] += 1
    for f in funcs.values():  # (PTX lists its .file directives after the functions)
        f.by_line = {(files.get(k[0], k[0]), k[1]): v for k, v in f.by_line.items()}
    return funcs


def reachable(funcs: dict, root: str) -> list:
    """root and the functions it calls, transitively (those defined in this PTX)."""
    seen, todo = [], [root]
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.append(f)
        todo.extend(sorted(funcs[f].calls))
    return seen


def arithmetic(funcs: dict, root: str) -> dict:
    """(file, line) -> Counter of ops, over root and what it calls."""
    total = collections.defaultdict(collections.Counter)
    for f in reachable(funcs, root):
        for where, ops in funcs[f].by_line.items():
            total[where].update(ops)
    return total


def totals(by_line: dict) -> dict:
    """fma / mul / add / sub counts (f32 and f64 together)."""
    out = dict.fromkeys(KINDS, 0)
    for ops in by_line.values():
        for op, n in ops.items():
            out[op.split(".")[0]] += n
    return out


def line_differences(native: dict, copy: dict) -> list:
    """[(where, only natively, only in the copy)] for the lines whose arithmetic differs."""
    out = []
    for where in sorted(set(native) | set(copy), key=lambda w: (str(w[0]), w[1])):
        a, b = native.get(where, collections.Counter()), copy.get(where, collections.Counter())
        if a != b:
            out.append((where, dict(a - b), dict(b - a)))
    return out


def demangle(names: list) -> dict:
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return dict(zip(names, r.stdout.split("\n"))) if r.returncode == 0 else {n: n for n in names}


def pairs(native: dict, instrumented: dict) -> list:
    """[(kernel, native entry, copy entry)]: each kernel of the file and gmprof's copy of it
    (the same signature in the `__gmprof_<module>` namespace)."""
    entries = [n for n, f in instrumented.items() if f.entry]
    plain = demangle(entries + [n for n, f in native.items() if f.entry])
    copies = {re.sub(r"^__gmprof_[0-9a-f]+::", "", plain[n]): n for n in entries
              if plain[n].startswith("__gmprof_")}
    return [(plain[n], n, copies[plain[n]]) for n, f in native.items()
            if f.entry and plain[n] in copies]


def compile_ptx(nvcc: str, src: Path, flags: list, out: Path) -> str:
    r = subprocess.run([nvcc, "-arch=sm_90", "-lineinfo", *flags, "-ptx", str(src), "-o",
                        str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"gmprof: error: nvcc failed on {src}:\n{r.stderr[-2000:]}")
    return out.read_text(errors="replace")


def translation(path: Path, mode: str, defines: dict, include_dirs: list) -> str:
    from gmprof.mode import Mode
    from gmprof.program.translate import translate

    return translate(str(path), defines=defines, include_dirs=include_dirs,
                     mode=Mode.parse(mode), cpu=False).text


_STAND_INS = {
    "empty": "(void)p",
    "atomic": "atomicAdd(&ctr[SITE], 1u)",
    "branch": "if ((unsigned long long)p & 4u) atomicAdd(&ctr[SITE], 1u)",
    "asm": 'asm volatile("red.global.add.u32 [%0], 1;" :: "l"(&ctr[SITE]))',
    "call": "out_of_line(SITE, p)",
    # what a branch-free hook that counts sites and elements would do (no out-of-range count)
    "count": "atomicAdd(&ctr[SITE], 1u); atomicAdd(&ctr[32768u + (unsigned)min(((unsigned long "
             "long)p - base) >> 2, (unsigned long long)n)], 1u)",
}
_HOOK = re.compile(r"::gmprof::(dm|dm_pair|dm_range)<")


def stand_in(text: str, form: str) -> str:
    """The translation with its device-memory hooks replaced by `form` (_STAND_INS)."""
    body = _STAND_INS[form]
    header = (
        "namespace gmprof_stand_in {\n__device__ unsigned ctr[1 << 16];\n"
        "__constant__ unsigned long long base; __constant__ unsigned n;\n"
        "__device__ __noinline__ void out_of_line(int site, const void *p) {\n"
        "  atomicAdd(&ctr[site], 1u); atomicAdd(&ctr[(unsigned long long)p & 0xffffu], 1u); }\n"
        f"template <int SITE, int OBJ, int MODE, class T> __device__ __forceinline__ T *dm(T *p, "
        f"unsigned = 1u, void * = nullptr) {{ {body}; return p; }}\n"
        f"template <int SITE, int S2, int OBJ, class T> __device__ __forceinline__ T *dm_pair("
        f"T *p) {{ {body}; return p; }}\n"
        f"template <int SITE, int OBJ, int MODE, class T> __device__ __forceinline__ T *dm_range("
        f"T *p, unsigned n, long long, void * = nullptr) {{ if (n) {{ {body}; }} return p; }}\n"
        "}\n")
    first = text.index("\n", text.index("#include")) + 1  # before the user's #line directives
    return text[:first] + header + _HOOK.sub(r"::gmprof_stand_in::\1<", text[first:])


_HOOK_CALL = re.compile(r"::gmprof(?:_stand_in)?::dm(?:_pair|_range)?<[^;]*?\);\s?")
_CONTROL = re.compile(r"\b(if|else|for|while|do|return|break|continue|switch|case|goto)\b|[{}#]")


def at_run_end(text: str) -> str:
    """Each run of consecutive one-line simple statements (no control flow, no braces) has its
    hooks moved after its last statement, lines kept (the #line directives stay right)."""
    out, run, hooks = [], [], []

    def flush():
        if run and hooks:
            code, sep, comment = run[-1].partition("//")
            run[-1] = code.rstrip() + " " + " ".join(h.strip() for h in hooks) + (
                " //" + comment if sep else "")
        out.extend(run)
        run.clear()
        hooks.clear()

    for line in text.split("\n"):
        code = line.split("//")[0]
        rest = _HOOK_CALL.sub("", code).strip()
        if rest.endswith(";") and rest.count(";") == 1 and not _CONTROL.search(rest):
            hooks.extend(_HOOK_CALL.findall(code))
            run.append(_HOOK_CALL.sub("", line))
        elif not code.strip() and run:
            run.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out)


def compare(path: Path, *, mode="default", defines=None, include_dirs=(), flags=("-O3",),
            keep: Path | None = None, nvcc="nvcc", form: str | None = None,
            run_end: bool = False) -> list:
    """[(kernel, native totals, copy totals, line differences)] for the kernels of `path`."""
    defines = dict(defines or {})
    text = translation(path, mode, defines, list(include_dirs))
    if form:
        text = stand_in(text, form)
    if run_end:
        text = at_run_end(text)
    with tempfile.TemporaryDirectory() as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        copy_src = work / f"{path.stem}.gmprof.cu"
        copy_src.write_text(text, errors="surrogateescape")
        extra = [f"-I{path.resolve().parent}", *(f"-I{d}" for d in include_dirs),
                 *(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in defines.items())]
        native = parse_ptx(compile_ptx(nvcc, path, [*extra, *flags], work / f"{path.stem}.ptx"))
        instrumented = parse_ptx(compile_ptx(nvcc, copy_src, [*extra, *flags],
                                             work / f"{path.stem}.gmprof.ptx"))
    rows = []
    for kernel, n, c in pairs(native, instrumented):
        a, b = arithmetic(native, n), arithmetic(instrumented, c)
        rows.append((kernel, totals(a), totals(b), line_differences(a, b)))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--mode", default="default")
    ap.add_argument("-I", dest="include", action="append", default=[])
    ap.add_argument("-D", dest="define", action="append", default=[])
    ap.add_argument("--nvcc-flags", default="-O3",
                    help="comma-separated flags for both compiles (default -O3)")
    ap.add_argument("--lines", action="store_true", help="print the lines whose arithmetic differs")
    ap.add_argument("--keep", type=Path, help="keep the translation and both PTX files here")
    ap.add_argument("--stand-in", choices=sorted(_STAND_INS), help="an experiment: the hooks' form")
    ap.add_argument("--at-run-end", action="store_true", help="an experiment: the hooks' place")
    args = ap.parse_args(argv)
    from gmprof.errors import GmprofError

    defines = dict((d.split("=", 1) + [None])[:2] for d in args.define)
    if shutil.which("nvcc") is None:
        print("gmprof: error: nvcc is not on PATH", file=sys.stderr)
        return 2
    try:
        rows = compare(args.file, mode=args.mode, defines=defines, include_dirs=args.include,
                       flags=[f for f in args.nvcc_flags.split(",") if f], keep=args.keep,
                       form=args.stand_in, run_end=args.at_run_end)
    except GmprofError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    differ = 0
    print(f"{'kernel':40} {'native fma/mul/add/sub':>24} {'instrumented':>24}  lines differing")
    for kernel, a, b, diffs in rows:
        differ += bool(diffs) or a != b
        print(f"{kernel[:40]:40} {'/'.join(str(a[k]) for k in KINDS):>24} "
              f"{'/'.join(str(b[k]) for k in KINDS):>24}  {len(diffs)}")
        if args.lines:
            for (file, line), only_native, only_copy in diffs:
                print(f"    {file}:{line}: native only {only_native}, "
                      f"instrumented only {only_copy}")
    if not rows:
        print("no kernel with an instrumented copy", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
