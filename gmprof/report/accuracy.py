"""Accuracy loss of a report against an exact reference (the paper's section 6.2).

Stage: report. Takes two Reports of the same launch, one exact (basic mode); returns
|count - exact| / exact per element, averaged over the elements the exact count saw, then over
arrays. Used by `gmprof compare` and `gmprof bench`.
"""
from __future__ import annotations

import numpy as np


def accuracy_loss(report, reference) -> float:
    """The paper's 6.2: |count - exact| / exact per element, averaged over the elements an
    exact count saw, then over arrays."""
    losses = []
    for ref in reference.arrays:
        try:
            got = report.array(ref.name)
        except KeyError:
            continue
        exact = ref.counts.astype(float)
        mask = exact > 0
        if not mask.any():
            continue
        counts = got.counts.astype(float)
        if got.threshold is not None:
            counts = np.minimum(counts, got.threshold)
        losses.append(float(np.mean(np.abs(counts[mask] - exact[mask]) / exact[mask])))
    return float(np.mean(losses)) if losses else 0.0


__all__ = ["accuracy_loss"]
