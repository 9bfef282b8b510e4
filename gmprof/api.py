"""The Python API: gmprof.profile() and gmprof.RawKernel, a drop-in for cupy.RawKernel.

    report = gmprof.profile("transpose.cu", "transpose", grid=(4, 4), block=(16, 16),
                            args=[odata, idata, np.int32(64), np.int32(64)])
    print(report.array("shared_data").mean)

    k = gmprof.RawKernel(code, "saxpy")          # runs normally, and counts
    k((blocks,), (256,), (y, x, np.float32(2), np.int32(n)))
    print(k.report)                              # merged over every call so far

    mod = gmprof.RawModule(code=code, options=("-DN=64",), name_expressions=["mm<16>"])
    mod.get_function("mm<16>")((4,), (256,), (a, b))
"""
from __future__ import annotations

import os
from pathlib import Path

from .cupy_parity import KernelAttributes
from .errors import ArgumentError, GmprofError, InputError, OptionError
from .options import count, rate
from .mode import Mode
from .report.model import Report


def make_mode(mode="default", *, profile="both", threshold=None, counter_bits=32,
              enhanced=False, sampling=None, sampler="rng", sampling_seed=0) -> Mode:
    if isinstance(mode, Mode):
        return mode
    if mode is not None and not isinstance(mode, str):
        raise OptionError(f"mode={mode!r}: expected a mode name such as 'default', 'basic' or "
                          "'SA-NA-SM-TH', or a Mode")
    for name, value in (("profile", profile), ("sampler", sampler)):
        if not isinstance(value, str):
            raise OptionError(f"{name}={value!r}: expected a str")
    for name, value in (("threshold", threshold), ("counter_bits", counter_bits),
                        ("sampling", sampling)):
        if isinstance(value, (str, bytes)):
            raise OptionError(f"{name}={value!r}: expected a number, not a string")
    if threshold is not None:
        threshold = count(threshold, "threshold", minimum=1, maximum=2 ** 32 - 1)
    counter_bits = count(counter_bits, "counter_bits", minimum=1, maximum=64)
    if sampling is not None:
        sampling = rate(sampling, "sampling")
    sampling_seed = count(sampling_seed, "sampling_seed")
    try:
        return Mode.parse(mode, threshold=threshold, counter_bits=counter_bits,
                          enhanced=bool(enhanced), sampling=sampling, sampler=sampler,
                          profile=profile, sampling_seed=sampling_seed)
    except GmprofError as e:
        raise OptionError(e.message) from None


def _is_path(source) -> bool:
    if isinstance(source, Path):
        return True
    return isinstance(source, str) and "\n" not in source and len(source) < 4096 and \
        source.endswith((".cu", ".cuh", ".h")) and "{" not in source


_PROFILERS: dict = {}


def _stamp(path: Path):
    try:
        st = path.stat()
        return (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        return None


def _current(prof) -> bool:
    """Whether none of the files a Profiler read (its source and every header it included)
    has changed since: an edited header must be seen by a running process."""
    return all(_stamp(p) == s for p, s in getattr(prof, "_file_stamps", []))


def _defines(defines) -> dict:
    if defines is None:
        return {}
    if not isinstance(defines, dict):
        raise OptionError(f"defines={defines!r}: expected a dict of NAME -> value (or None)")
    out = {}
    for k, v in defines.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise OptionError(f"defines: {k!r} is not a macro name")
        if v is not None and not isinstance(v, (str, int, float)):
            raise OptionError(f"defines[{k!r}]={v!r}: expected a str, a number or None")
        out[k] = v if v is None else str(v)
    return out


def _include_dirs(include_dirs) -> list[str]:
    if include_dirs is None:
        return []
    if isinstance(include_dirs, (str, os.PathLike)):
        include_dirs = [include_dirs]  # one directory, not a string of one-letter ones
    try:
        dirs = list(include_dirs)
    except TypeError:
        raise OptionError(f"include_dirs={include_dirs!r}: expected a list of directories") \
            from None
    for d in dirs:
        if not isinstance(d, (str, os.PathLike)):
            raise OptionError(f"include_dirs: {d!r} is not a directory name")
    return [str(d) for d in dirs]


def profiler(source, defines=None, include_dirs=None, backend="auto", arch=None):
    """A cached Profiler for a source path or text (re-reading a changed file or header).
    `arch` (sm_90, ...): the architecture whose `__CUDA_ARCH__` device code is read with
    (default: the GPU's, else sm_90)."""
    from .runtime.session import Profiler

    defines = _defines(defines)
    include_dirs = _include_dirs(include_dirs)
    if not isinstance(backend, str):
        raise OptionError(f"backend={backend!r}: use 'auto', 'gpu' or 'cpu'")
    if isinstance(source, bytes):
        raise ArgumentError("source: pass the CUDA source as a str (or a path), not bytes")
    if not isinstance(source, (str, Path)):
        raise ArgumentError(f"source: expected CUDA source text or a path to a .cu file, not "
                            f"{type(source).__name__}")
    if _is_path(source):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{path}: no such file" if not path.exists() else
                             f"{path}: not a regular file")
        key = ("path", str(path.resolve()), tuple(sorted(defines.items())),
               tuple(include_dirs), backend, arch)
        make = lambda: Profiler(path, defines=defines, include_dirs=include_dirs,  # noqa: E731
                                backend=backend, arch=arch)
    else:
        key = ("text", source, tuple(sorted(defines.items())), tuple(include_dirs), backend,
               arch)
        make = lambda: Profiler(text=source, name="<kernel>.cu", defines=defines,  # noqa: E731
                                include_dirs=include_dirs, backend=backend, arch=arch)
    prof = _PROFILERS.get(key)
    if prof is None or not _current(prof):
        prof = make()
        prof._file_stamps = [(f.path, _stamp(f.path)) for f in prof.tu.files if f.path]
        _PROFILERS[key] = prof
    return prof


