"""Block sampling of --access-stats' measured statistics on a large grid (issue 27's overhead).

A hooked site's per-request measure (a match, a reduction, a walk's adds) costs every warp
request; on a grid of 524,288 blocks that was 7.6x (spmv, docs/results/access_stats.md). On a
large grid only 1 block in R = 2^s measures (gmprof.cuh block_measured): block b, numbered as
linear_bid(), where the top s bits of the 32-bit b * 0x9e3779b1 + seed * 0x9e3779b9 are 0
(multiplicative hashing: a run of blocks measures evenly spread ones; seed: the launch's
number, so a solver's launches measure other blocks). The host computes the same set here, so
it knows n, the blocks measured, exactly. s: the largest
with N / 2^s >= min_blocks (N the grid's blocks; default MIN_BLOCKS, `--access-stats-blocks`),
0 (every block, exact) for a smaller grid or `--access-stats-exact`. Static sites' statistics
come from their formulas and stay exact.

The estimate of a site's total (requests, units, ideal, lines, each histogram bin) is the
measured blocks' sum times N / n: a ratio of block sums. Its variance, taking the measured
blocks as a simple random sample of n of the N (the hash is no draw, but it ignores what the
blocks do): N^2 (1 - n / N) S^2 / n, S^2 the measured blocks' sample variance of their sums,
from the sums of squares the flush adds per block (gmprof.cuh flush: r^2, u^2, r u for a site
whose statistics live in the block's area, SM mode). The 95% interval is the normal one,
estimate +- 1.96 sd; units per request, a ratio estimator, gets the delta method's. A site
whose statistics live in device memory (no SM, or an area too large for shared memory) has no
per-block sums, and fewer than 2 measured blocks have no variance: such an estimate is
labelled approximate, without an interval. Whole programs (runtime_cu/host) choose s alike
(GMPROF_ACCESS_STATS_BLOCKS, seed 0) but cannot read each launch back apart: a measured block
adds its statistics 2^s times (gmprof.cuh STATS_WEIGHT), the group's sums are estimates
(Horvitz-Thompson), labelled approximate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# measured blocks at least (the rate 1/2^s: the largest s keeping these), --access-stats-blocks
from gmprof.mode import WARPS_BLOCKS as MIN_BLOCKS  # noqa: E402
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
SEED_MASK = 0xFFFFFF  # stats_sampling's bits 8..31
_CHUNK = 1 << 24  # blocks hashed at a time
# whole programs (gmprof.cuh STATS_WEIGHT): each measured block's statistics added 2^s times
# on the device, the sums over launches already estimates (Horvitz-Thompson), in device memory
WEIGHTED_WHY = ("whole program: each measured block's statistics added 2^s times, in device "
                "memory, no per-block sums")


def shift(blocks: int, min_blocks: int) -> int:
    """s for a grid of `blocks` blocks: the largest with blocks / 2^s >= min_blocks (0: every
    block; min_blocks 0: exact)."""
    if min_blocks <= 0 or blocks < 2 * min_blocks:
        return 0
    return min(31, (blocks // min_blocks).bit_length() - 1)


def field_value(s: int, seed: int) -> int:
    """Launch::stats_sampling: s in the low 5 bits, the seed from bit 8."""
    return (s & 31) | ((seed & SEED_MASK) << 8) if s else 0


def block_hash(b: np.ndarray, seed: int) -> np.ndarray:
    """gmprof.cuh block_hashed_in's hash over uint32 block numbers (wrapping as 32-bit
    arithmetic does)."""
    key = np.uint32(((seed & SEED_MASK) * 0x9E3779B9) & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        return b.astype(np.uint32) * np.uint32(0x9E3779B1) + key


def measured_count(blocks: int, s: int, seed: int) -> int:
    """How many of blocks 0 .. blocks - 1 measure (gmprof.cuh block_hashed_in)."""
    if not s:
        return blocks
    n = 0
    for lo in range(0, blocks, _CHUNK):
        # (the device hashes the block number's low 32 bits)
        b = (np.arange(lo, min(blocks, lo + _CHUNK), dtype=np.uint64) & 0xFFFFFFFF)
        n += int(np.count_nonzero((block_hash(b, seed) >> np.uint32(32 - s)) == 0))
    return n


def scaled(total: int, blocks: int, measured: int) -> int:
    """total x blocks / measured, rounded to the nearest integer (exact where it divides)."""
    if measured <= 0:
        return 0
    return (2 * total * blocks + measured) // (2 * measured)


def total_covariance(x: float, y: float, xy: float, blocks: int, measured: int) -> float:
    """The covariance of the estimated totals of two quantities (their variance where they
    are one), from the measured blocks' sums x, y and sum of products xy (module
    docstring): N^2 (1 - n / N) S_xy / n."""
    n, N = measured, blocks
    if n <= 1 or n >= N:
        return 0.0
    return N * N * (1.0 - n / N) * ((xy - x * y / n) / (n - 1)) / n


@dataclass
class BlockSample:
    """How a measured site's statistics were sampled at one or more launches: the rates
    (R: 1 in R blocks measured; 1 for a launch that measured every block), the blocks of the
    grids and those measured (summed over launches), and the variances of the estimated
    requests and units totals and their covariance (summed: launches are independent
    samples); None where some launch had no per-block sums (approximate)."""

    rates: tuple
    blocks: int
    measured: int
    var_requests: float | None = 0.0
    var_units: float | None = 0.0
    cov: float | None = 0.0
    why: str = ""  # approximate: why there is no interval

    @property
    def approximate(self) -> bool:
        return self.var_requests is None

    def add(self, other: "BlockSample | None") -> None:
        """Another launch's sample (None: a launch measured in every block, exact)."""
        if other is None:
            self.rates = tuple(sorted(set(self.rates) | {1}))
            return
        self.rates = tuple(sorted(set(self.rates) | set(other.rates)))
        self.blocks += other.blocks
        self.measured += other.measured
        if self.approximate or other.approximate:
            self.var_requests = self.var_units = self.cov = None
            self.why = self.why or other.why
        else:
            self.var_requests += other.var_requests
            self.var_units += other.var_units
            self.cov += other.cov

    def rate_text(self) -> str:
        rs = [r for r in self.rates if r > 1]
        if len(self.rates) == 1:
            return f"1/{self.rates[0]}"
        return f"1/{min(rs)} to 1/{max(rs)}" + (" (some launches every block)"
                                                if 1 in self.rates else "")

    def text(self) -> str:
        """The label: `sampled 1/256 of blocks`, or approximate without an interval."""
        head = f"sampled {self.rate_text()} of blocks"
        if self.approximate:
            return f"approximate ({head}; {self.why or 'no per-block sums'}: no interval)"
        return head

    def doc(self, requests: int, units: int) -> dict:
        """The JSON `sample` object of a site's or an array's `warps` (docs/report.md)."""
        out = {"label": "approximate" if self.approximate else "sampled",
               "rate": self.rates[-1], "rates": list(self.rates), "blocks": self.blocks,
               "measured_blocks": self.measured, "text": self.text(), "why": self.why,
               "requests_interval": None, "units_interval": None,
               "per_request_interval": None}
        out["variance"] = None if self.approximate else {
            "requests": self.var_requests, "units": self.var_units, "covariance": self.cov}
        if self.approximate:
            return out
        out["requests_interval"] = _interval(requests, self.var_requests)
        out["units_interval"] = _interval(units, self.var_units)
        if requests:
            q = units / requests
            var = (self.var_units - 2.0 * q * self.cov + q * q * self.var_requests) / \
                requests ** 2
            half = Z95 * math.sqrt(max(var, 0.0))
            out["per_request_interval"] = [max(q - half, 0.0), q + half]
        return out


