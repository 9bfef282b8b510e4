"""Side-by-side kernel times of a few modes on a few samples, in one run: the quick check of an
optimisation before the full `gmprof bench` (which also runs the case studies).

    python3 bench/overheads.py [--samples co,em_v1,...] [--modes default:shm,default:dm,...]
                               [--size large] [--repeat 5] [--max-launches 2] [--backend gpu]
                               [--paper] [--out docs/results] [--budget-s 270]

A mode may end in `/noranges` (`default/noranges:dm`): the same mode without range and gather
counting (passes/ranges.py, passes/gathers.py), to measure what they save in the same run; or in
`/first` (`default/first:shm`): once-per-entry counts made in the loop's first iteration, not
before the loop (passes/entry.py), to measure what the placement saves; or in `/stats`
(`default/stats:both`): with the per-warp access statistics (--access-stats: a large grid's
hooked sites measured in a sample of its blocks, passes/block_sample.py); `/stats-exact`: with
them measured in every block (--access-stats-exact).

Prints one row per (sample, mode): native and instrumented ms (medians of --repeat runs, summed
over the profiled launches), overhead = instrumented / native - 1, where the counters lived and
whether the outputs were bit-identical to the uninstrumented kernel's. The device is named in the
first line. No numpy reference is computed (the samples' tests do that).

--paper adds the paper's columns after the --modes rows: Table 1 (shared memory: basic, SA,
SA-NA, SA-NA-SM, SA-NA-SM-TH), Table 2 (device memory: basic, SA, SA-NA) and Figures 3-4
(sampling at 1/10, 1/100, 1/1000 against the optimised modes, accuracy loss against basic).
--out DIR writes what ran as DIR/overheads.md (the tables, gmprof bench's layout, with the
command, device and date) and DIR/overheads.json. --budget-s: no run starts after that many
seconds; the cells not run are listed as such (the default mode's rows run first, then basic
(the accuracy reference), then the paper's columns, then sampling).
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"
APP = {"co": "co", "em_v1": "em", "bo_v2": "bo", "jcb_v1": "jcb", "spmv": "spmv", "dxtc": "dxtc"}


def parse_modes(text: str, error) -> list:
    import dataclasses

    from gmprof.mode import Mode

    modes = []
    for spec in text.split(","):
        name, _, profile = spec.partition(":")
        name, _, variant = name.partition("/")
        mode = Mode.parse(name, profile=profile or "both")
        if variant == "noranges":
            mode = dataclasses.replace(mode, ranges=False)
        elif variant == "first":
            mode = dataclasses.replace(mode, loop_entry=False)
        elif variant == "stats":
            mode = dataclasses.replace(mode, warps=True)
        elif variant == "stats-exact":
            mode = dataclasses.replace(mode, warps=True, warps_blocks=0)
        elif variant:
            error(f"unknown mode variant /{variant} (known: /noranges, /first, /stats, "
                  "/stats-exact)")
        modes.append(mode)
    return modes


def paper_modes() -> list:
    """(table, mode) for the paper's columns, in the order they run: basic first (every
    other row's accuracy is measured against it), then Tables 1-2, then the sampling."""
    from gmprof.bench import RATES, TABLE1, TABLE2
    from gmprof.mode import Mode

    out = [("table1", Mode.parse("basic", profile="shm")),
           ("table2", Mode.parse("basic", profile="dm"))]
    for table, profile, names in (("table1", "shm", TABLE1), ("table2", "dm", TABLE2)):
        for m in names:
            if m in ("basic", "default"):
                continue
            out.append((table, Mode.parse(m, profile=profile,
                                          threshold=255 if "TH" in m else None,
                                          counter_bits=8 if "TH" in m else 32)))
    for rate in RATES:
        for sampler in ("paper", "rng") if rate == 0.01 else ("paper",):
            out.append(("sampling", Mode.parse("SM", sampling=rate, sampler=sampler,
                                               profile="shm")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=SIX)
    ap.add_argument("--modes", default="default:shm,default:dm",
                    help="comma-separated MODE:PROFILE (PROFILE shm, dm or both)")
    ap.add_argument("--size", default="large")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-launches", type=int, default=2)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--paper", action="store_true",
                    help="also the paper's Table 1-2 columns and Figures 3-4's sampling")
    ap.add_argument("--out", help="write overheads.md and overheads.json into this directory")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no run after this many seconds (the rest: 'not run')")
    ap.add_argument("--check", action="store_true",
                    help="also check each sample's outputs against its numpy reference once "
                         "(slow at the large size; outputs are always compared bit for bit "
                         "with the uninstrumented kernel's)")
    args = ap.parse_args()
    modes = parse_modes(args.modes, ap.error)

    from gmprof.bench import Bench, _accuracy_loss, markdown
    from gmprof.runtime.backend import get_backend

    be = get_backend(args.backend)
    bench = Bench(ROOT / "samples", args.size, args.repeat, args.backend, args.max_launches)
    if not args.check:
        bench._checked.update(args.samples.split(","))  # Bench checks a sample's first run
    start = time.perf_counter()
    names = args.samples.split(",")
    plan = [(name, "profiles", mode) for mode in modes for name in names]
    if args.paper:
        plan += [(name, table, mode) for table, mode in paper_modes() for name in names]
    results: dict = {
        "info": {"device": be.device, "backend": be.name, "driver": getattr(be, "driver", None),
                 "date": datetime.datetime.now(datetime.timezone.utc)
                 .isoformat(timespec="seconds"),
                 "size": args.size, "repeat": args.repeat,
                 "max_profiled_launches_per_sample": args.max_launches,
                 "command": "python3 " + " ".join(sys.argv)},
        "profiles": [], "table1": [], "table2": [], "sampling": [], "cases": [], "space": [],
        "not_run": []}
    references: dict = {}  # (sample, profile) -> basic's reports
    defaults: dict = {}  # (sample, profile) -> (row, reports) of the default mode
    print(f"device: {be.device} ({be.name}); size {args.size}; medians of {args.repeat}; "
          f"first {args.max_launches} launches profiled", flush=True)
    print(f"{'sample':10} {'mode':24} {'profile':7} {'native ms':>10} {'instr ms':>10} "
          f"{'overhead':>9}  counters  identical  wall s", flush=True)
    for name, table, mode in plan:
        label = f"{name} {mode.name}:{mode.profile}"
        if args.budget_s is not None and time.perf_counter() - start > args.budget_s:
            results["not_run"].append(label)
            continue
        row, reports = bench.run(name, mode)
        row.update(app=APP.get(name, name), profile=mode.profile)
        if mode.name == "basic":
            references[(name, mode.profile)] = reports
        ref = references.get((name, mode.profile))
        if table != "profiles":
            row["accuracy_loss"] = _accuracy_loss(reports, ref) \
                if ref is not None and mode.threshold is None else None
            if mode.sampling is not None:
                row.update(rate=mode.sampling, sampler=mode.sampler)
            results["space"].append({"app": row["app"], "profile": mode.profile,
                                     "mode": mode.name, "counter_bytes": row["counter_bytes"]})
        results[table].append(row)
        if table == "profiles" and mode.name == "default":
            defaults[(name, mode.profile)] = (row, reports)
        where = "/".join(sorted(w.split()[0] for w in row["counters_in"]))
        ov = row["overhead"]
        print(f"{name:10} {mode.name:24} {mode.profile:7} {row['native_ms']:10.3f} "
              f"{row['instrumented_ms']:10.3f} "
              f"{ov if ov is not None else float('nan'):8.2f}x  {where:8}  "
              f"{str(row['outputs_identical']):9}  {row['wall_s']:6.1f}", flush=True)
    if results["not_run"]:
        print(f"not run (--budget-s {args.budget_s}): " + ", ".join(results["not_run"]))
    if args.out:
        from gmprof.outputs import write_outputs

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for (name, profile), (row, reports) in defaults.items():
            ref = references.get((name, profile))
            row["accuracy_loss"] = _accuracy_loss(reports, ref) if ref is not None else None
        for table in ("table1", "table2"):
            # the default mode's column of the paper's tables: its row of this profile
            prof = "shm" if table == "table1" else "dm"
            results[table] += [dict(r) for r in results["profiles"]
                               if r["profile"] == prof and r["mode"] == "default"]
        write_outputs({str(out / "overheads.json"): json.dumps(results, indent=2, default=str),
                       str(out / "overheads.md"): markdown(results)})
        print(f"wrote {out / 'overheads.md'} and {out / 'overheads.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
