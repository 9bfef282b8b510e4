"""Run a generated kernel's Python model over every thread of its launch: the expected count of
every element and shared word, the reads and writes per array, and the final contents of the
arrays the kernel writes. Independent of gmprof (imports nothing from it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gen import Kernel

M32 = 0xFFFFFFFF


@dataclass
class Expected:
    counts: dict  # array -> np.int64 per element (shared: per 4-byte word, summed over blocks)
    reads: dict
    writes: dict
    values: dict  # out, res, hist after the launch


def inputs(k: Kernel) -> list:
    """The launch's arguments (fresh arrays each call)."""
    return [np.array(k.dvals, dtype=np.int32), np.arange(k.OUT, dtype=np.int32),
            np.zeros(k.threads, dtype=np.uint32), np.zeros(k.H, dtype=np.uint32),
            np.int32(k.n)]


def run_model(k: Kernel) -> Expected:
    ns: dict = {}
    exec(compile(k.python(), f"<model {k.name}>", "exec"), ns)  # noqa: S102 (our own text)
    thread = ns["thread"]
    cst = f"c_{k.alias or k.name}"
    sizes = {"d": k.D, "out": k.OUT, "res": k.threads, "hist": k.H, "s": k.S,
             "sp": 2 * k.SP, "sc": int(k.SC), cst: k.C}
    counts = {a: [0] * n for a, n in sizes.items() if n}
    reads = dict.fromkeys(counts, 0)
    writes = dict.fromkeys(counts, 0)
    d = list(k.dvals)
    res = [0] * k.threads
    hist = [0] * k.H

    def check(arr, i):
        if not 0 <= i < sizes[arr]:
            raise AssertionError(f"model: {arr}[{i}] out of range (generator bug)")

    def R(arr, i):
        check(arr, i)
        counts[arr][i] += 1
        reads[arr] += 1
        if arr == "d":
            return d[i]
        if arr == cst:
            return k.cvals[i]
        if arr == "sp":
            return i // 2  # both members of sp[w] hold w
        return 7 if arr == "sc" else i

    def W(arr, i):
        check(arr, i)
        counts[arr][i] += 1
        writes[arr] += 1

    def RW(arr, i, v):
        check(arr, i)
        counts[arr][i] += 1
        reads[arr] += 1
        writes[arr] += 1
        res[i] = (res[i] + v) & M32

    def ATOM(i, v):
        check("hist", i)
        counts["hist"][i] += 1
        reads["hist"] += 1
        writes["hist"] += 1
        hist[i] = (hist[i] + v) & M32

    (GX, GY, GZ), (BX, BY, BZ) = k.grid, k.block
    for bz in range(GZ):
        for by in range(GY):
            for bx in range(GX):
                for tz in range(BZ):
                    for ty in range(BY):
                        for tx in range(BX):
                            thread(tx, ty, tz, bx, by, bz, BX, BY, BZ, GX, GY, GZ, k.n,
                                   R, W, RW, ATOM)
    return Expected({a: np.array(c, dtype=np.int64) for a, c in counts.items()}, reads, writes,
                    {"out": np.arange(k.OUT, dtype=np.int32),
                     "res": np.array(res, dtype=np.uint32),
                     "hist": np.array(hist, dtype=np.uint32)})
