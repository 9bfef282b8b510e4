"""A device object's per-element totals are narrowed per chunk of 4096 elements on the device
and read back and written packed (runtime_cu/host/gmprof_host_pack.h; counts file version 2,
decoded by gmprof/program/countsfile.py): each chunk takes the bytes its largest count needs
(0: all zero, nothing stored), a count past 2^32 keeps 8 bytes and decodes exactly, the
read-back crosses batches, and the bytes read back and written follow the widths. A hand-made
packed file decodes; a malformed one is a located error; a version 1 file still decodes.
CPU backend; counts derived by hand."""
from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

from conftest import env, gmprof, report_json

from gmprof.errors import InputError
from gmprof.program.countsfile import Counts
from gmprof.report import countcodec

CHUNK = 4096
N = 4 * CHUNK + 100  # four whole chunks and a short one
HOT = 3 * CHUNK + 7  # the one element of chunk 3 added to 40,000 times

# `times` additions per element, chunk by chunk: 1, 0, 150, 1 (40,000 for HOT), 1. Each
# addition is a read and a write of a[i] (basic mode: 2 counts on element i).
MIXED = r"""
#include <cstdio>
__global__ void hit(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int c = i / 4096;
  int times = c == 1 ? 0 : c == 2 ? 150 : i == HOT ? 40000 : 1;
  for (int k = 0; k < times; ++k) a[i] = a[i] + 1;
}
int main() {
  const int n = N;
  int *a;
  cudaMalloc(&a, n * sizeof(int));
  cudaMemset(a, 0, n * sizeof(int));
  hit<<<(n + 127) / 128, 128>>>(a, n);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
""".replace("HOT", str(HOT)).replace("const int n = N;", f"const int n = {N};")


def _expected(origin=0):
    # 2 counts per addition: chunk 0 and 4 -> 2, chunk 1 -> 0, chunk 2 -> 300, chunk 3 -> 2
    # except HOT -> 80,000
    want = np.full(N, 2, np.int64)
    want[CHUNK:2 * CHUNK] = 0
    want[2 * CHUNK:3 * CHUNK] = 300
    want[HOT] = 80_000
    return want + origin


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("mixed")
    (d / "mixed.cu").write_text(MIXED)
    gmprof("nvcc", "--gmprof-mode", "basic", "mixed.cu", "-o", "mixed", cwd=d)
    return d


def _run(d, name, **extra):
    p = subprocess.run([str(d / "mixed")], cwd=d, capture_output=True, text=True,
                       env=env(GMPROF_OUTPUT=f"{name}.json", GMPROF_TIMING="1", **extra))
    assert p.returncode == 0 and p.stdout == "done\n", p.stdout + p.stderr
    (group,) = json.loads((d / f"{name}.json").read_text())["groups"]
    (obj,) = group["objects"]
    timing = re.search(r"read back (\d+), counts file (\d+)", p.stderr)
    k = report_json(d, f"{name}.json")["kernels"]["hit"]
    (a,) = k["arrays"]
    return obj["counts"], countcodec.decode(a["counts"]), int(timing[1]), int(timing[2])


def test_each_chunk_is_stored_at_the_width_its_counts_need(mixed):
    entry, counts, read_back, written = _run(mixed, "r")
    assert np.array_equal(counts, _expected())
    # chunk 0: 2 (1 byte), 1: zeros (none), 2: 300 (2 bytes), 3: 80,000 (4 bytes), 4: 2 (1 byte)
    assert entry["widths"] == "10241"
    assert entry["bytes"] == CHUNK * (1 + 0 + 2 + 4) + 100 * 1 == 28_772
    # read back: the 5 chunks' ORs (8 bytes each) and the packed bytes, where the u64 totals
    # were 8 * N = 131,872 bytes; besides, the group's own vectors, the same either way: the
    # launches' log (a chunk of 4,096 [oor, runs] pairs of u64: 65,536 bytes) and its small
    # totals (under 1 KB here)
    assert 5 * 8 + 28_772 + 65_536 <= read_back < 5 * 8 + 28_772 + 65_536 + 1024
    assert 28_772 <= written < 28_772 + 1024


