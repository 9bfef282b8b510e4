"""gmprof.cuh's Launch/Object structs and layout.py's numpy mirrors agree byte for byte
(checked with nvcc's own offsetof in a host program; no GPU needed)."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from gmprof._paths import runtime_cu_dir
from gmprof.runtime import layout as LY

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


def test_struct_offsets_match_the_compiler(tmp_path):
    fields = ["flags", "area_words", "dyn_user_bytes", "n_sites", "obj_counters", "lr_offset",
              "n_objects", "sample_state", "area_global", "unknown_oor", "trace", "trace_capacity",
              "trace_count", "sample_seq", "sample_seq_len", "sample_threshold", "sampler",
              "seed", "clock_log", "clock_capacity", "clock_count", "obj"]
    ofields = ["base", "bytes", "counters", "oor", "kind", "n_counters", "area_offset",
               "lr_offset", "unit", "unit_shift"]
    lines = [f'printf("L {f} %zu\\n", offsetof(gmprof::Launch, {f}));' for f in fields]
    lines += [f'printf("O {f} %zu\\n", offsetof(gmprof::Object, {f}));' for f in ofields]
    lines += ['printf("size L %zu\\n", sizeof(gmprof::Launch));',
              'printf("size O %zu\\n", sizeof(gmprof::Object));']
    src = tmp_path / "offsets.cu"
    src.write_text(f'#include <cstdio>\n#include <cstddef>\n#include "{runtime_cu_dir()}/gmprof.cuh"\n'
                   "int main() {\n" + "\n".join(lines) + "\nreturn 0; }\n")
    exe = tmp_path / "offsets"
    subprocess.run(["nvcc", "-o", str(exe), str(src)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        a, b, c = line.split()
        got[(a, b)] = int(c)
    for f in fields:
        assert got[("L", f)] == LY.LAUNCH.fields[f][1], f
    for f in ofields:
        assert got[("O", f)] == LY.OBJECT.fields[f][1], f
    assert got[("size", "L")] == LY.LAUNCH.itemsize
    assert got[("size", "O")] == LY.OBJECT.itemsize


def test_fold_replicas_sums_words_and_saturates_narrow_counters():
    """Blocks flush into copies of the area; the host's sum must read as one copy would."""
    n_sites, obj_counters = 2, 6  # 6 u8 counters: 2 words after two u64 site counts
    area_words = LY.sites_end(n_sites) + 2
    copies = np.zeros((3, area_words), np.uint32)
    sites = copies[:, LY.AREA_HEADER:LY.sites_end(n_sites)]
    sites[:, 0] = [1, 2, 3]                   # site 0's executions (low words)
    sites[:, 2] = [0, 2 ** 31, 2 ** 31]       # site 1's: 2^32 in all, carried into the high word
    copies[:, LY.AREA_HEADER:LY.sites_end(n_sites)] = sites
    counters = copies.view(np.uint8).reshape(3, area_words * 4)[:, LY.sites_end(n_sites) * 4:]
    counters[:, :6] = [[200, 1, 0, 5, 0, 0], [100, 1, 0, 5, 0, 9], [0, 1, 0, 5, 7, 0]]
    out = LY.fold_replicas(copies.ravel(), 3, area_words, n_sites, obj_counters, 8, 250)
    assert LY.site_counts(out, n_sites).tolist() == [6, 2 ** 32]
    got = out.view(np.uint8)[LY.sites_end(n_sites) * 4:][:6]
    assert got.tolist() == [250, 3, 0, 15, 7, 9]   # 300 saturates at the threshold
    # 32-bit counters, no threshold: plain sums
    copies32 = np.arange(3 * area_words, dtype=np.uint32).reshape(3, area_words)
    out32 = LY.fold_replicas(copies32.ravel(), 3, area_words, n_sites, 2, 32, None)
    assert out32.tolist() == copies32.sum(axis=0).tolist()
