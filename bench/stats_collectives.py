"""Warp collectives a launch makes on the CPU backend in default mode, with and without
--access-stats: a cost proxy for issue 27's overhead criterion that needs no GPU (the warp
collectives of the measured statistics are what co and spmv paid for on the H100;
bench/stats_overhead.sh times them there).

    python3 bench/stats_collectives.py [--samples co,spmv,...] [--size small]

Per sample: the collectives (each lane's __shfl/__ballot/__reduce/__match/__activemask call,
counted by the CPU runtime: gmprof_cpu_collectives) of its first profiled launch, in default
mode and in default mode with --access-stats, and the difference per launch.
"""
from __future__ import annotations

import argparse
import ctypes
import dataclasses
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"


def collectives(prof) -> int:
    """The collectives made so far by every module the profiler has compiled."""
    total = 0
    for m in prof.modules._modules.values():
        lib = m.module._lib
        lib.gmprof_cpu_collectives.restype = ctypes.c_ulonglong
        total += int(lib.gmprof_cpu_collectives())
    return total


def launch_collectives(name: str, size: str, warps: bool) -> int:
    """The collectives of the sample's first profiled launch, profiled once (a profiler of
    its own, so that its modules count this launch alone; no native comparison)."""
    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import first_profiled_launch, sample_profiler

    sample = load_sample(ROOT / "samples" / name)
    prof = sample_profiler(sample, "cpu")
    launch, args = first_profiled_launch(sample, size, prof)
    mode = dataclasses.replace(Mode.parse("default"), warps=warps)
    prof.launch(launch.kernel, launch.grid3, launch.block3, args, launch.shared_mem, mode=mode,
                compare_native=False, warmup=0)
    return collectives(prof)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=SIX, help="comma-separated sample names")
    ap.add_argument("--size", default="small")
    args = ap.parse_args(argv)
    print(f"{'sample':8} {'default':>12} {'with stats':>12} {'added':>12} {'x':>8}")
    for name in args.samples.split(","):
        base = launch_collectives(name, args.size, False)
        stats = launch_collectives(name, args.size, True)
        ratio = f"{stats / base:.2f}" if base else "-"
        print(f"{name:8} {base:12,} {stats:12,} {stats - base:12,} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
