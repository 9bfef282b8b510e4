"""`gmprof compare`: the paper's modes and sampling side by side on one launch, with each
sampled count's 95% interval checked against the exact count (argument parsing and output only;
the other subcommands are cli_commands.py)."""
from __future__ import annotations

import numpy as np

from .report.accuracy import accuracy_loss
from . import options as O
from .cli_commands import (_add_frontend_options as add_frontend_options, _check_options,
                           _console, _failed_checks, _named_args, _timeout)

PAPER_MODES = ("basic", "SA", "SA-NA", "SA-NA-SM", "SA-NA-SM-TH", "default")



def cmd_compare(args) -> int:
    from rich.text import Text

    from .api import profiler
    from .argspec import parse_dim3
    from .frontend.program import parse_define_option
    from .mode import Mode

    grid, block = parse_dim3(args.grid, "grid"), parse_dim3(args.block, "block")
    rates = args.sampling
    defines = dict(parse_define_option(d) for d in args.defines)
    prof = profiler(args.file, defines, args.include_dirs, args.backend, arch=args.arch)
    facts = prof.kernel_facts(args.kernel)
    params = [getattr(p, "name", None) for p in facts.function.params]
    named = _named_args(args, params, facts.name, np.random.default_rng(args.seed))
    reports = []

    def run(mode):
        fresh = [v.copy() if isinstance(v, np.ndarray) else v for v in
                 (named[p] for p in params)]
        rep = prof.launch(args.kernel, grid, block, fresh, args.shared_mem, mode=mode,
                          repeat=args.repeat, timeout=_timeout(args))
        reports.append(rep)
        return rep

    reference = run(Mode.parse("basic", profile=args.profile))
    rows_ = [("basic (exact reference)", reference, 0.0)]
    for name in PAPER_MODES[1:]:
        th = args.threshold if name.endswith("TH") else None
        mode = Mode.parse(name, threshold=th, profile=args.profile)
        rep = run(mode)
        rows_.append((mode.name, rep, accuracy_loss(rep, reference)))
    for rate in rates:
        mode = Mode.parse("basic-SM", sampling=rate, sampler=args.sampler, profile=args.profile,
                          sampling_seed=args.sampling_seed)
        rep = run(mode)
        rows_.append((mode.name, rep, accuracy_loss(rep, reference)))
    from .report.coverage import coverage_text, exact_values, interval_checks
    from .report.tables import NUM, WORD, Col, print_table

    exact = exact_values(reference)
    checks = {name: interval_checks(rep, exact) for name, rep, _ in rows_
              if rep.run.mode and "sampling" in rep.run.mode}

    timed = args.repeat > 1  # a time measured once is noise: shown only as a median
    cols = [Col("mode", WORD)] + ([Col("native", NUM), Col("instrumented", NUM),
                                   Col("overhead", NUM)] if timed else []) + \
        [Col("accuracy loss", NUM), Col("in 95% interval", WORD), Col("counters in", WORD)]
    rows = []
    for name, rep, loss in rows_:
        r = rep.run
        times = [f"{r.native_ms:.3f} ms", f"{r.instrumented_ms:.3f} ms",
                 f"{r.overhead:.2f}x" if r.overhead is not None else "-"] if timed else []
        inside = coverage_text(checks[name]) if name in checks else "-"
        rows.append([name, *times, f"{loss:.2%}", inside, r.counters_in])
    console = _console()
    title = f"{args.kernel} on {prof.backend.device} ({prof.backend.name})"
    if timed:
        title += f", times the median of {args.repeat} runs"
    print_table(console, title, cols, rows)
    console.print(Text("accuracy loss: the mean relative error of the per-element counts against "
                       "basic mode's exact ones, |count - exact| / exact averaged over the "
                       "elements basic counted and then over arrays (the paper's 6.2; 0% is "
                       "exact)"))
    console.print(Text("in 95% interval: the sampled arrays whose exact access count (basic "
                       "mode's) lies inside the interval the report gives it (docs/report.md)"))
    _interval_table(console, checks)
    if not timed:
        console.print(Text("times not shown: measured once (--repeat N, N > 1, for medians)"))
    elif prof.backend.name == "cpu":
        console.print(Text("times are CPU-emulated: they do not predict GPU overheads"))
    return _failed_checks(reports, args)


def _interval_table(console, checks: dict) -> None:
    """compare: each sampled array's accesses beside its interval and the exact count."""
    from rich.text import Text

    from .report.coverage import coverage_text
    from .report.tables import NUM, WORD, Col, print_table

    cols = [Col("mode", WORD), Col("array", WORD), Col("exact", NUM), Col("estimate", NUM),
            Col("95% interval", WORD), Col("inside", WORD)]
    rows = [[name, r["array"], f"{r['exact']:,}", f"{r['estimate']:,.0f}",
             f"{r['low']:,.0f} .. {r['high']:,.0f}", "yes" if r["covered"] else "NO"]
            for name, rs in checks.items() for r in rs if r["count"] == "accesses"]
    if rows:
        print_table(console, "sampled accesses against the exact counts", cols, rows)
        every = [r for rs in checks.values() for r in rs]
        console.print(Text(f"coverage: arrays' accesses {coverage_text(every)}; every "
                           f"sampled count (accesses, reads, writes, max per element) "
                           f"{coverage_text(every, None)}"))


def register(sub) -> None:
    p = sub.add_parser("compare", help="the paper's modes and sampling side by side")
    add_frontend_options(p)
    p.add_argument("--kernel", required=True,
                   help="kernel name or name expression (matmul<16>)")
    p.add_argument("--grid", required=True, help="X[,Y,Z]")
    p.add_argument("--block", required=True, help="X[,Y,Z]")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                   help="as for profile: n=1024 or in=float32[1024,1024]:random")
    p.add_argument("--shared-mem", type=O.cli_type(O.count, "--shared-mem"), default=0,
                   help="dynamic shared memory bytes")
    p.add_argument("--sampling", type=O.cli_type(O.rate_list, "--sampling"),
                   default=[0.1, 0.01, 0.001], help="rates in (0, 1], comma separated")
    p.add_argument("--sampler", default="rng", choices=("rng", "paper"),
                   help="how sampling picks accesses (rng or the paper's scheme)")
    p.add_argument("--sampling-seed", type=O.cli_type(O.count, "--sampling-seed"), default=0,
                   metavar="N", help="the sampler's seed (default 0)")
    p.add_argument("--threshold", type=O.cli_type(O.count, "--threshold", minimum=1,
                                                  maximum=2 ** 32 - 1), default=255,
                   help="the TH modes' saturation threshold")
    p.add_argument("--profile", default="both", choices=("shm", "dm", "both"),
                   help="profile shared memory, device memory, or both")
    p.add_argument("--backend", default="auto", choices=("auto", "gpu", "cpu"),
                   help="where kernels run (auto: the GPU if CuPy sees one, else the CPU backend)")
    p.add_argument("--repeat", type=O.cli_type(O.count, "--repeat"), default=5,
                   help="timed runs per mode (medians reported)")
    p.add_argument("--seed", type=O.cli_type(O.count, "--seed"), default=0,
                   help="seed of the random inputs (--arg ...:random, a sample's arrays)")
    _check_options(p)
    p.set_defaults(run=cmd_compare)
