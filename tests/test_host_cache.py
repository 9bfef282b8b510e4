"""gmprof's host cache across processes: lark's tables and the static counts.

The parse and the counts must be the same whether they come from the cache or not; a damaged
entry is a miss, never an error."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from gmprof import host_cache

ROOT = Path(__file__).resolve().parents[1]

_DUMP = r"""
import sys
from gmprof.passes.pipeline import Pipeline
tu = Pipeline().load(None, text=sys.stdin.read(), name="k.cu")
for f in tu.functions:
    print(f.name, f.parsed is not None)
    if f.parsed is not None:
        import io
        out = io.StringIO()
        f.parsed.funcdef.show(buf=out, attrnames=True, nodenames=True, showcoord=True)
        print(out.getvalue())
"""

KERNEL = """
#define N 64
__global__ void k(float *a, const float *b, int n) {
    __shared__ float t[N];
    for (int i = threadIdx.x; i < n; i += blockDim.x) { t[i % N] = b[i]; a[i] = t[i % N] * 2; }
}
"""


def _dump(cache: Path, **env) -> str:
    e = dict(os.environ, GMPROF_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **env)
    r = subprocess.run([sys.executable, "-c", _DUMP], input=KERNEL, text=True,
                       capture_output=True, env=e, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_lark_tables_cached_parse_the_same(tmp_path):
    off = _dump(tmp_path, GMPROF_HOST_CACHE="0")
    assert not (tmp_path / "host").exists()
    first = _dump(tmp_path)
    tables = list((tmp_path / "host").glob("lark-*.tables"))
    assert len(tables) == 1
    second = _dump(tmp_path)  # from the cache
    assert off == first == second
    assert "k True" in off
    # a damaged file is rebuilt, not an error
    tables[0].write_bytes(tables[0].read_bytes()[:1000])
    assert _dump(tmp_path) == off


def test_entries_round_trip_and_damage_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("GMPROF_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GMPROF_HOST_CACHE", raising=False)
    k = host_cache.key("x", (1, 2), {"a": 3})
    assert k == host_cache.key("x", (1, 2), {"a": 3}) != host_cache.key("x", (1, 2), {"a": 4})
    assert host_cache.load("t", k) is None
    host_cache.store("t", k, {"counts": np.arange(5)})
    got = host_cache.load("t", k)
    assert np.array_equal(got["counts"], np.arange(5))
    path = tmp_path / "host" / f"t-{k}.pickle"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    assert host_cache.load("t", k) is None
    assert not [p for p in (tmp_path / "host").iterdir() if p.name.startswith("tmp-")]
    monkeypatch.setenv("GMPROF_HOST_CACHE", "0")
    host_cache.store("t", "other", 1)
    assert host_cache.load("t", "other") is None
