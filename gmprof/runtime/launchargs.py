"""Launch arguments: check each against its parameter, give each run its own copies, compare.

Stage: host runtime, before and after a profiled launch. Input: the kernel's parameters (from
the frontend's AST), the user's arguments (numpy or CuPy arrays, lists of arrays for a pointer
to pointers, Python or numpy scalars, np.void for a struct), the backend. Output:

- `convert()`: one `LaunchArg` per parameter, or an ArgumentError (a wrong type: also a
  TypeError) / ArgumentValueError (a value that does not fit: also a ValueError) naming the
  parameter. Nothing is converted silently: None, a string, a complex number for a real
  parameter, 2**40 for an `int`, 1e300 for a `float`, a fractional number for an integer, an
  object that only looks like an array, a read-only array for a parameter the kernel may write.
- `Copies`: the device arguments of one run. The native run and the instrumented run each get
  their own copy of everything the kernel can write, so the user's data is written once, by the
  native run, whatever the instrumented run does. A pointer to pointers (`float **rows`) takes a
  list of arrays: each is copied for each run and the run gets its own table of their addresses.
  An array of raw addresses (uint64) is accepted only where the kernel cannot write through
  them (`const float *const *`); otherwise the argument is refused, since gmprof cannot copy
  memory it cannot see. A struct passed by value that holds pointers is refused for the same
  reason.
- `compare()` and `store_back()`: outputs byte for byte, on the device, and the native results
  into the user's arrays.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, field

import numpy as np

from gmprof.errors import ArgumentError, ArgumentValueError

from .launchenv import clean_type, vector_base

# dtypes whose bytes mean the same on the host and the device (no Python objects, no
# datetimes): booleans, integers, floats, complex, fixed-size byte strings, records
_PLAIN_KINDS = "biufcSV"


@dataclass
class LaunchArg:
    """One argument, checked against its parameter."""

    name: str              # the parameter's name
    kind: str              # array, arrays (pointer to pointers, a list), addresses, scalar, struct
    value: object          # the user's array / list of arrays / the converted scalar
    writable: bool = True  # whether the kernel may write what it points to
    placeholder: object = None  # for 'arrays': a uint64 array of the table's shape

    @property
    def arrays(self) -> list:
        """The user's arrays behind this argument (what the kernel may read or write)."""
        if self.kind in ("array", "addresses"):
            return [self.value]
        if self.kind == "arrays":
            return list(self.value)
        return []


def _levels(t) -> list:
    """The declarator chain of a parameter's type, outermost first (PtrDecl, ArrayDecl,
    TypeDecl), for the const of each level."""
    out = []
    while t is not None and type(t).__name__ in ("PtrDecl", "ArrayDecl", "TypeDecl"):
        out.append(t)
        if type(t).__name__ == "TypeDecl":
            break
        t = getattr(t, "type", None)
    return out


def _const(node) -> bool:
    return "const" in (getattr(node, "quals", None) or [])


def _pointee_const(levels, start: int) -> bool:
    """Whether everything from level `start` inwards is const (array levels take their element's
    const)."""
    nodes = [n for n in levels[start:] if type(n).__name__ != "ArrayDecl"]
    return bool(nodes) and all(_const(n) for n in nodes)


def _is_device_array(a, backend) -> bool:
    if isinstance(a, np.ndarray):
        return True
    # a CuPy array on the GPU backend (run on in place); the CPU backend takes numpy only
    return backend.name == "gpu" and hasattr(a, "__cuda_array_interface__")


def _what(a) -> str:
    if isinstance(a, np.ndarray):
        return f"a {a.dtype} array of shape {a.shape}"
    return f"{type(a).__name__} {a!r}" if isinstance(a, (int, float, complex, str)) and \
        len(repr(a)) < 40 else type(a).__name__


