"""Diagnose an instrumented-vs-native output difference: run a sample's first launches natively
twice and instrumented once (in a given mode), and say which arrays differ and by how much.
A native-vs-native difference means the kernel itself is not deterministic.

    python3 bench/diagnose_outputs.py SAMPLE MODE [PROFILE] [--size large] [--launches 2]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main():
    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import sample_profiler

    ap = argparse.ArgumentParser()
    ap.add_argument("sample")
    ap.add_argument("mode")
    ap.add_argument("profile", nargs="?", default="both")
    ap.add_argument("--size", default="large")
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    sample = load_sample(ROOT / "samples" / args.sample)
    prof = sample_profiler(sample, args.backend)
    drv = sample.driver
    params = drv.sizes[args.size]
    base = drv.arrays(params, np.random.default_rng(0))
    for launch in drv.launches(params)[:args.launches]:
        runs = {}
        for label in ("native-1", "native-2", "instrumented"):
            arrays = {k: v.copy() for k, v in base.items()}
            a = [arrays[x] if isinstance(x, str) else x for x in launch.args]
            if label == "instrumented":
                prof.launch(launch.kernel, launch.grid3, launch.block3, a, launch.shared_mem,
                            mode=Mode.parse(args.mode, profile=args.profile))
            else:
                prof.run_native(launch.kernel, launch.grid3, launch.block3, a, launch.shared_mem)
            runs[label] = arrays
        for name in base:
            n1, n2, ins = runs["native-1"][name], runs["native-2"][name], runs["instrumented"][name]
            same_native = n1.tobytes() == n2.tobytes()
            same_inst = n1.tobytes() == ins.tobytes()
            if not (same_native and same_inst):
                diff = np.abs(n1.astype(float) - ins.astype(float))
                idx = np.argwhere(diff > 0)
                print(f"{launch.kernel} {name}: native deterministic={same_native}, "
                      f"instrumented identical={same_inst}, elements differing={len(idx)}, "
                      f"max |diff|={diff.max():.3g}, first at {idx[:3].tolist()}")
        base = runs["native-1"]
    print("done")


if __name__ == "__main__":
    main()
