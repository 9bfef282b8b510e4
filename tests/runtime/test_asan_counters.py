"""Narrow (8- and 16-bit) counters touch only their own bytes (issue 11), under
AddressSanitizer: the runtime and every module compiled with -fsanitize=address, gmprof's own
buffers' red zones poisoned (gmprof.runtime.guarded), so a read or write one byte past a
counter buffer is reported even when it leaves the bytes as they were (the word-wide CAS that
8/16-bit counters used). The arrays have 37 elements: their counter buffers end mid-word.
Counts are checked against hand-derived values; a kernel writing past a poisoned buffer shows
the sanitizer is watching."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_asan import libasan, under_asan

pytestmark = pytest.mark.skipif(libasan() is None, reason="no libasan for g++")

SOURCE = r'''
__global__ void touch_last(float *y, const float *x, int n) {
    __shared__ float tile[37];
    int t = threadIdx.x;
    if (t < n) tile[t] = x[t];
    __syncthreads();
    if (t < n) y[t] = tile[n - 1 - t] + x[n - 1];
}
'''

PROFILED = f"""
    import numpy as np
    from gmprof.mode import Mode
    from gmprof.runtime import cpu, guarded
    from gmprof.runtime.session import Profiler
    assert "-fsanitize=address" in cpu.compile_flags() and guarded._ASAN is not None
    prof = Profiler(text={SOURCE!r}, name="narrow.cu", backend="cpu")
    n = 37
    # atomic and non-atomic updates, in device memory and in the block's area, and the
    # live-range exchange (enhanced)
    runs = [("basic-TH", False), ("NA-TH", False), ("SA-SM-TH", False), ("SA-SM-TH", True)]
    for bits in (8, 16):
        for mode, enhanced in runs:
            y, x = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
            r = prof.launch("touch_last", 1, 64, [y, x, np.int32(n)],
                            mode=Mode.parse(mode, threshold=200, counter_bits=bits,
                                            enhanced=enhanced))
            # x[t] once by each of the n threads, x[n-1] by all n more; y[t] once each;
            # tile[t]: one write, one read (of tile[n-1-t]); enhanced: the same, as the
            # one live range of each word (loaded from x, stored to y)
            want_x = [1] * (n - 1) + [1 + n]
            assert r.array("x").counts.tolist() == want_x, (bits, mode, r.array("x").counts)
            assert r.array("y").counts.tolist() == [1] * n, (bits, mode)
            assert r.array("tile").counts.tolist() == [2] * n, \\
                (bits, mode, enhanced, r.array("tile").counts)
            assert (y == x[::-1] + x[-1]).all()
    print("within bounds")
"""

WATCHING = """
    import numpy as np
    from gmprof.runtime.cpu import CpuModule
    from gmprof.runtime.cpu_backend import CpuBackend
    m = CpuModule("__global__ void past(unsigned char *c, int n) { c[n] += 1; }", ["past"],
                  filename="past.cu")
    c = CpuBackend().zeros(37, np.uint8)   # a counter buffer: its red zones are poisoned
    m.launch("past", 1, 1, (c, np.int32(37)))
    print("not caught")
"""


def test_narrow_counters_stay_inside_their_buffers_under_asan(tmp_path):
    p = under_asan(PROFILED, tmp_path / "cache")
    assert "AddressSanitizer" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0 and "within bounds" in p.stdout, p.stderr[-3000:]


def test_the_sanitizer_watches_counter_buffers(tmp_path):
    p = under_asan(WATCHING, tmp_path / "cache")
    assert "use-after-poison" in p.stderr and "not caught" not in p.stdout, p.stderr[-2000:]
