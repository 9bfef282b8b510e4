"""gmprof advise on small kernels (CPU backend): each advice's kind, rank and prediction, the
expected numbers derived by hand from the code (the arithmetic in the comments)."""
import json

import pytest

from gmprof.cli import main
from gmprof.report.check import check

REUSE = r"""
__global__ void reuse(float *out, const float *w, const float *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < 64; j++)
        s += w[j];
    float a = x[i];
    out[i] = s * a + x[i];
}
"""

BANKS = r"""
__global__ void banks(float *out, const float *in)
{
    __shared__ float t[32][32];
    __shared__ float spare[64];
    int lane = threadIdx.x;
    for (int c = 0; c < 32; c++)
        t[lane][c] = in[lane * 32 + c];
    spare[lane] = 1.0f;
    __syncthreads();
    float s = spare[lane];
    for (int c = 0; c < 32; c++)
        s += t[c][lane];
    out[lane * 32] = s;
}
"""


def advise(tmp_path, capsys, source, kernel, grid, block, *args):
    src = tmp_path / f"{kernel}.cu"
    src.write_text(source)
    argv = ["advise", str(src), "--kernel", kernel, "--grid", grid, "--block", block,
            "--backend", "cpu", "--json"]
    for a in args:
        argv += ["--arg", a]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    check(doc, "advice.json")  # the schema (advice, evidence) and its cross-field checks
    (k,) = doc["kernels"]
    return k["advice"]


def test_every_block_reading_all_of_w_is_staged_first(tmp_path, capsys):
    advice = advise(tmp_path, capsys, REUSE, "reuse", "4", "32", "out=float32[128]:zeros",
                    "w=float32[64]:random", "x=float32[128]:random")
    kinds = [(a["rank"], a["kind"], a["array"]) for a in advice]
    # w: 4 blocks x 32 threads x 64 reads = 8192; staged, each block reads each of its 64
    # elements once: 4 x 64 = 256, saving (8192 - 256) x 4 bytes = 31,744. __constant__ (w is
    # read-only and every lane reads w[j] together) predicts the same reads at most, and ranks
    # after. x: thread i reads x[i] twice (2 x 128 = 256 reads), no other thread touches it:
    # registers save the second read, 128 reads = 512 bytes; staging x would share nothing.
    assert kinds == [(1, "stage", "w"), (2, "constant", "w"), (3, "registers", "x")]
    stage, constant, registers = advice
    assert stage["evidence"]["reads"] == 8192 and stage["evidence"]["blocks"] == 4
    # sectors: one warp request a j per warp, all lanes on one word: 4 warps x 64 = 256
    # requests of one sector; staged, 256 floats = 1,024 bytes = 32 sectors at least
    assert stage["prediction"] == {"device_reads": 4 * 64, "label": "exact",
                                   "sectors_now": 256, "sectors_at_least": 32}
    assert stage["saves_bytes"] == (8192 - 256) * 4
    # the block's tile: 64 floats = 256 bytes, of 48 KiB (the kernel has no shared arrays)
    assert stage["evidence"]["tile_bytes"] == 256 and stage["evidence"]["fits"]
    assert stage["evidence"]["shared_free_bytes"] == 48 * 1024
    assert constant["prediction"]["device_reads"] == 256
    # one request per warp per j: 4 warps x 64
    assert constant["prediction"]["constant_requests"] == 4 * 64
    assert registers["prediction"]["device_reads"] == 256 - 128
    assert registers["saves_bytes"] == 128 * 4


