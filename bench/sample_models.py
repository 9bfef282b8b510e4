"""Access counts of five samples (bo_v1, jcb_v1, spmv, co, em_v1) derived from their kernels'
source by hand, without gmprof: what a profile at any size must report, per array and per site.

    from sample_models import expected
    want = expected("bo_v1", "large")      # Expected: kernel -> arrays and sites

Each model rebuilds the sample's inputs exactly as its driver does (driver.arrays with the rng
the runtime uses, driver.launches), reads the launch shapes from those launches, and derives
every count from the kernel's loops in numpy: closed forms, searchsorted over a loop's trip
values, bincount of the input's indices. No thread is simulated (the large sizes make up to 2^34
accesses). Counting semantics (docs/samples.md, docs/report.md): a source-level access counts
once per execution; a read-modify-write (`x += y`, an atomic) counts once in the per-element
count and once in each of reads and writes; device arrays count per element, shared arrays per
4-byte word summed over the blocks; launches of one kernel are summed per parameter name (the
runtime merges a kernel's reports). No loop condition in these kernels reads memory (spmv's
row end is loaded into `end` once, before its loop), so no condition evaluation is counted.

Arrays of uniform counts are np.broadcast_to views: co's data (138M elements) costs no memory.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gmprof.driver import load_sample

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SEED = 0  # gmprof/runtime/samples.run_sample(seed=0): arrays(size, np.random.default_rng(0))
NAMES = ("bo_v1", "jcb_v1", "spmv", "co", "em_v1")


@dataclass
class ArrayExpected:
    counts: np.ndarray  # int64, flat, one per counter unit (device element / shared word)
    reads: int = 0
    writes: int = 0


@dataclass
class KernelExpected:
    arrays: dict = field(default_factory=dict)  # name -> ArrayExpected
    sites: dict = field(default_factory=dict)  # "samples/NAME/FILE:line:col" -> executions


@dataclass
class Expected:
    sample: str
    size: str
    kernels: dict = field(default_factory=dict)  # kernel name -> KernelExpected


class _Counts:
    """Builds one kernel's expectation: arrays' counts, reads and writes; sites' executions."""

    def __init__(self, source: str):
        self.source = source  # "samples/NAME/FILE"
        self.k = KernelExpected()

    def array(self, name: str, n: int) -> np.ndarray:
        """The array's counts, zero the first time (launches of a kernel add to them)."""
        if name not in self.k.arrays:
            self.k.arrays[name] = ArrayExpected(np.zeros(n, np.int64))
        return self.k.arrays[name].counts

    def uniform(self, name: str, n: int, value: int, reads: int, writes: int):
        """An array every element of which has the same count (a broadcast view, no memory)."""
        self.k.arrays[name] = ArrayExpected(np.broadcast_to(np.int64(value), (n,)), reads, writes)

    def add(self, name: str, delta, kind: str, where=slice(None)):
        """Accesses by one kind of site: delta (per element of counts[where]) of kind 'read',
        'write' or 'rw' (a read-modify-write: once in counts, once in each of reads and writes)."""
        a = self.k.arrays[name]
        part = a.counts[where]
        delta = np.broadcast_to(np.asarray(delta, np.int64), part.shape)
        a.counts[where] = part + delta
        total = int(delta.sum())
        if kind in ("read", "rw"):
            a.reads += total
        if kind in ("write", "rw"):
            a.writes += total

    def site(self, line: int, col: int, executions: int):
        key = f"{self.source}:{line}:{col}"
        self.k.sites[key] = self.k.sites.get(key, 0) + int(executions)


@functools.lru_cache(maxsize=None)
def sample(name: str):
    """The loaded sample (one Driver instance a name: a caller may add sizes to its .sizes)."""
    return load_sample(SAMPLES / name)


def inputs(name: str, size_name: str) -> dict:
    """The arrays the runtime makes for the sample at this size (its driver, seed 0)."""
    drv = sample(name).driver
    return drv.arrays(drv.sizes[size_name], np.random.default_rng(SEED))


