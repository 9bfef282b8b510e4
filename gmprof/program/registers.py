"""The register cap of the copies of kernels that can be launched cooperatively.

Stage: whole programs, GPU build (translate.py marks the copies, nvcc.py measures and caps).
A program sizes a cooperative grid with the ORIGINAL kernel's occupancy
(`cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, ...)`, grid = SMs x n), and the whole
grid must be resident at once. The instrumented copy needs more registers (simpleAWBarrier's
kernel: 31 -> 40 on sm_90, so 1024-thread blocks go from 2 to 1 per SM), which would make the
launch fail (cudaErrorCooperativeLaunchTooLarge: the runtime then runs the original, unprofiled).
So such a copy is compiled with `__maxnreg__(R)`, R the original's own register count for that
architecture: it has at least the original's blocks per SM (spills cost time, never a count).

    __global__ void k(...) {...}                     (original, as it was)
    GMPROF_MAXNREG_k __global__ void k(...) {...}     (its copy, in the module's namespace)
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900       (nvcc.py, at the top of the file)
    #define GMPROF_MAXNREG_k __maxnreg__(31)

R is read from ptxas's report (`-Xptxas -v`) of one device-only compile of the user's own
file with the user's flags (`-fatbin`: every target architecture, no host compile), made only
for files with such kernels. A kernel with `__launch_bounds__` cannot also have `__maxnreg__`:
its copy's bounds get a minimum of blocks per SM (`__launch_bounds__(T, M)`, M the blocks of T
threads that R registers allow), which makes ptxas keep the copy within the same budget; one
with its own `__maxnreg__(N)` (the original then has R <= N) gets `__maxnreg__(R)` in its place.
"""
from __future__ import annotations

import re
import subprocess

#: the names that reach a grid barrier (cooperative_groups::this_grid, grid_group::sync)
_GRID = re.compile(r"\b(?:this_grid|grid_group)\b")
_COOP_LAUNCH = re.compile(
    r"\bcudaLaunchCooperativeKernel\s*(?:<[^;()]*>)?\s*\(\s*(?:\(\s*(?:const\s+)?void\s*\*\s*\)\s*)?"
    r"&?\s*([A-Za-z_][\w:]*)")
#: ptxas never lets a kernel go below this many registers (sm_50 .. sm_120: "adjusting per thread
#: register count of 16 to lower bound of 24"); a cap of up to 32 cannot lower occupancy anyway
#: (32 registers x 2048 threads = an SM's whole 64K register file)
_FLOOR = 24


def macro(name: str, kind: str = "MAXNREG") -> str:
    """The macro of a copy's cap: MAXNREG (added), LAUNCH_BOUNDS or OWN_MAXNREG (in place of
    the kernel's own bounds or cap); prefixes that no kernel name can make one of another."""
    return f"GMPROF_{kind}_{name}"


def cooperative(tu, copies, mentions) -> list:
    """The kernels among `copies` (segments) that can be launched cooperatively: their body, or
    a device function they reach, names a grid group (this_grid, grid_group), or a
    cudaLaunchCooperativeKernel call in the translation unit launches them.
    `mentions(fn)` -> the names fn's body mentions (copies.mentions)."""
    launched = set()
    for src in tu.segments:
        for m in _COOP_LAUNCH.finditer(src.text):
            launched.add(m.group(1).rsplit("::", 1)[-1])
    fns = [f for f in tu.functions if f.segment in copies and f.funcdef is not None]
    by_name: dict = {}
    for f in fns:
        by_name.setdefault(f.name, []).append(f)

    def text(f) -> str:
        return f.source.text[f.segment.start:f.segment.end]

    def grid(f) -> bool:
        seen, todo = set(), [f]
        while todo:
            g = todo.pop()
            if g.segment in seen:
                continue
            seen.add(g.segment)
            if _GRID.search(text(g)):
                return True
            for name in mentions(g):
                todo.extend(by_name.get(name, ()))
        return False

    return sorted({f.name for f in fns if f.is_kernel and (f.name in launched or grid(f))})


def mark(text: str, name: str) -> str:
    """A copy's text with its cap's macro: before the head (after a template head), or, where
    the kernel has __launch_bounds__ (which __maxnreg__ may not join) or its own __maxnreg__ (a
    function takes one), in place of it."""
    head = text.split("{", 1)[0]
    if re.search(r"\b__maxnreg__\b", head):
        k = text.index("__maxnreg__")
        return text[:k] + macro(name, "OWN_MAXNREG") + text[k + len("__maxnreg__"):]
    if "__launch_bounds__" in head:
        k = text.index("__launch_bounds__")
        return text[:k] + macro(name, "LAUNCH_BOUNDS") + text[k + len("__launch_bounds__"):]
    return re.sub(r"^(\s*(?:template\s*<[^{;]*?>\s*)?)", lambda m: m.group(1) + macro(name) + " ",
                  text, count=1)


def fallback(names) -> str:
    """The prelude's definitions for when nothing was measured: no cap, bounds and the kernel's
    own cap as written."""
    out = []
    for n in names:
        out.append(f"#ifndef {macro(n)}\n#define {macro(n)}\n#endif\n"
                   f"#ifndef {macro(n, 'LAUNCH_BOUNDS')}\n"
                   f"#define {macro(n, 'LAUNCH_BOUNDS')} __launch_bounds__\n#endif\n"
                   f"#ifndef {macro(n, 'OWN_MAXNREG')}\n"
                   f"#define {macro(n, 'OWN_MAXNREG')} __maxnreg__\n#endif\n")
    return "".join(out)