def profile(source_or_path, kernel, grid, block, args, shared_mem=0, profile="both",
            mode="default", threshold=None, enhanced=False, sampling=None, backend="auto",
            counter_bits=32, sampler="rng", defines=None, include_dirs=None, repeat=0,
            compare_native=True, timeout=None, arch=None, device=None,
            sampling_seed=0) -> Report:
    """Profile one launch. Arrays (numpy, or CuPy on the GPU backend) are left as the native
    (uninstrumented) kernel leaves them. `kernel` may be a template name expression
    (`matmul<16>`). `timeout`: seconds a launch may run (None: the backend's default, 120 s on
    the CPU; 0: no limit). Misuse raises a GmprofError subclass naming the argument (see
    docs/errors.md); failed checks (outputs that differ, out-of-range accesses) are on
    `report.warnings` as Diagnostics whose `failed_check` is true, and are raised as
    gmprof.CheckWarning warnings. `device` ('auto', 'gpu', 'cpu') or `backend` (the same
    names, or CuPy's 'nvrtc'/'nvcc') chooses where it runs, as in every API function."""
    m = make_mode(mode, profile=profile, threshold=threshold, counter_bits=counter_bits,
                  enhanced=enhanced, sampling=sampling, sampler=sampler,
                  sampling_seed=sampling_seed)
    prof = profiler(source_or_path, defines, include_dirs, device_choice(device, backend),
                    arch)
    report = prof.launch(kernel, grid, block, _arg_list(args), shared_mem, mode=m,
                         repeat=repeat, compare_native=compare_native, timeout=timeout)
    _warn_failed_checks(_with_source(report, prof))
    return report


def _arg_list(args) -> list:
    if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__iter__") or \
            hasattr(args, "dtype"):
        raise ArgumentError(f"args: expected a list or tuple with one argument per kernel "
                            f"parameter, not {type(args).__name__}")
    return list(args)


def parse_options(options) -> tuple[dict, list]:
    """CuPy/NVRTC-style options -> (defines, include dirs); others are ignored."""
    if options is None:
        return {}, []
    if isinstance(options, str):
        options = [options]
    try:
        opts = list(options)
    except TypeError:
        raise OptionError(f"options={options!r}: expected a tuple of compiler options") from None
    for o in opts:
        if not isinstance(o, str):
            raise OptionError(f"options: {o!r} is not a str")
    defines, includes = {}, []
    i = 0
    while i < len(opts):
        o = opts[i]
        if o in ("-D", "-I", "--define-macro", "--include-path"):
            if i + 1 >= len(opts):
                raise OptionError(f"options: {o} needs a value (e.g. {o} NAME)")
            body, i = opts[i + 1], i + 1
            o = o[:2] if o.startswith("-") and len(o) == 2 else \
                ("-D" if o == "--define-macro" else "-I")
            o = o + body
        elif o.startswith(("--define-macro=", "--include-path=")):
            o = ("-D" if o.startswith("--define") else "-I") + o.split("=", 1)[1]
        if o.startswith("-D"):
            name, eq, value = o[2:].partition("=")
            if not name.isidentifier():
                raise OptionError(f"options: {o!r}: expected -DNAME or -DNAME=VALUE")
            defines[name] = value if eq else None
        elif o.startswith("-I"):
            if not o[2:]:
                raise OptionError("options: -I needs a directory")
            includes.append(o[2:])
        i += 1
    return defines, includes


