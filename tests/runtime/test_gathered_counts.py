"""A gather's counts from its index walk (decode.gathered_counts): x[idx[e]] read walk[e] times
gives x's element idx[e] walk[e] accesses; expected values by a plain loop."""
from __future__ import annotations

import numpy as np

from gmprof.runtime.decode import gathered_counts


def _by_hand(walk, values, elem_size, unit, n):
    counts, oor = [0] * n, 0
    for w, v in zip(walk, values):
        u = (v * elem_size) // unit
        if 0 <= u < n:
            counts[u] += w
        else:
            oor += w
    return counts, oor


def test_gathered_counts_floats_chars_and_out_of_range():
    rng = np.random.default_rng(3)
    walk = rng.integers(0, 4, 200)
    values = rng.integers(-3, 40, 200).astype(np.int32)
    for elem_size, unit, n in ((4, 4, 32), (1, 4, 9), (8, 8, 30)):
        counts, oor = gathered_counts(walk, values, elem_size, unit, n)
        want = _by_hand(walk.tolist(), values.tolist(), elem_size, unit, n)
        assert (counts.tolist(), oor) == want
        assert counts.dtype == np.int64


def test_a_walk_longer_than_the_index_array_reads_only_its_elements():
    counts, oor = gathered_counts(np.array([1, 2, 5]), np.array([3, 0]), 4, 4, 4)
    assert (counts.tolist(), oor) == ([2, 0, 0, 1], 0)
