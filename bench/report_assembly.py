"""Time report assembly at the large samples' sizes, without a GPU: merging launches, building
the run document, and rendering it as text, JSON, CSV and HTML.

The reports are made by hand with the shapes of jcb_v1 at its large size (two 4096 x 4096 float
arrays, 50 launches), so the numbers say what gmprof's own Python costs after the kernels ran.

    python3 bench/report_assembly.py [--side 4096] [--launches 50]
"""
from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from gmprof.report import csvout, terminal  # noqa: E402
from gmprof.report.document import document, dumps  # noqa: E402
from gmprof.report.html import html_text  # noqa: E402
from gmprof.report.model import ArrayStats, Report, RunInfo, SiteStats  # noqa: E402


def launch_report(side: int, seed: int) -> Report:
    rng = np.random.default_rng(seed)
    run = RunInfo("jacobi", "gpu", "synthetic", "default", (side // 32, side // 8, 1),
                  (32, 8, 1), 0, native_ms=1.0, instrumented_ms=1.1, timing_repeats=1)
    arrays = [ArrayStats(name, "device", "float", (side, side), 4, 4,
                         rng.integers(0, 5, side * side).astype(np.int64), reads=side * side)
              for name in ("in", "out")]
    sites = [SiteStats(i, f"jacobi.cu:{20 + i}:9", "in[i]", "jacobi", "in", "read", side * side,
                       "measured") for i in range(6)]
    return Report(run, arrays, sites)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=4096)
    ap.add_argument("--launches", type=int, default=50)
    args = ap.parse_args()
    first, other = launch_report(args.side, 0), launch_report(args.side, 1)
    steps = []

    def timed(name, fn):
        t = time.perf_counter()
        out = fn()
        steps.append((name, time.perf_counter() - t))
        return out

    timed(f"merge {args.launches} launches", lambda: [first.merge(other)
                                                     for _ in range(args.launches - 1)])
    doc = timed("document", lambda: document([first]))
    timed("JSON", lambda: dumps(doc))
    timed("CSV", lambda: csvout.csv_text(doc))
    timed("tables", lambda: terminal.render(doc, Console(file=io.StringIO(), width=80)))
    page = timed("HTML", lambda: html_text(doc))
    for name, seconds in steps:
        print(f"{name:24s} {seconds:7.3f} s")
    print(f"{'total':24s} {sum(s for _, s in steps):7.3f} s   (HTML {len(page):,} bytes)")


if __name__ == "__main__":
    main()
