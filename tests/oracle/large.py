"""The oracle's large regime: kernels whose counts pass 2^32, with models in closed form.

The generated-kernel oracle (gen.py, model.py) simulates one thread at a time in Python: exact
for any kernel it draws, but only at small launches. Here a few families of kernels, each a
pattern the samples and real code have at scale, are drawn with random parameters (seeded),
and their counts are derived in closed form or vectorised numpy from the parameters and the
inputs, never by running anything: per element (device) or 4-byte word summed over blocks
(shared), reads and writes per array, executions per site (keyed by line and column). At the
`large` scale every kernel has a count past 2^32 (a site's executions, an array's total or one
counter), which `draw` checks; at `small` the same families run in CI on the CPU backend.

    family        what it stresses                                    modes at large
    hot_uniform   a data-dependent read of one hot element, warp-    default (basic: 5e9
                  uniform (x[idx[k]]): a device counter past 2^32     same-address atomics)
    lattice       bo_v1's triangular ping-pong rows, one block an     default, basic
                  option: static copies per block; array totals
    passes        R grid-stride passes y[t] += x[t]: sites past 2^32  default, basic
    shared_cyclic a shared word read k % W by every thread: static    default
    shared_hist   a data-dependent shared histogram (atomicAdd), one  default
                  hot word: a measured shared counter past 2^32

Imports nothing from gmprof: bench/oracle.py --large and test_large.py compare.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

LIMIT = 2 ** 32

SCALES = {
    # threads (grid x block), loop trips, lattice options x steps, pass length and count
    "small": {"grid": (3, 9), "block": (32, 64), "trips": (20, 60), "options": (3, 9),
              "steps": (8, 24), "n": (500, 3000), "passes": (2, 5)},
    "large": {"grid": (65536, 65536), "block": (256, 256), "trips": (420, 600),
              "options": (8192, 8192), "steps": (1024, 1024), "n": (1 << 27, 1 << 27),
              "passes": (33, 36)},
}
FAMILIES = ("hot_uniform", "lattice", "passes", "shared_cyclic", "shared_hist")
LARGE_MODES = {"hot_uniform": ("default",), "lattice": ("default", "basic"),
               "passes": ("default", "basic"), "shared_cyclic": ("default",),
               "shared_hist": ("default",)}


@dataclass
class Expected:
    counts: dict = field(default_factory=dict)   # array -> int64 per counter
    reads: dict = field(default_factory=dict)
    writes: dict = field(default_factory=dict)
    sites: dict = field(default_factory=dict)    # (line, col) within the kernel -> executions

    def largest(self) -> int:
        vals = [int(c.max()) for c in self.counts.values() if c.size]
        vals += [int(self.reads[a]) + int(self.writes[a]) for a in self.reads]
        vals += list(self.sites.values())
        return max(vals)


@dataclass
class LargeKernel:
    name: str
    family: str
    grid: int
    block: int
    params: dict
    lines: list  # the kernel's source lines
    args: list   # numpy arrays and scalars, in parameter order
    arg_names: list
    expected: Expected
    modes: tuple

    def cuda(self) -> str:
        return "\n".join(self.lines) + "\n"


def _full(n: int, v: int) -> np.ndarray:
    """n counters of v, without n x 8 bytes (2^27 elements at the large scale)."""
    return np.broadcast_to(np.int64(v), (n,))


def _ones(n: int) -> np.ndarray:
    return _full(n, 1)


def _site(lines, line_no: int, text: str, nth: int = 0) -> tuple:
    """(line, column) of the nth occurrence of text on a 1-based line: a site's location."""
    line = lines[line_no - 1]
    col = -1
    for _ in range(nth + 1):
        col = line.index(text, col + 1)
    return line_no, col + 1


def draw(seed: int, scale: str = "small", family: str | None = None) -> LargeKernel:
    rnd = random.Random(seed)
    fam = family or FAMILIES[seed % len(FAMILIES)]
    s = SCALES[scale]
    for _ in range(50):
        k = globals()["_" + fam](f"large{seed}", rnd, s, scale)
        if scale != "large" or k.expected.largest() > LIMIT:
            return k
    raise AssertionError(f"seed {seed}: no {fam} kernel past 2^32")


