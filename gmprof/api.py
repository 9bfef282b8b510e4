"""The Python API: gmprof.profile() and gmprof.RawKernel, a drop-in for cupy.RawKernel.

    report = gmprof.profile("transpose.cu", "transpose", grid=(4, 4), block=(16, 16),
                            args=[odata, idata, np.int32(64), np.int32(64)])
    print(report.array("shared_data").mean)

    k = gmprof.RawKernel(code, "saxpy")          # runs normally, and counts
    k((blocks,), (256,), (y, x, np.float32(2), np.int32(n)))
    k.report                                     # merged over every call so far
"""
from __future__ import annotations

import os
from pathlib import Path

from .errors import GmprofError
from .passes.plan import Mode
from .report.model import Report


def make_mode(mode="default", *, profile="both", threshold=None, counter_bits=32,
              enhanced=False, sampling=None, sampler="rng") -> Mode:
    if isinstance(mode, Mode):
        return mode
    return Mode.parse(mode, threshold=threshold, counter_bits=counter_bits, enhanced=enhanced,
                      sampling=sampling, sampler=sampler, profile=profile)


def _is_path(source) -> bool:
    if isinstance(source, Path):
        return True
    return isinstance(source, str) and "\n" not in source and len(source) < 4096 and \
        source.endswith((".cu", ".cuh", ".h")) and "{" not in source


_PROFILERS: dict = {}


def profiler(source, defines=None, include_dirs=None, backend="auto"):
    """A cached Profiler for a source path or text (re-reading a changed file)."""
    from .runtime.session import Profiler

    defines = dict(defines or {})
    include_dirs = [str(d) for d in (include_dirs or [])]
    if _is_path(source):
        path = Path(source)
        stamp = path.stat().st_mtime_ns if path.exists() else 0
        key = ("path", str(path.resolve()) if path.exists() else str(path), stamp,
               tuple(sorted(defines.items())), tuple(include_dirs), backend)
        if key not in _PROFILERS:
            _PROFILERS[key] = Profiler(path, defines=defines, include_dirs=include_dirs,
                                       backend=backend)
    else:
        key = ("text", source, tuple(sorted(defines.items())), tuple(include_dirs), backend)
        if key not in _PROFILERS:
            _PROFILERS[key] = Profiler(text=source, name="<kernel>.cu", defines=defines,
                                       include_dirs=include_dirs, backend=backend)
    return _PROFILERS[key]


def profile(source_or_path, kernel, grid, block, args, shared_mem=0, profile="both",
            mode="default", threshold=None, enhanced=False, sampling=None, backend="auto",
            counter_bits=32, sampler="rng", defines=None, include_dirs=None, repeat=0,
            compare_native=True) -> Report:
    """Profile one launch. Arrays (numpy, or CuPy on the GPU backend) are left as the kernel
    leaves them. `kernel` may be a template name expression (`matmul<16>`)."""
    m = make_mode(mode, profile=profile, threshold=threshold, counter_bits=counter_bits,
                  enhanced=enhanced, sampling=sampling, sampler=sampler)
    prof = profiler(source_or_path, defines, include_dirs, backend)
    return prof.launch(kernel, grid, block, list(args), shared_mem, mode=m, repeat=repeat,
                       compare_native=compare_native)


def parse_options(options) -> tuple[dict, list]:
    """CuPy/NVRTC-style options -> (defines, include dirs); others are ignored."""
    defines, includes = {}, []
    opts = list(options or ())
    i = 0
    while i < len(opts):
        o = opts[i]
        if o.startswith("-D"):
            body = o[2:] or (opts[i + 1] if i + 1 < len(opts) else "")
            if not o[2:]:
                i += 1
            name, eq, value = body.partition("=")
            defines[name] = value if eq else None
        elif o.startswith("-I"):
            includes.append(o[2:] or opts[i + 1])
            if not o[2:]:
                i += 1
        i += 1
    return defines, includes


class RawKernel:
    """Drop-in for cupy.RawKernel: calls launch the instrumented kernel (outputs exactly as
    the original's) and merge each call's counts into `self.report`."""

    def __init__(self, code: str, name: str, options=(), backend="auto", mode="default",
                 name_expressions=None, **mode_options):
        self.code = code
        self.name = name
        self.options = tuple(options)
        self.name_expressions = list(name_expressions or [])
        defines, includes = parse_options(options)
        self._profiler = profiler(code, defines, includes, backend)
        self.mode = make_mode(mode, **mode_options)
        self.report: Report | None = None
        self.reports: list[Report] = []

    def __call__(self, grid, block, args, *, shared_mem=0, name=None):
        report = self._profiler.launch(name or self.name, grid, block, list(args), shared_mem,
                                       mode=self.mode)
        self.reports.append(report)
        if self.report is None:
            import copy

            self.report = copy.deepcopy(report)
        else:
            self.report.merge(report)
        return None

    def get_function(self, name_expression: str) -> "RawKernel":
        """Like cupy.RawModule.get_function for a template kernel's name expression."""
        k = RawKernel.__new__(RawKernel)
        k.__dict__.update(self.__dict__)
        k.name = name_expression
        k.report, k.reports = None, []
        return k


RawModule = RawKernel
