"""The subcommand check: profile what an expectations file names and assert bounds on its counts.

    gmprof check EXPECT.toml

Reads the file (gmprof/report/expect_file.py: a located usage error, status 2, for bad TOML, an
unknown key or metric), profiles the sample or the .cu launch its [profile] table names as
`gmprof profile` would (or reads a saved run), builds the run's document (report/document.py)
and evaluates each expectation on it (report/expect.py). Each failed expectation prints as a
located error, `EXPECT.toml:LINE:COL: error: kernel k, array A: reads_per_element is 3,
expected <= 2`, and the status is 1; the run's own failed checks (outputs that differ, an access
out of range, a sample's self-check) fail it too. All passing: one summary line, status 0.
Paths in the file are relative to the file's directory. docs/workflows/assertions.md.
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from .errors import EXIT_CHECK_FAILED, CheckFailed, GmprofError, OptionError


def register(sub) -> None:
    p = sub.add_parser("check", help="profile what an expectations file (.toml) names and "
                                     "check bounds on its counts (exit 1 when one fails)")
    p.add_argument("expect", metavar="EXPECT.toml",
                   help="the expectations: [profile] (what to run) and [array.NAME], "
                        "[site.\"LINE:COL\"], [kernel.NAME] tables of metric = bound "
                        "(docs/workflows/assertions.md)")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"),
                   help="where kernels run, over the file's [profile] backend")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="also write the run to FILE, in the format its extension names "
                        "(.json, .html, .csv), whether the expectations hold or not (refused "
                        "if FILE exists, unless -f)")
    p.add_argument("-f", "--force", action="store_true",
                   help="let -o overwrite an existing file")
    p.set_defaults(run=cmd_check)


def cmd_check(args) -> int:
    from .cli_outputs import put_documents, reserve_reports
    from .report import expect_file
    from .report.expect import evaluate

    f = expect_file.read(args.expect)
    if args.backend:
        f.profile["backend"] = args.backend
    # -o is checked before the run (an input of the run is never overwritten)
    outs, files = reserve_reports(SimpleNamespace(output=args.output, force=args.force),
                                  [args.expect] + _inputs(f))
    doc, scalars, reports = run_profile(f)
    outcomes = evaluate(doc, f.expectations, scalars)  # a bad name: status 2, nothing written
    put_documents(doc, SimpleNamespace(print_summary="none"), outs, files, None,
                  lambda d, c: None, reports=reports)
    outs.commit()
    return report_outcomes(f, doc, outcomes)


def _inputs(f) -> list[str]:
    """The files the run reads (never overwritten by -o)."""
    p, base = f.profile, Path(f.path).parent
    if "sample" in p:
        directory = Path(_path(base, p["sample"]))
        return [str(q) for q in directory.iterdir() if q.is_file()] if directory.is_dir() \
            else []
    from .cli_commands import _arg_files

    specs = [_npy_relative(base, spec) for spec in p.get("args", [])]
    return [_path(base, p.get("file") or p["run"])] + _arg_files(specs)


def report_outcomes(f, doc, outcomes) -> int:
    """Print the failed expectations (located) and the run's failed checks; the status."""
    failed = [o for o in outcomes if not o.passed]
    for o in failed:
        print(CheckFailed(o.message, o.expectation.location).render(), file=sys.stderr)
    for text in doc.get("failed_checks", []):
        print(text, file=sys.stderr)
    kernels = ", ".join(k["kernel"] for k in doc["kernels"])
    what = f"{len(outcomes)} expectation{'s' if len(outcomes) != 1 else ''}"
    if failed:
        print(f"gmprof check: {f.path}: {len(failed)} of {what} failed (kernel {kernels})",
              file=sys.stderr)
    elif doc.get("failed_checks"):
        print(f"gmprof check: {f.path}: {what} passed, but the run's checks failed",
              file=sys.stderr)
    else:
        print(f"gmprof check: {f.path}: {what} passed (kernel {kernels}, "
              f"{doc.get('backend')} backend)")
    return EXIT_CHECK_FAILED if failed or doc.get("failed_checks") else 0


# -- the run ---------------------------------------------------------------------------------

def run_profile(f) -> tuple[dict, dict, list | None]:
    """(the run's document, the scalars a bound's expression may name, its Reports: None for
    a saved run) for the [profile] of an ExpectFile."""
    p = f.profile
    base = Path(f.path).parent
    if "run" in p:
        from .report.document import load

        return load(_path(base, p["run"])), {}, None
    blocks = _located(f, "access_stats_blocks", lambda: _access_stats_blocks(p))
    mode = _located(f, "mode", lambda: _mode(p, f.warps, blocks))
    if "sample" in p:
        return _sample(f, base, mode)
    return _file(f, base, mode)


def _path(base: Path, name: str) -> str:
    path = Path(name)
    return str(path if path.is_absolute() else base / path)


def _located(f, key, fn):
    """fn() with an error about [profile] `key` located where the file gives it."""
    try:
        return fn()
    except GmprofError as e:
        if e.location is not None:
            raise
        raise type(e)(e.message, f.at("profile", key)) from None


