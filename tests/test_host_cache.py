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


def test_pack_round_trips():
    rng = np.random.default_rng(1)
    cases = [np.zeros(0, np.int64), np.zeros(7, np.int64), np.full(100, 3, np.int64),
             rng.integers(0, 4, 1000), rng.integers(-5, 70000, 333),
             np.repeat(rng.integers(0, 2**40, 20), rng.integers(1, 50, 20)),
             np.array([2**62, -2**62, 0])]
    from gmprof.runtime.static_cache import pack, unpack

    for c in cases:
        c = np.asarray(c, np.int64)
        got = unpack(pack(c))
        assert got.dtype == np.int64 and np.array_equal(got, c)


def _static_counts_of_samples():
    """{(sample, launch index, site id): (counts, out of range, executions)} over every
    sample's small launches, from a fresh StaticLaunchCounts (no in-process cache)."""
    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.backend import get_backend
    from gmprof.runtime.launch_input import launch_input
    from gmprof.runtime.samples import sample_profiler
    from gmprof.runtime.static_launch import StaticLaunchCounts

    out = {}
    backend = get_backend("cpu")
    for d in sorted((ROOT / "samples").iterdir()):
        if not (d / "driver.py").is_file():
            continue
        sample = load_sample(d)
        prof = sample_profiler(sample, "cpu")
        drv = sample.driver
        size = drv.sizes["small"]
        arrays = drv.arrays(size, np.random.default_rng(0))
        static = StaticLaunchCounts(prof.program)
        for i, launch in enumerate(drv.launches(size)):
            args = [arrays[a] if isinstance(a, str) else a for a in launch.args]
            li = launch_input(prof.program, backend, launch.kernel, launch.grid3,
                              launch.block3, args, launch.shared_mem)
            got = static.evaluate(prof.plan(Mode()), li, lambda name: 0)
            for sc, c in got.counts.items():
                out[(d.name, i, sc.site.id)] = (c.counts, c.out_of_range, c.executions)
    return out


def test_static_counts_from_the_cache_are_the_counts(tmp_path, monkeypatch):
    from gmprof.runtime import static_cache

    monkeypatch.setenv("GMPROF_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GMPROF_HOST_CACHE", raising=False)
    monkeypatch.setattr(static_cache, "STORE_AFTER_S", 0.0)  # store every count
    fresh = _static_counts_of_samples()
    assert len(fresh) > 20
    entries = list((tmp_path / "host").glob("static-*.pickle"))
    assert entries
    # now every count must come from the cache: counting again is an error
    from gmprof.runtime import static_launch

    def no_counting(inputs):
        raise AssertionError("counted again instead of reading the cache")

    monkeypatch.setattr(static_launch, "count_prepared", no_counting)
    cached = _static_counts_of_samples()
    assert cached.keys() == fresh.keys()
    for k, (counts, oor, execs) in fresh.items():
        c2, oor2, execs2 = cached[k]
        assert np.array_equal(counts, c2) and oor == oor2 and execs == execs2, k
