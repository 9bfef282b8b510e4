"""Side-by-side kernel times of a few modes on a few samples, in one run: the quick check of an
optimisation before the full `gmprof bench` (which also runs every paper mode, the references
and the case studies).

    python3 bench/overheads.py [--samples co,em_v1,...] [--modes default:shm,default:dm,...]
                               [--size large] [--repeat 5] [--max-launches 2] [--backend gpu]

A mode may end in `/noranges` (`default/noranges:dm`): the same mode without range and gather
counting (passes/ranges.py, passes/gathers.py), to measure what they save in the same run.

Prints one row per (sample, mode): native and instrumented ms (medians of --repeat runs, summed
over the profiled launches), overhead = instrumented / native - 1, where the counters lived and
whether the outputs were bit-identical to the uninstrumented kernel's. The device is named in the
first line. No numpy reference is computed (the samples' tests do that).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"


def main() -> int:
    import dataclasses

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import run_sample, sample_profiler

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=SIX)
    ap.add_argument("--modes", default="default:shm,default:dm",
                    help="comma-separated MODE:PROFILE (PROFILE shm, dm or both)")
    ap.add_argument("--size", default="large")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-launches", type=int, default=2)
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    modes = []
    for spec in args.modes.split(","):
        name, _, profile = spec.partition(":")
        name, _, variant = name.partition("/")
        mode = Mode.parse(name, profile=profile or "both")
        if variant == "noranges":
            mode = dataclasses.replace(mode, ranges=False)
        elif variant:
            ap.error(f"unknown mode variant /{variant} (known: /noranges)")
        modes.append(mode)
    first = True
    for name in args.samples.split(","):
        sample = load_sample(ROOT / "samples" / name)
        prof = sample_profiler(sample, args.backend)
        for mode in modes:
            t0 = time.perf_counter()
            run = run_sample(sample, args.size, mode=mode, repeat=args.repeat, profiler=prof,
                             check=False, max_profiled=args.max_launches)
            wall = time.perf_counter() - t0
            reps = list(run.reports.values())
            if first:
                print(f"device: {reps[0].run.device} ({reps[0].run.backend}); size {args.size}; "
                      f"medians of {args.repeat}; first {args.max_launches} launches profiled")
                print(f"{'sample':10} {'mode':20} {'profile':7} {'native ms':>10} "
                      f"{'instr ms':>10} {'overhead':>9}  counters  identical  wall s")
                first = False
            native = sum(r.run.native_ms or 0 for r in reps)
            inst = sum(r.run.instrumented_ms or 0 for r in reps)
            where = "/".join(sorted({r.run.counters_in.split()[0] for r in reps}))
            same = all(r.run.outputs_identical for r in reps)
            print(f"{name:10} {mode.name:20} {mode.profile:7} {native:10.3f} {inst:10.3f} "
                  f"{inst / native - 1 if native else float('nan'):8.2f}x  {where:8}  "
                  f"{str(same):9}  {wall:6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