def from_doc(entry: dict | None) -> "BlockSample | None":
    """BlockSample.doc's object read back (gmprof report FILE.json)."""
    if not entry:
        return None
    v = entry.get("variance") or {}
    return BlockSample(tuple(entry["rates"]), entry["blocks"], entry["measured_blocks"],
                       v.get("requests"), v.get("units"), v.get("covariance"),
                       entry.get("why", ""))


def _interval(estimate: int, var: float) -> list:
    half = Z95 * math.sqrt(max(var, 0.0))
    return [max(estimate - half, 0.0), estimate + half]


def site_sample(sums: tuple, squares, blocks: int, measured: int, rate: int) -> BlockSample:
    """One launch's sample of one site: sums (requests, units) of its measured blocks,
    squares (r^2, u^2, r u summed over them) or None (no per-block sums: approximate)."""
    if squares is None or measured < 2:
        why = ("statistics in device memory, no per-block sums" if squares is None else
               f"{measured} block{'s' if measured != 1 else ''} measured")
        return BlockSample((rate,), blocks, measured, None, None, None, why)
    r, u = float(sums[0]), float(sums[1])
    r2, u2, ru = (float(x) for x in squares)
    return BlockSample((rate,), blocks, measured, total_covariance(r, r, r2, blocks, measured),
                       total_covariance(u, u, u2, blocks, measured),
                       total_covariance(r, u, ru, blocks, measured))


__all__ = ["MIN_BLOCKS", "BlockSample", "shift", "field_value", "block_hash", "measured_count",
           "scaled", "total_covariance", "site_sample"]
