"""Advice checked against the samples' v1 -> v2 pairs (issue 28): on each v1, the change its v2
made must be the top advice for the array it changed, and the advice's predicted device-memory
reads (wavefronts, for transpose's padding) within 5% of what profiling v2 measures.

    python3 bench/advice_pairs.py [--backend cpu|gpu] [--size small] [--markdown] [--json]
                                  [--pairs em_v1,bo_v1,...]

Each v1 runs as `gmprof advise samples/V1` runs it (--access-stats and --enhanced, then the same
launches again in trace mode for the sharing evidence); each v2 is profiled with
--access-stats. Exit status 1 when a pair fails. The GPU timing of v1 and v2 is not measured
here (bench/variant_timing.py times samples on a GPU).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOLERANCE = 0.05

# (v1, its kernel, v2, its kernel, the arrays v2 changed: (v1 array, the advice kind that names
# the change, the v2 array that holds what the prediction is about or None where v2 has no
# such device array: its reads are 0), the metric)
PAIRS = [
    ("em_v1", "em_estep", "em_v2", "em_estep",
     [("mu", "stage", "mu"), ("invVar", "stage", "invVar")], "device_reads"),
    ("bo_v1", "binomial_v1", "bo_v2", "binomial_v2",
     [("callA", "stage", None), ("callB", "stage", None)], "device_reads"),
    ("jcb_v1", "jacobi_v1", "jcb_v2", "jacobi_v2", [("in", "stage", "in")], "device_reads"),
    ("matmul_naive", "matmul_naive", "matmul_tiled", "matmul_tiled<16>",
     [("A", "stage", "A"), ("B", "stage", "B")], "device_reads"),
    ("transpose_naive", "transpose", "transpose_padded", "transpose",
     [("shared_data", "padding", "shared_data")], "wavefronts"),
    ("nbody_global", "nbody_global", "nbody_shared", "nbody_shared",
     [("pos", "stage", "pos")], "device_reads"),
]


def advise_sample(name: str, size: str, backend: str) -> dict:
    """The run document of `gmprof advise samples/NAME`, with each kernel's advice."""
    from gmprof.cli_advise import add_advice, attach_evidence
    from gmprof.mode import Mode
    from gmprof.report.document import document
    from gmprof.runtime.samples import run_sample, sample_profiler
    from gmprof.driver import load_sample

    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, backend)
    run = run_sample(sample, size, mode=Mode.parse("default", enhanced=True, warps=True),
                     backend=backend, profiler=prof)
    traced = run_sample(sample, size, mode=Mode.parse("trace"), backend=backend,
                        profiler=prof, check=False)
    reports = list(run.reports.values())
    attach_evidence(reports, list(traced.reports.values()))
    return add_advice(document(reports))


def profile_sample(name: str, size: str, backend: str) -> dict:
    from gmprof.mode import Mode
    from gmprof.report.document import document
    from gmprof.runtime.samples import run_sample

    run = run_sample(ROOT / "samples" / name, size, mode=Mode.parse("default", warps=True),
                     backend=backend)
    return document(list(run.reports.values()))


def _kernel(doc, name):
    return next(k for k in doc["kernels"] if k["kernel"] == name)


def _array(kernel, name):
    return next((a for a in kernel["arrays"] if a["name"] == name), None)


def measured(kernel, array, metric) -> int:
    if array is None:
        return 0
    a = _array(kernel, array)
    if a is None:
        return 0
    if metric == "wavefronts":
        return (a.get("warps") or {}).get("wavefronts", 0)
    return a["reads"] or 0


def rows(size: str, backend: str, only=None) -> list[dict]:
    from gmprof.report.advice import top_for

    out = []
    for v1, k1, v2, k2, changes, metric in PAIRS:
        if only and v1 not in only:
            continue
        kernel1 = _kernel(advise_sample(v1, size, backend), k1)
        kernel2 = _kernel(profile_sample(v2, size, backend), k2)
        for array, expected, array2 in changes:
            top = top_for(kernel1["advice"], array)
            a1 = _array(kernel1, array)
            # wavefronts: the advice's own count of every site (with --enhanced, a live
            # range's first site reports no warp requests: the trace's regrouping stands in)
            before = (top["evidence"]["wavefronts"] if top and top["kind"] == "padding" else
                      (a1.get("warps") or {}).get("wavefronts", 0)) if metric == "wavefronts" \
                else a1["reads"]
            key = "wavefronts" if metric == "wavefronts" else "device_reads"
            predicted = top["prediction"].get(key) if top else None
            after = measured(kernel2, array2, metric)
            error = None if predicted is None else \
                (0.0 if predicted == after else abs(predicted - after) / max(after, 1))
            ok = bool(top) and top["kind"] == expected and error is not None and \
                error <= TOLERANCE
            out.append({"pair": f"{v1} -> {v2}", "kernel": k1, "array": array,
                        "metric": metric.replace("_", " "), "expected": expected,
                        "top_advice": top["kind"] if top else None, "v1": before,
                        "predicted": predicted, "v2": after, "error": error, "ok": ok,
                        "advice": top["text"] if top else None})
    return out


def markdown(table: list[dict]) -> str:
    lines = ["| pair | array | metric | v2 made | top advice on v1 | v1 | predicted | v2 measured "
             "| error | ok |", "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    for r in table:
        err = "-" if r["error"] is None else f"{r['error']:.1%}"
        pred = "-" if r["predicted"] is None else f"{r['predicted']:,}"
        lines.append(f"| {r['pair']} | `{r['array']}` | {r['metric']} | {r['expected']} | "
                     f"{r['top_advice'] or '-'} | {r['v1']:,} | {pred} | {r['v2']:,} | {err} | "
                     f"{'yes' if r['ok'] else 'NO'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--size", default="small")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--pairs", help="only these pairs, by their v1 (comma separated)")
    args = ap.parse_args(argv)
    only = set(args.pairs.split(",")) if args.pairs else None
    if only and only - {p[0] for p in PAIRS}:
        ap.error(f"--pairs: no pair starts at {', '.join(sorted(only - {p[0] for p in PAIRS}))}")
    table = rows(args.size, args.backend, only)
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        print(markdown(table))
        if not args.markdown:
            print(f"\n{sum(r['ok'] for r in table)} of {len(table)} rows ok; backend "
                  f"{args.backend}, size {args.size}, {platform.machine()} "
                  f"{platform.processor() or ''}".rstrip())
    return 0 if all(r["ok"] for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
