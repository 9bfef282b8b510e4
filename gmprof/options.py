"""The ranges of gmprof's options, checked in one place for the command line and the Python API.

Stage: front door (before any work). Input: a value as the user gave it (a string from the
command line, or any Python object through the API) and the option's name. Output: the value as
the type gmprof uses, or an OptionError naming the option and the range. `cli_type` wraps a
checker for argparse, so that `--repeat -1` is a usage error (status 2) with argparse's
message, and `gmprof.profile(repeat=-1)` the same OptionError.

    repeat = count(args.repeat, "--repeat")               # 0, 1, 2, ...
    rates = rate_list("0.1,0.01", "--sampling")           # each in (0, 1]
    grid = launch_dims((1 << 32,), "grid")                # OptionError: past CUDA's limit
"""
from __future__ import annotations

import argparse
import math
import numbers

import numpy as np

from .errors import OptionError

# CUDA's limits on a launch's shape (every architecture since Kepler): gridDim.x < 2^31,
# gridDim.y and .z <= 65535; blockDim.x and .y <= 1024, .z <= 64, at most 1024 threads a block
MAX_GRID = (2 ** 31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
# a seed or count beyond this is a typing slip, and numpy would take minutes or fail obscurely
MAX_COUNT = 2 ** 31 - 1


def _integer(value, option: str) -> int:
    """An int from an int, a numpy integer, or a string of one (never a float, a bool, None)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 0)
        except ValueError:
            raise OptionError(f"{option} {value!r}: expected a whole number") from None
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise OptionError(f"{option}={value!r}: expected a whole number, not "
                          f"{type(value).__name__}")
    return int(value)


def not_text(value, option: str):
    """Through the Python API a number is a number: '5' is refused (the command line's
    checkers take text)."""
    if isinstance(value, (str, bytes)):
        raise OptionError(f"{option}={value!r}: expected a number, not a string")
    return value


def count(value, option: str, minimum: int = 0, maximum: int = MAX_COUNT) -> int:
    n = _integer(value, option)
    if n < minimum or n > maximum:
        raise OptionError(f"{option} {n}: expected a whole number from {minimum} to {maximum}")
    return n


def _real(value, option: str) -> float:
    if isinstance(value, str):
        try:
            x = float(value.strip())
        except ValueError:
            raise OptionError(f"{option} {value!r}: expected a number") from None
    elif isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating,
                                                           np.integer)):
        raise OptionError(f"{option}={value!r}: expected a number, not {type(value).__name__}")
    else:
        x = float(value)
    if not math.isfinite(x):
        raise OptionError(f"{option} {value!r}: expected a finite number")
    return x


def rate(value, option: str) -> float:
    x = _real(value, option)
    if not 0.0 < x <= 1.0:
        raise OptionError(f"{option} {value!r}: a sampling rate is in (0, 1]")
    return x


def rate_list(text, option: str) -> list[float]:
    if not isinstance(text, str):
        return [rate(v, option) for v in text]
    parts = [p.strip() for p in text.split(",")]
    if text.strip() == "":
        return []
    if any(p == "" for p in parts):
        raise OptionError(f"{option} {text!r}: expected rates separated by commas "
                          "(e.g. 0.1,0.01)")
    return [rate(p, option) for p in parts]


def seconds(value, option: str) -> float:
    """A time limit: 0 (or None) means none."""
    if value is None:
        return 0.0
    x = _real(value, option)
    if x < 0:
        raise OptionError(f"{option} {value!r}: expected seconds >= 0 (0: no limit)")
    return x


def launch_dims(value, what: str, limits=None) -> tuple[int, int, int]:
    """7, (7,), (7, 2), (7, 2, 1), a dim3-like object or "7,2" -> a 3-tuple within CUDA's
    limits for a grid or a block (`what` is "grid" or "block")."""
    limits = limits or (MAX_GRID if what == "grid" else MAX_BLOCK)
    shape = "an int or a tuple of 1 to 3 positive ints"
    if isinstance(value, str):
        text = value.replace("x", ",")
        parts = [p.strip() for p in text.split(",")]
        try:
            dims = [int(p, 10) for p in parts]
        except ValueError:
            raise OptionError(f"{what} {value!r}: expected X[,Y[,Z]] with positive integers") \
                from None
    elif isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        dims = [int(value)]
    elif hasattr(value, "x") and hasattr(value, "y") and hasattr(value, "z") and \
            not isinstance(value, (list, tuple)):
        dims = [_dim_part(getattr(value, c), what, value) for c in "xyz"]
    else:
        try:
            items = list(value)
        except TypeError:
            raise OptionError(f"{what}={value!r}: expected {shape}") from None
        dims = [_dim_part(v, what, value) for v in items]
    if isinstance(value, str) and (not 1 <= len(dims) <= 3 or any(d < 1 for d in dims)):
        raise OptionError(f"{what} {value!r}: expected X[,Y[,Z]] with positive integers")
    if not 1 <= len(dims) <= 3:
        raise OptionError(f"{what}={value!r}: expected {shape}, not {len(dims)} numbers")
    if any(d < 1 for d in dims):
        raise OptionError(f"{what}={value!r}: every dimension must be positive (at least 1)")
    dims = dims + [1] * (3 - len(dims))
    for axis, (d, lim) in enumerate(zip(dims, limits)):
        if d > lim:
            raise OptionError(f"{what} {tuple(dims)}: {what}Dim.{'xyz'[axis]} = {d} is more "
                              f"than CUDA allows ({lim})")
    if what == "block" and dims[0] * dims[1] * dims[2] > MAX_THREADS_PER_BLOCK:
        raise OptionError(f"block {tuple(dims)} has {dims[0] * dims[1] * dims[2]} threads; "
                          f"CUDA allows at most {MAX_THREADS_PER_BLOCK}")
    return tuple(dims)  # type: ignore[return-value]


def _dim_part(v, what, whole) -> int:
    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer)):
        raise OptionError(f"{what}={whole!r}: each dimension must be an int, not "
                          f"{type(v).__name__} {v!r}")
    return int(v)


def cli_type(check, option: str, **kw):
    """An argparse `type=` from a checker: a bad value is argparse's usage error (status 2)."""

    def convert(text: str):
        try:
            return check(text, option, **kw)
        except OptionError as e:
            # argparse says "argument --repeat: ..." itself
            msg = e.message[len(option):].lstrip(" =") if e.message.startswith(option) \
                else e.message
            raise argparse.ArgumentTypeError(msg) from None

    convert.__name__ = check.__name__  # argparse names the type in some messages
    return convert


__all__ = ["not_text", "count", "rate", "rate_list", "seconds", "launch_dims", "cli_type", "MAX_GRID",
           "MAX_BLOCK"]


# Environment variables (GMPROF_*: the whole programs' host runtime and the CPU backend read
# them too, with the same rules and words): NAME=VALUE, then what was expected.
SWITCH = "expected 0 or 1"


def refuse(option: str, text: str, expected: str):
    raise OptionError(f"{option}={text}: {expected}")


def switch(text: str, option: str) -> bool | None:
    """A variable's switch: 1 on, 0 off; empty: unset (the default)."""
    if text not in ("", "0", "1"):
        refuse(option, text, SWITCH)
    return None if text == "" else text == "1"
