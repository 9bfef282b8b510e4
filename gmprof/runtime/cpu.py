"""The CPU backend, host side: compile device code with g++, load it, launch kernels.

Stage: runtime. Input: a translation unit of CUDA device code (what gmprof's frontend emits,
instrumented or not), the name expressions of the kernels to launch (`matmul<16>`), the
file-scope variables to expose, and extra -D/-I options. Output: a CpuModule whose `launch`
runs a kernel over a grid on the CPU, in place on numpy arrays, and whose `get_global` gives the
address of a `__device__`/`__constant__` variable.

The device side is runtime_cu/cpu/gmprof_cpu.h, force-included into the text (fibers, barriers,
warp collectives, faults). This module appends the glue: for each name expression an
`extern "C"` entry that unpacks `void **args` by the kernel's own parameter types
(`invoke(&matmul<16>, args)`) and one that describes those types, so arguments are checked
against the real signature; for each global an accessor returning its address and size. Shared
libraries are cached in the `cpu` cache ($GMPROF_CACHE_DIR/cpu, by default ~/.cache/gmprof/cpu:
gmprof/cache_dirs.py), keyed by everything that goes into them. Every user mistake (a kernel that does not compile, a wrong argument, a deadlock,
a fault) is a located GmprofError.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from gmprof.errors import (ArgumentError, CompileError, Diagnostic, GmprofError, KernelFault,
                           KernelTimeout, Location, OptionError)

from . import cpu_cache, cpu_env
from .cpu_locate import (_GLOBALS_FILE, _GLUE_FILE, _header_dir, compile_error,
                         fault_location, is_runtime_file, source_line)
from .cpu_args import CpuPointer, Param, pack  # noqa: F401  (CpuPointer: part of this API)

CXX = "g++"
# -O2: the tiled product's inner loop vectorises no further at -O3, and -O3 compiles slower.
# -fno-strict-aliasing: CUDA code reads float arrays through float4 pointers and back.
# -fstack-clash-protection: a large local array touches the guard page below a fiber's stack
# instead of jumping over it. -g1: line tables only, so a fault can be mapped to a line.
# -gdwarf-4: with DWARF 5 (g++ 11's default), addr2line 2.40 names the compiled file (a deleted
# temporary) instead of the #line file for the first file of the table.
COMPILE_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
                 "-fstack-clash-protection", "-g1", "-gdwarf-4", "-fdiagnostics-color=never",
                 "-fno-diagnostics-show-caret")
# -z defs: an undefined symbol is a compile error here, not a failure at load time.
LINK_FLAGS = ("-shared", "-Wl,-z,defs", "-lrt")  # -lrt: timer_create on glibc before 2.34
FLAGS = COMPILE_FLAGS + LINK_FLAGS
DEFAULT_STACK_KB = cpu_env.STACK_KB_DEFAULT  # $GMPROF_CPU_STACK_KB (cpu_env.py)
# A launch that runs longer than this is stopped (a kernel that spins without a yield point
# would otherwise hang the process); --timeout / timeout= change it (else $GMPROF_CPU_TIMEOUT_S),
# 0 removes it. The CPU backend's problem sizes run in well under a second a launch.
DEFAULT_TIMEOUT_S = 120.0
MAX_THREADS = 1024
_FORMAT = "gmprof-cpu-5"  # bump when the glue or the Status layout changes
SANITIZE_ENV = "GMPROF_CPU_SANITIZE"

# One launch at a time in the process: fault handling installs process-wide signal handlers and
# the module's scheduler state is global.
_LAUNCH_LOCK = threading.Lock()

# Status codes of runtime_cu/cpu/gmprof_cpu_sched.h
_CODE_NAMES = {1: "deadlock", 2: "invalid-address", 3: "stack-overflow", 4: "trap", 5: "assert",
               6: "livelock", 7: "bad-launch", 8: "arithmetic", 9: "illegal-instruction",
               10: "internal", 11: "interrupted", 12: "timeout"}


class _Status(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("signal", ctypes.c_int),
                ("reserved", ctypes.c_int), ("pc_offset", ctypes.c_ulonglong), ("divergent_barriers", ctypes.c_ulonglong),
                ("div_line_a", ctypes.c_int), ("div_line_b", ctypes.c_int),
                ("file", ctypes.c_char * 512), ("div_file_a", ctypes.c_char * 512),
                ("div_file_b", ctypes.c_char * 512), ("message", ctypes.c_char * 8192)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_ulonglong), ("align", ctypes.c_ulonglong),
                ("kind", ctypes.c_int), ("type", ctypes.c_char_p)]


@dataclass
class _Kernel:
    name: str
    entry: int
    params: tuple[Param, ...]


# ------------------------------------------------------------------------------ compiling

@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    try:
        out = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise GmprofError(f"the CPU backend needs {CXX}, which cannot be run: {e}",
                          kind="no-compiler") from None
    return out.stdout.splitlines()[0] if out.stdout else CXX


def sanitize_flags() -> tuple[str, ...]:
    """Test-only: $GMPROF_CPU_SANITIZE=address (or undefined, or both joined by a comma)
    compiles the runtime and every module with -fsanitize=...; the process must then load the
    sanitizer's runtime first (LD_PRELOAD). Read here only, and part of every cache key."""
    value = os.environ.get(SANITIZE_ENV, "").strip()
    if not value:
        return ()
    if not re.fullmatch(r"[a-z]+(,[a-z]+)*", value):
        raise OptionError(f"{SANITIZE_ENV}={value!r}: expected sanitizer names such as "
                          "address or address,undefined")
    return (f"-fsanitize={value}", "-fno-omit-frame-pointer")