def load(path, kernel: str | None = None):
    """Reports back from files: a saved run (`gmprof profile ... -o run.json`, checked as
    `gmprof report` checks it), or the report files a whole program built with gmprof nvcc
    wrote (one path or a list of them, decoded and merged as `gmprof report` merges them).
    Returns the Report of `kernel=`, or of the only kernel, else the list of every kernel's
    Report. Every count comes back (a large array's packed counts too: countcodec.py)."""
    from .program.records import RAW_SCHEMA
    from .report import fromdoc

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise ArgumentError("load: no file given")
    if len(paths) > 1:  # a report file's counts file is read through it (countsfile.py)
        from .program.countsfile import without_counts_files

        paths = without_counts_files(paths)
    raw = [p for p in paths if fromdoc.schema_of(p) == RAW_SCHEMA]
    if raw and len(raw) == len(paths):
        from .program.records import decode

        return fromdoc.pick(list(decode([str(p) for p in raw]).reports.values()), kernel,
                            paths[0])
    if len(paths) != 1:
        raise InputError(f"{paths[0]}: gmprof.load reads one saved run, or any number of "
                         "report files written by programs built with gmprof nvcc (merged)")
    return fromdoc.load(paths[0], kernel)


_DEVICES = ("auto", "gpu", "cpu")
_CUPY_COMPILERS = ("nvrtc", "nvcc")


def device_choice(device, backend) -> str:
    """Where kernels run, from the same two keywords in every API function (profile,
    RawModule, RawKernel): `device` is 'auto', 'gpu' or 'cpu'; `backend` is either one of those
    too (gmprof's spelling: `gmprof profile --backend`) or CuPy's compiler, 'nvrtc' or 'nvcc',
    accepted as CuPy accepts it and leaving the device to `device` (gmprof compiles the
    instrumented code with NVRTC either way: the text it generates is written for NVRTC)."""
    if not isinstance(backend, str):  # every API function's default is a name
        raise OptionError(f"backend={backend!r}: use 'auto', 'gpu' or 'cpu' (or CuPy's "
                          "compiler, 'nvrtc' or 'nvcc')")
    if device is not None and device not in _DEVICES:
        raise OptionError(f"device={device!r}: use 'auto', 'gpu' or 'cpu'")
    if backend in ("gpu", "cpu"):  # 'auto' chooses nothing: device= may
        if device not in (None, "auto", backend):
            raise OptionError(f"backend={backend!r} and device={device!r} disagree: give one "
                              "of them")
        return backend
    if backend not in ("auto",) + _CUPY_COMPILERS:
        raise OptionError(f"backend={backend!r}: where kernels run ('auto', 'gpu', 'cpu') or "
                          "CuPy's compiler, 'nvrtc' or 'nvcc' (device='auto', 'gpu' or 'cpu' "
                          "also chooses where)")
    return device or "auto"


def _warn_failed_checks(report, stacklevel: int = 3) -> None:
    """Each failed check of a report (outputs that differ, an access out of range) as a
    gmprof.CheckWarning: shown once by default, an exception under
    warnings.simplefilter("error", gmprof.CheckWarning)."""
    import warnings

    from .errors import CheckWarning

    for w in report.warnings:
        if getattr(w, "failed_check", False):
            warnings.warn(CheckWarning(w), stacklevel=stacklevel)


def _with_source(report, prof):
    """The report with its kernel's code attached (the source view, to_pandas('lines'))."""
    from .report.source import attach_source

    attach_source(report, prof.tu)
    return report


_COMPILED = (b"\x7fELF", b"\x50\xed\x55\xba")  # a cubin (ELF) or a fatbin's magic