def test_a_power_of_two_row_is_padded_and_unused_words_counted(tmp_path, capsys):
    advice = advise(tmp_path, capsys, BANKS, "banks", "1", "32", "out=float32[1024]:zeros",
                    "in=float32[1024]:random")
    pad = next(a for a in advice if a["kind"] == "padding")
    assert pad["array"] == "t" and pad["prediction"]["padded_shape"] == [32, 33]
    # write t[lane][c]: the lanes' words lane*32 + c all fall in bank c: 32 wavefronts a
    # request, 32 requests (one a c) = 1024; read t[c][lane]: words c*32 + lane, 32 banks, 1
    # each: 32. Padded to 33 words a row: lane*33 + c -> bank (lane + c) % 32, distinct: 32;
    # c*33 + lane distinct too: 32.
    assert pad["evidence"]["wavefronts"] == 1024 + 32
    assert pad["prediction"]["wavefronts"] == 32 + 32
    assert pad["saves_bytes"] == (1056 - 64) * 128
    degrees = sorted((s["degree"], s["padded_degree"]) for s in pad["evidence"]["sites"])
    assert degrees == [(1.0, 1.0), (32.0, 1.0)]
    # spare[64]: each lane writes its word and reads it back, 2 accesses a live range and
    # nothing passed between threads: the whole array (64 x 4 = 256 bytes) could go; and words
    # 32..63 are never used: 32 x 4 = 128 bytes
    spare = [a for a in advice if a["array"] == "spare"]
    assert [(a["kind"], a["prediction"]["bytes_freed"]) for a in spare] == \
        [("shared", 256), ("shared", 128)]
    assert spare[0]["evidence"] == {"live_ranges": 32, "accesses_per_range": 2.0}
    # in[lane * 32 + c] and out[lane * 32]: lanes 128 bytes apart, one 32-byte sector each:
    # 32 sectors a request where 32 x 4 bytes need 4. in: 32 requests (one a c), 1024 -> 128;
    # out: one request, 32 -> 4
    co = [(a["array"], a["evidence"]["sectors"], a["prediction"]["sectors"], a["saves_bytes"])
          for a in advice if a["kind"] == "coalesce"]
    assert co == [("in", 1024, 128, 896 * 32), ("out", 32, 4, 28 * 32)]
    # ranked by traffic saved: padding 992 x 128 bytes, then in's 896 sectors, then out's
    assert [a["kind"] for a in advice if a["saves_bytes"]] == ["padding", "coalesce",
                                                              "coalesce"]


@pytest.mark.parametrize("option", [["--sampling", "0.5"], ["--threshold", "10"],
                                    ["--mode", "SA-NA"], ["--counter-bits", "8", "--threshold", "255"],
                                    ["--mode", "trace"]])
