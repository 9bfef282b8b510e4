"""The subcommands parse, analyze, instrument and profile (argument parsing and
output only; `bench` is gmprof/bench.py, the entry point gmprof/cli.py).

Every option's range is checked by gmprof.options (a bad value is argparse's usage error, status
2), every output file goes through gmprof.outputs (checked before the run, written whole, all
or none, never over an input), and a report whose checks failed (outputs that differ, accesses
out of range) prints them as errors and exits with --error-exitcode (1).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from . import options as O, timing
from .errors import EXIT_CHECK_FAILED, GmprofError, OptionError
from .mode import WARPS_BLOCKS
from .passes.pipeline import ANALYSIS_STAGES, STAGES, Pipeline
from .passes.tallies import TALLIES, WarpRequests, check as tally_check
from .runtime.launch_input import missing_kernel
from .selection import LaunchSelection
from .streams import program_output_to_stderr


def _add_frontend_options(p) -> None:
    p.add_argument("file", help="CUDA source file (.cu)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a macro, as for nvcc")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add a directory to the search path for #include \"...\"")
    p.add_argument("--arch", metavar="sm_XY",
                   help="read device code as nvcc's device pass for this GPU architecture "
                        "(__CUDA_ARCH__; default: the profiled GPU's, else sm_90)")


def _pipeline(args) -> Pipeline:
    return Pipeline(dump_after=getattr(args, "dump_after", None))


def load_tu(args, pipeline: Pipeline | None = None):
    from .frontend.program import parse_define_option

    defines = dict(parse_define_option(d) for d in args.defines)
    return (pipeline or Pipeline()).load(args.file, defines=defines,
                                         include_dirs=args.include_dirs, arch=args.arch)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _print_warnings(warnings) -> None:
    for w in warnings:
        print(w.render(), file=sys.stderr)


def cmd_parse(args) -> int:
    from .report.inventory import inventory, render_text

    pipeline = Pipeline()
    tu = load_tu(args, pipeline)
    program = pipeline.analyze(tu, upto="accesses")
    data = inventory(tu, program)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        render_text(data, _console())
        _print_warnings(tu.warnings)
    return 0


def cmd_analyze(args) -> int:
    from .report.analysis import analysis, render_text

    pipeline = _pipeline(args)
    tu = load_tu(args, pipeline)
    program = pipeline.analyze(tu)
    if args.kernel is not None and args.kernel not in program.kernels:
        raise missing_kernel(tu, args.kernel)
    data = analysis(program, args.kernel)
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        render_text(data, _console(), verbose=args.verbose)
        _print_warnings(tu.warnings)
    return 0


def _mode_options(p) -> None:
    p.add_argument("--mode", default="default",
                   help="default (SA+SM, exact), basic, trace, or SA/NA/SM/TH joined by '-' "
                        "(the paper's names, e.g. SA-NA-SM-TH)")
    p.add_argument("--profile", default="both", choices=("shm", "dm", "both"),
                   help="profile shared memory, device memory, or both")
    p.add_argument("--threshold", type=O.cli_type(O.count, "--threshold", minimum=1,
                                                  maximum=2 ** 32 - 1),
                   help="saturate counters at N (TH)")
    p.add_argument("--counter-bits", type=int, default=32, choices=(8, 16, 32, 64),
                   help="counter width in bits (narrow counters saturate: their counts are "
                        "labelled >=)")
    p.add_argument("--enhanced", action="store_true",
                   help="live-range statistics for shared arrays (Algorithm 2)")
    for t in TALLIES:  # the counter families' options (passes/tallies.py)
        p.add_argument(t.option, action="store_true", dest=t.dest, help=t.help)
    # (separate flags: `--access-stats[=exact]` would take a sample's directory as its value)
    p.add_argument("--access-stats-exact", action="store_true",
                   help="--access-stats measured in every block (default: a grid of more "
                        "than twice --access-stats-blocks blocks measures 1 block in 2^s, "
                        "labelled sampled with its rate and 95%% interval)")
    p.add_argument("--access-stats-blocks", type=O.cli_type(O.count, "--access-stats-blocks",
                                                            minimum=1),
                   default=WARPS_BLOCKS, metavar="N",
                   help="--access-stats on a large grid: the fewest blocks to measure (the "
                        f"rate: the smallest 1/2^s that keeps N; default {WARPS_BLOCKS})")
    p.add_argument("--sampling", type=O.cli_type(O.rate, "--sampling"), metavar="RATE",
                   help="count a sample of accesses (a rate in (0, 1])")
    p.add_argument("--sampler", default="rng", choices=("rng", "paper"),
                   help="how --sampling picks accesses: a random draw per access (rng) or the "
                        "paper's counter-based scheme (paper)")
    p.add_argument("--sampling-seed", type=O.cli_type(O.count, "--sampling-seed"), default=0,
                   metavar="N", help="the sampler's seed (another seed keeps other accesses; "
                                     "default 0)")


def _check_options(p) -> None:
    """--timeout and --error-exitcode, for the commands that launch kernels."""
    p.add_argument("--timeout", type=O.cli_type(O.seconds, "--timeout"), metavar="SECONDS",
                   help="stop a launch that runs longer (default: 120 s on the CPU backend, "
                        "none on a GPU; 0: no limit)")
    p.add_argument("--error-exitcode", type=O.cli_type(O.count, "--error-exitcode",
                                                       maximum=255),
                   default=EXIT_CHECK_FAILED, metavar="N",
                   help="exit status when a check fails (outputs differ, an access out of "
                        "range, a kernel fault or timeout); 0 reports and exits 0 (default 1)")


def _mode(args):
    from .mode import Mode

    try:
        mode = Mode.parse(args.mode, threshold=args.threshold, counter_bits=args.counter_bits,
                          enhanced=args.enhanced, sampling=args.sampling, sampler=args.sampler,
                          sampling_seed=getattr(args, "sampling_seed", 0),
                          profile=args.profile,
                          warps=getattr(args, "access_stats", False) or
                          getattr(args, "access_stats_exact", False),
                          warps_blocks=0 if getattr(args, "access_stats_exact", False) else
                          getattr(args, "access_stats_blocks", WARPS_BLOCKS),
                          tallies=[t.name for t in TALLIES if getattr(args, t.dest, False)
                                   and not isinstance(t, WarpRequests)])
    except GmprofError as e:
        raise OptionError(e.message) from None
    why = tally_check(mode)
    if why:
        raise OptionError(why)
    return mode


def _timeout(args):
    t = getattr(args, "timeout", None)
    return None if t is None else t


def _failed_checks(reports, args) -> int:
    """Print the failed checks and warnings of the reports; the exit status."""
    failed = False
    shown = set()
    for report in reports:
        for w in report.warnings:
            text = w.render()
            if text not in shown:
                shown.add(text)
                print(text, file=sys.stderr)
            failed |= getattr(w, "failed_check", False)
    return args.error_exitcode if failed else 0


# -- instrument ---------------------------------------------------------------------------

def cmd_instrument(args) -> int:
    from .outputs import Outputs, source_inputs
    from .passes.targets import NVCC, NVRTC
    from .report.plan_json import plan_json

    # the output names are checked before any work; the inputs (the source and every header it
    # includes) are known once it is read, and checked again then
    outs = Outputs(inputs=[args.file])
    out = outs.reserve(args.output, "-o", allow_stdout=False, regular_only=True)
    side = outs.reserve(str(args.output) + ".json", "-o (its sidecar)", allow_stdout=False,
                        regular_only=True)
    mode = _mode(args)
    pipeline = _pipeline(args)
    tu = load_tu(args, pipeline)
    outs = Outputs(inputs=source_inputs(tu, [args.file]))
    out = outs.reserve(args.output, "-o", allow_stdout=False, regular_only=True)
    side = outs.reserve(str(args.output) + ".json", "-o (its sidecar)", allow_stdout=False,
                        regular_only=True)
    program = pipeline.analyze(tu)
    if args.kernel and args.kernel not in program.kernels:
        raise missing_kernel(tu, args.kernel)
    plan = pipeline.plan(program, mode)
    text, done = pipeline.instrumented_source(program, plan,
                                              NVRTC if args.device_only else NVCC)
    sidecar = plan_json(plan, done.defines, args.output)
    outs.put(out, text)
    outs.put(side, json.dumps(sidecar, indent=2, default=str))
    outs.commit()  # both or neither
    for w in tu.warnings:
        print(w.render(), file=sys.stderr)
    n_hooks = sum(1 for sp in plan.sites.values() if sp.strategy in ("hook", "lr_start"))
    n_static = sum(1 for sp in plan.sites.values() if sp.strategy == "static")
    print(f"wrote {args.output} ({plan.mode.name}: {n_hooks} counted sites, {n_static} static) "
          f"and {args.output}.json", file=sys.stderr)
    return 0


# -- profile ------------------------------------------------------------------------------

def _reserve_reports(args, inputs):
    """The report outputs (--json, --csv, --out, -o), checked before the run (cli_outputs)."""
    from .cli_outputs import reserve_reports

    return reserve_reports(args, inputs, "--out")


def _document_on_stdout(files) -> bool:
    from .cli_outputs import document_on_stdout

    return document_on_stdout(files)


def _emit_reports(reports, args, outs, files, sample=None, tu=None) -> None:
    """One document for the run: every kernel in the JSON, the CSV and the HTML; the tables
    (or --print-summary's) on the terminal unless standard output carries one of those."""
    from .cli_outputs import put_documents
    from .report import terminal
    from .report.document import document
    from .report.source import attach_source

    if tu is not None:
        for report in reports:
            attach_source(report, tu)
    doc = document(reports, command=getattr(args, "argv", None), sample=sample)
    draw = lambda d, c: terminal.render(d, c, source=getattr(args, "source", False))  # noqa
    if getattr(args, "advice", False):  # the tables show it; `advise` prints only it
        from .cli_advise import add_advice, render

        add_advice(doc)
        if getattr(args, "advice_only", False):
            draw = render
    put_documents(doc, args, outs, files, _console(), draw,
                  reports=reports)  # reports: the page draws every element


def _arg_files(specs) -> list[str]:
    """The .npy files named by --arg (inputs: never overwritten by an output)."""
    out = []
    for spec in specs:
        value = spec.partition("=")[2].strip()
        tail = value.rsplit(":", 1)[-1] if ":" in value else value
        if tail.endswith(".npy"):
            out.append(tail)
    return out


def _named_args(args, params, kernel, rng):
    from .argspec import parse_arg

    named = {}
    for spec in args.arg:
        name, value = parse_arg(spec, rng)
        if name in named:
            raise OptionError(f"--arg {spec!r}: {name} is given twice")
        named[name] = value
    missing = [p for p in params if p not in named]
    extra = [n for n in named if n not in params]
    if missing or extra:
        raise OptionError(f"{kernel} takes ({', '.join(str(p) for p in params)}); "
                          + (f"missing --arg for {', '.join(map(str, missing))}" if missing
                             else f"no parameter named {', '.join(extra)}"))
    return named


def cmd_profile(args) -> int:
    mode = _mode(args)
    if getattr(args, "advice", False) and (not mode.exact or mode.trace):
        raise OptionError(f"--advice needs exact counts: not --mode {mode.name}")
    target = Path(args.file)
    if not target.exists():
        # `samples/NAME` from any directory: the samples gmprof ships
        from ._paths import samples_dir

        shipped = samples_dir() / target.name
        if target.parent.name == "samples" and len(target.parts) == 2 and shipped.is_dir():
            target = shipped
        else:
            from .errors import InputError

            raise InputError(f"{args.file}: no such file or sample directory")
    if target.is_dir():
        return _profile_sample(args, target, mode)
    if args.launch_skip or args.launch_count is not None:
        raise OptionError("-s/--launch-skip and -c/--launch-count select among a sample's "
                          "launches; a .cu file is profiled for the one launch described by "
                          "--kernel, --grid and --block")
    if not args.kernel or not args.grid or not args.block:
        raise OptionError("profiling a .cu file needs --kernel, --grid and --block "
                          "(or give a sample directory, e.g. samples/matmul_tiled)")
    from .api import profiler
    from .argspec import parse_dim3
    from .driver import Launch
    from .frontend.program import parse_define_option
    from .progress import RunProgress, cpu_warning

    grid, block = parse_dim3(args.grid, "grid"), parse_dim3(args.block, "block")
    outs, files = _reserve_reports(args, [args.file] + _arg_files(args.arg))
    defines = dict(parse_define_option(d) for d in args.defines)
    prof = profiler(args.file, defines, args.include_dirs, args.backend, arch=args.arch)
    outs, files = _reserve_reports(args, [str(f.path) for f in prof.tu.files if f.path] +
                                   _arg_files(args.arg))
    facts = prof.kernel_facts(args.kernel)
    params = [getattr(p, "name", None) for p in facts.function.params]
    named = _named_args(args, params, facts.name, np.random.default_rng(args.seed))
    launch = Launch(args.kernel, grid, block, ())
    warning = cpu_warning([launch], prof.backend.name, args.kernel)
    if warning:
        print(warning, file=sys.stderr)
    with RunProgress([launch], label=args.kernel) as progress, \
            program_output_to_stderr(_document_on_stdout(files)):
        progress.on_launch(0, launch, False)
        fresh = [v.copy() if isinstance(v, np.ndarray) else v for v in
                 (named[p] for p in params)] if getattr(args, "advice", False) else None
        report = prof.launch(args.kernel, grid, block, [named[p] for p in params],
                             args.shared_mem, mode=mode,
                             repeat=args.repeat if args.compare_native or args.repeat else 0,
                             timeout=_timeout(args))
        if fresh is not None:  # advice: the same launch again, traced (cli_advise.py)
            from . import cli_advise

            cli_advise.attach_evidence([report], [prof.launch(
                args.kernel, grid, block, fresh, args.shared_mem,
                mode=cli_advise.trace_mode(args), timeout=_timeout(args))])
    _emit_reports([report], args, outs, files, tu=prof.tu)
    outs.commit()
    return _failed_checks([report], args)


def _selected(launches, select):
    """The launches `select` would profile (a copy of it is consumed), for the progress
    estimate and the CPU warning; the others run natively and cost little."""
    import copy

    probe = copy.copy(select)
    return [launch for launch in launches if launch.profile and probe.take(launch.kernel)]


def _profile_sample(args, directory: Path, mode) -> int:
    from .driver import load_sample
    from .progress import RunProgress, cpu_warning
    from .runtime.backend import get_backend
    from .runtime.samples import run_sample, sample_profiler

    inputs = [str(p) for p in directory.iterdir() if p.is_file()]
    outs, files = _reserve_reports(args, inputs)
    backend = get_backend(args.backend)
    size = args.size or ("large" if backend.name == "gpu" else "small")
    sample = load_sample(directory)
    sizes = sample.driver.sizes
    launches = list(sample.driver.launches(sizes[size])) if size in sizes else []
    select = LaunchSelection(args.kernel, args.launch_skip, args.launch_count)
    if not select.everything:
        if not any(select.matches(launch.kernel) for launch in launches):
            kernels = ", ".join(dict.fromkeys(launch.kernel for launch in launches))
            raise OptionError(f"-k {args.kernel}: no launch of sample {sample.name} ({size}) "
                              f"runs a kernel of that name (kernels: {kernels})")
        matching = sum(1 for launch in launches if launch.profile and
                       select.matches(launch.kernel))
        launches = _selected(launches, select)
        if not launches:
            raise OptionError(f"{select.describe()}: no launch of sample {sample.name} "
                              f"({size}) is selected (it makes {matching} matching launches)")
    warning = cpu_warning(launches, backend.name, f"sample {sample.name} ({size})")
    if warning:
        print(warning, file=sys.stderr)
    with RunProgress(launches, label=f"{sample.name} ({size})") as progress, \
            program_output_to_stderr(_document_on_stdout(files)):
        progress.phase("reading the source")
        prof = sample_profiler(sample, backend.name)
        run = run_sample(sample, size, mode=mode, backend=backend.name,
                         repeat=args.repeat if args.compare_native or args.repeat else 0,
                         seed=args.seed, profiler=prof, on_launch=progress.on_launch,
                         select=None if select.everything else select,
                         check=getattr(args, "self_check", True))
        if getattr(args, "advice", False):  # the same launches again, traced (cli_advise.py)
            from . import cli_advise

            traced = run_sample(sample, size, mode=cli_advise.trace_mode(args),
                                backend=backend.name, seed=args.seed, profiler=prof,
                                check=False, select=None if select.everything else
                                LaunchSelection(args.kernel, args.launch_skip,
                                                args.launch_count))
            cli_advise.attach_evidence(list(run.reports.values()),
                                       list(traced.reports.values()))
    with timing.phase("report"):
        _emit_reports(list(run.reports.values()), args, outs, files,
                      sample={"name": run.sample.name, "size": size,
                              "self_check": ("passed" if run.ok else "failed") if run.checked
                              else "skipped",
                              "error": run.check_error}, tu=prof.tu)
        outs.commit()
    status = ("passed" if run.ok else f"FAILED: {run.check_error}") if run.checked \
        else "skipped (--no-self-check)"
    print(f"sample {run.sample.name} ({size}, {backend.name}): self-check {status}",
          file=sys.stderr)
    checks = _failed_checks(list(run.reports.values()), args)
    return checks or (0 if run.ok else args.error_exitcode)


def _dump_option(p, stages) -> None:
    p.add_argument("--dump-after", choices=stages, metavar="PASS",
                   help="print the program after this pass to standard error (passes: "
                        f"{', '.join(stages)})")


def register(sub) -> None:
    from .cli_outputs import add_output_options

    add_frontend_options = _add_frontend_options
    p = sub.add_parser("parse", help="list device functions, memory objects and access sites")
    add_frontend_options(p)
    p.add_argument("--json", action="store_true", help="print JSON (schema gmprof.parse/1)")
    p.set_defaults(run=cmd_parse)

    p = sub.add_parser("analyze", help="classify every access site (static, tid-invariant, "
                                       "warp-uniform, loop-invariant) with reasons")
    add_frontend_options(p)
    p.add_argument("--kernel", help="only this kernel")
    p.add_argument("--json", action="store_true", help="print JSON (schema gmprof.analyze/1)")
    p.add_argument("-v", "--verbose", action="store_true", help="also say why classes fail")
    _dump_option(p, ANALYSIS_STAGES)
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("instrument", help="write instrumented CUDA and a JSON sidecar")
    add_frontend_options(p)
    p.add_argument("-o", "--output", required=True, help="instrumented .cu to write")
    p.add_argument("--kernel", help="check that this kernel exists")
    p.add_argument("--device-only", action="store_true",
                   help="drop host code (for NVRTC); by default host code is kept for nvcc")
    _mode_options(p)
    _dump_option(p, STAGES)
    p.set_defaults(run=cmd_instrument)

    p = sub.add_parser("profile", help="profile a kernel launch, or a sample directory")
    add_frontend_options(p)
    p.add_argument("-k", "--kernel-name", "--kernel", dest="kernel", metavar="KERNEL",
                   help="the kernel to launch (a .cu file: name or name expression, "
                        "matmul<16>); for a sample, profile only this kernel's launches "
                        "(also regex:PATTERN), as in Nsight Compute")
    p.add_argument("-s", "--launch-skip", type=O.cli_type(O.count, "--launch-skip"), default=0,
                   metavar="N", help="a sample's matching launches to run unprofiled first")
    p.add_argument("-c", "--launch-count", type=O.cli_type(O.count, "--launch-count"),
                   default=None, metavar="N",
                   help="profile at most N of a sample's matching launches")
    p.add_argument("--grid", help="X[,Y,Z]")
    p.add_argument("--block", help="X[,Y,Z]")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="n=1024 or in=float32[1024,1024]:random (zeros, ones, arange, "
                        "fill=X, FILE.npy)")
    p.add_argument("--shared-mem", type=O.cli_type(O.count, "--shared-mem"), default=0,
                   help="dynamic shared memory bytes")
    p.add_argument("--size", help="sample size (small/large; default: small on the CPU)")
    p.add_argument("--backend", default="auto", choices=("auto", "gpu", "cpu"),
                   help="where kernels run (auto: the GPU if CuPy sees one, else the CPU backend)")
    p.add_argument("--json", action="store_true",
                   help="print the run as one JSON document (schema gmprof.run/2: every kernel "
                        "and launch) instead of tables")
    add_output_options(p)
    p.add_argument("--out", metavar="FILE.html",
                   help="also write one self-contained HTML page for the run (every kernel, "
                        "heat maps, source view; - for standard output)")
    p.add_argument("--source", action="store_true",
                   help="also print each kernel's source lines with the reads, writes and "
                        "executions of the accesses on each line")
    p.add_argument("--compare-native", action="store_true",
                   help="time native and instrumented runs (median of --repeat)")
    p.add_argument("--repeat", type=O.cli_type(O.count, "--repeat"), default=0,
                   help="timed repetitions")
    p.add_argument("--seed", type=O.cli_type(O.count, "--seed"), default=0,
                   help="seed of the random inputs (--arg ...:random, a sample's arrays)")
    p.add_argument("--no-self-check", dest="self_check", action="store_false",
                   help="a sample: skip its own check against its numpy reference (seconds "
                        "of host time at the large size; the native and instrumented "
                        "outputs are still compared)")
    _mode_options(p)
    _check_options(p)
    p.set_defaults(run=cmd_profile)

