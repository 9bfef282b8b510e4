"""How often a sampled count's 95% interval holds the exact count (issue 28, docs/results/sampling.md).

For each of the paper's six samples: one exact run (the default mode), then sampled runs at each
rate, sampler and seed; every array whose counts are sampled is one trial per count (its
accesses, and its reads and writes where split): covered when the exact count lies inside the
interval the report gives (report/interval.py). Prints a markdown table per sampler, and the
coverage over all arrays.

    PYTHONPATH=$PWD python3 bench/sampling_coverage.py                 # CPU backend, small size
    PYTHONPATH=$PWD python3 bench/sampling_coverage.py --backend gpu   # the samples' default
    ... --seeds 5 --rates 0.1,0.01,0.001 --samplers rng,paper --json out.json
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

from gmprof._paths import samples_dir
from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.report.coverage import COUNTS, exact_values, interval_checks
from gmprof.runtime.samples import run_sample, sample_profiler

SAMPLES = ("co", "em_v1", "bo_v2", "jcb_v1", "spmv", "dxtc")


def exact_counts(reports) -> dict:
    """kernel -> coverage.exact_values of an exact run."""
    return {kernel: exact_values(rep) for kernel, rep in reports.items()}


def trials(reports, exact: dict) -> list:
    """One row per sampled array and count (report/coverage.py), with its kernel."""
    return [dict(r, kernel=kernel) for kernel, rep in reports.items()
            for r in interval_checks(rep, exact.get(kernel, {}))]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    p.add_argument("--size", help="the samples' size (default: small on the CPU, large on a GPU)")
    p.add_argument("--rates", default="0.1,0.01,0.001")
    p.add_argument("--seeds", type=int, default=5, help="sampler seeds per rate (0..N-1)")
    p.add_argument("--samplers", default="rng,paper")
    p.add_argument("--mode", default="basic-SM", help="the mode sampled (default basic-SM, "
                   "as `gmprof compare` and the paper's 6.2: every array sampled; `default` is "
                   "what `gmprof profile --sampling` runs, where static sites stay exact)")
    p.add_argument("--samples", default=",".join(SAMPLES))
    p.add_argument("--json", help="also write every trial here")
    args = p.parse_args(argv)
    size = args.size or ("small" if args.backend == "cpu" else "large")
    rates = [float(r) for r in args.rates.split(",")]
    samplers = args.samplers.split(",")
    rows = []
    t0 = time.time()
    for name in args.samples.split(","):
        sample = load_sample(samples_dir() / name)
        prof = sample_profiler(sample, args.backend)
        drv = sample.driver
        initial = drv.arrays(drv.sizes[size], np.random.default_rng(0))
        exact = exact_counts(run_sample(sample, size, mode=Mode.parse("default"),
                                        profiler=prof, initial=initial).reports)
        for sampler in samplers:
            for rate in rates:
                for seed in range(args.seeds):
                    mode = Mode.parse(args.mode, sampling=rate, sampler=sampler,
                                      sampling_seed=seed)
                    run = run_sample(sample, size, mode=mode, profiler=prof, initial=initial,
                                     check=False)
                    for r in trials(run.reports, exact):
                        rows.append(dict(r, sample=name, sampler=sampler, rate=rate, seed=seed))
        print(f"{name}: done ({time.time() - t0:.0f} s)", file=sys.stderr)
    print(f"backend {args.backend}, size {size}, mode {args.mode}, seeds 0..{args.seeds - 1}, "
          f"on {platform.node()} ({platform.machine()}), {time.time() - t0:.0f} s\n")
    for sampler in samplers:
        print(f"sampler {sampler}: arrays whose exact accesses lie inside the 95% interval "
              "(in parentheses: every count, accesses, reads, writes, max per element)\n")
        print("| sample | " + " | ".join(f"1/{round(1 / r)}" for r in rates) + " |")
        print("|---|" + "---|" * len(rates))
        for name in args.samples.split(","):
            cells = []
            for rate in rates:
                sel = [r for r in rows if r["sample"] == name and r["rate"] == rate
                       and r["sampler"] == sampler]
                acc = [r for r in sel if r["count"] == "accesses"]
                cells.append(f"{sum(r['covered'] for r in acc)}/{len(acc)} "
                             f"({sum(r['covered'] for r in sel)}/{len(sel)})" if sel else "-")
            print(f"| {name} | " + " | ".join(cells) + " |")
        print()
        for count in COUNTS + (None,):
            sel = [r for r in rows if r["sampler"] == sampler and
                   (count is None or r["count"] == count)]
            if sel:
                what = f"arrays' {count}" if count else "every count"
                print(f"- {what}: {sum(r['covered'] for r in sel)}/{len(sel)} covered "
                      f"({sum(r['covered'] for r in sel) / len(sel):.1%})")
        sel = [r for r in rows if r["sampler"] == sampler and r["count"] == "accesses"
               and r["exact"] * r["rate"] >= 5]
        if sel:
            print(f"- arrays' accesses where at least 5 kept are expected (exact x rate >= 5): "
                  f"{sum(r['covered'] for r in sel)}/{len(sel)} covered "
                  f"({sum(r['covered'] for r in sel) / len(sel):.1%})")
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