def test_advice_options_are_refused_when_counts_would_not_be_exact(tmp_path, capsys, option):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    assert main(["advise", str(src), "--kernel", "k", "--grid", "1", "--block", "1",
                 "--arg", "a=float32[1]:zeros", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gmprof: error: advise needs exact counts") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == [src]


@pytest.mark.parametrize("flag", ["--advice"])
def test_profile_with_advice_prints_the_tables_and_the_advice(tmp_path, capsys, flag):  # noqa
    src = tmp_path / "reuse.cu"
    src.write_text(REUSE)
    assert main(["profile", str(src), "--kernel", "reuse", "--grid", "2", "--block", "32",
                 "--backend", "cpu", "--arg", "out=float32[64]:zeros",
                 "--arg", "w=float32[64]:random", "--arg", "x=float32[64]:random", flag]) == 0
    out = capsys.readouterr().out
    # 2 blocks x 32 threads x 64 = 4096 reads of w; staged: 2 x 64 = 128
    assert "1. [stage] stage w in shared memory" in out and "4,096 -> 128" in out
    assert "arrays" in out  # the profile's tables come first


def test_the_html_page_has_the_advice(tmp_path, capsys):
    src = tmp_path / "reuse.cu"
    src.write_text(REUSE)
    page = tmp_path / "page.html"
    assert main(["advise", str(src), "--kernel", "reuse", "--grid", "2", "--block", "32",
                 "--backend", "cpu", "--arg", "out=float32[64]:zeros",
                 "--arg", "w=float32[64]:random", "--arg", "x=float32[64]:random",
                 "--out", str(page)]) == 0
    html = page.read_text()
    assert '<h3 id="k0-advice">Advice</h3>' in html
    # 2 blocks x 32 threads x 64 reads of w = 4096; staged: 2 x 64 = 128; saved (4096 - 128)
    # x 4 bytes
    assert "stage w in shared memory" in html and f"{(4096 - 128) * 4:,}" in html


def test_profile_advice_is_refused_with_sampled_counts(tmp_path, capsys):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    assert main(["profile", str(src), "--kernel", "k", "--grid", "1", "--block", "1",
                 "--arg", "a=float32[1]:zeros", "--sampling", "0.5", "--advice"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gmprof: error: --advice needs exact counts") and \
        err.count("\n") == 1


PHASES = r"""
__global__ void phases(float *out, const float *in)
{
    __shared__ float first[64];
    __shared__ float second[32];
    int t = threadIdx.x;
    first[t] = in[t];
    __syncthreads();
    float x = first[63 - t];
    __syncthreads();
    if (t < 32)
        second[t] = x;
    __syncthreads();
    if (t < 32)
        out[t] = second[31 - t];
}
"""


def test_two_shared_arrays_never_live_at_once_can_share_a_buffer(tmp_path, capsys):
    advice = advise(tmp_path, capsys, PHASES, "phases", "2", "64", "out=float32[32]:zeros",
                    "in=float32[64]:random")
    # every thread is done with first (its read of first[63 - t], before the second barrier)
    # before any thread writes second: the 32 floats of second (128 bytes) fit in first's 64
    share = [a for a in advice if a["evidence"].get("with")]
    assert [(a["array"], a["evidence"]["with"], a["frees_bytes"]) for a in share] == \
        [("first", "second", 32 * 4)]
    # each word of both passes between threads (written by t, read by 63 - t or 31 - t): no
    # "no reuse" advice for either
    assert not [a for a in advice if "no reuse" in a["text"]]


def test_a_coalescing_estimate_from_a_sample_of_blocks_says_so():
    """--access-stats on a large grid: a site's sectors estimated from 1 block in 4 (a
    hand-made document: 200 requests, 1,558 sectors where the bytes need 364)."""
    from gmprof.report.advice import _coalesce

    sample = {"label": "sampled", "text": "sampled 1/4 of blocks", "rates": [4],
              "per_request_interval": [6.84, 8.75]}
    site = {"object": "x", "text": "x[col[j]]", "location": "spmv.cu:38:30",
            "warps": {"space": "device", "requests": 200, "sectors": 1558, "ideal": 364,
                      "how": "measured", "sample": sample}}
    (item,) = _coalesce({"name": "x", "space": "device"}, {5: site})
    assert item["text"].endswith("sectors 1,558 -> 364 (sampled 1/4 of blocks, 95% "
                                 "6.84-8.75 sectors/req)")
    assert item["evidence"]["sample"] is sample
    # (1,558 - 364) sectors of 32 bytes
    assert item["saves_bytes"] == 1194 * 32


def test_a_staging_prediction_from_sampled_sectors_says_so():
    """The staging item's sectors now (the sites' --access-stats sectors) carry the sample's
    label when a site's are estimated (hand-made array: 8,192 reads of 4-byte elements by 4
    blocks, staged into a 64-element tile)."""
    from gmprof.report.advice import _stage

    a = {"name": "w", "space": "device", "elem_size": 4, "reads": 8192, "counters": 64,
         "evidence": {"blocks": 4, "staging": {
             "written_by_other_blocks": False, "predicted_reads": 256, "tile_elements": 64,
             "sites": [7], "loads": 256, "reads": 8192, "other_reads": 0,
             "produced": False}}}
    a["evidence"]["sites"] = [{"id": 7, "reads": 8192, "block_elements": 64, "staged": True}]
    site = {"object": "w", "text": "w[j]", "location": "k.cu:5:9",
            "warps": {"space": "device", "requests": 256, "sectors": 256, "ideal": 256,
                      "how": "measured", "sample": {"text": "sampled 1/4 of blocks"}}}
    (item,) = _stage(a, {7: site}, 0)
    assert item["prediction"]["sectors_now"] == 256
    assert item["prediction"]["sectors_label"] == "sampled 1/4 of blocks"