def _access_stats_blocks(p) -> int:
    """[profile] access_stats_blocks, as --access-stats-blocks (0: every block measured)."""
    from .mode import WARPS_BLOCKS

    blocks = p.get("access_stats_blocks", WARPS_BLOCKS)
    if blocks < 0:
        raise OptionError(f"[profile] access_stats_blocks {blocks}: expected 0 (every block) "
                          "or more")
    return blocks


def _mode(p, warps: bool, blocks: int):
    from .mode import Mode

    try:
        return Mode.parse(p.get("mode", "default"), threshold=p.get("threshold"),
                          counter_bits=p.get("counter_bits", 32),
                          enhanced=p.get("enhanced", False), sampling=p.get("sampling"),
                          sampler=p.get("sampler", "rng"), profile=p.get("profile", "both"),
                          warps=p.get("access_stats", False) or warps, warps_blocks=blocks)
    except GmprofError as e:
        raise OptionError(e.message) from None


def _backend(f):
    backend = f.profile.get("backend", "auto")
    if backend not in ("auto", "gpu", "cpu"):
        raise OptionError(f"[profile] backend: {backend!r}: use auto, gpu or cpu",
                          f.at("profile", "backend"))
    return backend


def _dim(f, key):
    from .argspec import parse_dim3

    value = f.profile.get(key)
    if value is None:
        raise OptionError(f"[profile]: a .cu file needs {key} (as --{key}: \"X[,Y,Z]\")",
                          f.at("profile"))
    text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
    try:
        return parse_dim3(text, key)
    except OptionError as e:  # its message names the option --grid: here a key of [profile]
        raise OptionError(f"[profile] {e.message.lstrip('-')}", f.at("profile", key)) from None


def _file(f, base: Path, mode):
    import numpy as np

    from .api import profiler
    from .cli_commands import _named_args
    from .frontend.program import parse_define_option
    from .report.document import document

    p = f.profile
    if "kernel" not in p:
        raise OptionError("[profile]: a .cu file needs kernel (its name, or a name expression "
                          "such as matmul<16>)", f.at("profile", "file"))
    grid, block = _dim(f, "grid"), _dim(f, "block")
    defines = _located(f, "defines", lambda: dict(parse_define_option(d)
                                                  for d in p.get("defines", [])))
    prof = _located(f, "file", lambda: profiler(
        _path(base, p["file"]), defines, [_path(base, d) for d in p.get("include_dirs", [])],
        _backend(f), p.get("arch")))
    facts = _located(f, "kernel", lambda: prof.kernel_facts(p["kernel"]))
    params = [getattr(q, "name", None) for q in facts.function.params]
    specs = [_npy_relative(base, s) for s in p.get("args", [])]
    rng = np.random.default_rng(p.get("seed", 0))
    named = _located(f, "args", lambda: _named_args(SimpleNamespace(arg=specs), params,
                                                    facts.name, rng))
    report = _located(f, "args", lambda: prof.launch(
        p["kernel"], grid, block, [named[q] for q in params], p.get("shared_mem", 0),
        mode=mode, timeout=p.get("timeout")))
    scalars = {k: v.item() if hasattr(v, "item") else v for k, v in named.items()
               if not hasattr(v, "shape") or v.shape == ()}
    return document([report]), scalars, [report]


def _npy_relative(base: Path, spec: str) -> str:
    """An --arg spec whose .npy file is relative to the expectations file's directory."""
    name, eq, value = spec.partition("=")
    tail = value.strip()
    if eq and tail.endswith(".npy") and ":" not in tail and not Path(tail).is_absolute():
        return f"{name}={base / tail}"
    return spec


def _sample(f, base: Path, mode):
    from .driver import load_sample
    from .report.document import document
    from .runtime.samples import run_sample, sample_profiler
    from .selection import LaunchSelection

    p = f.profile
    directory = Path(_path(base, p["sample"]))
    if not directory.is_dir():
        from ._paths import samples_dir

        shipped = samples_dir() / Path(p["sample"]).name
        if Path(p["sample"]).parent.name == "samples" and shipped.is_dir():
            directory = shipped  # samples/NAME: the samples gmprof ships
    sample = _located(f, "sample", lambda: load_sample(directory))
    backend = _backend(f)
    size = p.get("size", "small")
    select = LaunchSelection(p.get("kernel"), 0, None)
    prof = sample_profiler(sample, backend)
    run = _located(f, "size", lambda: run_sample(
        sample, size, mode=mode, backend=backend, seed=p.get("seed", 0), profiler=prof,
        select=None if select.everything else select))
    if not run.reports:
        raise OptionError(f"[profile]: sample {sample.name} ({size}) profiled no launch of "
                          f"kernel {p.get('kernel')!r}", f.at("profile", "kernel"))
    reports = list(run.reports.values())
    doc = document(reports, sample={"name": sample.name, "size": size,
                           "self_check": "passed" if run.ok else "failed",
                           "error": run.check_error})
    return doc, dict(sample.driver.sizes.get(size, {})), reports