def compile_flags() -> tuple[str, ...]:
    return COMPILE_FLAGS + sanitize_flags()


def link_flags() -> tuple[str, ...]:
    return LINK_FLAGS + sanitize_flags()


def _header_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(_header_dir().glob("*")):
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _include_digest() -> str:
    """The backend's own CUDA headers (include/: cooperative groups, fp16, ...), part of a
    module's key: a kernel that includes one is rebuilt when it changes (the dependency check
    skips gmprof's own headers, and the runtime object and precompiled header do not use
    them)."""
    h = hashlib.sha256()
    inc = _header_dir() / "include"
    for p in sorted(inc.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(inc)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def default_cache_dir() -> Path:
    """The `cpu` cache of gmprof/cache_dirs.py ($GMPROF_CACHE_DIR/cpu)."""
    from gmprof import cache_dirs

    return cache_dirs.kind_dir("cpu")


def _deps(deps_file: Path, build_dir: Path) -> list[str]:
    """The files g++ read that the cache key does not cover: the kernel's own #includes (not
    the generated source, gmprof's headers or the system's)."""
    try:
        names = cpu_cache.parse_deps(deps_file.read_text())
    except OSError:
        return []
    out = []
    for n in names:
        p = Path(n)
        if not p.is_absolute():
            p = Path.cwd() / p
        if p.parent == build_dir or is_runtime_file(str(p)) or str(p).startswith("/usr/"):
            continue
        if p.is_file() and str(p) not in out:
            out.append(str(p))
    return out


_EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+([^;{}]*?)\[\s*\]\s*;")
_ALIGN = re.compile(r"__align__\s*\(\s*\d+\s*\)|alignas\s*\([^)]*\)|__attribute__\s*\(\(.*?\)\)")


def rewrite_extern_shared(text: str) -> str:
    """`extern __shared__ T s[];` -> `GMPROF_DYNAMIC_SHARED(T, s);`, for text that did not come
    through gmprof's frontend (which does this itself), e.g. gmprof.cuh's own counter area.
    Alignment attributes are dropped: the buffer is 64-byte aligned."""

    def one(m: re.Match) -> str:
        body = _ALIGN.sub(" ", m.group(1))
        parts = re.match(r"\s*(.*?)\s*\b(\w+)\s*$", body, re.S)
        if not parts or not parts.group(1):
            return m.group(0)
        return f"GMPROF_DYNAMIC_SHARED({' '.join(parts.group(1).split())}, {parts.group(2)});"

    return _EXTERN_SHARED.sub(one, text)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise GmprofError(f"the CPU backend needs {CXX}, which cannot be run: {e}",
                          kind="no-compiler") from None


def _runtime_object(cache_dir: Path, options: Sequence[str]) -> Path:
    """The runtime (scheduler, faults, launch) compiled once per header version, flags and
    GMPROF_CPU_* options, and linked into every module: it is two thirds of a small kernel's
    compile time when compiled with each one."""
    rt_options = [o for o in options if o.startswith(("-DGMPROF_CPU_", "-UGMPROF_CPU_"))]
    flags = compile_flags()
    key = _digest(_FORMAT, compiler_version(), _header_digest(), *flags, *rt_options)
    obj = cache_dir / f"runtime-{key}.o"
    if cpu_cache.lookup(obj):
        return obj
    with cpu_cache.locked(cache_dir, obj.name), cpu_cache.temp_dir(cache_dir) as tmp:
        if cpu_cache.lookup(obj):  # built by another process while this one waited
            return obj
        out = tmp / "runtime.o"
        proc = _run([CXX, *flags, *rt_options, "-c",
                     str(_header_dir() / "gmprof_cpu_runtime.cpp"), "-o", str(out)])
        if proc.returncode != 0:
            # not the user's fault unless a GMPROF_CPU_* option broke it
            raise CompileError("the CPU backend's runtime does not compile with options "
                               f"{' '.join(rt_options) or '(none)'}: "
                               f"{(proc.stderr or proc.stdout).strip()[:2000]}")
        cpu_cache.store(out, obj)
    return obj


def _pch_dir(cache_dir: Path) -> Path | None:
    """A directory holding copies of the headers and gmprof_cpu.h.gch, their precompiled form
    (g++ uses the .gch beside a force-included header when the flags match, and quietly reads
    the header itself when they do not). The system headers it includes are most of the rest of
    a kernel's compile time. None when it cannot be built: compiling without it still works."""
    flags = compile_flags()
    key = _digest(_FORMAT, compiler_version(), _header_digest(), *flags)
    final = cache_dir / f"pch-{key}"
    if cpu_cache.lookup(final):
        return final
    with cpu_cache.locked(cache_dir, final.name), cpu_cache.temp_dir(cache_dir) as tmp:
        if cpu_cache.lookup(final):  # built by another process while this one waited
            return final
        built = tmp / final.name  # `pch-*`: how fault locations recognise these headers
        built.mkdir()
        for p in _header_dir().iterdir():
            if p.is_file():
                shutil.copyfile(p, built / p.name)
        proc = _run([CXX, *flags, "-DGMPROF_CPU_SEPARATE_RUNTIME", "-x", "c++-header",
                     str(built / "gmprof_cpu.h"), "-o", str(built / "gmprof_cpu.h.gch")])
        if proc.returncode != 0:
            return None
        cpu_cache.store(built, final)
    _prune_pch_dirs(cache_dir, keep=final)
    return final if (final / "gmprof_cpu.h.gch").is_file() else None


def _prune_pch_dirs(cache_dir: Path, keep: Path, max_age_s: float = 86400.0) -> None:
    """Precompiled headers are 20 MB each: drop those of other header versions or flags that
    nothing has used for a day."""
    now = time.time()
    for d in cache_dir.glob("pch-*"):
        try:
            if d.is_dir() and d != keep and \
                    now - (d / "gmprof_cpu.h.gch").stat().st_atime > max_age_s:
                cpu_cache.discard(d)
        except OSError:
            pass


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _glue(name_expressions: Sequence[str], globals_: Sequence[str]) -> str:
    out = [f"\n#line 1 {_c_string(_GLUE_FILE)}\n"]
    for i, expr in enumerate(name_expressions):
        # one line per kernel, so an error's line number says which name expression it is
        out.append(
            f'extern "C" GMPROF_CPU_EXPORT void __gmprof_cpu_entry_{i}(void **a) '
            f"{{ ::gmprof_cpu::invoke(&{expr}, a); }} "
            f'extern "C" GMPROF_CPU_EXPORT int __gmprof_cpu_params_{i}('
            f"::gmprof_cpu::ParamInfo *o, int n) {{ return ::gmprof_cpu::describe(&{expr}, o, n); }}\n")
    out.append(f"#line 1 {_c_string(_GLOBALS_FILE)}\n")
    for i, name in enumerate(globals_):
        out.append(
            f'extern "C" GMPROF_CPU_EXPORT void *__gmprof_cpu_global_{i}(unsigned long long *s) '
            f"{{ *s = sizeof({name}); return (void *)__builtin_addressof({name}); }}\n")
    return "".join(out)


class CpuModule:
    """Device code compiled for the CPU. See the module docstring."""

    def __init__(self, source: str, name_expressions: Sequence[str], *,
                 globals: Sequence[str] = (), options: Sequence[str] = (),
                 filename: str = "<kernel>", cache_dir: str | None = None):
        if isinstance(name_expressions, str):
            name_expressions = [name_expressions]
        if not isinstance(source, str):
            raise ArgumentError(f"source: expected device code as a str, not "
                                f"{type(source).__name__}")
        for what, values in (("name_expressions", name_expressions), ("globals", globals),
                             ("options", options)):
            if isinstance(values, str) or not all(isinstance(v, str) for v in values):
                raise ArgumentError(f"{what}: expected a list of str, not {values!r}")
        self.source = source
        self.filename = filename
        self.name_expressions = tuple(name_expressions)
        self.global_names = tuple(globals)
        self.options = tuple(options)
        self.diagnostics: list[Diagnostic] = []
        self.compile_seconds = 0.0
        self.cached = False
        self._cache_dir = cpu_cache.checked_dir(Path(cache_dir) if cache_dir
                                                else default_cache_dir())
        self._so_path = self._build()
        if not self._load():
            # damaged between the check and the load (another process, a full disk): once more
            self._so_path = self._build()
            if not self._load():
                raise GmprofError(f"the compiled kernel in the cache ({self._so_path}) is "
                                  "damaged and could not be rebuilt", kind="cache")

    # -- building ----------------------------------------------------------------------
    def _text(self) -> str:
        body = rewrite_extern_shared(self.source)
        if not body.endswith("\n"):
            body += "\n"
        return f"#line 1 {_c_string(self.filename)}\n{body}" + \
            _glue(self.name_expressions, self.global_names)

    def _build(self) -> Path:
        text = self._text()
        options = list(self.options)
        key = _digest(_FORMAT, compiler_version(), _header_digest(), _include_digest(),
                      *compile_flags(), *link_flags(), "\0", *options, "\0", text)
        so = self._cache_dir / f"{key}.so"
        if cpu_cache.lookup(so):
            self.cached = True
            return so
        self.cached = False
        t0 = time.perf_counter()
        runtime = _runtime_object(self._cache_dir, options)
        include_dir = _pch_dir(self._cache_dir) or _header_dir()
        with cpu_cache.temp_dir(self._cache_dir) as tmp:
            src = tmp / "kernel.cpp"
            src.write_text(text)
            out = tmp / "kernel.so"
            deps = tmp / "kernel.d"
            # relative #line names stay relative in the line tables (for fault locations)
            prefix_map = f"-fdebug-prefix-map={os.getcwd()}=."
            proc = _run([CXX, *compile_flags(), "-DGMPROF_CPU_SEPARATE_RUNTIME", prefix_map,
                         "-MD", "-MF", str(deps), *options,
                         # the backend's <cooperative_groups.h>, <cuda_fp16.h>, ... after the
                         # user's -I directories
                         "-isystem", str(_header_dir() / "include"), "-include",
                         str(include_dir / "gmprof_cpu.h"), str(src), str(runtime),
                         *link_flags(), "-o", str(out)])
            self.compile_seconds = time.perf_counter() - t0
            if proc.returncode != 0:
                raise compile_error(self, proc.stderr + proc.stdout)
            # the headers the kernel included are checked on every later use of the entry
            cpu_cache.store(out, so, deps=_deps(deps, tmp))
        return so

    # -- loading -----------------------------------------------------------------------
    def _load(self) -> bool:
        """Load a private copy of the library, made from bytes verified against the cache's
        record; False when they do not match (the entry is then gone, to be rebuilt)."""
        try:
            data = self._so_path.read_bytes()
        except OSError:
            return False
        if not cpu_cache.lookup(self._so_path, data=data):
            return False
        # dlopen shares one copy per file: load a private copy, so each CpuModule has its own
        # globals and shared-memory state, as each CUDA module load does
        private = cpu_cache.temp_file(self._cache_dir, suffix=".so")
        try:
            private.write_bytes(data)
            try:
                lib = ctypes.CDLL(str(private))
            except OSError as e:
                raise GmprofError(f"the kernel's CPU library does not load: {e}",
                                  kind="cache") from None
        finally:
            private.unlink()
        self._lib = lib
        lib.gmprof_cpu_status_size.restype = ctypes.c_ulonglong
        if lib.gmprof_cpu_status_size() != ctypes.sizeof(_Status):
            raise RuntimeError("gmprof_cpu.h's Status and cpu.py's _Status disagree")
        self._launch_fn = lib.gmprof_cpu_launch
        self._launch_fn.restype = ctypes.c_int
        self._launch_fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_ulonglong,
                                    ctypes.c_double, ctypes.POINTER(_Status)]
        self._kernels: dict[str, _Kernel] = {}
        for i, expr in enumerate(self.name_expressions):
            entry = ctypes.cast(getattr(lib, f"__gmprof_cpu_entry_{i}"), ctypes.c_void_p).value
            describe = getattr(lib, f"__gmprof_cpu_params_{i}")
            describe.restype = ctypes.c_int
            infos = (_ParamInfo * 256)()
            n = describe(infos, 256)
            params = tuple(_param(infos[j]) for j in range(min(n, 256)))
            self._kernels[expr] = _Kernel(expr, entry, params)
        self._globals = {}
        for i, name in enumerate(self.global_names):
            fn = getattr(lib, f"__gmprof_cpu_global_{i}")
            fn.restype = ctypes.c_void_p
            size = ctypes.c_ulonglong()
            addr = fn(ctypes.byref(size))
            self._globals[name] = (int(addr), int(size.value))
        weakref.finalize(self, lib.gmprof_cpu_release)
        return True

    # -- the API ------------------------------------------------------------------------
    def params(self, name_expression: str) -> tuple[Param, ...]:
        return self._kernel(name_expression).params

    def get_global(self, name: str) -> tuple[int, int]:
        """(address, size in bytes) of a file-scope __device__/__constant__ variable that was
        named in `globals`."""
        if name not in self._globals:
            known = ", ".join(self._globals) or "none"
            raise ArgumentError(f"`{name}` was not asked for as a global of this module "
                                f"(globals: {known})")
        return self._globals[name]

    def launch(self, name_expression: str, grid, block, args: Sequence,
               shared_mem: int = 0, timeout: float | None = None) -> float:
        """Run a kernel; returns the launch's wall seconds. See the module docstring.
        `timeout`: seconds before the launch is stopped (None: $GMPROF_CPU_TIMEOUT_S, else
        DEFAULT_TIMEOUT_S; 0: none)."""
        kernel = self._kernel(name_expression)
        g = _dim3(grid, "grid")
        b = _dim3(block, "block")
        if b[0] * b[1] * b[2] > MAX_THREADS:
            raise OptionError(f"launch of {name_expression}: a block of {b[0]}x{b[1]}x{b[2]} = "
                              f"{b[0] * b[1] * b[2]} threads is more than {MAX_THREADS}")
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)) or \
                shared_mem < 0:
            raise OptionError(f"launch of {name_expression}: shared_mem must be a non-negative "
                              f"number of bytes, not {shared_mem!r}")
        # the GMPROF_CPU_* variables, refused as a whole program refuses them (cpu_env.py)
        cpu_env.check_environ()
        limit = _timeout(cpu_env.timeout_s() if timeout is None else timeout)
        argv, keep = pack(kernel, args)
        stack_bytes = cpu_env.stack_kb() * 1024
        status = _Status()
        grid_c = (ctypes.c_uint * 3)(*g)
        block_c = (ctypes.c_uint * 3)(*b)
        sys.stdout.flush()  # the kernel's printf goes straight to file descriptor 1
        with _LAUNCH_LOCK:
            t0 = time.perf_counter()
            rc = self._launch_fn(kernel.entry, argv, grid_c, block_c, int(shared_mem),
                                 stack_bytes, limit, ctypes.byref(status))
            seconds = time.perf_counter() - t0
        del keep
        self.diagnostics = self._launch_diagnostics(status)
        if rc == 11:  # SIGINT or SIGTERM abandoned the launch
            text = f"kernel `{kernel.name}`: {status.message.decode(errors='replace')}"
            if status.signal == signal.SIGTERM:
                # what SIGTERM would have done had the kernel not been running: the
                # process's own handler (the CLI's ends it cleanly) or the default, termination
                signal.raise_signal(signal.SIGTERM)
            raise KeyboardInterrupt(text)
        if rc:
            raise self._launch_error(kernel, status)
        return seconds

    # -- helpers -------------------------------------------------------------------------
    def _kernel(self, name_expression: str) -> _Kernel:
        k = self._kernels.get(name_expression)
        if k is None:
            known = ", ".join(self._kernels) or "none"
            raise ArgumentError(f"kernel `{name_expression}` was not compiled into this module "
                              f"(name expressions: {known})")
        return k

    def _location(self, file: str, line: int) -> Location | None:
        if not file or line <= 0:
            return None
        text = source_line(file, line, self.source, self.filename)
        col = len(text) - len(text.lstrip()) + 1 if text else 1  # the caret under the statement
        return Location(file, line, col, text)

    def _launch_diagnostics(self, st: _Status) -> list[Diagnostic]:
        if not st.divergent_barriers:
            return []
        a = f"{st.div_file_a.decode(errors='replace')}:{st.div_line_a}"
        b = f"{st.div_file_b.decode(errors='replace')}:{st.div_line_b}"
        return [Diagnostic("divergent-barrier",
                           f"{st.divergent_barriers} barrier(s) completed with threads waiting at "
                           f"different __syncthreads() calls, first {a} and {b}",
                           self._location(st.div_file_b.decode(errors="replace"), st.div_line_b))]

    def _launch_error(self, kernel: _Kernel, st: _Status) -> GmprofError:
        message = st.message.decode(errors="replace")
        loc = self._location(st.file.decode(errors="replace"), st.line)
        if loc is None and st.pc_offset:
            loc = fault_location(self, st.pc_offset)
        kind = _CODE_NAMES.get(st.code, "fault")
        if kind == "internal":
            return RuntimeError(f"gmprof's CPU runtime failed in kernel `{kernel.name}`: "
                                f"{message}")
        if kind == "bad-launch":
            return OptionError(f"kernel `{kernel.name}`: {message}", loc, kind="bad-launch")
        cls = KernelTimeout if kind == "timeout" else KernelFault
        return cls(f"kernel `{kernel.name}`: {message}", loc, kind=kind)

def _timeout(value) -> float:
    if value is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not value >= 0 or value == float("inf"):
        raise OptionError(f"timeout={value!r}: expected seconds >= 0 (0: no limit)")
    return float(value)


def _param(info: _ParamInfo) -> Param:
    text = info.type.decode(errors="replace") if info.type else "?"
    m = re.search(r"\[with T = (.*)\]$", text)
    return Param(m.group(1) if m else text, int(info.size), int(info.align), chr(info.kind))


def _dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (str, bytes)):
        raise OptionError(f"{what}={v!r}: expected an int or a tuple of 1 to 3 ints, not a string")
    from gmprof.options import launch_dims

    return launch_dims(v, what)
