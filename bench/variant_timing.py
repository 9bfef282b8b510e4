"""What part of an instrumented kernel costs: the sample's first profiled launch timed with its
instrumented text as gmprof makes it, and with pieces of it removed (each --drop REGEX is one
variant; its matches are deleted from the text before compiling). A timing experiment only: a
variant's counts are wrong by design and not shown; its outputs are still compared with the
native kernel's.

    python3 bench/variant_timing.py spmv --profile dm \
        --drop 'dm_range<4,[^;]*;' --drop 'dm_gather<[^;]*;'

--define NAME[=VALUE] is one more variant: the text as made, compiled with that macro (e.g.
GMPROF_ABLATE=1, gmprof.cuh: a request's statistics measured but not added). --mode
default/stats measures with --access-stats (a large grid's hooked sites measured in a sample of
its blocks: at least --stats-blocks N of them, passes/block_sample.py); --stats-exact (or
--mode default/stats-exact) measures them in every block, as --access-stats-exact does.

--patch rows-device: the statistics in one row a site for all blocks (as in basic mode), not a
row a site for each measured block (their sums squared: the interval); --patch pad=BYTES: every
block gets BYTES
more dynamic shared memory that nothing uses (what the area's size alone costs: occupancy and
the carveout fit_carveout picks, printed with each variant).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--profile", default="dm")
    ap.add_argument("--size", default="large")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--drop", action="append", default=[], metavar="REGEX")
    ap.add_argument("--define", action="append", default=[], metavar="NAME[=VALUE]")
    ap.add_argument("--patch", action="append", default=[], metavar="rows-device|pad=BYTES")
    ap.add_argument("--stats-exact", action="store_true",
                    help="with /stats: every block measured (--access-stats-exact)")
    ap.add_argument("--stats-blocks", type=int, default=None, metavar="N",
                    help="with /stats: the fewest blocks measured (--access-stats-blocks)")
    args = ap.parse_args()

    import numpy as np

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime import modules as M
    from gmprof.runtime.samples import first_profiled_launch, sample_profiler

    original = M.Modules.source
    current = {"drop": None, "define": None}

    def source(self, plan, sm=None):
        text, defines = original(self, plan, sm)
        if plan is not None and current["drop"]:
            text, n = re.subn(current["drop"], "", text)
            current["matches"] = n
        if plan is not None and current["define"]:
            name, _, value = current["define"].partition("=")
            defines = {**defines, name: value or None}
        return text, defines

    M.Modules.source = source
    from gmprof.runtime import backend as B
    from gmprof.runtime import counters as C
    original_area, original_dyn = C.area, C.dynamic_shared_bytes
    original_fit = B.GpuModule.fit_carveout

    def area(plan, slots, mode):
        a = original_area(plan, slots, mode)
        if current.get("patch") == "rows-device" and a.ws_rows:
            a.ws_rows, a.ws_sites = 0, ()
        current["area_words"] = a.words
        return a

    def dynamic_shared_bytes(a, shared_mem):
        n = original_dyn(a, shared_mem)
        patch = current.get("patch") or ""
        return n + int(patch[4:]) if patch.startswith("pad=") and a.sm else n

    def fit_carveout(self, *a, **k):
        percent = original_fit(self, *a, **k)
        current["carveout"] = percent
        return percent

    C.area, C.dynamic_shared_bytes = area, dynamic_shared_bytes
    B.GpuModule.fit_carveout = fit_carveout
    sample = load_sample(ROOT / "samples" / args.sample)
    arrays = sample.driver.arrays(sample.driver.sizes[args.size], np.random.default_rng(0))
    name, _, variant = args.mode.partition("/")
    mode = Mode.parse(name, profile=args.profile)
    if variant in ("stats", "stats-exact"):
        import dataclasses
        blocks = 0 if args.stats_exact or variant == "stats-exact" else \
            (mode.warps_blocks if args.stats_blocks is None else args.stats_blocks)
        mode = dataclasses.replace(mode, warps=True, warps_blocks=blocks)
        print(f"mode {mode.name}: " + ("every block measured" if not blocks else
                                        f"at least {blocks} blocks measured"), flush=True)
    variants = [(None, None, None)] + [(d, None, None) for d in args.drop] + \
        [(None, d, None) for d in args.define] + [(None, None, p) for p in args.patch]
    for drop, define, patch in variants:
        prof = sample_profiler(sample, args.backend)  # a fresh module cache per variant
        launch, largs = first_profiled_launch(sample, args.size, prof, arrays)
        current.update(drop=drop, define=define, patch=patch, matches=0, carveout=None,
                       area_words=None)
        report = prof.launch(launch.kernel, launch.grid3, launch.block3, largs,
                             launch.shared_mem, mode=mode, repeat=args.repeat)
        run = report.run
        label = ("with -D" + define if define else "patched " + patch if patch else
                 "as made" if drop is None else "without " + drop)
        print(f"{label:60s} "
              f"({current['matches']} removed) native {run.native_ms:.3f} ms, instrumented "
              f"{run.instrumented_ms:.3f} ms: {run.instrumented_ms / run.native_ms - 1:.2f}x; "
              f"outputs identical: {run.outputs_identical}; area {current['area_words']} "
              f"words, carveout {current['carveout']}", flush=True)
        for module in prof.modules._modules.values():
            fn = getattr(module, "function", None)
            if fn is not None:  # registers and local memory (the CPU backend has none)
                f = fn(launch.kernel)
                print(f"    {getattr(f, 'num_regs', '?')} registers, "
                      f"{getattr(f, 'local_size_bytes', '?')} bytes of local memory", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
