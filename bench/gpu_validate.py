"""Validate gmprof on a GPU in one run: counts, bit-identical outputs, memcheck, GPU tests.

For the device machine (one call, everything it checks printed and written under $OUT):
  1. the GPU-marked tests (`pytest -m gpu`);
  2. bench/check_counts.py: tiled matrix product, Figure 1 transpose and Jacobi counts against
     hand-derived expectations in every mode;
  3. every sample at its large size in the default mode (and small sizes in basic, trace and
     enhanced modes): the instrumented kernel's outputs are byte-identical to the original's,
     the sample's self-check passes; native and instrumented times;
  4. compute-sanitizer memcheck over instrumented kernels of every sample (small sizes).

    python3 bench/gpu_validate.py [--out DIR] [--skip-memcheck] [--samples a,b]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def samples(names=None):
    out = sorted(p.name for p in (ROOT / "samples").iterdir() if (p / "driver.py").is_file())
    return [n for n in out if not names or n in names]


def run_samples(out: Path, names, size: str, modes):
    from gmprof.mode import Mode
    from gmprof.runtime.samples import run_sample, sample_profiler
    from gmprof.driver import load_sample

    rows = []
    for name in names:
        sample = load_sample(ROOT / "samples" / name)
        try:
            prof = sample_profiler(sample, "gpu")
        except Exception as exc:
            rows.append((name, "-", f"load: {exc}", None, None, None))
            continue
        for mode_name, kw in modes:
            t0 = time.time()
            try:
                mode = Mode.parse(mode_name, **kw)
                # large references take minutes on the host (and passed natively on the GPU):
                # at the large size, correctness is the bit-for-bit comparison with the
                # uninstrumented kernel that every run makes
                r = run_sample(sample, size, mode=mode, backend="gpu", profiler=prof,
                               repeat=3 if size == "large" else 0, max_profiled=3,
                               check=size != "large")
                same = all(rep.run.outputs_identical for rep in r.reports.values())
                native = sum(rep.run.native_ms or 0 for rep in r.reports.values())
                inst = sum(rep.run.instrumented_ms or 0 for rep in r.reports.values())
                rows.append((name, mode.name, "ok" if r.ok else f"FAIL {r.check_error}",
                             same, native, inst))
            except Exception as exc:
                rows.append((name, mode_name, f"ERROR {type(exc).__name__}: {str(exc)[:200]}",
                             None, None, None))
                traceback.print_exc(limit=4)
            log(f"{name} {mode_name} {size}: {rows[-1][2]} identical={rows[-1][3]} "
                f"({time.time() - t0:.1f} s)")
    lines = [f"| sample | mode | self-check | outputs identical | native ms | instrumented ms |"
             f" overhead |", "|---|---|---|---|---|---|---|"]
    for name, mode, check, same, native, inst in rows:
        oh = f"{inst / native - 1:.2f}x" if native and inst else "-"
        nat = f"{native:.3f}" if native else "-"
        ins = f"{inst:.3f}" if inst else "-"
        lines.append(f"| {name} | {mode} | {check} | {same} | {nat} | {ins} | {oh} |")
    return rows, "\n".join(lines)


def memcheck_inner(names):
    """Runs inside compute-sanitizer: instrumented kernels of every sample, small sizes."""
    from gmprof.mode import Mode
    from gmprof.runtime.samples import run_sample

    for name in names:
        for mode in (Mode(), Mode.parse("basic"), Mode(enhanced=True),
                     Mode.parse("SA-NA-SM-TH", counter_bits=8)):
            r = run_sample(ROOT / "samples" / name, "small", mode=mode, backend="gpu")
            print(f"memcheck run {name} {mode.name}: self-check {'ok' if r.ok else r.check_error}",
                  flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gmprof-gpu"))
    ap.add_argument("--skip-memcheck", action="store_true")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--samples", default="")
    ap.add_argument("--memcheck-inner", action="store_true")
    args = ap.parse_args()
    names = samples([n for n in args.samples.split(",") if n] or None)
    if args.memcheck_inner:
        memcheck_inner(names)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {}
    log("environment")
    env = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv"],
                         capture_output=True, text=True).stdout
    print(env)
    summary["gpu"] = env.strip()

    log("GPU tests (pytest -m gpu)")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu",
                        "-p", "no:cacheprovider", "tests"], cwd=ROOT, capture_output=True,
                       text=True)
    (out / "pytest_gpu.log").write_text(r.stdout + r.stderr)
    print(r.stdout[-1500:])
    summary["pytest_gpu"] = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr

    log("count check against hand-derived expectations")
    try:
        import io
        from contextlib import redirect_stdout

        sys.path.insert(0, str(ROOT / "bench"))
        import check_counts

        buf = io.StringIO()
        with redirect_stdout(buf):
            ok, _ = check_counts.run("gpu", 256)
        (out / "check_counts.md").write_text(buf.getvalue())
        print(buf.getvalue())
        summary["check_counts_exact_ok"] = ok
    except Exception:
        traceback.print_exc()
        summary["check_counts_exact_ok"] = "ERROR"

    if not args.skip_large:
        log("samples, large size, default mode")
        rows, table = run_samples(out, names, "large", [("default", {})])
        (out / "samples_large.md").write_text(table + "\n")
        print(table)
        summary["large_default"] = [list(r) for r in rows]
    log("samples, small size, other modes")
    rows, table = run_samples(out, names, "small", [
        ("basic", {}), ("trace", {}), ("default", {"enhanced": True}),
        ("SA-NA-SM-TH", {"counter_bits": 8, "threshold": 255}),
        ("SM", {"sampling": 0.1, "sampler": "paper"})])
    (out / "samples_small_modes.md").write_text(table + "\n")
    print(table)
    summary["small_modes"] = [list(r) for r in rows]

    if not args.skip_memcheck:
        log("compute-sanitizer memcheck over instrumented kernels")
        cmd = ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3",
               sys.executable, str(Path(__file__).resolve()), "--memcheck-inner",
               "--samples", ",".join(names)]
        t0 = time.time()
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        (out / "memcheck.log").write_text(r.stdout + r.stderr)
        tail = [ln for ln in (r.stdout + r.stderr).splitlines() if "ERROR SUMMARY" in ln]
        summary["memcheck"] = {"command": " ".join(cmd[:5]) + " python3 bench/gpu_validate.py "
                               "--memcheck-inner", "returncode": r.returncode,
                               "summary": tail[-1] if tail else None,
                               "seconds": round(time.time() - t0, 1)}
        print(summary["memcheck"])
        print((r.stdout + r.stderr)[-3000:])
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