def _uniform(rnd, lo_hi):
    lo, hi = lo_hi
    return rnd.randint(lo, hi)


def _hot_uniform(name, rnd, s, scale):
    g, b, trips = _uniform(rnd, s["grid"]), _uniform(rnd, s["block"]), _uniform(rnd, s["trips"])
    m = rnd.choice([1, 7, 64, 1000])
    hot = rnd.uniform(0.75, 0.95) if scale == "large" else rnd.uniform(0.2, 0.9)
    r = np.random.default_rng(rnd.randrange(1 << 30))
    idx = np.where(r.random(trips) < hot, 0, r.integers(0, m, trips)).astype(np.int32)
    x = r.random(m).astype(np.float32)
    lines = [f"__global__ void {name}(const float *x, const int *idx, float *out, int K) {{",
             "    float s = 0.0f;",
             "    for (int k = 0; k < K; ++k) s += x[idx[k]];",
             "    out[blockIdx.x * blockDim.x + threadIdx.x] = s;",
             "}"]
    t = g * b
    e = Expected()
    e.counts = {"x": t * np.bincount(idx, minlength=m).astype(np.int64),
                "idx": np.full(trips, t, np.int64), "out": _ones(t)}
    e.reads = {"x": t * trips, "idx": t * trips, "out": 0}
    e.writes = {"x": 0, "idx": 0, "out": t}
    e.sites = {_site(lines, 3, "x[idx[k]]"): t * trips, _site(lines, 3, "idx[k]"): t * trips,
               _site(lines, 4, "out["): t}
    return LargeKernel(name, "hot_uniform", g, b, {"K": trips, "M": m}, lines,
                       [x, idx, np.zeros(t, np.float32), np.int32(trips)],
                       ["x", "idx", "out", "K"], e, LARGE_MODES["hot_uniform"])


