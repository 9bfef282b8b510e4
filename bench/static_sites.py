"""Static sites of a sample at one size, evaluated on the host as a launch would: per site, the
method (box / enumerate), the time it took, and the sites the launch demotes to run-time hooks
(their formula exceeded a budget or could not be evaluated). Needs no GPU and runs no kernel:
where the static counts' host time and the demotions behind an overhead come from (issues 16
and 17).

    python3 bench/static_sites.py SAMPLE [--size large] [--mode default] [--profile both]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _text(site) -> str:
    from pycparser import c_generator

    c = site.node.coord
    return f"{c.line}:{c.column} " + c_generator.CGenerator().visit(site.node)[:30]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample")
    ap.add_argument("--size", default="large")
    ap.add_argument("--profile", default="both", choices=("shm", "dm", "both"))
    args = ap.parse_args(argv)

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.passes import symbolic as S
    from gmprof.passes.plan import STATIC
    from gmprof.runtime.backend import get_backend
    from gmprof.runtime.launch_input import launch_input
    from gmprof.runtime.samples import sample_profiler
    from gmprof.runtime.static_launch import StaticLaunchCounts

    sample = load_sample(ROOT / "samples" / args.sample)
    prof = sample_profiler(sample, "cpu")
    drv = sample.driver
    size = drv.sizes[args.size]
    t = time.perf_counter()
    arrays = drv.arrays(size, np.random.default_rng(0))
    print(f"arrays {time.perf_counter() - t:.2f} s")
    backend = get_backend("cpu")
    plan = prof.plan(Mode(profile=args.profile))
    for launch in drv.launches(size)[:1]:
        args_ = [arrays[a] if isinstance(a, str) else a for a in launch.args]
        li = launch_input(prof.program, backend, launch.kernel, launch.grid3, launch.block3,
                          args_, launch.shared_mem)
        static = StaticLaunchCounts(prof.program)
        ka = prof.program.kernels[li.kernel]
        for sc in ka.classes:
            sp = plan.sites.get(sc.site)
            if sp is None or sp.strategy != STATIC:
                continue
            t = time.perf_counter()
            try:
                c = static._count(ka, sc, li, lambda name: 0)
                what = f"{c.method:9s} executions {c.executions:,}"
            except S.Unknown as e:
                what = f"DEMOTED: {e}"
            print(f"{time.perf_counter() - t:7.2f} s  site {sc.site.id:3d} "
                  f"{_text(sc.site):36s} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
