"""gmprof's per-warp requests (--access-stats) against Nsight Compute's hardware counters, per
kernel: shared-memory wavefronts (loads, stores), global sectors and requests (loads, stores).

    python3 bench/ncu_access.py [--samples transpose_naive,...] [--size small] [--out FILE.md]

For each sample: gmprof profiles it (default mode with --access-stats: static sites from their
formulas, the others by hooks) and sums its sites' statistics per kernel, reads as loads and
writes as stores (a read-write site, an atomic, goes to neither: the hardware counts atomics
apart); then the same launches run natively under `ncu` (this script again, with --native),
and the hardware counters are summed per kernel. The table shows both, and their ratio.

Where they differ, the compiler and the hardware are counting something else than source
accesses: loads the compiler merged into one wider load (fewer requests, the same bytes),
values kept in registers instead of read again, accesses it moved out of loops, and caching
(which does not change sector counts: a sector is counted when requested, hit or miss).
"""
from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAIRS = "transpose_naive,transpose_padded,matmul_naive,matmul_tiled,nbody_global,nbody_shared"
SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"
METRICS = {
    "shared ld wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared st wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "global ld sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global st sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "global ld requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global st requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
}


def native(sample: str, size: str) -> None:
    """Run the sample's launches natively (what ncu measures)."""
    import numpy as np

    from gmprof.driver import load_sample
    from gmprof.runtime.samples import sample_profiler

    s = load_sample(str(ROOT / "samples" / sample))
    prof = sample_profiler(s, "gpu")
    params = s.driver.sizes[size]
    arrays = s.driver.arrays(params, np.random.default_rng(0))
    on = {k: prof.backend.to_device(v) if isinstance(v, np.ndarray) else v
          for k, v in arrays.items()}
    for launch in s.driver.launches(params):
        args = [on[a] if isinstance(a, str) else a for a in launch.args]
        prof.run_native(launch.kernel, launch.grid, launch.block, args,
                        getattr(launch, "shared_mem", 0) or 0)
    prof.backend.synchronize()


def gmprof_side(sample: str, size: str) -> dict:
    """kernel -> {metric: value} from gmprof's sites."""
    from gmprof.mode import Mode
    from gmprof.runtime.samples import run_sample

    from gmprof.driver import load_sample
    from gmprof.runtime.samples import sample_profiler

    mode = Mode.parse("default", warps=True)
    prof = sample_profiler(load_sample(str(ROOT / "samples" / sample)), "gpu")
    atomic = {site.id for site in prof.plan(mode).sites if site.atomic}
    run = run_sample(str(ROOT / "samples" / sample), size, mode=mode, profiler=prof,
                     check=False)
    out = {}
    for name, report in run.reports.items():
        m = dict.fromkeys(METRICS, 0)
        for s in report.sites:
            w = s.warps
            if w is None or s.id in atomic:  # atomics are neither loads nor stores there
                continue
            # a read-modify-write (`a[i] += v`) is a load and a store
            for op in {"read": ("ld",), "write": ("st",), "read-write": ("ld", "st")}[s.kind]:
                if w.space == "shared":
                    m[f"shared {op} wavefronts"] += w.units
                else:
                    m[f"global {op} sectors"] += w.units
                    m[f"global {op} requests"] += w.requests
        out[name.split("<")[0]] = m
    return out


def ncu_side(sample: str, size: str, kernels: list) -> dict:
    regex = "regex:(" + "|".join(kernels) + ")"  # (template kernels' names are mangled)
    cmd = ["ncu", "--csv", "--metrics", ",".join(METRICS.values()), "--kernel-name", regex,
           sys.executable, __file__, "--native", sample, "--size", size]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    text = p.stdout[p.stdout.find('"ID"'):] if '"ID"' in p.stdout else ""
    names = {v: k for k, v in METRICS.items()}
    out: dict = {}
    for row in csv.DictReader(io.StringIO(text)):
        k = row["Kernel Name"].split("(")[0].split("<")[0].strip()
        k = k[len("void "):] if k.startswith("void ") else k
        metric = names.get(row["Metric Name"])
        if metric is None:
            continue
        v = float(row["Metric Value"].replace(",", "") or 0)
        out.setdefault(k, dict.fromkeys(METRICS, 0.0))[metric] += v
    if not out:
        print(f"# ncu gave nothing for {sample}: {p.stderr[-800:]}", file=sys.stderr)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=PAIRS + "," + SIX)
    ap.add_argument("--size", default="small")
    ap.add_argument("--out")
    ap.add_argument("--native", metavar="SAMPLE", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.native:
        native(args.native, args.size)
        return 0
    lines = [f"| sample | kernel | counter | gmprof | ncu | gmprof / ncu |",
             "|---|---|---|---:|---:|---:|"]
    for sample in args.samples.split(","):
        g = gmprof_side(sample, args.size)
        n = ncu_side(sample, args.size, sorted(g))
        for kernel, gm in g.items():
            hw = n.get(kernel, {})
            for metric in METRICS:
                a, b = gm[metric], hw.get(metric)
                if not a and not b:
                    continue
                ratio = f"{a / b:.3f}" if b else "-"
                lines.append(f"| {sample} | {kernel} | {metric} | {a:,} | "
                             f"{'-' if b is None else f'{b:,.0f}'} | {ratio} |")
        print(f"# {sample} done", file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