def _lattice(name, rnd, s, scale):
    g, b = _uniform(rnd, s["options"]), _uniform(rnd, s["block"])
    n = 2 * (_uniform(rnd, s["steps"]) // 2)
    lines = [f"__global__ void {name}(float *a, float *c, int n) {{",
             "    int base = blockIdx.x * (n + 1);",
             "    for (int i = threadIdx.x; i <= n; i += blockDim.x) a[base + i] = (float)i;",
             "    __syncthreads();",
             "    for (int j = n; j > 0; j -= 2) {",
             "        for (int i = threadIdx.x; i < j; i += blockDim.x)",
             "            c[base + i] = 0.5f * (a[base + i] + a[base + i + 1]);",
             "        __syncthreads();",
             "        for (int i = threadIdx.x; i < j - 1; i += blockDim.x)",
             "            a[base + i] = 0.5f * (c[base + i] + c[base + i + 1]);",
             "        __syncthreads();",
             "    }",
             "}"]
    # one block's row, by difference arrays over the steps j = n, n - 2, ..., 2
    js = np.arange(n, 0, -2, dtype=np.int64)
    first = np.zeros(n + 2, np.int64)   # how many steps cover i (i < j): reads a[i], writes c[i]
    np.add.at(first, js, -1)
    first[0] += len(js)
    under_j = np.cumsum(first)[:n + 1]  # steps with i < j
    second = np.zeros(n + 2, np.int64)  # i < j - 1
    np.add.at(second, js - 1, -1)
    second[0] += len(js)
    under_j1 = np.cumsum(second)[:n + 1]
    shift = np.concatenate([[0], under_j[:-1]])    # a[base + i + 1] for i < j: element i + 1
    shift1 = np.concatenate([[0], under_j1[:-1]])
    a_reads = under_j + shift
    a_writes = 1 + under_j1
    c_reads = under_j1 + shift1
    c_writes = under_j
    e = Expected()
    e.counts = {"a": np.tile(a_reads + a_writes, g), "c": np.tile(c_reads + c_writes, g)}
    e.reads = {"a": g * int(a_reads.sum()), "c": g * int(c_reads.sum())}
    e.writes = {"a": g * int(a_writes.sum()), "c": g * int(c_writes.sum())}
    tri, tri1 = int(under_j.sum()), int(under_j1.sum())
    e.sites = {_site(lines, 3, "a[base + i]"): g * (n + 1),
               _site(lines, 7, "c[base + i]"): g * tri,
               _site(lines, 7, "a[base + i]"): g * tri,
               _site(lines, 7, "a[base + i + 1]"): g * tri,
               _site(lines, 10, "a[base + i]"): g * tri1,
               _site(lines, 10, "c[base + i]"): g * tri1,
               _site(lines, 10, "c[base + i + 1]"): g * tri1}
    size = g * (n + 1)
    return LargeKernel(name, "lattice", g, b, {"n": n}, lines,
                       [np.zeros(size, np.float32), np.zeros(size, np.float32), np.int32(n)],
                       ["a", "c", "n"], e, LARGE_MODES["lattice"])


def _passes(name, rnd, s, scale):
    g, b = _uniform(rnd, s["grid"]) // (64 if scale == "large" else 1), _uniform(rnd, s["block"])
    n, r = _uniform(rnd, s["n"]), _uniform(rnd, s["passes"])
    lines = [f"__global__ void {name}(float *y, const float *x, int n, int R) {{",
             "    for (int r = 0; r < R; ++r)",
             "        for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n;"
             " t += gridDim.x * blockDim.x)",
             "            y[t] += x[t];",
             "}"]
    e = Expected()
    # every element is one thread's, R passes: y[t] += x[t] reads and writes y (one access)
    e.counts = {"y": _full(n, r), "x": _full(n, r)}
    e.reads = {"y": r * n, "x": r * n}
    e.writes = {"y": r * n, "x": 0}
    e.sites = {_site(lines, 4, "y[t]"): r * n, _site(lines, 4, "x[t]"): r * n}
    return LargeKernel(name, "passes", g, b, {"n": n, "R": r}, lines,
                       [np.zeros(n, np.float32), np.ones(n, np.float32), np.int32(n),
                        np.int32(r)], ["y", "x", "n", "R"], e, LARGE_MODES["passes"])


def _shared_cyclic(name, rnd, s, scale):
    g, b = _uniform(rnd, s["grid"]), _uniform(rnd, s["block"])
    w = rnd.choice([2, 4, 5, 8, 32])
    trips = _uniform(rnd, s["trips"]) * (3 if scale == "large" else 1)
    lines = [f"__global__ void {name}(float *out, int K) {{",
             f"    __shared__ float sh{name}[{w}];",
             f"    if (threadIdx.x < {w}) sh{name}[threadIdx.x] = (float)threadIdx.x;",
             "    __syncthreads();",
             "    float s = 0.0f;",
             f"    for (int k = 0; k < K; ++k) s += sh{name}[k % {w}];",
             "    out[blockIdx.x * blockDim.x + threadIdx.x] = s;",
             "}"]
    t = g * b
    per_word = np.array([trips // w + (j < trips % w) for j in range(w)], np.int64)
    e = Expected()
    sh = f"sh{name}"
    e.counts = {sh: g + t * per_word, "out": _ones(t)}
    e.reads = {sh: t * trips, "out": 0}
    e.writes = {sh: g * w, "out": t}
    e.sites = {_site(lines, 3, f"sh{name}[threadIdx.x]"): g * w,
               _site(lines, 6, f"sh{name}[k % {w}]"): t * trips, _site(lines, 7, "out["): t}
    return LargeKernel(name, "shared_cyclic", g, b, {"K": trips, "W": w}, lines,
                       [np.zeros(t, np.float32), np.int32(trips)], ["out", "K"], e,
                       LARGE_MODES["shared_cyclic"])


def _shared_hist(name, rnd, s, scale):
    g, b, trips = _uniform(rnd, s["grid"]), _uniform(rnd, s["block"]), _uniform(rnd, s["trips"])
    w = rnd.choice([4, 16, 32])
    hot = rnd.uniform(0.9, 0.97) if scale == "large" else rnd.uniform(0.3, 0.9)
    r = np.random.default_rng(rnd.randrange(1 << 30))
    idx = np.where(r.random(trips) < hot, 0, r.integers(0, 1000, trips)).astype(np.int32)
    lines = [f"__global__ void {name}(const int *idx, unsigned *out, int K) {{",
             f"    __shared__ unsigned h{name}[{w}];",
             f"    if (threadIdx.x < {w}) h{name}[threadIdx.x] = 0u;",
             "    __syncthreads();",
             f"    for (int k = 0; k < K; ++k) atomicAdd(&h{name}[idx[k] % {w}], 1u);",
             "    __syncthreads();",
             f"    if (threadIdx.x < {w}) out[blockIdx.x * {w} + threadIdx.x] = h{name}[threadIdx.x];",
             "}"]
    t = g * b
    h = f"h{name}"
    per_word = np.bincount(idx % w, minlength=w).astype(np.int64)
    e = Expected()
    # the zeroing write and the final read by the first W threads of each block, and every
    # thread's atomic (one access: a read and a write)
    e.counts = {h: 2 * g + t * per_word, "idx": np.full(trips, t, np.int64),
                "out": np.ones(g * w, np.int64)}
    e.reads = {h: g * w + t * trips, "idx": t * trips, "out": 0}
    e.writes = {h: g * w + t * trips, "idx": 0, "out": g * w}
    e.sites = {_site(lines, 3, f"h{name}[threadIdx.x]"): g * w,
               _site(lines, 5, f"h{name}[idx[k] % {w}]"): t * trips,
               _site(lines, 5, "idx[k]"): t * trips,
               _site(lines, 7, f"h{name}[threadIdx.x]"): g * w,
               _site(lines, 7, "out["): g * w}
    return LargeKernel(name, "shared_hist", g, b, {"K": trips, "W": w}, lines,
                       [idx, np.zeros(g * w, np.uint32), np.int32(trips)], ["idx", "out", "K"],
                       e, LARGE_MODES["shared_hist"])


def compare(k: LargeKernel, report, line_offset: int = 0) -> list[str]:
    """What differs between a report of k's launch and its model (empty: nothing). Site
    locations are file:line:col, the kernel's lines starting after line_offset."""
    e, out = k.expected, []
    for arr, want in e.counts.items():
        try:
            a = report.array(arr)
        except KeyError:
            out.append(f"{arr}: not in the report")
            continue
        got = np.asarray(a.counts, dtype=np.int64)
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = np.nonzero(got != want)[0] if got.shape == want.shape else []
            ex = ", ".join(f"[{i}] {got[i]} (expected {want[i]})" for i in bad[:3])
            out.append(f"{arr}: counts differ (total {int(got.sum())}, expected "
                       f"{int(want.sum())}) {ex}")
        if (a.reads, a.writes) != (e.reads[arr], e.writes[arr]):
            out.append(f"{arr}: reads/writes {a.reads}/{a.writes}, expected "
                       f"{e.reads[arr]}/{e.writes[arr]}")
        if a.label != "exact":
            out.append(f"{arr}: labelled {a.label}")
    got_sites = {}
    for s in report.sites:
        line, col = (int(v) for v in str(s.location).rsplit(":", 2)[-2:])
        got_sites[(line - line_offset, col)] = s.executions
    for where, want in e.sites.items():
        if got_sites.get(where) != want:
            out.append(f"site {where[0]}:{where[1]}: {got_sites.get(where)} executions, "
                       f"expected {want}")
    if report.run.outputs_identical is not True:
        out.append(f"outputs_identical = {report.run.outputs_identical}")
    return out


__all__ = ["FAMILIES", "LIMIT", "LargeKernel", "compare", "draw"]