def _profiled(drv, size) -> list:
    return [x for x in drv.launches(size) if x.profile]


def _source(name: str) -> str:
    return f"samples/{name}/{sample(name).driver.source}"


def _greater(values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each t, how many of the sorted values are > t."""
    return len(values) - np.searchsorted(values, t, side="right")


# --- bo_v1 --------------------------------------------------------------------------------------

def bo_v1(size_name: str, arrays=None) -> Expected:
    drv = sample("bo_v1").driver
    size = drv.sizes[size_name]
    kernels = {}
    for launch in _profiled(drv, size):
        opts, b = launch.grid3[0], launch.block3[0]
        steps = int(launch.args[8])
        c = kernels.setdefault(launch.kernel, _Counts(_source("bo_v1")))
        for nm, n in (("price", opts), ("S", opts), ("X", opts), ("T", opts),
                      ("callA", opts * (steps + 1)), ("callB", opts * (steps + 1))):
            c.array(nm, n)
        # every thread of an option's block reads T[opt], S[opt], X[opt]: b reads an element
        for nm, line, col in (("T", 20, 16), ("S", 29, 15), ("X", 30, 15)):
            c.add(nm, b, "read")
            c.site(line, col, opts * b)
        i = np.arange(steps + 1)
        j = np.arange(2, steps + 1, 2)  # the j loop's trips: steps, steps - 2, ..., 2 (sorted)
        # line 33: i = 0..steps, the payoffs, one write each
        a_w = np.ones(steps + 1, np.int64)
        # line 39 (i < j): callB[i] written, callA[i + 1] and callA[i] read
        b_w = _greater(j, i)
        a_r = _greater(j, i) + np.where(i >= 1, _greater(j, i - 1), 0)  # callA[i'+1]: i' = i - 1
        # line 42 (i < j - 1): callA[i] written, callB[i + 1] and callB[i] read
        a_w = a_w + _greater(j - 1, i)
        b_r = _greater(j - 1, i) + np.where(i >= 1, _greater(j - 1, i - 1), 0)
        # line 46: thread 0 reads callA[base] and writes price
        a_r[0] += 1
        # every option's block does the same: its (steps + 1)-element row of callA and callB
        for nm, delta, kind in (("callA", a_w, "write"), ("callA", a_r, "read"),
                                ("callB", b_w, "write"), ("callB", b_r, "read")):
            c.add(nm, np.broadcast_to(delta, (opts, steps + 1)).reshape(-1), kind)
        c.add("price", 1, "write")
        c.site(33, 9, opts * (steps + 1))
        for col in (13, 40, 71):
            c.site(39, col, opts * int(j.sum()))
            c.site(42, col, opts * int((j - 1).sum()))
        c.site(46, 9, opts)
        c.site(46, 22, opts)
    return Expected("bo_v1", size_name, {name: c.k for name, c in kernels.items()})


# --- jcb_v1 -------------------------------------------------------------------------------------

def jcb_v1(size_name: str, arrays=None) -> Expected:
    drv = sample("jcb_v1").driver
    size = drv.sizes[size_name]
    out = Expected("jcb_v1", size_name)
    tile_x, tile_y = 32, 8  # TILE_X, TILE_Y in jacobi.cu
    launches = _profiled(drv, size)
    # every sweep has the same shape (out and in swap arrays, not sizes): one sweep's counts
    # times the number of sweeps, per parameter name
    shapes = {(x.kernel, int(x.args[2]), int(x.args[3]), x.block3) for x in launches}
    assert len(shapes) == 1 and launches[0].block3 == (tile_x, tile_y, 1), shapes
    kernel, nx, ny, _ = shapes.pop()
    sweeps = len(launches)
    c = _Counts(_source("jcb_v1"))
    interior = (ny - 2) * (nx - 2)
    # every tile is walked by exactly one block; each interior (i, j) is one thread of it
    rd = np.zeros((ny, nx), np.int64)
    rd[0:ny - 2, 1:nx - 1] += 1  # in[(i - 1) * nx + j]
    rd[2:ny, 1:nx - 1] += 1      # in[(i + 1) * nx + j]
    rd[1:ny - 1, 0:nx - 2] += 1  # in[i * nx + j - 1]
    rd[1:ny - 1, 2:nx] += 1      # in[i * nx + j + 1]
    rd *= sweeps
    c.k.arrays["in"] = ArrayExpected(rd.reshape(-1), reads=4 * interior * sweeps)
    w = c.array("out", ny * nx).reshape(ny, nx)
    w[1:ny - 1, 1:nx - 1] = sweeps
    c.k.arrays["out"].writes = interior * sweeps
    # otile[ty][tx] holds interior point i = tileRow * 8 + ty + 1, j = tileCol * 32 + tx + 1
    rows = np.bincount(np.arange(ny - 2) % tile_y, minlength=tile_y)
    cols = np.bincount(np.arange(nx - 2) % tile_x, minlength=tile_x)
    points = np.outer(rows, cols).reshape(-1).astype(np.int64) * sweeps
    c.array("otile", tile_x * tile_y)
    c.add("otile", points, "write")
    c.add("otile", points, "read")
    for line, col in ((26, 13), (26, 56), (26, 79), (27, 56), (27, 77), (30, 13), (30, 31)):
        c.site(line, col, interior * sweeps)
    out.kernels[kernel] = c.k
    return out


# --- spmv ---------------------------------------------------------------------------------------

def spmv(size_name: str, arrays=None) -> Expected:
    drv = sample("spmv").driver
    size = drv.sizes[size_name]
    arrays = arrays if arrays is not None else inputs("spmv", size_name)
    out = Expected("spmv", size_name)
    (launch,) = _profiled(drv, size)
    g, b = launch.grid3[0], launch.block3[0]
    rows = int(launch.args[5])
    rpb = b // 32  # THREADS_PER_ROW
    col_idx = arrays["colIdx"]
    nnz, cols = len(col_idx), len(arrays["x"])
    c = _Counts(_source("spmv"))
    for nm, n in (("y", rows), ("rowPtr", rows + 1), ("x", cols), ("partial", b),
                  ("bounds", 1024 // 32 + 1)):
        c.array(nm, n)
    # line 28: threads tid <= rpb of block g' stage rowPtr[min(g' * rpb + tid, rows)]
    staged = np.minimum(np.arange(g)[:, None] * rpb + np.arange(rpb + 1)[None, :], rows)
    c.add("rowPtr", np.bincount(staged.reshape(-1), minlength=rows + 1), "read")
    c.add("bounds", g, "write", np.s_[:rpb + 1])
    c.site(28, 9, g * (rpb + 1))
    c.site(28, 23, g * (rpb + 1))
    # lines 36-37: the 32 threads of each existing row read bounds[local + 1] and bounds[local]
    local = np.arange(g * rpb) % rpb
    valid = np.arange(g * rpb) < rows
    per_local = np.bincount(local[valid], minlength=rpb) * 32
    c.add("bounds", per_local, "read", np.s_[:rpb])
    c.add("bounds", per_local, "read", np.s_[1:rpb + 1])
    c.site(36, 19, rows * 32)
    c.site(37, 23, rows * 32)
    # line 38: each nonzero once (val, colIdx); x once per nonzero in its column
    c.uniform("val", nnz, 1, nnz, 0)
    c.uniform("colIdx", nnz, 1, nnz, 0)
    c.add("x", np.bincount(col_idx, minlength=cols), "read")
    for col in (20, 30, 32):
        c.site(38, col, nnz)
    # line 40: every thread of every block writes partial[tid]
    c.add("partial", g, "write")
    c.site(40, 5, g * b)
    # line 44, s = 16, 8, 4, 2, 1: lanes < s update partial[tid] (read-modify-write) and read
    # partial[tid + s]; lane l >= 1 is read as tid + s for the one s with s <= l < 2s
    lane = np.arange(b) % 32
    s = np.array([1, 2, 4, 8, 16])
    c.add("partial", g * _greater(s, lane), "rw")
    c.add("partial", g * (lane >= 1), "read")
    c.site(44, 13, g * rpb * int(s.sum()))
    c.site(44, 29, g * rpb * int(s.sum()))
    # line 48: lane 0 of each existing row reads partial[tid] and writes y[row]
    c.add("partial", per_local // 32, "read", np.s_[::32])
    c.add("y", 1, "write")
    c.site(48, 9, rows)
    c.site(48, 18, rows)
    out.kernels[launch.kernel] = c.k
    return out


# --- co -----------------------------------------------------------------------------------------

def co_labels(arrays: dict, chunk: int = 1 << 16) -> np.ndarray:
    """Each row's best nonempty cluster (RClusterCnt's argmax, first on ties), in float64 row
    chunks: the planted clusters keep the best two scores 10 or more apart (docs/samples.md),
    far beyond the kernel's float32 rounding."""
    data, acomp, col_cl = arrays["data"], arrays["Acomp"].astype(np.float64), arrays["colCL"]
    weights = acomp[:, col_cl].T  # (cols, k)
    empty = arrays["rowCS"] <= 0
    labels = np.empty(len(data), np.int64)
    for lo in range(0, len(data), chunk):
        scores = data[lo:lo + chunk].astype(np.float64) @ weights
        scores[:, empty] = -np.inf
        labels[lo:lo + chunk] = scores.argmax(axis=1)
    return labels


