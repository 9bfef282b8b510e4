"""Run samples natively on a GPU through CuPy: check against reference() and time the launches.

Used by test_samples_gpu.py, and on the device machine as a script that prints each sample's
native time (the figure quoted in the drivers' descriptions):

    python3 tests/samples/gpu_run.py --size large --repeat 5 [--check] [NAME ...]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sample_support import kernel_names, sample, sample_names  # noqa: E402


def compile_module(s):
    import cupy as cp

    defines = tuple(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in s.driver.defines.items())
    return cp.RawModule(code=s.source_path.read_text(), options=("-I" + str(s.directory),
                                                                  "--std=c++17", *defines),
                        name_expressions=kernel_names(s))


def run(name, size_name, *, check=True, repeat=0, seed=0):
    """Returns {"ok": bool | None, "error": str, "ms": [times of whole launch sequences]}."""
    import cupy as cp

    s = sample(name)
    d = s.driver
    size = d.sizes[size_name]
    arrays = d.arrays(size, np.random.default_rng(seed))
    module = compile_module(s)
    device = {k: cp.asarray(v) for k, v in arrays.items()}
    launches = [(module.get_function(lc.kernel), lc) for lc in d.launches(size)]

    def go():
        for fn, lc in launches:
            args = tuple(device[a] if isinstance(a, str) else a for a in lc.args)
            fn(lc.grid3, lc.block3, args, shared_mem=lc.shared_mem)

    go()
    cp.cuda.Device().synchronize()
    result = {"ok": None, "error": "", "ms": []}
    if check:
        outputs = {k: cp.asnumpy(device[k]) for k in d.outputs}
        expected = d.reference(size, arrays)
        try:
            d.check(size, outputs, expected)
            result["ok"] = True
        except AssertionError as e:
            result["ok"] = False
            result["error"] = str(e)[:2000]
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(repeat):
        start.record()
        go()
        stop.record()
        stop.synchronize()
        result["ms"].append(cp.cuda.get_elapsed_time(start, stop))
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--size", default="large")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args(argv)
    results = {}
    for name in args.names or sample_names():
        t0 = time.time()
        try:
            r = run(name, args.size, check=args.check, repeat=args.repeat)
        except Exception as e:  # report and go on with the next sample
            r = {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000], "ms": []}
        r["wall_s"] = round(time.time() - t0, 1)
        results[name] = r
        ms = f"{statistics.median(r['ms']):9.3f} ms" if r["ms"] else "       - ms"
        print(f"{name:18s} {args.size:5s} {ms}  check={r['ok']}  ({r['wall_s']} s) "
              f"{r['error'][:300]}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if all(r["ok"] is not False for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
