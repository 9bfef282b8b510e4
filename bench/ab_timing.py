"""A/B timing of one sample's first profiled launch on a GPU: the native module against the
instrumented module of a mode, interleaved in both orders on the same arrays, with each compiled
kernel's registers and local memory. For a kernel with no counting code (`gmprof instrument`
leaves its text unchanged) any difference is in the build or the measurement, not in counting:
spmv's shm profile measured 1.29 ms native against 2.63 ms instrumented with no hook in it.

    python3 bench/ab_timing.py spmv --mode default --profile shm [--size large] [--reps 20]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _attributes(module, name) -> dict:
    if not hasattr(module, "function"):
        return {}  # the CPU backend's module
    fn = module.function(name)
    out = {}
    for attr in ("num_regs", "local_size_bytes", "shared_size_bytes", "const_size_bytes",
                 "max_threads_per_block", "ptx_version", "binary_version"):
        try:
            out[attr] = getattr(fn, attr)
        except Exception:  # noqa: BLE001 (an attribute this CuPy does not have)
            pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sample")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--profile", default="shm")
    ap.add_argument("--size", default="large")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--backend", default="gpu", help="cpu: a dry run of this script")
    args = ap.parse_args()

    import numpy as np

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import sample_profiler

    sample = load_sample(ROOT / "samples" / args.sample)
    prof = sample_profiler(sample, args.backend)
    drv = sample.driver
    params = drv.sizes[args.size]
    arrays = drv.arrays(params, np.random.default_rng(0))
    on = {k: prof.backend.to_device(v) if isinstance(v, np.ndarray) else v
          for k, v in arrays.items()}
    launch = next(x for x in drv.launches(params) if x.profile)
    largs = [on[a] if isinstance(a, str) else a for a in launch.args]
    mode = Mode.parse(args.mode, profile=args.profile)
    report = prof.launch(launch.kernel, launch.grid3, launch.block3, largs, launch.shared_mem,
                         mode=mode, repeat=5)
    run = report.run
    print(f"# {prof.backend.device}; {args.sample} {args.size} {launch.kernel} "
          f"mode {mode.name} profile {args.profile}")
    print(f"gmprof's own timing: native {run.native_ms:.3f} ms, instrumented "
          f"{run.instrumented_ms:.3f} ms; counters in {run.counters_in} ({run.counters_why})")

    native = prof.modules.module(None, [launch.kernel])
    built = [(key, m) for key, m in prof.modules._modules.items() if m is not native]
    print(f"modules built: {len(prof.modules._modules)} (native + {len(built)})")
    for key, module in built:
        text, options, names = key
        print(f"instrumented module: {len(text)} chars, options {' '.join(options) or '-'}")
        print(f"  native attributes:       {_attributes(native, launch.kernel)}")
        print(f"  instrumented attributes: {_attributes(module, launch.kernel)}")
        if "__gmprof_launch" in text and run.counters_why.startswith("none"):
            pass  # a kernel with no counting code reads no launch description: safe to launch
        elif not run.counters_why.startswith("none"):
            print("  (this kernel counts on the device: only the attributes are compared)")
            continue

        def t(m):
            return m.launch(launch.kernel, launch.grid3, launch.block3, largs,
                            launch.shared_mem) * 1e3

        for m in (native, module):  # warm both
            t(m)
        rows = {"native, then instrumented": ([], []), "instrumented, then native": ([], []),
                "native twice": ([], [])}
        for _ in range(args.reps):
            a, b = rows["native, then instrumented"]
            a.append(t(native))
            b.append(t(module))
            a, b = rows["instrumented, then native"]
            b.append(t(module))
            a.append(t(native))
            a, b = rows["native twice"]
            a.append(t(native))
            b.append(t(native))
        for label, (a, b) in rows.items():
            print(f"  {label:28s} native {statistics.median(a):.3f} ms, "
                  f"other {statistics.median(b):.3f} ms (medians of {args.reps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
