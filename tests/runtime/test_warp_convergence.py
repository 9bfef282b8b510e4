"""Measured warp requests count the warp's requests as the hardware makes them for the user's
code, not for gmprof's: a hook's own branches (one lane adding a count, lanes walking their
share of a range) must not leave the warp split into the user's next loop, where each part
would measure a request of its own. On an H100 co's small size once counted 2,328 requests at
each of its three row-walk sites where Nsight Compute counts 2,304 (issue 27); the hooks now
leave through __syncwarp with the mask their lanes came in with (gmprof.cuh Rejoin).

Expected, by hand (samples/co, size small: 1024 rows x 24 columns, 4 clusters of which one is
empty, 4 blocks of 128 threads): every thread takes 1024 / 512 = 2 rows; for each row, each of
the 3 nonempty clusters walks the 24 columns, the whole warp together (the cluster test is the
same in every lane). 16 warps x 2 rows x 3 clusters x 24 columns = 2,304 requests at each of
data[...], Acomp[...] and colCL[c]. data[...]: lanes' rows are 24 x 4 = 96 bytes apart, so
each lane reads its own 32-byte sector: 32 sectors a request, 73,728 in all. colCL[c] is one
word for the whole warp (a broadcast): one wavefront a request."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUESTS = 16 * 2 * 3 * 24


def _sites(backend, tmp_path):
    out = tmp_path / f"co-{backend}.json"
    subprocess.run([sys.executable, "-m", "gmprof", "profile", os.path.join(ROOT, "samples", "co"),
                    "--size", "small", "--access-stats", "--backend", backend, "-o", str(out)],
                   check=True, capture_output=True, cwd=tmp_path)
    doc = json.loads(out.read_text())
    return {s["text"]: s["warps"] for k in doc["kernels"] for s in k["sites"]
            if s.get("warps") and s["object"] in ("data", "colCL", "Acomp")
            and "c]" in s["text"]}


@pytest.mark.parametrize("backend", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_co_row_walks_count_the_hardware_requests(backend, tmp_path):
    sites = _sites(backend, tmp_path)
    data = next(w for t, w in sites.items() if t.startswith("data["))
    colcl = next(w for t, w in sites.items() if t.startswith("colCL["))
    acomp = next(w for t, w in sites.items() if t.startswith("Acomp["))
    assert (data["requests"], data["sectors"]) == (REQUESTS, REQUESTS * 32)
    assert (colcl["requests"], colcl["wavefronts"]) == (REQUESTS, REQUESTS)
    assert acomp["requests"] == REQUESTS
