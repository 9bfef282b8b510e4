"""Block-sampled --access-stats (passes/block_sample.py) in every output, on the CPU backend:
samples/spmv at its small size is 50 blocks (200 rows, 4 a block of 128 threads), so
`--access-stats-blocks 8` samples it at 1 in 4 (the largest 2^s with 50 / 2^s >= 8 is 4). Its
three hooked sites (the gather x[colIdx[jj]] and its index walks val[jj], colIdx[jj]) carry
the label; its static sites do not. The estimates themselves are checked against numpy in
tests/runtime/test_block_sampled_stats.py; here, that each output says how they were made, and
that an exact run says nothing new."""
from __future__ import annotations

import csv
import io
import json

from tests.report.test_warp_outputs import gmprof

LABEL = "sampled 1/4 of blocks"
HOOKED = {"val[jj]", "x[colIdx[jj]]", "colIdx[jj]"}


def test_every_output_labels_the_sampled_sites(tmp_path):
    js, cs, page = tmp_path / "s.json", tmp_path / "s.csv", tmp_path / "s.html"
    out = gmprof("profile", "samples/spmv", "--access-stats", "--access-stats-blocks", "8",
                 "-o", js, "--csv", cs, "--out", page).stdout
    assert f"measured, {LABEL}" in out and "95%" in out
    doc = json.loads(js.read_text())
    sites = [s for k in doc["kernels"] for s in k["sites"] if s.get("warps")]
    for s in sites:
        smp = s["warps"].get("sample")
        if s["text"] in HOOKED:
            assert smp["label"] == "sampled" and smp["rate"] == 4 and smp["blocks"] == 50
            assert 0 < smp["measured_blocks"] < 50
            lo, hi = smp["units_interval"]
            assert lo <= s["warps"]["sectors"] <= hi
        else:
            assert smp is None and s["warps"]["how"] == "static"
    rows = [r for r in csv.DictReader(io.StringIO(cs.read_text().split("\n\n")[0]))
            if r.get("warps_how")]
    assert any(r["warps_how"] == f"measured, {LABEL}" for r in rows)
    assert LABEL in page.read_text()
    # the document reads back (the schema admits `sample`) and says the same
    again = gmprof("report", js, "--json").stdout
    back = json.loads(again)
    assert [s["warps"].get("sample") for k in back["kernels"] for s in k["sites"]
            if s.get("warps")] == [s["warps"].get("sample") for s in sites]
    diff = json.loads(gmprof("diff", js, js, "--json").stdout)
    hows = [h for k in diff["kernels"] for a in k["arrays"] if a.get("warps")
            for h in a["warps"].get("how", [])]
    assert f"measured, {LABEL}" in hows


def test_an_exact_run_has_no_sample(tmp_path):
    js = tmp_path / "e.json"
    gmprof("profile", "samples/spmv", "--access-stats-exact", "--access-stats-blocks", "8",
           "-o", js)
    doc = json.loads(js.read_text())
    ws = [s["warps"] for k in doc["kernels"] for s in k["sites"] if s.get("warps")]
    assert ws and all("sample" not in w for w in ws)
    assert {w["how"] for w in ws} == {"static", "measured"}