def convert(facts, env, args, backend, program=None) -> tuple[list, list[LaunchArg]]:
    """(arguments for the rest of the launch, one LaunchArg each). Pointer parameters are
    arrays in the first list (a placeholder table for a list of arrays), scalars their C type."""
    from pycparser import c_ast

    from gmprof.passes.symbols import type_text

    kernel = facts.name
    out, largs = [], []
    scalars = {}
    for param, arg in zip(facts.function.params, args):
        name = getattr(param, "name", None) or "?"
        t = param.type
        where = f"argument {name!r} of {kernel}"
        levels = _levels(t)
        elem = type_text(t)
        if isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            to_pointers = isinstance(getattr(t, "type", None), c_ast.PtrDecl)
            if to_pointers:
                la = _pointer_to_pointers(where, name, elem, levels, arg, env, backend)
            else:
                la = _pointer(where, name, elem, levels, arg, env, backend)
            largs.append(la)
            out.append(la.placeholder if la.kind == "arrays" else la.value)
            continue
        if isinstance(arg, (list, tuple)) or (_is_device_array(arg, backend) and
                                               getattr(arg, "ndim", 0) > 0):
            raise ArgumentError(f"{where} is a scalar ({elem}); {_what(arg)} was given")
        want = env.numpy_type(elem)
        if want is None:
            la = _struct(where, name, elem, arg, program)
        else:
            value = scalar(where, elem, want, arg)
            scalars[name] = value
            la = LaunchArg(name, "scalar", value)
        largs.append(la)
        out.append(la.value)
    env.scalars.update({k: v for k, v in scalars.items()})
    return out, largs


def check_records(facts, env, largs) -> None:
    """A structured (record) array passed to a pointer parameter holds the kernel's structs
    byte for byte only if its itemsize is the struct's size: checked once the compiled module
    has told the struct's size (LaunchEnv.sizes), an error at the parameter otherwise. (numpy
    packs a dtype's fields unless it is made with align=True; C aligns them.)"""
    from gmprof.frontend import cxx_ast as X
    from gmprof.passes.symbolic import Unknown
    from gmprof.passes.symbols import type_text

    params = {getattr(p, "name", None): p for p in facts.function.params}
    for la in largs:
        param = params.get(la.name)
        if la.kind != "array" or param is None or not isinstance(la.value, np.ndarray) or \
                la.value.dtype.kind != "V":
            continue
        elem = type_text(param.type)
        try:
            size = int(env.sizeof(clean_type(elem)))
        except Unknown:
            continue  # a size gmprof cannot tell: the bytes go as given
        dtype = la.value.dtype
        if size == dtype.itemsize:
            continue
        sp = X.span(param)
        where = sp.source.location(sp.start) if sp is not None else None
        hint = " (np.dtype(..., align=True) lays the fields out as C does)" \
            if dtype.fields and np.dtype(dtype.descr, align=True).itemsize == size else ""
        raise ArgumentError(f"argument {la.name!r} of {facts.name} is {elem} *, a struct of "
                            f"{size} bytes; the structured array given has {dtype.itemsize}-"
                            f"byte elements ({dtype}){hint}", where)


def _check_array(where, elem, arr, want, vb, writable, backend):
    if not _is_device_array(arr, backend):
        hint = " (np.asarray makes one)" if isinstance(arr, (list, tuple, range)) else ""
        raise ArgumentError(f"{where} is a pointer ({elem} *): pass an array (numpy"
                            f"{', or CuPy' if backend.name == 'gpu' else ''}){hint}, not "
                            f"{_what(arr)}")
    dtype = np.dtype(arr.dtype)
    if dtype.kind not in _PLAIN_KINDS or dtype.itemsize == 0 or dtype.hasobject:
        raise ArgumentError(f"{where} is {elem} *; an array of {dtype} cannot be passed to a "
                            "kernel (it holds Python objects or nothing)")
    if want is not None and dtype != np.dtype(want):
        raise ArgumentError(f"{where} is {elem} *; the array given is {dtype} (expected "
                            f"{np.dtype(want)})")
    if want is None and vb is not None and dtype != np.dtype(vb):
        raise ArgumentError(f"{where} is {elem} *; the array given is {dtype} (expected "
                            f"{np.dtype(vb)} components)")
    if writable and isinstance(arr, np.ndarray) and not arr.flags.writeable:
        raise ArgumentError(f"{where} is {elem} * (not const), so the kernel may write it, "
                            "and the array given is read-only: pass a writable copy "
                            "(arr.copy()), or declare the parameter const")