def test_a_count_past_two_to_the_32_keeps_8_bytes_and_decodes_exactly(mixed):
    # GMPROF_TEST_TOTALS_ORIGIN starts every element's total at 2^32 - 20: chunks 0, 1 and 4
    # end below 2^32 (4 bytes); chunk 2 (2^32 + 280) and chunk 3 (HOT: 2^32 + 79,980) pass it
    # (8 bytes). A batch of 1 byte is raised to one chunk at most (32 KiB): chunks 0 and 1
    # (16 KiB each) are read back together, then 2, 3 and 4 each alone
    origin = 2 ** 32 - 20
    entry, counts, read_back, written = _run(mixed, "o", GMPROF_TEST_TOTALS_ORIGIN=str(origin),
                                             GMPROF_TEST_PACK_BATCH="1")
    want = _expected(origin)
    assert want[2 * CHUNK] == 2 ** 32 + 280 and want[HOT] == 2 ** 32 + 79_980
    assert np.array_equal(counts, want)
    assert entry["widths"] == "44884"
    assert entry["bytes"] == CHUNK * (4 + 4 + 8 + 8) + 100 * 4 == 98_704


def _write(tmp_path, entry, payload: bytes, magic=b"gmprof.counts/2\n"):
    """A counts file of hand-made bytes at offset 32, and the JSON naming it."""
    ident = "0123456789abcdef"
    (tmp_path / "h.counts").write_bytes(magic + ident.encode() + payload)
    data = {"counts_file": {"name": "h.counts", "id": ident, "bytes": 32 + len(payload)},
            "groups": [{}]}
    return Counts(tmp_path / "h.json", data)


def test_a_hand_made_packed_vector_decodes(tmp_path):
    # chunks of 4 elements, n = 10: [1, 2, 3, 255] (1 byte each), [0, 0, 0, 0] (none),
    # [2^40 + 1, 0] (8 bytes each: the short last chunk)
    payload = bytes([1, 2, 3, 255]) + (2 ** 40 + 1).to_bytes(8, "little") + bytes(8)
    entry = {"dtype": "packed", "n": 10, "chunk": 4, "widths": "108", "offset": 32,
             "bytes": len(payload)}
    got = _write(tmp_path, entry, payload).array(entry)
    assert got.tolist() == [1, 2, 3, 255, 0, 0, 0, 0, 2 ** 40 + 1, 0]
    # 2^64 - 1 in an 8-byte chunk reads as -1 (int64 wraps, as u8 vectors always have)
    payload = (2 ** 64 - 1).to_bytes(8, "little") + (70_000).to_bytes(4, "little")
    entry = {"dtype": "packed", "n": 2, "chunk": 1, "widths": "84", "offset": 32, "bytes": 12}
    assert _write(tmp_path, entry, payload).array(entry).tolist() == [-1, 70_000]


@pytest.mark.parametrize("change, words", [
    ({"widths": "13"}, "malformed"),           # 3 is no width
    ({"widths": "10"}, "malformed"),           # 3 chunks of 4 need 3 widths
    ({"bytes": 5}, "disagrees with its widths"),
    ({"offset": 40}, "lies outside its counts file"),
])
def test_a_malformed_packed_vector_is_a_located_error(tmp_path, change, words):
    payload = bytes([1, 2, 3, 4]) + bytes(4)
    entry = dict({"dtype": "packed", "n": 10, "chunk": 4, "widths": "100", "offset": 32,
                  "bytes": 4}, **change)
    with pytest.raises(InputError) as err:
        _write(tmp_path, entry, payload).array(entry)
    assert words in str(err.value) and "h.json" in str(err.value.location.file)


def test_a_version_1_counts_file_still_decodes(tmp_path):
    payload = np.array([7, 0, 2 ** 31], "<u4").tobytes()
    entry = {"dtype": "u4", "n": 3, "offset": 32}
    counts = _write(tmp_path, entry, payload, magic=b"gmprof.counts/1\n")
    assert counts.array(entry).tolist() == [7, 0, 2 ** 31]


@pytest.mark.gpu
@pytest.mark.parametrize("origin, widths", [(0, "10241"), (2 ** 32 - 20, "44884")])
def test_the_device_packs_the_same_chunks_on_a_gpu(tmp_path, origin, widths):
    """On a GPU the ORs and the packing are kernels of the host runtime (a warp a chunk): the
    same widths and counts as on the CPU backend, derived by hand above (with the totals'
    origin, 1-byte batches raised to one chunk: four batches)."""
    (tmp_path / "mixed.cu").write_text(MIXED)
    gmprof("nvcc", "--gmprof-mode", "basic", "-arch=sm_90", "mixed.cu", "-o", "mixed",
           cwd=tmp_path, GMPROF_BACKEND="gpu")
    extra = {"GMPROF_BACKEND": "gpu"}
    if origin:
        extra.update(GMPROF_TEST_TOTALS_ORIGIN=str(origin), GMPROF_TEST_PACK_BATCH="1")
    entry, counts, _, _ = _run(tmp_path, "g", **extra)
    assert entry["widths"] == widths
    assert np.array_equal(counts, _expected(origin))
