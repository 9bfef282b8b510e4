"""Sampled counts' 95% intervals (report/interval.py, issue 28) against the binomial computed
here: every N that kept count K does not reject at 2.5% on either side, by brute force over N
with scipy.stats.binom (the module under test inverts the negative binomial instead)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from gmprof.report.interval import (Sampled, binomial_n_interval, covers, describe, interval,
                                    max_interval, merged_samples)


def brute_force(k: int, p: float, level: float = 0.95) -> tuple[int, int]:
    """[min, max] of the N with P(Binomial(N, p) >= k) >= a/2 and P(.. <= k) >= a/2."""
    tail = (1 - level) / 2
    ns = np.arange(0, int(10 * (k + 5) / p))
    ok = (binom.sf(k - 1, ns, p) >= tail) & (binom.cdf(k, ns, p) >= tail)
    return int(ns[ok].min()), int(ns[ok].max())


@pytest.mark.parametrize("k, p", [(0, 0.1), (1, 0.1), (3, 0.1), (25, 0.1), (0, 0.01),
                                  (7, 0.01), (40, 0.01), (0, 0.001), (2, 0.001), (100, 0.001)])
def test_the_exact_binomial_interval(k, p):
    assert binomial_n_interval(k, p) == brute_force(k, p)


def test_kept_zero_by_hand():
    # no access kept at p = 0.1: N is rejected once 0.9^N < 0.025, N > ln 0.025 / ln 0.9 =
    # 35.01: N <= 35
    assert binomial_n_interval(0, 0.1) == (0, 35)


def test_an_exact_part_shifts_the_interval_and_every_rate_one_is_exact():
    lo, hi = brute_force(12, 0.01)
    assert interval(Sampled(kept=12, squares=12, exact=500), 0.01) == (500 + lo, 500 + hi)
    assert interval(Sampled(kept=12, squares=12, exact=5), 1.0) == (17, 17)
    # no sampled site counts it: the exact part, no width
    assert interval(Sampled(exact=9, sampled=False), 0.01) == (9, 9)


def test_clusters_scale_the_binomial_of_the_effective_count():
    # 6 kept draws of 128 accesses each: Q = 6 * 128^2, K = 768, d = Q / K = 128, K / d = 6
    s = Sampled(kept=768, squares=6 * 128 ** 2)
    assert s.design_effect == 128
    lo, hi = brute_force(6, 0.01)
    assert interval(s, 0.01) == (lo * 128, hi * 128)
    assert "Kish" in describe(s, 0.01, "rng")["interval"]


def test_the_lower_bound_is_never_below_what_was_kept():
    # K = 1 at p = 0.01: the binomial's lower bound is 3 (1 - 0.99^2 < 0.025 <= 1 - 0.99^3);
    # with K = 1 kept the count is at least 1, and the bound 3 stands
    assert interval(Sampled(kept=1, squares=1), 0.01)[0] == 3
    assert interval(Sampled(kept=1, squares=1), 0.5)[0] == 1


def test_the_largest_element_bounds_every_element_at_once():
    # 1000 counters, the largest kept 2 at p = 0.1: its upper bound at level 1 - 0.05 / 1000
    lo, hi = max_interval(2, 1000, 0.1)
    assert lo == 2
    assert hi == brute_force(2, 0.1, 1 - 0.05 / 1000)[1]
    # one counter: the plain interval's upper end
    assert max_interval(2, 1, 0.1)[1] == brute_force(2, 0.1)[1]


def test_coverage_of_the_formula_over_draws():
    # the design itself, drawn here: N = 3000 accesses kept at p = 0.01, 2000 times; the
    # exact interval covers at least 95% of them (it is conservative: discrete)
    rng = np.random.default_rng(7)
    n, p = 3000, 0.01
    kept = rng.binomial(n, p, 2000)
    inside = [covers(describe(Sampled(kept=k, squares=k), p, "rng"), n) for k in kept]
    assert np.mean(inside) >= 0.95


def test_launches_merge_as_independent_samples():
    class A:  # an ArrayStats' fields that merged_samples reads
        def __init__(self, sample, accesses=0, reads=0, writes=0):
            self.sample, self.accesses, self.reads, self.writes = sample, accesses, reads, writes

    one = {"rate": 0.1, "sampler": "rng", "accesses": Sampled(5, 5, 2),
           "reads": Sampled(5, 5, 0), "writes": None}
    two = {"rate": 0.1, "sampler": "rng", "accesses": Sampled(7, 9, 1),
           "reads": Sampled(3, 3, 0), "writes": None}
    m = merged_samples(A(one), A(two))
    assert (m["accesses"].kept, m["accesses"].squares, m["accesses"].exact) == (12, 14, 3)
    assert m["writes"] is None and m["reads"].kept == 8
    # a launch counted exactly joins as an exact part
    m = merged_samples(A(one), A(None, accesses=40, reads=40, writes=0))
    assert (m["accesses"].kept, m["accesses"].exact) == (5, 42) and m["accesses"].sampled
    assert m["writes"] is None