def _pointer(where, name, elem, levels, arg, env, backend) -> LaunchArg:
    want = env.numpy_type(elem)
    vb = vector_base(clean_type(elem))
    writable = not _pointee_const(levels, 1)
    _check_array(where, elem, arg, want, vb, writable, backend)
    return LaunchArg(name, "array", arg, writable)


def _pointer_to_pointers(where, name, elem, levels, arg, env, backend) -> LaunchArg:
    inner = elem + " *"
    # the kernel cannot write the memory the table points to when it and everything below
    # is const (`const float *const *rows`): raw addresses are then safe to share
    deep_const = _pointee_const(levels, 2)
    if isinstance(arg, (list, tuple)):
        want = env.numpy_type(elem)
        vb = vector_base(clean_type(elem))
        if len(arg) == 0:
            raise ArgumentValueError(f"{where} is a pointer to pointers ({inner} *): the list "
                                     "of arrays is empty")
        for k, a in enumerate(arg):
            _check_array(f"{where} (element {k} of the list)", elem, a, want, vb,
                         not deep_const, backend)
        placeholder = np.zeros(len(arg), np.uint64)
        return LaunchArg(name, "arrays", list(arg), not deep_const, placeholder)
    if _is_device_array(arg, backend) and np.dtype(arg.dtype) == np.uint64 and deep_const:
        return LaunchArg(name, "addresses", arg, False)
    if _is_device_array(arg, backend) and np.dtype(arg.dtype) == np.uint64:
        raise ArgumentError(
            f"{where} is a pointer to pointers ({inner} *) through which the kernel may "
            "write; an array of raw addresses cannot be copied for gmprof's two runs (the "
            "native one and the instrumented one), so the memory behind it would be written "
            "twice: pass the pointed-to arrays as a list ([a0, a1, ...]) and gmprof copies "
            "each for each run")
    if _is_device_array(arg, backend):
        raise ArgumentError(f"{where} is a pointer to pointers ({inner} *): pass a list of "
                            f"arrays (or, for const data, an array of uint64 addresses); "
                            f"the array given is {np.dtype(arg.dtype)}")
    raise ArgumentError(f"{where} is a pointer to pointers ({inner} *): pass a list of "
                        f"arrays, not {_what(arg)}")


def scalar(where: str, elem: str, want, arg):
    """A Python or numpy scalar as the parameter's numpy type; nothing is converted that would
    change its value (except a float's rounding to float32)."""
    if isinstance(arg, np.ndarray):
        if arg.ndim != 0:
            raise ArgumentError(f"{where} is a scalar ({elem}); an array was given")
        arg = arg[()]
    dtype = np.dtype(want)
    if arg is None or isinstance(arg, (str, bytes)) or not isinstance(
            arg, (bool, numbers.Number, np.generic)) or isinstance(arg, np.void):
        raise ArgumentError(f"{where} is {elem}: pass a number, not {_what(arg)}")
    if isinstance(arg, (complex, np.complexfloating)) and dtype.kind != "c":
        raise ArgumentError(f"{where} is {elem}: a complex number ({arg!r}) would lose its "
                            "imaginary part")
    if dtype.kind == "b":
        if isinstance(arg, (bool, np.bool_)) or (isinstance(arg, (numbers.Integral, np.integer))
                                                and int(arg) in (0, 1)):
            return np.bool_(bool(arg))
        raise ArgumentValueError(f"{where} is bool: {arg!r} is not true, false, 0 or 1")
    if dtype.kind in "iu":
        if isinstance(arg, (float, np.floating)):
            x = float(arg)
            if not math.isfinite(x) or x != math.floor(x):
                raise ArgumentValueError(f"{where} is {elem}: {arg!r} is not a whole number")
            value = int(x)
        else:
            value = int(arg)
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise ArgumentValueError(f"{where} is {elem}: {arg!r} does not fit (it takes "
                                     f"{info.min} to {info.max})")
        return want(value)
    if dtype.kind == "f":
        try:
            x = float(arg)
        except OverflowError:
            raise ArgumentValueError(f"{where} is {elem}: {arg!r} is too large") from None
        with np.errstate(over="ignore"):
            value = want(x)
        if math.isinf(float(value)) and math.isfinite(x):
            raise ArgumentValueError(f"{where} is {elem}: {arg!r} is too large (it would "
                                     "become infinity)")
        return value
    if dtype.kind == "c":
        return want(complex(arg))
    raise ArgumentError(f"{where} is {elem}: no conversion from {_what(arg)}")