def co(size_name: str, arrays=None) -> Expected:
    drv = sample("co").driver
    size = drv.sizes[size_name]
    arrays = arrays if arrays is not None else inputs("co", size_name)
    out = Expected("co", size_name)
    (launch,) = _profiled(drv, size)
    g = launch.grid3[0]
    n_row, n_col, k = (int(v) for v in launch.args[7:10])
    nonempty = arrays["rowCS"] > 0
    kk = int(nonempty.sum())
    c = _Counts(_source("co"))
    for nm, n in (("rowCL", n_row), ("rowScore", n_row), ("blockCnt", g * k), ("colCL", n_col),
                  ("rowCS", k), ("Acomp", k * k), ("sAcomp", 32 * 32), ("sColCL", 1024),
                  ("sRowCS", 32), ("sCnt", 32)):
        c.array(nm, n)
    # lines 59-64: each block stages Acomp, colCL, rowCS and zeroes sCnt, one access a word
    for dst, src, n, line, src_col in (("sAcomp", "Acomp", k * k, 59, 21),
                                       ("sColCL", "colCL", n_col, 61, 21),
                                       ("sRowCS", "rowCS", k, 63, 23)):
        c.add(dst, g, "write", np.s_[:n])
        c.add(src, g, "read")
        c.site(line, 9, g * n)
        c.site(line, src_col, g * n)
    c.add("sCnt", g, "write", np.s_[:k])
    c.site(64, 9, g * k)
    # RClusterCnt: every row is one trip of one thread. Line 31: sRowCS[rc] for every rc;
    # lines 34-35 for each nonempty rc and every column c: data[row][c], colCL[c] (sColCL) and
    # Acomp[rc][colCL[c]] (sAcomp)
    c.add("sRowCS", n_row, "read", np.s_[:k])
    c.site(31, 17, n_row * k)
    c.uniform("data", n_row * n_col, kk, n_row * n_col * kk, 0)
    c.add("sColCL", n_row * kk, "read", np.s_[:n_col])
    per_cc = np.bincount(arrays["colCL"], minlength=k).astype(np.int64)
    acomp_reads = np.outer(nonempty, per_cc).reshape(-1) * n_row
    c.add("sAcomp", acomp_reads, "read", np.s_[:k * k])
    c.site(34, 37, n_row * n_col * kk)
    c.site(35, 37, n_row * n_col * kk)
    c.site(35, 57, n_row * n_col * kk)
    # lines 42-45: the row's label and score written; atomicAdd on sCnt[best] (best >= 0 when
    # some cluster is nonempty): one read-modify-write per row of that label
    c.add("rowCL", 1, "write")
    c.add("rowScore", 1, "write")
    c.site(42, 9, n_row)
    c.site(43, 9, n_row)
    if kk:
        c.add("sCnt", np.bincount(co_labels(arrays), minlength=k), "rw", np.s_[:k])
        c.site(45, 24, n_row)
    # line 71: threads tid < k copy sCnt to blockCnt
    c.add("sCnt", g, "read", np.s_[:k])
    c.add("blockCnt", 1, "write")
    c.site(71, 9, g * k)
    c.site(71, 47, g * k)
    out.kernels[launch.kernel] = c.k
    return out


