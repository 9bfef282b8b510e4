"""`gmprof advise` and `gmprof profile --advice`: the run's counts turned into ranked changes
(gmprof/report/advice.py), with the evidence of who shares what from a second run of the same
launches in trace mode (gmprof/runtime/sharing.py). Argument parsing and output only.

`advise` takes `profile`'s arguments (a sample directory, at its small size unless --size says
otherwise, or a .cu file with --kernel, --grid, --block and --arg), profiles with
--access-stats and --enhanced (the wavefronts, sectors and
live ranges the advice reads), runs the launches again in trace mode, and prints the advice
(--json: the run document with each kernel's `advice`; -o/--out as for profile).
"""
from __future__ import annotations

from .errors import OptionError


def register(sub) -> None:
    profile = sub.choices["profile"]
    p = sub.add_parser("advise", parents=[profile], add_help=False, conflict_handler="resolve",
                       help="profile, then rank the changes the counts call for (stage in "
                            "shared memory, __constant__, registers, padding, unused shared "
                            "memory, coalescing), each with its predicted traffic")
    # advise is profile with advice (the profile command's function, from its parser: this
    # module is imported by cli_commands, not the other way)
    p.set_defaults(run=cmd_advise, advice=True, advice_only=True,
                   profile_run=profile.get_default("run"))
    profile.add_argument("--advice", action="store_true",
                         help="also rank the changes the counts call for (gmprof advise), "
                              "from a second run of the launches in trace mode")


def cmd_advise(args) -> int:
    from .errors import GmprofError
    from .mode import Mode

    try:
        mode = Mode.parse(args.mode, threshold=args.threshold, counter_bits=args.counter_bits,
                          sampling=args.sampling, profile=args.profile)
    except GmprofError as e:
        raise OptionError(e.message) from None
    if not mode.exact or mode.counter_bits < 32 or mode.trace:
        raise OptionError(f"advise needs exact counts: not --mode {args.mode}"
                          + (f" with --counter-bits {args.counter_bits}"
                             if mode.counter_bits < 32 else "")
                          + ", --sampling or --threshold")
    # the trace run records every access (up to 4M a launch): a sample's small size, unless
    # another is asked for, on a GPU too
    args.size = args.size or "small"
    args.access_stats = True
    args.enhanced = True
    return args.profile_run(args)


def trace_mode(args):
    from .mode import Mode

    return Mode.parse("trace", profile=getattr(args, "profile", "both"))


def attach_evidence(reports, traced) -> None:
    """Each array's sharing evidence from the trace run's reports (same kernels, same
    launches); shared arrays also get their untouched words (the trace run counts every
    access, where an --enhanced run's counts are each word's last live range)."""
    by_kernel = {r.run.kernel: r for r in traced}
    for report in reports:
        other = by_kernel.get(report.run.kernel)
        if other is None:
            continue
        arrays = {a.name: a for a in other.arrays}
        if any(n.startswith("trace overflow") for n in other.notes):
            # a partial trace proves nothing (runtime/decode.py): no sharing evidence
            report.notes.append("advice: the trace run overflowed (more than 4M accesses a "
                                "launch): no staging, register or padding advice; a smaller "
                                "size (--size small) gets them")
            continue
        for a in report.arrays:
            t = arrays.get(a.name)
            if t is None:
                continue
            ev = dict(t.evidence or {})
            if a.space.startswith("shared"):
                ev["untouched"] = t.untouched
            a.evidence = ev or None


def add_advice(doc: dict) -> dict:
    """The document with each kernel's ranked advice (`advice`, a list)."""
    from .report.advice import advise

    found = advise(doc)
    for k in doc["kernels"]:
        k["advice"] = found.get(k["kernel"], [])
    return doc


def render(doc: dict, console) -> None:
    """The advice alone (gmprof advise): per kernel, one numbered paragraph a change."""
    from .report.advice import render_kernel

    for k in doc["kernels"]:
        render_kernel(k, console)


__all__ = ["register", "cmd_advise", "attach_evidence", "add_advice", "render", "trace_mode"]
