"""Subcommands instrument, profile, compare and bench (argument parsing and output only)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from .errors import GmprofError


def _mode_options(p) -> None:
    p.add_argument("--mode", default="default",
                   help="default (SA+SM, exact), basic, trace, or SA/NA/SM/TH joined by '-' "
                        "(the paper's names, e.g. SA-NA-SM-TH)")
    p.add_argument("--profile", default="both", choices=("shm", "dm", "both"),
                   help="profile shared memory, device memory, or both")
    p.add_argument("--threshold", type=int, help="saturate counters at N (TH)")
    p.add_argument("--counter-bits", type=int, default=32, choices=(8, 16, 32))
    p.add_argument("--enhanced", action="store_true",
                   help="live-range statistics for shared arrays (Algorithm 2)")
    p.add_argument("--sampling", type=float, metavar="RATE", help="count a sample of accesses")
    p.add_argument("--sampler", default="rng", choices=("rng", "paper"))


def _mode(args):
    from .passes.plan import Mode

    return Mode.parse(args.mode, threshold=args.threshold, counter_bits=args.counter_bits,
                      enhanced=args.enhanced, sampling=args.sampling, sampler=args.sampler,
                      profile=args.profile)


# -- instrument ---------------------------------------------------------------------------

def cmd_instrument(args) -> int:
    from .cli import load_tu, write_output
    from .passes.pipeline import analyze
    from .passes.plan import plan_counters
    from .passes.rewrite import emit, instrument
    from .report.plan_json import plan_json

    mode = _mode(args)
    tu = load_tu(args)
    program = analyze(tu)
    if args.kernel and args.kernel not in program.extra["kernels"]:
        fn = tu.function(args.kernel)
        if fn is not None and fn.parsed is None:
            raise GmprofError(f"kernel {args.kernel!r} could not be parsed", fn.location)
        raise GmprofError(f"no kernel named {args.kernel!r} in {args.file} (kernels: "
                          f"{', '.join(program.extra['kernels']) or 'none'})")
    plan = plan_counters(program, mode)
    patches, rewriter = instrument(plan)
    defines = plan.mode.defines() | {"GMPROF_SHARED_BASES": int(rewriter.needs_shared_bases)}
    text = emit(program, patches, device_only=args.device_only, defines=defines)
    sidecar = plan_json(plan, defines, args.output)
    out = Path(args.output)
    side = Path(str(out) + ".json")
    # write both or neither: the sidecar first to a temporary, then both renames
    write_output(out, text)
    try:
        write_output(side, json.dumps(sidecar, indent=2, default=str))
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    for w in tu.warnings:
        print(w.render(), file=sys.stderr)
    n_hooks = sum(1 for sp in plan.sites.values() if sp.strategy in ("hook", "lr_start"))
    n_static = sum(1 for sp in plan.sites.values() if sp.strategy == "static")
    print(f"wrote {out} ({plan.mode.name}: {n_hooks} counted sites, {n_static} static) "
          f"and {side}", file=sys.stderr)
    return 0


# -- profile ------------------------------------------------------------------------------

def _print_report(report, args) -> None:
    from .cli import _console, write_output
    from .report.render import csv_text, html_text, json_text, render_text

    if args.json:
        print(json_text(report))
    else:
        render_text(report, _console())
    if getattr(args, "csv", None):
        write_output(args.csv, csv_text(report))
    if getattr(args, "out", None):
        write_output(args.out, html_text(report))


def cmd_profile(args) -> int:
    mode = _mode(args)
    target = Path(args.file)
    if target.is_dir():
        return _profile_sample(args, target, mode)
    if not args.kernel or not args.grid or not args.block:
        raise GmprofError("profiling a .cu file needs --kernel, --grid and --block "
                          "(or give a sample directory, e.g. samples/matmul_tiled)")
    from .api import profiler
    from .argspec import parse_arg, parse_dim3
    from .frontend.program import parse_define_option

    defines = dict(parse_define_option(d) for d in args.defines)
    prof = profiler(args.file, defines, args.include_dirs, args.backend)
    rng = np.random.default_rng(args.seed)
    named = dict(parse_arg(spec, rng) for spec in args.arg)
    from .runtime.launchenv import split_name_expression

    kernel, _ = split_name_expression(args.kernel)
    facts = prof.program.facts(kernel)
    if facts is None:
        raise GmprofError(f"no kernel named {kernel!r} in {args.file} (kernels: "
                          f"{', '.join(k.name for k in prof.tu.kernels) or 'none'})")
    params = [getattr(p, "name", None) for p in facts.function.params]
    missing = [p for p in params if p not in named]
    extra = [n for n in named if n not in params]
    if missing or extra:
        raise GmprofError(f"{kernel} takes ({', '.join(str(p) for p in params)}); "
                          + (f"missing --arg for {', '.join(map(str, missing))}" if missing
                             else f"no parameter named {', '.join(extra)}"))
    report = prof.launch(args.kernel, parse_dim3(args.grid, "grid"),
                         parse_dim3(args.block, "block"), [named[p] for p in params],
                         args.shared_mem, mode=mode,
                         repeat=args.repeat if args.compare_native or args.repeat else 0)
    _print_report(report, args)
    return 0


def _profile_sample(args, directory: Path, mode) -> int:
    from .runtime.backend import get_backend
    from .runtime.samples import run_sample

    backend = get_backend(args.backend)
    size = args.size or ("large" if backend.name == "gpu" else "small")
    run = run_sample(directory, size, mode=mode, backend=backend.name,
                     repeat=args.repeat if args.compare_native or args.repeat else 0,
                     seed=args.seed)
    for name, report in run.reports.items():
        _print_report(report, args)
    status = "passed" if run.ok else f"FAILED: {run.check_error}"
    print(f"sample {run.sample.name} ({size}, {backend.name}): self-check {status}",
          file=sys.stderr)
    return 0 if run.ok else 1


# -- compare ------------------------------------------------------------------------------

PAPER_MODES = ("basic", "SA", "SA-NA", "SA-NA-SM", "SA-NA-SM-TH", "default")


def accuracy_loss(report, reference) -> float:
    """The paper's 6.2: |count - exact| / exact per element, averaged over the elements an
    exact count saw, then over arrays."""
    losses = []
    for ref in reference.arrays:
        try:
            got = report.array(ref.name)
        except KeyError:
            continue
        exact = ref.counts.astype(float)
        mask = exact > 0
        if not mask.any():
            continue
        counts = got.counts.astype(float)
        if got.threshold is not None:
            counts = np.minimum(counts, got.threshold)
        losses.append(float(np.mean(np.abs(counts[mask] - exact[mask]) / exact[mask])))
    return float(np.mean(losses)) if losses else 0.0


def cmd_compare(args) -> int:
    from rich.table import Table
    from rich.text import Text

    from .api import profiler
    from .argspec import parse_arg, parse_dim3
    from .cli import _console
    from .frontend.program import parse_define_option
    from .passes.plan import Mode

    defines = dict(parse_define_option(d) for d in args.defines)
    prof = profiler(args.file, defines, args.include_dirs, args.backend)
    rng = np.random.default_rng(args.seed)
    named = dict(parse_arg(spec, rng) for spec in args.arg)
    from .runtime.launchenv import split_name_expression

    kernel, _ = split_name_expression(args.kernel)
    facts = prof.program.facts(kernel)
    if facts is None:
        raise GmprofError(f"no kernel named {kernel!r} in {args.file}")
    params = [getattr(p, "name", None) for p in facts.function.params]
    missing = [p for p in params if p not in named]
    if missing:
        raise GmprofError(f"missing --arg for {', '.join(map(str, missing))}")
    grid, block = parse_dim3(args.grid, "grid"), parse_dim3(args.block, "block")
    rates = [float(r) for r in args.sampling.split(",")] if args.sampling else []

    def run(mode):
        fresh = [v.copy() if isinstance(v, np.ndarray) else v for v in
                 (named[p] for p in params)]
        return prof.launch(args.kernel, grid, block, fresh, args.shared_mem, mode=mode,
                           repeat=args.repeat)

    reference = run(Mode.parse("basic", profile=args.profile))
    rows = [("basic (exact reference)", reference, 0.0)]
    for name in PAPER_MODES[1:]:
        th = args.threshold if name.endswith("TH") else None
        mode = Mode.parse(name, threshold=th, profile=args.profile)
        rep = run(mode)
        rows.append((mode.name, rep, accuracy_loss(rep, reference)))
    for rate in rates:
        mode = Mode.parse("basic-SM", sampling=rate, sampler=args.sampler, profile=args.profile)
        rep = run(mode)
        rows.append((mode.name, rep, accuracy_loss(rep, reference)))
    table = Table(title=f"{args.kernel} on {prof.backend.device} ({prof.backend.name})")
    for col in ("mode", "native", "instrumented", "overhead", "accuracy loss", "counters"):
        table.add_column(col, justify="left" if col == "mode" else "right")
    for name, rep, loss in rows:
        r = rep.run
        table.add_row(Text(name), f"{r.native_ms:.3f} ms", f"{r.instrumented_ms:.3f} ms",
                      f"{r.overhead:.2f}x" if r.overhead is not None else "-",
                      f"{loss:.4f}", Text(r.counters_in))
    console = _console()
    console.print(table)
    if prof.backend.name == "cpu":
        console.print(Text("times are CPU-emulated: they do not predict GPU overheads"))
    return 0


def register(sub, add_frontend_options) -> None:
    p = sub.add_parser("instrument", help="write instrumented CUDA and a JSON sidecar")
    add_frontend_options(p)
    p.add_argument("-o", "--output", required=True, help="instrumented .cu to write")
    p.add_argument("--kernel", help="check that this kernel exists")
    p.add_argument("--device-only", action="store_true",
                   help="drop host code (for NVRTC); by default host code is kept for nvcc")
    _mode_options(p)
    p.set_defaults(run=cmd_instrument)

    p = sub.add_parser("profile", help="profile a kernel launch, or a sample directory")
    add_frontend_options(p)
    p.add_argument("--kernel", help="kernel name or name expression (matmul<16>)")
    p.add_argument("--grid", help="X[,Y,Z]")
    p.add_argument("--block", help="X[,Y,Z]")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="n=1024 or in=float32[1024,1024]:random (zeros, ones, arange, "
                        "fill=X, FILE.npy)")
    p.add_argument("--shared-mem", type=int, default=0, help="dynamic shared memory bytes")
    p.add_argument("--size", help="sample size (small/large; default: small on the CPU)")
    p.add_argument("--backend", default="auto", choices=("auto", "gpu", "cpu"))
    p.add_argument("--json", action="store_true", help="print JSON (schema gmprof.report/1)")
    p.add_argument("--csv", metavar="FILE", help="also write CSV")
    p.add_argument("--out", metavar="FILE.html", help="also write an HTML report with heat maps")
    p.add_argument("--compare-native", action="store_true",
                   help="time native and instrumented runs (median of --repeat)")
    p.add_argument("--repeat", type=int, default=0, help="timed repetitions")
    p.add_argument("--seed", type=int, default=0)
    _mode_options(p)
    p.set_defaults(run=cmd_profile)

    p = sub.add_parser("compare", help="the paper's modes and sampling side by side")
    add_frontend_options(p)
    p.add_argument("--kernel", required=True)
    p.add_argument("--grid", required=True)
    p.add_argument("--block", required=True)
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC")
    p.add_argument("--shared-mem", type=int, default=0)
    p.add_argument("--sampling", default="0.1,0.01,0.001", help="rates, comma separated")
    p.add_argument("--sampler", default="rng", choices=("rng", "paper"))
    p.add_argument("--threshold", type=int, default=255)
    p.add_argument("--profile", default="both", choices=("shm", "dm", "both"))
    p.add_argument("--backend", default="auto", choices=("auto", "gpu", "cpu"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=cmd_compare)

    try:
        from .bench import register as register_bench
    except ImportError:
        return
    register_bench(sub)