def _module_path(path) -> Path:
    """CuPy's RawModule(path=...) names a compiled module (cubin, fatbin, PTX); gmprof needs
    the CUDA source to instrument, which it reads from `path` whatever the file's name (a
    .cu file under another name). A compiled module is refused with a plain error."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"path={path!r}: expected a path to a .cu file")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file" if not p.exists() else
                         f"{p}: not a regular file")
    try:
        with open(p, "rb") as fh:
            head = fh.read(4096)
    except OSError as e:
        raise InputError(f"{p}: cannot be read: {e.strerror}") from None
    if head.startswith(_COMPILED) or b"\n.version" in head or head.startswith(b".version"):
        raise InputError(f"{p}: a compiled module (cubin, fatbin or PTX), which CuPy's "
                         "RawModule(path=...) loads; gmprof instruments CUDA source: give "
                         "path= the .cu file (any name) or code= its text")
    return p


class RawModule:
    """Drop-in for cupy.RawModule: `get_function(name)` gives a RawKernel whose calls launch
    the instrumented kernel (outputs exactly as the original's) and count.

        mod = gmprof.RawModule(code=src, options=("-DN=64",), name_expressions=["mm<16>"])
        k = mod.get_function("mm<16>")
        k((4,), (256,), (a, b))
        print(k.report)
    """

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False, device="auto", mode="default",
                 **mode_options):
        if (code is None) == (path is None):
            raise ArgumentError("RawModule: give exactly one of code= (CUDA source text) and "
                                "path= (a .cu file)")
        if path is not None:
            source = _module_path(path)
        else:
            if not isinstance(code, str):
                raise ArgumentError(f"code: expected CUDA source text (a str), not "
                                    f"{type(code).__name__}")
            source = code
        unknown = set(mode_options) - {"profile", "threshold", "counter_bits", "enhanced",
                                       "sampling", "sampler"}
        if unknown:
            raise OptionError(f"RawModule: unknown option(s) {', '.join(sorted(unknown))}")
        self.code = code
        self.path = path
        self.options = tuple(options)
        self.backend = backend
        self.name_expressions = list(name_expressions or [])
        self.device = device_choice(device, backend)
        defines, includes = parse_options(options)
        self._source = (source, defines, includes, self.device)
        profiler(*self._source)  # read and analysed now: errors in the code show here
        self.mode = make_mode(mode, **mode_options)

    def _profiler(self):
        """The cached Profiler of the code (re-read when a file it includes changed)."""
        return profiler(*self._source)

    def get_global(self, name: str):
        """cupy.RawModule.get_global (gmprof/cupy_parity.py): the native module's variable,
        a cupy.cuda.MemoryPointer on a GPU, a writable numpy uint8 view on the CPU backend."""
        from .cupy_parity import get_global

        return get_global(self, name)

    def get_function(self, name: str) -> "RawKernel":
        """The kernel `name` (a name expression for a template: 'mm<16>')."""
        if not isinstance(name, str) or not name.strip():
            raise ArgumentError(f"name={name!r}: expected the kernel's name (a str)")
        k = RawKernel.__new__(RawKernel)
        k.__dict__.update({key: v for key, v in self.__dict__.items()})
        k.name = name
        k.report, k.reports = None, []
        return k


class RawKernel(KernelAttributes, RawModule):
    """Drop-in for cupy.RawKernel: calls launch the instrumented kernel (outputs exactly as
    the original's) and merge each call's counts into `self.report` (print it for a summary).
    `device` chooses where it runs ('auto', 'gpu', 'cpu'); `backend` is CuPy's compiler."""

    def __init__(self, code: str, name: str, options=(), backend="nvrtc", *,
                 translate_cucomplex=False, enable_cooperative_groups=False, jitify=False,
                 device="auto", mode="default", name_expressions=None, **mode_options):
        if not isinstance(code, str):
            raise ArgumentError(f"code: expected CUDA source text (a str), not "
                                f"{type(code).__name__}")
        if not isinstance(name, str) or not name.strip():
            raise ArgumentError(f"name={name!r}: expected the kernel's name (a str)")
        super().__init__(code, options=options, backend=backend, device=device, mode=mode,
                         name_expressions=name_expressions, **mode_options)
        self.name = name
        self.report: Report | None = None
        self.reports: list[Report] = []

    def __call__(self, grid, block, args, *, shared_mem=0, name=None, timeout=None):
        self._check_shared_mem(shared_mem)
        # looked up per call: a header the code includes may have changed since
        prof = profiler(*self._source)
        report = prof.launch(name or self.name, grid, block, _arg_list(args), shared_mem,
                             mode=self.mode, timeout=timeout)
        _with_source(report, prof)
        _warn_failed_checks(report)
        self.reports.append(report)
        if self.report is None:
            import copy

            self.report = copy.deepcopy(report)
        else:
            self.report.merge(report)
        return None
