"""A/B timing of one sample's first profiled launch on a GPU: the native module against the
instrumented module of a mode, interleaved in both orders on the same arrays, with each compiled
kernel's registers and local memory. For a kernel with no counting code (`gmprof instrument`
leaves its text unchanged) any difference is in the build or the measurement, not in counting:
spmv's shm profile measured 1.29 ms native against 2.63 ms instrumented with no hook in it.

    python3 bench/ab_timing.py spmv --mode default --profile shm [--size large] [--reps 20]

--placements (issue 17, a kernel that counts on the device, e.g. co): in one run, on the same
arrays, interleaved round by round,
  1. native against instrumented with once-per-entry counts before the loop (passes/entry.py)
     and in the loop's first iteration (Mode.loop_entry=False): gmprof's own timings;
  2. the native kernel launched with the instrumented launch's dynamic shared memory (the
     counter area in SM mode) and nothing else changed: what the shared memory alone costs
     (the driver's L1 / shared-memory split and the blocks per SM it allows);
  3. both again with the shared-memory carveout preference set on the native and the
     instrumented functions (--carveouts, percent of the maximum; -1: the driver's choice;
     fit: the smallest shared part that holds the grid's resident blocks, what
     GMPROF_CARVEOUT=fit makes gmprof ask for, gmprof/runtime/carveout.py);
with each function's registers, static shared memory and blocks per SM (occupancy API).

    python3 bench/ab_timing.py co --profile shm --placements [--rounds 5] [--reps 10]
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
    ap.add_argument("--placements", action="store_true",
                    help="compare the placements of once-per-entry counts, the counter area's "
                         "shared memory and carveouts (see the module's docstring)")
    ap.add_argument("--rounds", type=int, default=5, help="--placements: interleaved rounds")
    ap.add_argument("--carveouts", default="-1,fit,50,100",
                    help="--placements: carveout preferences to try (percent; -1: the "
                         "driver's choice; fit: GMPROF_CARVEOUT=fit's, runtime/carveout.py)")
    args = ap.parse_args()
    if args.placements:
        return placements(args)

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime.samples import first_profiled_launch, sample_profiler

    sample = load_sample(ROOT / "samples" / args.sample)
    prof = sample_profiler(sample, args.backend)
    launch, largs = first_profiled_launch(sample, args.size, prof)
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


def _set_carveout(fn, percent: int) -> str:
    """Set CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT (9) on a CuPy function."""
    try:
        fn.preferred_shared_memory_carveout = percent
        return "ok"
    except Exception:  # noqa: BLE001 (a CuPy without the setter: the driver directly)
        pass
    try:
        import ctypes

        cuda = ctypes.CDLL("libcuda.so.1")
        rc = cuda.cuFuncSetAttribute(ctypes.c_void_p(int(fn.ptr)), 9, ctypes.c_int(percent))
        return "ok" if rc == 0 else f"cuFuncSetAttribute error {rc}"
    except Exception as exc:  # noqa: BLE001
        return f"not set ({exc})"


def _blocks_per_sm(fn, block: int, dynamic: int):
    try:
        import ctypes

        cuda = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        rc = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(n), ctypes.c_void_p(int(getattr(fn, "ptr", None) or fn.kernel.ptr)),
            ctypes.c_int(block),
            ctypes.c_size_t(dynamic))
        return n.value if rc == 0 else f"error {rc}"
    except Exception as exc:  # noqa: BLE001
        return f"? ({exc})"


def placements(args) -> int:
    import dataclasses

    import numpy as np

    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.runtime import backend as B
    from gmprof.runtime.samples import first_profiled_launch, sample_profiler

    sample = load_sample(ROOT / "samples" / args.sample)
    prof = sample_profiler(sample, args.backend)
    launch, largs = first_profiled_launch(sample, args.size, prof)
    entry = Mode.parse(args.mode, profile=args.profile)
    modes = {"entry": entry, "first iteration": dataclasses.replace(entry, loop_entry=False)}
    # the dynamic shared memory each module's launches asked for (the counter area in SM)
    asked: dict = {}
    gpu = hasattr(B, "GpuModule") and args.backend == "gpu"
    if gpu:
        original = B.GpuModule.launch

        def recording(self, name, grid, block, a, shared_mem=0, timeout=None):
            asked[id(self)] = max(asked.get(id(self), 0), shared_mem)
            return original(self, name, grid, block, a, shared_mem, timeout)

        B.GpuModule.launch = recording

    def profiled(mode):
        report = prof.launch(launch.kernel, launch.grid3, launch.block3, largs,
                             launch.shared_mem, mode=mode, repeat=args.reps)
        return report.run

    print(f"# {prof.backend.device}; {args.sample} {args.size} {launch.kernel} "
          f"profile {args.profile}; {args.rounds} rounds, gmprof's medians of {args.reps}")
    times = {label: ([], []) for label in modes}
    for _ in range(args.rounds):
        for label, mode in modes.items():
            run = profiled(mode)
            times[label][0].append(run.native_ms)
            times[label][1].append(run.instrumented_ms)
    native = prof.modules.module(None, [launch.kernel])
    med = statistics.median
    for label, (a, b) in times.items():
        print(f"  {label:16s} native {med(a):8.3f} ms, instrumented {med(b):8.3f} ms, "
              f"overhead {med(b) / med(a) - 1:6.2f}x (medians of {args.rounds} rounds)")
    if not gpu:
        print("  (CPU backend: a dry run; the shared-memory and carveout rows need a GPU)")
        return 0
    fn = native.function(launch.kernel)
    block = int(np.prod(launch.block3))
    # the instrumented modules, named by their placement (a first-iteration flag or not)
    named = {("first iteration" if "__gmprof_first_" in key[0] else "entry"): m
             for key, m in prof.modules._modules.items() if m is not native}
    others = list(named.values())
    pad = max((asked.get(id(m), 0) for m in others), default=0)
    print(f"  instrumented launches' dynamic shared memory: {pad} bytes")
    print(f"  native:       {_attributes(native, launch.kernel)}, blocks/SM "
          f"{_blocks_per_sm(fn, block, launch.shared_mem)} (with the counter area's bytes: "
          f"{_blocks_per_sm(fn, block, pad)})")
    for label, m in named.items():
        f = m.function(launch.kernel)
        print(f"  {label}: {_attributes(m, launch.kernel)}, blocks/SM "
              f"{_blocks_per_sm(f, block, asked.get(id(m), 0))}")

    def t(shared):
        return native.launch(launch.kernel, launch.grid3, launch.block3, largs, shared) * 1e3

    for percent in args.carveouts.split(","):
        if percent == "fit":
            # gmprof's GMPROF_CARVEOUT=fit (runtime/carveout.py), the native function given
            # the one its launch with the counter area's bytes would get
            status = []
            for m, dyn in [(native, pad)] + [(m, asked.get(id(m), 0)) for m in others]:
                m._carveouts.clear()
                got = m.fit_carveout(launch.kernel, launch.grid3, launch.block3, dyn)
                status.append(f"{got}%" if got is not None else "driver's")
        else:
            percent = int(percent)
            status = [_set_carveout(m.function(launch.kernel), percent)
                      for m in [native] + others]
        t(launch.shared_mem), t(pad)  # warm
        plain, padded = [], []
        for _ in range(args.reps):
            plain.append(t(launch.shared_mem))
            padded.append(t(pad))
            padded.append(t(pad))
            plain.append(t(launch.shared_mem))
        print(f"  carveout {percent!s:>4} ({'/'.join(sorted(set(status)))}): native "
              f"{med(plain):.3f} ms, native + {pad} B dynamic shared {med(padded):.3f} ms "
              f"({med(padded) / med(plain) - 1:+.2f}x)")
        for label, mode in modes.items():
            runs = [profiled(mode) for _ in range(max(1, args.rounds // 2))]
            a = med([r.native_ms for r in runs])
            b = med([r.instrumented_ms for r in runs])
            print(f"      {label:16s} native {a:8.3f} ms, instrumented {b:8.3f} ms, "
                  f"overhead {b / a - 1:6.2f}x")
    for m in [native] + others:
        _set_carveout(m.function(launch.kernel), -1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
