"""The CPU backend's kernel arguments: numpy arrays, CpuPointers and scalars packed as `void **`.

Stage: host runtime, CPU backend (launch). Input: a kernel's parameters as the compiler
describes them (size, alignment, kind, C++ spelling: `Param`) and the caller's arguments.
Output: the `void **args` array the generated entry point unpacks by the kernel's own parameter
types, and the buffers it points into (kept alive for the launch); or an ArgumentError
(a wrong type: also a TypeError) / ArgumentValueError (a value that does not fit) naming the
argument and its C++ type.

    argv, keep = pack(kernel, (c, a, b, np.int32(n)))   # kernel.name, kernel.params
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from gmprof.errors import ArgumentError, ArgumentValueError


class CpuPointer(int):
    """A device address passed as a pointer argument (e.g. of a global from get_global)."""

    def __repr__(self) -> str:
        return f"CpuPointer(0x{int(self):x})"


@dataclass(frozen=True)
class Param:
    """One kernel parameter, as the compiler sees it."""

    type: str      # C++ spelling, e.g. "const float*"
    size: int
    align: int
    kind: str      # p pointer, f floating, i signed, u unsigned, b bool, e enum, s other


_SCALAR_DTYPES = {("f", 4): np.float32, ("f", 8): np.float64, ("i", 1): np.int8,
                  ("i", 2): np.int16, ("i", 4): np.int32, ("i", 8): np.int64, ("u", 1): np.uint8,
                  ("u", 2): np.uint16, ("u", 4): np.uint32, ("u", 8): np.uint64,
                  ("b", 1): np.bool_, ("e", 4): np.int32, ("e", 1): np.int8, ("e", 2): np.int16,
                  ("e", 8): np.int64}


def _aligned_bytes(data: bytes, align: int):
    """A ctypes buffer holding `data` at an address aligned to `align` (a float4 parameter is
    read with aligned SSE loads); returns (buffer, address)."""
    align = max(align, 16)
    buf = (ctypes.c_char * (len(data) + align))()
    addr = ctypes.addressof(buf)
    addr += (-addr) % align
    ctypes.memmove(addr, data, len(data))
    return buf, addr


def pack(kernel, args: Sequence):
    params = kernel.params
    args = tuple(args)
    if len(args) != len(params):
        sig = ", ".join(p.type for p in params)
        raise ArgumentError(f"{kernel.name}({sig}) takes {len(params)} argument"
                          f"{'' if len(params) == 1 else 's'}, {len(args)} given")
    keep = []
    addrs = []
    for i, (p, a) in enumerate(zip(params, args)):
        where = f"argument {i + 1} of {kernel.name} ({p.type})"
        if p.kind == "p":
            if isinstance(a, np.ndarray):
                if not a.flags.c_contiguous:
                    raise ArgumentError(f"{where}: the array must be C-contiguous "
                                        f"(np.ascontiguousarray makes a copy)")
                if a.dtype.hasobject:
                    raise ArgumentError(f"{where}: an array of Python objects ({a.dtype}) "
                                        "cannot be passed to a kernel")
                value = a.ctypes.data
            elif isinstance(a, CpuPointer):
                value = int(a)
            elif a is None:
                value = 0
            else:
                raise ArgumentError(f"{where}: a pointer parameter takes a numpy array or a "
                                    f"CpuPointer, not {type(a).__name__}")
            cell = ctypes.c_void_p(value)
            keep.append((a, cell))
            addrs.append(ctypes.addressof(cell))
            continue
        data = _scalar_bytes(a, p, where)
        buf, addr = _aligned_bytes(data, p.align)
        keep.append(buf)
        addrs.append(addr)
    argv = (ctypes.c_void_p * max(len(addrs), 1))(*addrs)
    return argv, (keep, argv)


def _scalar_bytes(a, p: Param, where: str) -> bytes:
    if isinstance(a, np.ndarray) and a.ndim != 0:
        raise ArgumentError(f"{where}: a by-value parameter takes a numpy scalar or 0-d array, "
                            f"not an array of shape {a.shape}")
    if isinstance(a, CpuPointer):
        raise ArgumentError(f"{where}: a CpuPointer passed for a by-value parameter")
    if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic):
        dtype = _SCALAR_DTYPES.get((p.kind, p.size))
        if dtype is None:
            raise ArgumentError(f"{where}: pass a numpy scalar or np.void of {p.size} bytes")
        if isinstance(a, float) and p.kind != "f":
            raise ArgumentError(f"{where}: a float given for an integer parameter")
        try:
            arr = np.array(a, dtype=dtype) if not isinstance(a, float) else np.array(a, dtype)
            if p.kind in "iue" and int(arr) != a:
                raise OverflowError
            if p.kind == "f" and not np.isfinite(arr) and np.isfinite(a):
                raise OverflowError
        except (OverflowError, ValueError):
            raise ArgumentValueError(f"{where}: {a!r} does not fit") from None
        return arr.tobytes()
    if not isinstance(a, (np.generic, np.ndarray, bytes, bytearray)):
        raise ArgumentError(f"{where}: a by-value parameter takes a number, a numpy scalar or "
                            f"np.void, not {type(a).__name__}")
    arr = np.frombuffer(bytes(a), np.uint8) if isinstance(a, (bytes, bytearray)) else \
        np.asarray(a)
    if arr.dtype.hasobject:
        raise ArgumentError(f"{where}: a value holding Python objects ({arr.dtype})")
    nbytes = arr.nbytes if isinstance(a, (bytes, bytearray)) else arr.dtype.itemsize
    if nbytes != p.size:
        raise ArgumentError(f"{where}: a {arr.dtype} value is {nbytes} bytes, the "
                            f"parameter {p.size}")
    kind = arr.dtype.kind
    ok = isinstance(a, (bytes, bytearray)) or {
        "f": kind == "f", "i": kind in "iub", "u": kind in "iub", "b": kind in "bui",
        "e": kind in "iu", "s": True}.get(p.kind, True)
    if not ok:
        raise ArgumentError(f"{where}: a {arr.dtype} value given")
    return arr.tobytes()


__all__ = ["CpuPointer", "Param", "pack"]
