"""Profile samples as `gmprof profile samples/NAME` does and compare every count with the counts
derived from the kernels' source without gmprof (bench/sample_models.py): each array's
per-element (device) or per-word (shared) counts, its reads and writes, each site's executions.

    python3 bench/check_large.py [--samples bo_v1,jcb_v1,spmv,co,em_v1] [--modes default,basic]
                                 [--size large] [--backend gpu|cpu] [--out FILE.json]

Prints one row per sample and mode (arrays and sites checked, mismatches, the largest count
compared, whether a count passed 2^32, seconds of the profile; the model's seconds are in
--out's rows) and exits 1 on any mismatch (issue 24). The
sample's numeric self-check is skipped: outputs are checked against the uninstrumented kernel
by every profile, and the counts are what is checked here.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import sample_models  # noqa: E402
from gmprof.errors import GmprofError  # noqa: E402

TWO32 = 1 << 32
SHOWN = 20  # mismatches listed per sample and mode


def _site_key(location: str) -> str:
    """file:line:col with the file's base name: gmprof's location may name the file relative to
    the working directory or absolutely."""
    path, line, col = location.rsplit(":", 2)
    return f"{Path(path).name}:{line}:{col}"


def compare(want: sample_models.Expected, reports: dict) -> dict:
    """Mismatch messages and the numbers compared, for one sample's run (kernel -> Report)."""
    bad, arrays, sites, largest = [], 0, 0, 0
    for kernel, exp in want.kernels.items():
        rep = reports.get(kernel)
        if rep is None:
            bad.append(f"{kernel}: no report (kernels reported: {', '.join(reports)})")
            continue
        got_arrays = {a.name: a for a in rep.arrays}
        for name in sorted(set(got_arrays) - set(exp.arrays)):
            bad.append(f"{kernel} {name}: reported, not in the model")
        for name, e in exp.arrays.items():
            a = got_arrays.get(name)
            if a is None:
                bad.append(f"{kernel} {name}: in the model, not reported")
                continue
            arrays += 1
            counts = np.asarray(a.counts).reshape(-1)
            if counts.shape != e.counts.shape:
                bad.append(f"{kernel} {name}: {counts.size} counters, model {e.counts.size}")
            else:
                diff = np.flatnonzero(counts != e.counts)
                if diff.size:
                    i = int(diff[0])
                    bad.append(f"{kernel} {name}: {diff.size} counts differ, first [{i}] "
                               f"{int(counts[i])} (model {int(e.counts[i])})")
                largest = max(largest, int(e.counts.max(initial=0)))
            for what, got, model in (("reads", a.reads, e.reads), ("writes", a.writes, e.writes)):
                if got != model:
                    bad.append(f"{kernel} {name}: {what} {got} (model {model})")
                largest = max(largest, int(model))
        exp_sites = {_site_key(k): v for k, v in exp.sites.items()}
        seen = set()
        for s in rep.sites:
            if s.executions is None or s.how == "not counted":
                continue  # a local array's access (acc[a] in em_v1): no object profiled
            key = _site_key(s.location)
            seen.add(key)
            if key not in exp_sites:
                bad.append(f"{kernel} site {key} ({s.text}): reported, not in the model")
                continue
            sites += 1
            if int(s.executions) != exp_sites[key]:
                bad.append(f"{kernel} site {key} ({s.text}): {s.executions} executions "
                           f"(model {exp_sites[key]})")
            largest = max(largest, exp_sites[key])
        for key in sorted(set(exp_sites) - seen):
            bad.append(f"{kernel} site {key}: in the model, not reported")
    return {"arrays": arrays, "sites": sites, "mismatches": bad, "largest": largest,
            "past_2_32": largest >= TWO32}


def check(name: str, modes, size: str, backend: str):
    """One row a mode for sample NAME: its inputs and model made once, then a profile a mode.
    Yields the rows as they are done (a large sample takes seconds a mode)."""
    from gmprof.mode import Mode
    from gmprof.runtime.samples import run_sample

    start = time.perf_counter()
    arrays = sample_models.inputs(name, size)
    want = sample_models.expected(name, size, arrays)
    model_s = time.perf_counter() - start
    for mode_name in modes:
        start = time.perf_counter()
        run = run_sample(sample_models.sample(name), size, mode=Mode.parse(mode_name),
                         backend=backend, initial=arrays, check=False)
        row = compare(want, run.reports)
        del run
        row.update(sample=name, mode=mode_name, size=size, model_seconds=model_s,
                   seconds=time.perf_counter() - start)
        yield row


def _names(text: str, allowed, what: str) -> list:
    names = [x for x in text.split(",") if x]
    for x in names:
        if x not in allowed:
            raise SystemExit(f"gmprof: error: --{what}: no {x!r} (choose from "
                             f"{', '.join(allowed)})")
    return names


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", default=",".join(sample_models.NAMES))
    p.add_argument("--modes", default="default,basic")
    p.add_argument("--size", default="large")
    p.add_argument("--backend", choices=("gpu", "cpu", "auto"), default="auto")
    p.add_argument("--out", help="write the rows and mismatches as JSON")
    args = p.parse_args(argv)
    try:
        samples = _names(args.samples, sample_models.NAMES, "samples")
        modes = _names(args.modes, ("default", "basic"), "modes")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    for name in samples:
        if args.size not in sample_models.sample(name).driver.sizes:
            print(f"gmprof: error: --size: sample {name} has no size {args.size!r}",
                  file=sys.stderr)
            return 2
    rows = []
    header = (f"{'sample':8} {'mode':8} {'arrays':>6} {'sites':>5} {'mismatches':>10} "
              f"{'largest':>15} {'>2^32':>5} {'seconds':>8}")
    print(header)
    print("-" * len(header))
    try:
        for name in samples:
            for row in check(name, modes, args.size, args.backend):
                rows.append(row)
                print(f"{name:8} {row['mode']:8} {row['arrays']:>6} {row['sites']:>5} "
                      f"{len(row['mismatches']):>10} {row['largest']:>15,} "
                      f"{'yes' if row['past_2_32'] else 'no':>5} {row['seconds']:>8.1f}",
                      flush=True)
                for msg in row["mismatches"][:SHOWN]:
                    print(f"    {msg}")
    except GmprofError as exc:  # no GPU, a compile error: gmprof's own one-line message
        msg = str(exc).splitlines()[0]
        print(msg if msg.startswith("gmprof: error:") else f"gmprof: error: {msg}",
              file=sys.stderr)
        return 1
    finally:
        if args.out:
            Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(row["mismatches"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
