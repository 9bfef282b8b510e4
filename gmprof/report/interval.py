"""Sampled counts' 95% confidence intervals, from the sampling design gmprof's sampler has.

Stage: report (imports nothing of gmprof's). The design (runtime_cu/gmprof.cuh Sampler): each
thread draws for each of its accesses, from a stream of its own (seeded per thread and per
launch), and keeps it with probability p. A kept draw usually stands for one access; it stands
for C at once where one draw decides for several (a site weighted by a loop's trip count, in
the loop's first iteration; a BLOCK site, whose thread 0 counts for the whole block). So a
count is a sum over independent draws d of C_d * B_d, B_d ~ Bernoulli(p):

    estimate      N^ = E + K / p          E the exact part (static sites), K = sum of kept C_d
    variance      Var = (1 - p) / p * sum over all draws of C_d^2
    its estimate  V^ = (1 - p) / p^2 * Q,  Q = sum over kept draws of C_d^2 (the device adds
                  C*C - C per kept cluster, gmprof.cuh sample_clusters; Q = K + that)

With every C_d = 1, K ~ Binomial(N - E, p) exactly, and the interval is the exact one for the
binomial's N (every N the kept count K does not reject at 2.5% on either side):

    lower = K-th success's trial count W_K at its 2.5% quantile
    upper = W_(K+1) at its 97.5% quantile, minus one
    (P(Binomial(n, p) >= K) = P(W_K <= n); W_k - k is negative binomial (k, p))

With clusters the same is taken on K / d units of size d = Q / K (Kish's effective count: the
variance of d * Binomial(n / d, p) is the design's), an approximation labelled as such. The
lower bound is never below K: kept accesses happened.

The paper's sampler reads a fixed 0/1 sequence from a random start per thread: within a thread
its draws are not independent draws but a window of one sequence. Its interval is the same
formula, labelled approximate (docs/results/sampling.md measures how it covers).
"""
from __future__ import annotations

from dataclasses import dataclass

LEVEL = 0.95


@dataclass
class Sampled:
    """One sampled count's ingredients: kept (K, in the count's units), squares (Q), exact
    (the part counted exactly: static sites). Sums over launches add, as independent samples."""

    kept: float = 0.0
    squares: float = 0.0
    exact: float = 0.0
    # False: no sampled site counts here (an array's writes when only reads are sampled): the
    # count is its exact part, with no interval around it
    sampled: bool = True

    def add(self, other: "Sampled") -> None:
        self.kept += other.kept
        self.squares += other.squares
        self.exact += other.exact
        self.sampled = self.sampled or other.sampled

    @property
    def design_effect(self) -> float:
        return self.squares / self.kept if self.kept > 0 else 1.0


def merged_samples(mine, other) -> dict:
    """Two launches' ArrayStats.sample summed (mine's counts not yet added to): a launch
    whose array was counted exactly (no sample) joins as an exact part."""
    def parts(a):
        if a.sample is not None:
            return a.sample
        return {"rate": None, "sampler": None,
                "accesses": Sampled(exact=a.accesses, sampled=False),
                "reads": None if a.reads is None else Sampled(exact=a.reads, sampled=False),
                "writes": None if a.writes is None else Sampled(exact=a.writes, sampled=False)}

    x, y = parts(mine), parts(other)
    out = {"rate": x["rate"] or y["rate"], "sampler": x["sampler"] or y["sampler"]}
    for kind in ("accesses", "reads", "writes"):
        if x[kind] is None or y[kind] is None:
            out[kind] = None
            continue
        s = Sampled(x[kind].kept, x[kind].squares, x[kind].exact, x[kind].sampled)
        s.add(y[kind])
        out[kind] = s
    return out


def binomial_n_interval(kept: float, rate: float, level: float = LEVEL) -> tuple[float, float]:
    """The exact interval for a binomial's number of trials n from `kept` successes at
    probability `rate` (kept may be fractional: an effective count)."""
    from scipy.stats import nbinom

    tail = (1.0 - level) / 2.0
    if rate >= 1.0:
        return kept, kept
    lo = kept + float(nbinom.ppf(tail, kept, rate)) if kept > 0 else 0.0
    hi = kept + 1.0 + float(nbinom.ppf(1.0 - tail, kept + 1.0, rate)) - 1.0
    return lo, hi


def interval(s: Sampled, rate: float, level: float = LEVEL) -> tuple[float, float]:
    """(lower, upper) of the count E + K / rate (module docstring)."""
    if not s.sampled:
        return s.exact, s.exact
    d = max(s.design_effect, 1.0)
    lo, hi = binomial_n_interval(s.kept / d, rate, level)
    lo, hi = max(lo * d, s.kept), max(hi * d, s.kept)
    return s.exact + lo, s.exact + hi


def max_interval(kept_max: float, counters: int, rate: float, design_effect: float = 1.0,
                 level: float = LEVEL) -> tuple[float, float]:
    """The largest per-element count's interval, from the largest kept count of an element:
    the element with the largest estimate is selected, so its own interval does not hold the
    true maximum. Every element's upper bound at once instead (Bonferroni: level 1 - (1 -
    level) / counters each; the bound grows with the kept count, so the largest kept count's
    is the largest); below, no element can have fewer than it kept."""
    d = max(design_effect, 1.0)
    each = 1.0 - (1.0 - level) / max(counters, 1)
    _, hi = binomial_n_interval(kept_max / d, rate, each)
    return kept_max, max(hi * d, kept_max)


def describe(s: Sampled, rate: float, sampler: str) -> dict:
    """The JSON entry of one sampled count: its estimate, interval, kept, design effect, and
    how the interval was made."""
    lo, hi = interval(s, rate)
    d = s.design_effect
    if not s.sampled:
        how = "exact: no sampled site counts it"
    elif sampler == "paper":
        how = "approximate: the paper's sampler reads one fixed 0/1 sequence from a random " \
              "start per thread, taken as independent draws"
    elif d > 1.0 + 1e-9:
        how = "approximate: draws that kept several accesses at once (a loop's or a block's), " \
              f"as {s.kept / d:.4g} units of {d:.4g} (Kish)"
    else:
        how = "exact binomial: each access kept independently"
    return {"estimate": s.exact + s.kept / rate, "low": lo, "high": hi, "level": LEVEL,
            "kept": s.kept, "exact_part": s.exact, "design_effect": d, "interval": how}


def covers(entry: dict, exact: float) -> bool:
    """Whether an interval (describe's entry) holds an exact count."""
    return entry["low"] - 1e-6 <= exact <= entry["high"] + 1e-6


__all__ = ["Sampled", "merged_samples", "max_interval", "LEVEL", "binomial_n_interval", "interval", "describe", "covers"]