# -- structs passed by value ---------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _struct_body(texts, name: str) -> str | None:
    pats = [re.compile(r"\b(?:struct|class|union)\s+(?:__align__\s*\(\s*\d+\s*\)\s*|"
                       r"alignas\s*\([^)]*\)\s*)?" + re.escape(name) + r"\b[^;{()]*\{"),
            re.compile(r"\btypedef\s+(?:struct|union)\s*\w*\s*\{")]
    for text in texts:
        text = _COMMENT.sub(" ", text)
        for k, pat in enumerate(pats):
            for m in pat.finditer(text):
                body, end = _braced(text, m.end() - 1)
                if body is None:
                    continue
                if k == 1 and not re.match(r"\s*" + re.escape(name) + r"\s*;", text[end:]):
                    continue
                return body
    return None


def _braced(text: str, start: int):
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    return None, start


def struct_holds_pointers(texts, name: str, depth: int = 0) -> bool | None:
    """Whether a struct's members (or its member structs') include a pointer or reference;
    None when its definition is not in the texts. Member function bodies are skipped."""
    body = _struct_body(texts, name)
    if body is None or depth > 8:
        return None
    # drop member function bodies, then look at each member declaration
    flat, level, kept = [], 0, []
    for ch in body:
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
            continue
        if level == 0:
            kept.append(ch)
    flat = "".join(kept)
    for decl in flat.split(";"):
        decl = decl.strip()
        if not decl or "(" in decl:
            continue  # a member function declaration, or empty
        if "*" in decl or "&" in decl:
            return True
        words = re.findall(r"[A-Za-z_]\w*", decl)
        for w in words[:-1]:
            if w not in ("const", "volatile", "unsigned", "signed", "int", "float", "double",
                         "char", "short", "long", "bool", "struct", "union", "static",
                         "mutable") and w != name:
                inner = struct_holds_pointers(texts, w, depth + 1)
                if inner:
                    return True
    return False


def _struct(where, name, elem, arg, program) -> LaunchArg:
    if arg is None or isinstance(arg, (str, list, tuple, dict)):
        raise ArgumentError(f"{where} is a struct passed by value ({elem}): pass its bytes as a "
                            f"numpy scalar or np.void of its size, not {_what(arg)}")
    if program is not None:
        texts = [f.text for f in program.tu.files]
        if struct_holds_pointers(texts, clean_type(elem)):
            raise ArgumentError(
                f"{where} is a struct passed by value ({elem}) that holds pointers: gmprof "
                "cannot give its native and instrumented runs their own copies of the memory "
                "behind them, which would be written twice; pass those arrays as separate "
                "pointer parameters")
    return LaunchArg(name, "struct", arg)


# -- one run's copies ------------------------------------------------------------------------

