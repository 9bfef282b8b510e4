"""An array's per-counter counts in a saved run: a JSON list, or packed when large.

Stage: report (writing and reading documents). Takes the counts (int64, row-major) and gives
what the document's `counts` field holds; reads either form back as numpy int64.

Up to PACK_ABOVE counters the field is a plain list of integers. Above it, it is an object

    {"encoding": "zlib-base64-int64le", "length": N, "data": "eJzt..."}

`data` is base64 (RFC 4648, standard alphabet, padded) of the zlib stream (RFC 1950) of the N
counts as little-endian 64-bit signed integers, row-major: in Python

    np.frombuffer(zlib.decompress(base64.b64decode(data)), "<i8")

A 16M-counter array of mostly equal counts takes a few hundred kilobytes instead of the
100 MB of its list, and every count is kept (documents before this kept none above 65,536).
"""
from __future__ import annotations

import base64
import binascii
import zlib

import numpy as np

ENCODING = "zlib-base64-int64le"
PACK_ABOVE = 1 << 16


def encode(counts, pack: bool | None = None):
    """The `counts` field for these counts: a list, or the packed object when there are more
    than PACK_ABOVE of them (pack=True/False forces either)."""
    c = np.ascontiguousarray(np.asarray(counts).reshape(-1), dtype="<i8")
    if pack is None:
        pack = c.size > PACK_ABOVE
    if not pack:
        return c.tolist()
    return {"encoding": ENCODING, "length": int(c.size),
            "data": base64.b64encode(zlib.compress(c.tobytes(), 6)).decode("ascii")}


class Counts:
    """An array's counts in a document built in memory (document.document): turned into the
    list or the packed object only when the document is written (document.dumps), so a run
    printed as tables never packs, nor copies from the GPU, its largest arrays' counts."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __len__(self) -> int:
        return int(self.array.size)

    def host(self) -> np.ndarray:
        a = self.array
        if not isinstance(a, np.ndarray) and hasattr(a, "get"):  # CuPy
            a = a.get()
        return np.asarray(a, dtype=np.int64).reshape(-1)


class CountsError(ValueError):
    """A packed `counts` that does not decode (its message says why)."""


def decode(value) -> np.ndarray | None:
    """The counts as int64, from either form; None for null (counts not saved)."""
    if value is None:
        return None
    if isinstance(value, Counts):
        return value.host()
    if isinstance(value, list):
        return np.asarray(value, dtype=np.int64).reshape(-1)
    if not isinstance(value, dict) or value.get("encoding") != ENCODING:
        raise CountsError(f"expected a list of counts or an object with \"encoding\": "
                          f"\"{ENCODING}\"")
    try:
        raw = zlib.decompress(base64.b64decode(value.get("data", ""), validate=True))
    except (binascii.Error, zlib.error, ValueError, TypeError) as e:
        raise CountsError(f"packed counts do not decode ({e})") from None
    if len(raw) % 8:
        raise CountsError(f"packed counts: {len(raw)} bytes is not a whole number of int64")
    out = np.frombuffer(raw, dtype="<i8").astype(np.int64)
    if out.size != value.get("length"):
        raise CountsError(f"packed counts: {out.size:,} decoded where \"length\" says "
                          f"{value.get('length')}")
    return out


__all__ = ["encode", "decode", "Counts", "ENCODING", "PACK_ABOVE", "CountsError"]