# --- em_v1 --------------------------------------------------------------------------------------

EM_BLOCK, MAX_D, MAX_K = 128, 16, 16  # as #defined in em.cu


def _em_estep(c: _Counts, launch, arrays: dict):
    g, b = launch.grid3[0], launch.block3[0]
    n, d, k = (int(v) for v in launch.args[7:10])
    s = 2 * d + 1
    tiles = -(-n // EM_BLOCK)  # first = 128 t < N for t < tiles: each walked by one block
    threads = tiles * b  # thread-trips of the tile loop, past-the-end threads included
    for nm, size in (("resp", n * k), ("partials", arrays["partials"].size),
                     ("blockLL", len(arrays["blockLL"])), ("X", n * d), ("mu", k * d),
                     ("invVar", k * d), ("logConst", k), ("sX", EM_BLOCK * MAX_D),
                     ("sResp", EM_BLOCK * MAX_K), ("sLogConst", MAX_K), ("sLL", EM_BLOCK)):
        c.array(nm, size)
    # line 46: threads tid < K of each block stage logConst
    c.add("sLogConst", g, "write", np.s_[:k])
    c.add("logConst", g, "read")
    c.site(46, 9, g * k)
    c.site(46, 26, g * k)
    # line 52: sX[i] for i < 128 D written every tile; X[first D + i] read while inside N D, so
    # each element of X once
    c.add("sX", tiles, "write", np.s_[:EM_BLOCK * d])
    c.add("X", 1, "read")
    c.site(52, 13, tiles * EM_BLOCK * d)
    c.site(52, 47, n * d)
    # lines 59-60: every thread, every k < K, d < D: sX[tid D + d], mu[k D + d], invVar[k D + d]
    c.add("sX", tiles * k, "read", np.s_[:EM_BLOCK * d])
    c.add("mu", threads, "read")
    c.add("invVar", threads, "read")
    for line, col in ((59, 30), (59, 48), (60, 39)):
        c.site(line, col, threads * k * d)
    # line 62: sLogConst[k] by every thread for every k
    c.add("sLogConst", threads, "read", np.s_[:k])
    c.site(62, 23, threads * k)
    # sResp[tid K + k]: written at 63, 70 and 76; read at 69, and at 75 only for n < N
    words = EM_BLOCK * k
    c.add("sResp", 3 * tiles, "write", np.s_[:words])
    c.add("sResp", tiles, "read", np.s_[:words])
    point = np.arange(tiles)[:, None] * EM_BLOCK + np.arange(EM_BLOCK)[None, :]  # n of (t, tid)
    live = np.repeat((point < n).sum(axis=0), k)  # tiles in which word tid K + k has n < N
    c.add("sResp", live, "read", np.s_[:words])
    for line, col in ((63, 13), (69, 28), (70, 13), (76, 13)):
        c.site(line, col, threads * k)
    c.site(75, 33, n * k)
    c.add("resp", 1, "write")
    c.site(78, 17, n * k)
    # line 80: sLL[tid] every tile
    c.add("sLL", tiles, "write")
    c.site(80, 9, threads)
    # lines 90-96: task j < K S (one thread each) reads, for p < 128, sResp[p K + j / S] and,
    # for q = j % S >= 1, sX[p D + (q - 1) % D]: each sResp word S times, each sX word 2 K times
    c.add("sResp", tiles * s, "read", np.s_[:words])
    c.add("sX", tiles * 2 * k, "read", np.s_[:EM_BLOCK * d])
    c.site(90, 31, tiles * k * s * EM_BLOCK)
    c.site(94, 39, tiles * k * d * EM_BLOCK)
    c.site(96, 35, tiles * k * d * EM_BLOCK)
    # line 104, s = 64 .. 1: tid < s updates sLL[tid] and reads sLL[tid + s]; word w >= 1 is
    # read as tid + s for the one s with s <= w < 2 s
    steps = 2 ** np.arange(7)
    w = np.arange(EM_BLOCK)
    c.add("sLL", tiles * _greater(steps, w), "rw")
    c.add("sLL", tiles * (w >= 1), "read")
    c.site(104, 17, tiles * int(steps.sum()))
    c.site(104, 29, tiles * int(steps.sum()))
    c.add("sLL", tiles, "read", np.s_[:1])  # line 108: thread 0 reads sLL[0] every tile
    c.site(108, 27, tiles)
    # lines 115-117: each block writes its K S partials and its blockLL
    c.add("partials", 1, "write", np.s_[:g * k * s])
    c.add("blockLL", 1, "write", np.s_[:g])
    c.site(115, 13, g * k * s)
    c.site(117, 9, g)


def _em_mstep(c: _Counts, launch, arrays: dict):
    k_blocks, b = launch.grid3[0], launch.block3[0]
    blocks, n, d, k, it = (int(v) for v in launch.args[6:11])
    s = 2 * d + 1
    for nm, size in (("mu", k * d), ("invVar", k * d), ("logConst", k),
                     ("ll", len(arrays["ll"])), ("partials", arrays["partials"].size),
                     ("blockLL", len(arrays["blockLL"])), ("sSum", 2 * MAX_D + 1),
                     ("sLogVar", MAX_D)):
        c.array(nm, size)
    # lines 132-133: block k, threads j < S add partials[(b K + k) S + j] over the blocks
    c.add("partials", 1, "read", np.s_[:blocks * k * s])
    c.add("sSum", k_blocks, "write", np.s_[:s])
    c.site(132, 20, k_blocks * s * blocks)
    c.site(133, 9, k_blocks * s)
    # line 136: every thread reads sSum[0]
    c.add("sSum", k_blocks * b, "read", np.s_[:1])
    c.site(136, 22, k_blocks * b)
    # lines 138-142: threads j < D
    c.add("sSum", k_blocks, "read", np.s_[1:1 + 2 * d])
    c.add("mu", 1, "write")
    c.add("invVar", 1, "write")
    c.add("sLogVar", k_blocks, "write", np.s_[:d])
    for line, col in ((138, 19), (139, 27), (140, 9), (141, 9), (142, 9)):
        c.site(line, col, k_blocks * d)
    # lines 148-154: thread 0 of each block; block 0 also sums blockLL and writes ll[iter]
    c.add("sLogVar", k_blocks, "read", np.s_[:d])
    c.site(148, 26, k_blocks * d)
    c.add("logConst", 1, "write")
    c.site(149, 9, k_blocks)
    c.add("blockLL", 1, "read", np.s_[:blocks])
    c.site(153, 22, blocks)
    c.add("ll", 1, "write", np.s_[it:it + 1])
    c.site(154, 13, 1)


def em_v1(size_name: str, arrays=None) -> Expected:
    drv = sample("em_v1").driver
    size = drv.sizes[size_name]
    arrays = arrays if arrays is not None else inputs("em_v1", size_name)
    out = Expected("em_v1", size_name)
    kernels = {}
    for launch in _profiled(drv, size):
        c = kernels.setdefault(launch.kernel, _Counts(_source("em_v1")))
        {"em_estep": _em_estep, "em_mstep": _em_mstep}[launch.kernel](c, launch, arrays)
    out.kernels = {name: c.k for name, c in kernels.items()}
    return out


MODELS = {"bo_v1": bo_v1, "jcb_v1": jcb_v1, "spmv": spmv, "co": co, "em_v1": em_v1}


def expected(name: str, size_name: str, arrays=None) -> Expected:
    """The counts a profile of sample NAME at size SIZE_NAME must report. arrays: the driver's
    arrays for this size and seed, made before (not changed); made here when None."""
    return MODELS[name](size_name, arrays)
