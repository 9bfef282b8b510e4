"""The CPU backend's device arrays: host memory fenced by red zones and guard pages.

Stage: host runtime, CPU backend (allocation). Input: an array's shape and dtype (or the array
to copy). Output: a numpy array whose data sits in its own anonymous mapping:

    | guard page | red zone ... | data (256-byte aligned, as cudaMalloc's) | red zone | guard page |

The guard pages are PROT_NONE: an access running off either end of the array by more than the
red zone faults at once, and the CPU backend reports it as an invalid address at the faulting
line, instead of corrupting whatever the heap holds next (a kernel that writes `y[i]` for every
thread of a grid larger than `y` did: glibc then aborted at exit). The red zones (at least
RED_ZONE bytes after the data, filled with a pattern) catch the small overruns that stay inside
the mapping: `damage()` compares them with the pattern after a launch and says which bytes past
which end were written. Reads inside a red zone are not seen here; the instrumented run's
out-of-range counters see them.

A mapping per array costs two system calls and a page or three; the CPU backend's arrays are the
small problem sizes it runs.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap

import numpy as np

PAGE = mmap.PAGESIZE
ALIGN = 256       # cudaMalloc's alignment: kernels may rely on it (float4 loads)
RED_ZONE = 256    # at least this many pattern bytes after the data, before the guard page
PATTERN = 0xA7    # an odd byte: not 0, not -1, not a small integer

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_MAP_FAILED = ctypes.c_void_p(-1).value
_PROT_NONE = 0


def _asan_poisoning():
    """(poison, unpoison) from AddressSanitizer's runtime when this process has loaded it
    (LD_PRELOAD, as tests/runtime/test_asan.py runs), else None."""
    try:
        process = ctypes.CDLL(None)
        poison = process.__asan_poison_memory_region
        unpoison = process.__asan_unpoison_memory_region
    except (AttributeError, OSError):
        return None
    for fn in (poison, unpoison):
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return poison, unpoison


_ASAN = _asan_poisoning()


class Region:
    """One mapping holding one array; numpy arrays made from it keep it alive (as their base)."""

    def __init__(self, nbytes: int, poison: bool = False):
        self.nbytes = int(nbytes)
        # gmprof's own buffers (counters): under AddressSanitizer their red zones are poisoned,
        # so that any read or write past a counter buffer, even one that leaves the bytes as
        # they were (a word-wide CAS around a narrow counter), is reported. The user's arrays'
        # red zones are not: a kernel's stray writes there are reported by damage() instead.
        self.poisoned = poison and _ASAN is not None
        inner = -(-(self.nbytes + RED_ZONE + ALIGN) // PAGE) * PAGE
        self.size = inner + 2 * PAGE
        addr = _libc.mmap(None, self.size, mmap.PROT_READ | mmap.PROT_WRITE,
                          mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if addr is None or addr == _MAP_FAILED:
            raise MemoryError(f"cannot map {self.size} bytes for a device array")
        self.addr = addr
        _libc.mprotect(addr, PAGE, _PROT_NONE)
        _libc.mprotect(addr + PAGE + inner, PAGE, _PROT_NONE)
        self.lo = PAGE                      # the first red-zone byte
        self.hi = PAGE + inner              # one past the last
        end = self.hi - RED_ZONE
        self.start = (end - self.nbytes) // ALIGN * ALIGN  # the data's offset in the mapping
        self.end = self.start + self.nbytes
        ctypes.memset(addr + self.lo, PATTERN, self.start - self.lo)
        ctypes.memset(addr + self.end, PATTERN, self.hi - self.end)
        # numpy takes the buffer through this interface and keeps `self` as its base
        self.__array_interface__ = {"data": (addr + self.start, False), "shape": (self.nbytes,),
                                    "typestr": "|u1", "version": 3}
        self._poison(True)

    def _poison(self, on: bool) -> None:
        if not getattr(self, "poisoned", False):
            return
        fn = _ASAN[0 if on else 1]
        fn(self.addr + self.lo, self.start - self.lo)
        fn(self.addr + self.end, self.hi - self.end)

    def damage(self):
        """(bytes written before the data, (first, last) offsets past its end written, or
        None), relative to the data's start; or None when both red zones are intact."""
        self._poison(False)  # (numpy reads them; nothing here is instrumented, but be plain)
        before = (ctypes.c_ubyte * (self.start - self.lo)).from_address(self.addr + self.lo)
        after = (ctypes.c_ubyte * (self.hi - self.end)).from_address(self.addr + self.end)
        b = np.frombuffer(before, np.uint8)
        a = np.frombuffer(after, np.uint8)
        bad_b = np.flatnonzero(b != PATTERN)
        bad_a = np.flatnonzero(a != PATTERN)
        self._poison(True)
        if not len(bad_b) and not len(bad_a):
            return None
        lo = None
        if len(bad_b):
            lo = (int(bad_b[0]) - len(b), int(bad_b[-1]) - len(b))  # negative offsets
        hi = None
        if len(bad_a):
            hi = (self.nbytes + int(bad_a[0]), self.nbytes + int(bad_a[-1]))
        return lo, hi

    def repair(self) -> None:
        """Put the pattern back (after a report), so the next launch's writes are seen."""
        self._poison(False)  # memset is checked by the sanitizer
        ctypes.memset(self.addr + self.lo, PATTERN, self.start - self.lo)
        ctypes.memset(self.addr + self.end, PATTERN, self.hi - self.end)
        self._poison(True)

    def __del__(self):
        addr = getattr(self, "addr", None)
        if addr:
            self._poison(False)  # the pages may be mapped again for anything
            self.addr = None
            _libc.munmap(addr, self.size)


def empty(shape, dtype, poison: bool = False) -> np.ndarray:
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in (shape if isinstance(shape, tuple) else (shape,)))
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    raw = np.asarray(Region(nbytes, poison))
    if dtype.itemsize == 0:
        return np.empty(shape, dtype)
    return raw.view(dtype).reshape(shape)


def zeros(shape, dtype, poison: bool = False) -> np.ndarray:
    return empty(shape, dtype, poison)  # a fresh anonymous mapping reads as zeros


def copy_of(array) -> np.ndarray:
    src = np.asarray(array)  # (ascontiguousarray would make a 0-d array 1-d)
    out = empty(src.shape, src.dtype)
    np.copyto(out, src)
    return out


def region_of(array) -> Region | None:
    """The Region an array (or a view of one) lives in, or None for ordinary memory."""
    b = array
    while b is not None:
        if isinstance(b, Region):
            return b
        b = getattr(b, "base", None)
    return None


def describe(region: Region, damage) -> str:
    """`wrote bytes 400 to 511 (it holds 400 bytes)`, offsets from the array's start."""
    lo, hi = damage
    spans = [f"bytes {r[0]} to {r[1]}" for r in (lo, hi) if r is not None]
    return f"wrote {' and '.join(spans)} (it holds {region.nbytes} bytes)"


__all__ = ["Region", "empty", "zeros", "copy_of", "region_of", "describe", "PAGE"]
