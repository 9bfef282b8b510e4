"""Run the oracle at scale: N random kernels (tests/oracle/gen.py), each with a Python model of
its exact counts, profiled by gmprof in every mode asked for; print every mismatch.

    python3 bench/oracle.py --count 1000 --seed 0 [--backend cpu|gpu] [--modes default,SA,...]
                            [--all-features] [--shrink DIR] [--counts-out FILE] [--jobs J]
    python3 bench/oracle.py --compare cpu.json gpu.json     # two --counts-out files
    python3 bench/oracle.py --ranges --modes default,default/first,SA,basic   # loop walks
    python3 bench/oracle.py --large 200 --scale large --backend gpu   # counts past 2^32

The GPU check of issue 11 (the first 300 kernels, the same counts on both backends):
    python3 bench/oracle.py --backend gpu --count 300 --counts-out gpu.json
    python3 bench/oracle.py --backend cpu --count 300 --counts-out cpu.json
    python3 bench/oracle.py --compare cpu.json gpu.json

By default the features that reach a family issue 11 lists as wrong today (KNOWN_WRONG in
tests/oracle/harness.py) are left out, so what is printed is new; `--all-features` keeps them.
`--shrink DIR` shrinks each failing kernel to a minimal one and writes it to DIR as a
regression file (tests/oracle/regressions/ holds the ones kept). Seeds are seed .. seed+N-1;
kernel k<seed> is `harness.generate(seed)`, reproducible anywhere.
Exit status 1 when anything mismatched.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "oracle"))
sys.path.insert(0, str(ROOT))

import harness  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--modes", default=",".join(harness.MODES))
    ap.add_argument("--batch", type=int, default=harness.BATCH)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="units compiled at once (CPU backend)")
    ap.add_argument("--all-features", action="store_true",
                    help="keep the features that reach a known-wrong family")
    ap.add_argument("--shrink", metavar="DIR", help="shrink failures, write them to DIR")
    ap.add_argument("--counts-out", metavar="FILE",
                    help="write every kernel's gmprof counts (JSON) to compare two backends")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"),
                    help="compare two --counts-out files (every kernel, mode, array, counter)")
    ap.add_argument("--ranges", action="store_true",
                    help="kernels whose reads walk constant-bound loops (range, spread and "
                         "loop-entry counting); other seeds' kernels than without it")
    ap.add_argument("--large", type=int, metavar="N",
                    help="the large regime instead (tests/oracle/large.py): N kernels whose "
                         "counts pass 2^32 at --scale large, modelled in closed form")
    ap.add_argument("--scale", default="large", choices=("small", "large"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.compare:
        return compare_files(*args.compare)
    if args.large:
        modes = None if args.modes == ",".join(harness.MODES) else \
            tuple(m.strip() for m in args.modes.split(",") if m.strip())
        return run_large(range(args.seed, args.seed + args.large), args.scale, args.backend,
                         modes, args.batch)
    os.environ.setdefault("GMPROF_CACHE_DIR", f"/tmp/gmprof-cache-{os.getuid()}-oracle")
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    disabled = frozenset() if args.all_features else harness.disabled_features()
    seeds = range(args.seed, args.seed + args.count)
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    t0 = time.time()
    out = harness.run(seeds, args.backend, modes, disabled, args.batch, log,
                      counts_out=args.counts_out, jobs=args.jobs, ranges=args.ranges)
    for m in out.mismatches:
        fam = harness.families(out.failed_seeds[m.seed])
        print(f"MISMATCH {m}" + (f"  (known: {', '.join(fam)})" if fam else ""))
    bad = sorted(out.failed_seeds)
    print(f"# oracle: {out.kernels} kernels (seeds {args.seed}..{args.seed + args.count - 1}), "
          f"{out.launches} launches on the {args.backend} backend, modes {', '.join(modes)}; "
          f"features left out: {', '.join(sorted(disabled)) or 'none'}")
    print(f"# {len(out.mismatches)} mismatches in {len(bad)} kernels"
          + (f" (seeds {', '.join(map(str, bad))})" if bad else "")
          + f"; {time.time() - t0:.0f} s")
    if args.shrink and bad:
        import shrink

        d = Path(args.shrink)
        d.mkdir(parents=True, exist_ok=True)
        for s in bad:
            k, mm = shrink.shrink(out.failed_seeds[s], args.backend, log=log)
            path = d / f"seed{s}.py"
            path.write_text(harness.regression_text(k, mm))
            print(f"# shrunk seed {s} -> {path}")
    return 1 if out.mismatches else 0


def run_large(seeds, scale: str, backend: str, modes=None, batch: int = 8, log=print) -> int:
    """Draw the large regime's kernels, profile each in its modes (or `modes`), compare with
    the closed-form models; print the mismatches and a summary; 1 if any."""
    import large
    import numpy as np

    import gmprof

    t0 = time.time()
    kernels = [large.draw(s, scale) for s in seeds]
    bad, launches, past = 0, 0, 0
    for i in range(0, len(kernels), batch):
        group = kernels[i:i + batch]
        offsets, line = [], 0
        for k in group:
            offsets.append(line)
            line += len(k.lines)
        prof = gmprof.api.profiler("".join(k.cuda() for k in group), backend=backend)
        for k, off in zip(group, offsets):
            past += k.expected.largest() > large.LIMIT
            for mode in modes or k.modes:
                args = [a.copy() if isinstance(a, np.ndarray) else a for a in k.args]
                if backend == "gpu":
                    import cupy as cp

                    args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
                t1 = time.time()
                try:
                    report = prof.launch(k.name, k.grid, k.block, args,
                                         mode=harness.parse_mode(mode))
                    wrong = large.compare(k, report, off)
                    wide = "64-bit" in report.run.mode
                except Exception as e:  # noqa: BLE001 (a failure is a mismatch too)
                    wrong, wide = [f"launch failed: {type(e).__name__}: {str(e)[:300]}"], False
                launches += 1
                bad += bool(wrong)
                log(f"{k.name} {k.family} {k.params} grid {k.grid} block {k.block} [{mode}]: "
                    f"largest {k.expected.largest():,}{' (64-bit counters)' if wide else ''}"
                    f" {time.time() - t1:.1f} s" + ("" if not wrong else "  MISMATCH"))
                for w in wrong:
                    log(f"  MISMATCH {k.name} [{mode}] {w}")
    print(f"# oracle large regime ({scale}): {len(kernels)} kernels "
          f"(seeds {seeds[0]}..{seeds[-1]}), {past} with a count past 2^32, {launches} "
          f"launches on the {backend} backend; {bad} launches mismatched; "
          f"{time.time() - t0:.0f} s")
    return 1 if bad else 0


def compare_files(a: str, b: str) -> int:
    import json

    ca, cb = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    diffs = 0
    for kernel in sorted(set(ca) | set(cb)):
        ma, mb = ca.get(kernel, {}), cb.get(kernel, {})
        for mode in sorted(set(ma) | set(mb)):
            if ma.get(mode) != mb.get(mode):
                diffs += 1
                arrays = sorted(x for x in set(ma.get(mode, {})) | set(mb.get(mode, {}))
                                if ma.get(mode, {}).get(x) != mb.get(mode, {}).get(x))
                print(f"DIFFER {kernel} [{mode}]: {', '.join(arrays) or 'missing'}")
    launches = sum(len(v) for v in ca.values())
    print(f"# {len(ca)} kernels, {launches} launches in {a}; {len(cb)} kernels in {b}; "
          f"{diffs} launches differ")
    return 1 if diffs or set(ca) != set(cb) else 0


if __name__ == "__main__":
    sys.exit(main())
