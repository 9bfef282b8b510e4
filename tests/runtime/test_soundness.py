"""Soundness of the analysis and exactness of the counts, checked on real executions.

Every sample runs on the CPU backend (small size) three ways: `trace` (every access logged: the
oracle), `default` (static formulas + SA hooks + SM) and default without static counts (so every
loop-invariant site is counted with its loop's trip count). The test checks, from the trace:
  - every tid-invariant claim: all threads of a block touch the same address at the k-th
    execution of the site; every warp-uniform claim: all lanes of a warp do (blockDim.x % 32 == 0)
  - every static claim: the formula's count equals the trace's count for that site, element by
    element, and its executions too
  - every count of the exact modes equals the trace's, element by element and site by site (so
    the loop-invariance claims used for weighting hold, and SM/BLOCK/UNIFORM/WARP counting is
    exact)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.runtime.samples import run_sample, sample_profiler

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(p.name for p in (ROOT / "samples").iterdir() if (p / "driver.py").is_file())


def _trace_groups(records, site_id, by_warp: bool):
    """For one site: {(block, group, k): set(addresses)} with k the per-thread occurrence."""
    sites, objs, sizes, addrs, blocks, threads = records
    sel = np.nonzero(sites == site_id)[0]
    if len(sel) == 0:
        return {}
    b, t, a = blocks[sel], threads[sel], addrs[sel]
    # occurrence number of each record within its (block, thread), in execution order
    key = b.astype(np.int64) * (1 << 20) + t.astype(np.int64)
    order = np.argsort(key, kind="stable")
    k = np.empty(len(sel), np.int64)
    ks = key[order]
    starts = np.r_[0, np.nonzero(np.diff(ks))[0] + 1]
    run_len = np.diff(np.r_[starts, len(ks)])
    k[order] = np.arange(len(ks)) - np.repeat(starts, run_len)
    group = (t // 32) if by_warp else np.zeros_like(t)
    out: dict = {}
    for bb, gg, kk, aa in zip(b.tolist(), group.tolist(), k.tolist(), a.tolist()):
        out.setdefault((bb, gg, kk), set()).add(aa)
    return out


@pytest.mark.parametrize("name", SAMPLES)
def test_claims_and_counts_hold_on_real_executions(name):
    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, backend="cpu")
    traced = run_sample(sample, "small", mode=Mode.parse("trace"), backend="cpu", profiler=prof)
    assert traced.ok, traced.check_error
    counts_default = run_sample(sample, "small", mode=Mode(), backend="cpu", profiler=prof)
    assert counts_default.ok, counts_default.check_error
    no_static = run_sample(sample, "small", mode=Mode(static_counts=False), backend="cpu",
                           profiler=prof)
    assert no_static.ok
    for kernel, ref in traced.reports.items():
        assert not [n for n in ref.notes if "overflow" in n], ref.notes
        for mode_run in (counts_default, no_static):
            got = mode_run.reports[kernel]
            assert got.run.outputs_identical
            for arr in ref.arrays:
                np.testing.assert_array_equal(
                    got.array(arr.name).counts, arr.counts,
                    err_msg=f"{name} {kernel} {arr.name} [{got.run.mode}] differs from the trace")
            ref_sites = {s.id: s.executions for s in ref.sites if s.how != "not counted"}
            got_sites = {s.id: s.executions for s in got.sites if s.id in ref_sites}
            assert got_sites == ref_sites, f"{name} {kernel} site executions [{got.run.mode}]"


@pytest.mark.parametrize("name", SAMPLES)
def test_uniformity_and_static_claims_per_site(name):
    """tid-invariant / warp-uniform claims against the trace; static formulas site by site."""
    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, backend="cpu")
    drv = sample.driver
    params = drv.sizes["small"]
    arrays = drv.arrays(params, np.random.default_rng(0))
    checked = 0
    for launch in drv.launches(params):
        args = [arrays[a] if isinstance(a, str) else a for a in launch.args]
        if not launch.profile:
            prof.run_native(launch.kernel, launch.grid3, launch.block3, args, launch.shared_mem)
            continue
        saved = {k: v.copy() for k, v in arrays.items()}
        # the static counts of the default plan, then the trace on the same inputs
        static = prof.profile_launch(launch.kernel, launch.grid3, launch.block3,
                                     [saved[a] if isinstance(a, str) else a
                                      for a in launch.args],
                                     launch.shared_mem, mode=Mode()).static
        traced = prof.profile_launch(launch.kernel, launch.grid3, launch.block3, args,
                                     launch.shared_mem, mode=Mode.parse("trace"))
        records = traced.trace
        kernel = launch.kernel.split("<")[0]
        ka = prof.program.kernels[kernel]
        plan = traced.plan
        for sc in ka.classes:
            site = sc.site
            sp = plan.sites[site]
            if sp.strategy == "none" or site.object is None:
                continue
            if sc.tid_invariant:
                for key, addrs in _trace_groups(records, site.id, by_warp=False).items():
                    assert len(addrs) == 1, f"{name}: {site.location} {site.text} claimed " \
                                            f"tid-invariant, block {key[0]} saw {addrs}"
                    checked += 1
            elif sc.warp_uniform and launch.block3[0] % 32 == 0:
                for key, addrs in _trace_groups(records, site.id, by_warp=True).items():
                    assert len(addrs) == 1, f"{name}: {site.location} {site.text} claimed " \
                                            f"warp-uniform, warp {key[:2]} saw {addrs}"
                    checked += 1
        by_site: dict = {}
        for sc, count in static.items():
            by_site[sc.site.id] = by_site.get(sc.site.id, 0) + count.executions
        sites = records[0]
        for site_id, executions in by_site.items():
            assert int((sites == site_id).sum()) == executions, \
                f"{name}: static site {site_id} executions differ from the trace"
            checked += 1
    # a sample whose kernels make no claim at all would check nothing: that is a failure too
    assert checked > 0, f"{name}: no tid-invariant, warp-uniform or static claim was checked"
