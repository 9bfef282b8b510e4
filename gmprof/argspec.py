"""Launch arguments from the command line: `n=1024`, `in=float32[1024,1024]:random`.

    NAME=NUMBER                  a scalar (converted to the parameter's C type at launch)
    NAME=DTYPE[D0,D1,...]:INIT   an array; INIT is zeros, ones, random, arange, fill=X,
                                 or a .npy file (NAME=file.npy also works alone)

A .npy file given alone may hold a structured array (np.dtype([('x', '<f4'), ('m', '<i4')])),
an array of structs: its bytes are passed as they are, and the launch checks its itemsize
against the parameter's struct (launchargs.check_records).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .errors import ArgumentValueError, InputError, OptionError

_ARRAY = re.compile(r"^([A-Za-z0-9_]+)\[([0-9, ]*[0-9][0-9, ]*)\](?::(.*))?$")
# kinds of dtype whose bytes a kernel can use: no Python objects, strings or datetimes
_KERNEL_KINDS = "biufc"
# an array larger than this is refused before numpy tries (a typo such as float32[10**11])
MAX_ARRAY_BYTES = 1 << 36


def parse_dim3(text: str, what: str) -> tuple[int, int, int]:
    """`--grid 16,16` -> (16, 16, 1), within CUDA's limits (gmprof.options.launch_dims)."""
    from .options import launch_dims

    try:
        return launch_dims(text, what)
    except OptionError as e:
        raise OptionError(f"--{e.message}") from None


def parse_arg(spec: str, rng: np.random.Generator):
    name, eq, value = spec.partition("=")
    name = name.strip()
    if not eq or not name:
        raise OptionError(f"--arg {spec!r}: expected NAME=VALUE")
    value = value.strip()
    if value.endswith(".npy") and ":" not in value:
        return name, _load(value, spec)
    m = _ARRAY.match(value)
    if m:
        dtype_text, dims, init = m.group(1), m.group(2), (m.group(3) or "zeros")
        try:
            dtype = np.dtype(dtype_text)
        except TypeError:
            raise OptionError(f"--arg {spec!r}: unknown dtype {dtype_text!r}") from None
        if dtype.kind not in _KERNEL_KINDS:
            raise OptionError(f"--arg {spec!r}: {dtype} cannot be passed to a kernel (use a "
                              "numeric dtype such as float32, int32, uint8)")
        parts = [d.strip() for d in dims.split(",")]
        if any(not d for d in parts):
            raise OptionError(f"--arg {spec!r}: expected dimensions like [1024] or [64,64]")
        shape = tuple(int(d) for d in parts)
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes > MAX_ARRAY_BYTES:
            raise ArgumentValueError(f"--arg {spec!r}: {nbytes:,} bytes is more than gmprof "
                                     f"allocates for one argument ({MAX_ARRAY_BYTES:,})")
        try:
            return name, _make(shape, dtype, init, rng, spec)
        except MemoryError:
            raise ArgumentValueError(f"--arg {spec!r}: not enough memory for {nbytes:,} bytes") \
                from None
    try:
        number = int(value, 0)
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            raise OptionError(f"--arg {spec!r}: {value!r} is neither a number nor an array "
                              "spec like float32[1024]:random") from None
    return name, number


def _load(path: str, spec: str) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--arg {spec!r}: no such file {path}")
    try:
        arr = np.load(p, allow_pickle=False)
    except MemoryError:
        raise ArgumentValueError(f"--arg {spec!r}: {path} is too large to load") from None
    except Exception as exc:  # numpy's many ways of saying "not a .npy file"
        raise InputError(f"--arg {spec!r}: cannot read {path}: {exc}") from None
    if not isinstance(arr, np.ndarray) or arr.dtype.hasobject or arr.dtype.itemsize == 0 or \
            arr.dtype.kind not in _KERNEL_KINDS + "V":
        raise InputError(f"--arg {spec!r}: {path} does not hold a numeric or structured array")
    return np.ascontiguousarray(arr)


def _make(shape, dtype, init, rng, spec) -> np.ndarray:
    if init == "zeros":
        return np.zeros(shape, dtype)
    if init == "ones":
        return np.ones(shape, dtype)
    if init == "arange":
        return np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
    if init == "random":
        if dtype.kind == "f":
            return rng.random(shape).astype(dtype)
        if dtype.kind in "iu":
            return rng.integers(0, 100, size=shape).astype(dtype)
        return rng.integers(0, 2, size=shape).astype(dtype)
    if init.startswith("fill="):
        text = init[5:].strip()
        try:
            value = int(text, 0) if dtype.kind in "iub" else float(text)
        except ValueError:
            raise OptionError(f"--arg {spec!r}: bad fill value {text!r} for {dtype}") from None
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= value <= info.max:
                raise ArgumentValueError(f"--arg {spec!r}: {value} does not fit {dtype}")
        return np.full(shape, value, dtype=dtype)
    if init.endswith(".npy"):
        arr = _load(init, spec)
        if arr.shape != tuple(shape):
            raise OptionError(f"--arg {spec!r}: {init} has shape {arr.shape}, not {shape}")
        if arr.dtype.kind == "V":
            raise OptionError(f"--arg {spec!r}: {init} holds a structured array ({arr.dtype}), "
                              f"which cannot be converted to {dtype}: give the file alone "
                              f"(NAME={init})")
        return arr.astype(dtype)
    raise OptionError(f"--arg {spec!r}: unknown initialiser {init!r} (zeros, ones, random, "
                      "arange, fill=X, FILE.npy)")
