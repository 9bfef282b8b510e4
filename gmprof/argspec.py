"""Launch arguments from the command line: `n=1024`, `in=float32[1024,1024]:random`.

    NAME=NUMBER                  a scalar (converted to the parameter's C type at launch)
    NAME=DTYPE[D0,D1,...]:INIT   an array; INIT is zeros, ones, random, arange, fill=X,
                                 or a .npy file (NAME=file.npy also works alone)
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .errors import GmprofError

_ARRAY = re.compile(r"^([A-Za-z0-9_]+)\[([0-9, ]+)\](?::(.*))?$")


def parse_dim3(text: str, what: str) -> tuple[int, int, int]:
    try:
        parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        raise GmprofError(f"--{what} {text!r}: expected X[,Y[,Z]] with positive integers")
    if not 1 <= len(parts) <= 3 or any(p < 1 for p in parts):
        raise GmprofError(f"--{what} {text!r}: expected X[,Y[,Z]] with positive integers")
    return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]


def parse_arg(spec: str, rng: np.random.Generator):
    name, eq, value = spec.partition("=")
    if not eq or not name:
        raise GmprofError(f"--arg {spec!r}: expected NAME=VALUE")
    value = value.strip()
    if value.endswith(".npy") and ":" not in value:
        return name, _load(value, spec)
    m = _ARRAY.match(value)
    if m:
        dtype_text, dims, init = m.group(1), m.group(2), (m.group(3) or "zeros")
        try:
            dtype = np.dtype(dtype_text)
        except TypeError:
            raise GmprofError(f"--arg {spec!r}: unknown dtype {dtype_text!r}")
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        return name, _make(shape, dtype, init, rng, spec)
    try:
        number = int(value, 0)
    except ValueError:
        try:
            number = float(value)
        except ValueError:
            raise GmprofError(f"--arg {spec!r}: {value!r} is neither a number nor an array "
                              "spec like float32[1024]:random")
    return name, number


def _load(path: str, spec: str) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        raise GmprofError(f"--arg {spec!r}: no such file {path}")
    try:
        return np.load(p)
    except Exception as exc:
        raise GmprofError(f"--arg {spec!r}: cannot read {path}: {exc}")


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
        try:
            return np.full(shape, float(init[5:])).astype(dtype)
        except ValueError:
            raise GmprofError(f"--arg {spec!r}: bad fill value")
    if init.endswith(".npy"):
        arr = _load(init, spec)
        if arr.shape != tuple(shape):
            raise GmprofError(f"--arg {spec!r}: {init} has shape {arr.shape}, not {shape}")
        return arr.astype(dtype)
    raise GmprofError(f"--arg {spec!r}: unknown initialiser {init!r} (zeros, ones, random, "
                      "arange, fill=X, FILE.npy)")
