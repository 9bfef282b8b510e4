"""What --access-stats adds to a launch's code, per sample, without a GPU: the sites the device
counts (hooks) in default mode with and without the per-warp statistics, after each profiled
launch's static formulas are evaluated (a static site whose statistics cannot be had at the
launch is demoted to a hook), and the statistics-only calls beside once-per-loop-entry counts.
The proxy for issue 27's overhead criterion (default with --access-stats within 0.05x of
default) that runs here; bench/stats_overhead.sh measures it on a GPU.

    python3 bench/stats_sites.py [--samples co,em_v1,...|all] [--size small] [--profile both]

Per sample and kernel: the hooks in default mode; with --access-stats the hooks and the
statistics calls beside a range, spread or gather count, and of those the ones made at every
access (warp_dm / warp_sm; a walk's, a spread's or a gather's are made once per loop entry). The target,
checked (exit status 1 where it fails): with --access-stats no site is hooked that default mode
does not hook, each hook keeps its kind, and statistics calls sit only on sites default mode hooks.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"


def kernel_sites(prof, li, mode) -> dict:
    """site -> (its kind's template, whether a statistics call sits beside it) for the sites
    of li's kernel the device counts at this launch."""
    from gmprof.passes.hooks import (HOOK, LR_START, DmGather, DmRange, SmRangeBlock,
                                     SmSpreadBlock)
    from gmprof.runtime.static_launch import StaticLaunchCounts

    static = StaticLaunchCounts(prof.program).evaluate(prof.plan(mode), li, lambda n: 0,
                                                       warps=mode.warps)
    plan = prof.plan(mode, static.demoted, for_launch=True)
    ka = prof.program.kernels[li.kernel]
    in_kernel = {sc.site for sc in ka.classes}
    out = {}
    for sp in plan.site_list:
        if sp.site not in in_kernel or sp.strategy not in (HOOK, LR_START):
            continue
        kind = sp.hook.template or type(sp.hook).__name__
        has_code = not (kind == "dm_twin" and plan.for_launch)
        stats = None
        if mode.warps and sp.hook.loop is not None:
            # a walk's and a gather's requests are costed once per loop entry (gmprof.cuh
            # warp_walk_*, warp_walk_gather), the others at every access (warp_dm / warp_sm)
            stats = "entry" if isinstance(sp.hook, (DmRange, SmRangeBlock, SmSpreadBlock,
                                                    DmGather)) else "access"
        out[sp.site] = (kind if has_code else "none (twin)", stats)
    return out


def sample_rows(name: str, size_name: str, profile: str) -> list[dict]:
    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.backend import get_backend
    from gmprof.runtime.launch_input import launch_input
    from gmprof.runtime.samples import sample_profiler

    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, "cpu")
    drv = sample.driver
    size = drv.sizes[size_name]
    arrays = drv.arrays(size, np.random.default_rng(0))
    backend = get_backend("cpu")
    base = Mode.parse("default", profile=profile)
    stats = dataclasses.replace(base, warps=True)
    rows, seen = [], set()
    for launch in drv.launches(size):
        if not getattr(launch, "profile", True):
            continue
        key = (launch.kernel, tuple(launch.grid3), tuple(launch.block3))
        if key in seen:
            continue
        seen.add(key)
        args = [arrays[a] if isinstance(a, str) else a for a in launch.args]
        li = launch_input(prof.program, backend, launch.kernel, launch.grid3, launch.block3,
                          args, launch.shared_mem)
        without, with_ = kernel_sites(prof, li, base), kernel_sites(prof, li, stats)
        problems = []
        for site, (kind, _) in with_.items():
            if site not in without:
                problems.append(f"{site.text}: hooked ({kind}) only with --access-stats")
            elif without[site][0] != kind:
                problems.append(f"{site.text}: {without[site][0]} -> {kind}")
        rows.append({"sample": name, "kernel": launch.kernel, "grid": launch.grid3,
                     "hooks": len(without), "hooks_stats": len(with_),
                     "stats_calls": sum(1 for _, s in with_.values() if s),
                     "stats_per_access": sum(1 for _, s in with_.values() if s == "access"),
                     "sites": {s.text: (without.get(s, ("-",))[0], with_.get(s, ("-",))[0])
                               for s in set(without) | set(with_)},
                     "problems": problems})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=SIX, help="comma-separated sample names, or all")
    ap.add_argument("--size", default="small")
    ap.add_argument("--profile", default="both", choices=("shm", "dm", "both"))
    args = ap.parse_args(argv)
    names = sorted(p.parent.name for p in (ROOT / "samples").glob("*/driver.py")) \
        if args.samples == "all" else args.samples.split(",")
    failed = 0
    print(f"{'sample':8} {'kernel':18} {'hooks':>5} {'with stats':>10} {'stats calls':>11} "
          f"{'per access':>10}  target")
    for name in names:
        for r in sample_rows(name, args.size, args.profile):
            ok = not r["problems"]
            failed += not ok
            print(f"{r['sample']:8} {r['kernel'][:18]:18} {r['hooks']:5} {r['hooks_stats']:10} "
                  f"{r['stats_calls']:11} {r['stats_per_access']:10}  {'ok' if ok else 'FAILS'}")
            for text, (a, b) in sorted(r["sites"].items()):
                print(f"{'':10}{text[:40]:40} {a:18} -> {b}")
            for p in r["problems"]:
                print(f"{'':10}! {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