@dataclass
class Copies:
    """The device arguments of one run, copied from the user's data as it was before any run.

    Everything stays on the device: the snapshot is taken there, each run's copies are made
    from it there, and outputs are compared there (a 64 MB array per launch crossed PCIe four
    times and was compared as Python bytes on the host: 10 of jcb_v1's 67 s)."""

    backend: object
    largs: list
    host: list  # per LaunchArg: device snapshots of its arrays (taken once, shared)
    args: list = field(default_factory=list)
    device: list = field(default_factory=list)  # per LaunchArg: its device arrays

    @classmethod
    def snapshot(cls, backend, largs) -> list:
        """What every array the kernel may read or write held before any run, on the device:
        the user's own arrays where they are device arrays (nothing writes them before
        store_back), device copies of host arrays on a GPU."""
        return [[_snapshot(backend, a) for a in la.arrays] for la in largs]

    def __post_init__(self):
        for la, snaps in zip(self.largs, self.host):
            if la.kind == "array":
                d = self._device(la.value, snaps[0], la.writable)
                self.device.append([d])
                self.args.append(d)
            elif la.kind == "addresses":
                d = _copy(self.backend, snaps[0])
                self.device.append([d])
                self.args.append(d)
            elif la.kind == "arrays":
                ds = [_copy(self.backend, h) for h in snaps]
                table = np.array([self.backend.address(d) for d in ds], np.uint64)
                self.device.append(ds)
                self.args.append(self.backend.to_device(table))
            else:
                self.device.append([])
                self.args.append(la.value)

    def _device(self, user, snap, writable):
        if self.backend.name == "gpu" and not isinstance(user, np.ndarray) and not writable:
            return user  # a CuPy array the kernel only reads: no copy needed
        return _copy(self.backend, snap)

    def read(self) -> list:
        """Per LaunchArg: host arrays of what the run left (copies)."""
        return [[np.array(self.backend.to_host(d), copy=True) for d in ds] for ds in self.device]


def _snapshot(backend, a):
    if backend.name == "gpu":
        return backend.to_device(a) if isinstance(a, np.ndarray) else a
    return np.ascontiguousarray(a)  # the CPU backend's runs copy it into guarded memory


def _copy(backend, a):
    """A fresh device array with a's bytes (device to device)."""
    copy = getattr(backend, "copy", None)
    return copy(a) if copy is not None else backend.to_device(backend.to_host(a))


def same_bytes(backend, a, b) -> bool:
    """Whether two arrays (device or host) hold the same bytes, compared where they live."""
    same = getattr(backend, "same_bytes", None)
    if same is not None:
        return same(a, b)
    a, b = np.asarray(backend.to_host(a)), np.asarray(backend.to_host(b))
    return host_same_bytes(a, b)


def host_same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Byte equality of two host arrays without copying them (NaNs and -0.0 compare as bits)."""
    if a.nbytes != b.nbytes:
        return False
    a, b = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
    word = np.uint64 if a.nbytes % 8 == 0 else np.uint8
    return bool(np.array_equal(a.view(np.uint8).view(word), b.view(np.uint8).view(word)))


def compare(native: list, inst: list, largs, backend=None) -> list[str]:
    """Names of the arguments whose memory differs between the runs, byte for byte (device
    arrays with a backend, compared on the device; host arrays without)."""
    out = []
    for la, ns, is_ in zip(largs, native, inst):
        for k, (n, i) in enumerate(zip(ns, is_)):
            same = same_bytes(backend, n, i) if backend is not None else \
                host_same_bytes(np.asarray(n), np.asarray(i))
            if not same:
                out.append(la.name if la.kind != "arrays" else f"{la.name}[{k}]")
    return out


def store_back(backend, largs, results: list, before: list) -> None:
    """Leave the user's arrays as the native run left them (only those it changed, so a
    read-only array the kernel did not write is left alone). results and before: device
    arrays (Copies.device and Copies.snapshot). Every comparison is made before any write:
    a snapshot may be the user's array itself."""
    changed = []
    for la, outs, befores in zip(largs, results, before):
        if la.kind not in ("array", "arrays"):
            continue
        for user, out, old in zip(la.arrays, outs, befores):
            if not same_bytes(backend, out, old):
                changed.append((user, out))
    for user, out in changed:
        if isinstance(user, np.ndarray):
            np.copyto(user, np.asarray(backend.to_host(out)).reshape(user.shape))
        else:  # a CuPy array: device to device
            user[...] = out.reshape(user.shape)


__all__ = ["LaunchArg", "convert", "scalar", "Copies", "compare", "store_back", "same_bytes",
           "host_same_bytes",
           "struct_holds_pointers"]