def _base_name(symbol: str) -> str:
    """The plain name of a kernel from its (demangled) symbol: `void ns::k<256>(float*)` -> k."""
    s = symbol.strip()
    if s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    if s.endswith(">"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    return re.split(r"[\s:*&]+", s.strip())[-1]


def _unprefixed(symbol: str) -> str:
    """A kernel's symbol without the prefix -rdc=true gives one of internal linkage (in an
    unnamed namespace, `static`): `__nv_static_27__f0ebd054_6_un5_cu_a56f462c__ZN...` (the
    prefix's length, that many characters, `_`) -> `_ZN...`."""
    m = re.match(r"__nv_static_(\d+)_", symbol)
    if m is None:
        return symbol
    rest = symbol[m.end() + int(m.group(1)):]
    return rest[1:] if rest.startswith("__Z") else rest


def parse_usage(report: str, names) -> dict:
    """ptxas's report (-v) -> {kernel name: {__CUDA_ARCH__: registers}}, for the
    kernels in `names`; several kernels of one name (template instances, namespaces): the least."""
    entries = []  # (symbol, arch, registers)
    current = None
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for 'sm_(\d+)\w*'", line)
        if m:
            current = [_unprefixed(m.group(1)), int(m.group(2)) * 10, None]
            entries.append(current)
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None and current[2] is None:
            current[2] = int(m.group(1))
    mangled = [e[0] for e in entries if e[0].startswith("_Z")]
    plain = {}
    if mangled:
        try:
            out = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                                 text=True, check=True).stdout.splitlines()
            plain = dict(zip(mangled, out))
        except (OSError, subprocess.CalledProcessError):
            plain = {}
    wanted = set(names)
    caps: dict = {}
    for symbol, arch, regs in entries:
        if regs is None:
            continue
        name = _base_name(plain.get(symbol, symbol))
        if name in wanted:
            per = caps.setdefault(name, {})
            per[arch] = min(regs, per.get(arch, regs))
    return caps


# (warps, blocks) a multiprocessor holds at most, per __CUDA_ARCH__ (CUDA's occupancy tables;
# 64K registers each): the architectures whose caps may rise to the occupancy-preserving count
_LIMITS = {750: (32, 16), 800: (64, 32), 860: (48, 16), 870: (48, 16), 890: (48, 24),
           900: (64, 32)}


def occupancy_cap(registers: int, arch: int) -> int:
    """The most registers a copy may have with at least the original's blocks a SM for every
    block size (1 to 32 warps), the original having `registers`: 32 where that is full
    occupancy anyway, else about the original's count rounded up to the 8 a thread that a
    warp's allocation comes in. An architecture not in the table: the original's count."""
    if arch not in _LIMITS:
        return registers
    from gmprof.runtime.occupancy import blocks_by_registers

    warps_max, blocks_max = _LIMITS[arch]

    def blocks(r: int, w: int) -> int:
        return min(blocks_max, warps_max // w, blocks_by_registers(r, 32 * w))

    base = [blocks(registers, w) for w in range(1, 33)]
    best = registers
    for r in range(registers + 1, 256):  # blocks only fall as registers rise
        if any(blocks(r, w) < base[w - 1] for w in range(1, 33)):
            break
        best = r
    return best


def cap_all() -> bool:
    """GMPROF_REGISTER_CAP=occupancy: every kernel's copy capped at the occupancy-preserving
    count (occupancy_cap), not only the cooperative ones at the original's (an experiment:
    hooks' registers cost occupancy, a cap costs spills)."""
    import os

    return os.environ.get("GMPROF_REGISTER_CAP", "") == "occupancy"


def defines(caps: dict) -> str:
    """The caps as definitions of the copies' macros, one per architecture measured (host code
    and other architectures: the prelude's fallback, no cap)."""
    out = []
    for name, per in sorted(caps.items()):
        first = True
        for arch, regs in sorted(per.items()):
            r = max(regs, _FLOOR)
            if cap_all():
                r = occupancy_cap(r, arch)
            out.append(f"#{'if' if first else 'elif'} defined(__CUDA_ARCH__) && __CUDA_ARCH__ == {arch}\n"
                       f"#define {macro(name)} __maxnreg__({r})\n"
                       # blocks of T threads per SM that r registers allow (64K registers, in
                       # units of 256 a warp), at most 32: ptxas keeps the copy within them
                       f"#define {macro(name, 'LAUNCH_BOUNDS')}(T, ...) __launch_bounds__(T, "
                       f"GMPROF_BLOCKS_FOR((T), {r}))\n"
                       # the kernel's own `__maxnreg__(N)`: the original used r <= N
                       f"#define {macro(name, 'OWN_MAXNREG')}(N) __maxnreg__({r})\n")
            first = False
        if not first:
            out.append("#endif\n")
    if out:
        out.insert(0, "#define GMPROF_BLOCKS_FOR(t, r) (65536 / (((t) + 31) / 32 * (((r) * 32 + 255) / "
                      "256 * 256)) > 32 ? 32 : 65536 / (((t) + 31) / 32 * (((r) * 32 + 255) / 256 * 256)))\n")
    return "".join(out)


def measure(nvcc: str, flags: list, src: str, obj: str) -> tuple:
    """(ptxas's report of the user's file compiled for the device only, with the user's flags;
    an error message or None)."""
    # -Xptxas -v, not --resource-usage: with -rdc=true only ptxas's own report has the counts
    # (before nvlink: a kernel calling another file's functions may end with more, so the cap
    # is then below the original's, never above)
    proc = subprocess.run([nvcc, *flags, "-Xptxas", "-v", "-fatbin", src, "-o", obj],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln),
                     proc.stderr.strip()[:200])
        return proc.stdout + proc.stderr, first.strip() or f"nvcc exited with {proc.returncode}"
    return proc.stdout + proc.stderr, None
