"""`gmprof bench`: the paper's evaluation (section 6 and 7) on today's GPU, next to our default.

Runs the samples standing for the paper's six applications and its three case studies, and
writes markdown tables and raw JSON (device, driver, date, sizes, repetitions) to --out DIR, or
by default to a new directory gmprof-bench-<UTC date and time> in the current directory, so that
a run never replaces results it was not told to (docs/results/ holds the committed H100 tables:
`--out docs/results` replaces them):
  Table 1  shared-memory profiling: native, basic, SA, SA-NA, SA-NA-SM, SA-NA-SM-TH, default
  Table 2  device-memory profiling: native, basic, SA, SA-NA, default
  Fig. 3/4 sampling at 1/10, 1/100, 1/1000 (the paper's sampler and ours) against the optimised
           modes and the default: overhead and accuracy loss (|count - exact| / exact, averaged
           over elements, then arrays)
  Tables 3-5 per-array average counts of em, bo and jcb, v1 and v2, with and without threshold and
           the enhanced algorithm; the measured v1 -> v2 speedup
  space    counter bytes per mode
Overhead is the paper's: instrumented time / native time - 1, medians of repeated runs (events),
summed over a sample's profiled launches. Progress is printed as it goes.
"""
from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._paths import samples_dir
from .errors import InputError, OptionError
from .mode import Mode
from .report.accuracy import accuracy_loss

SIX = [("co", "co"), ("em", "em_v1"), ("bo", "bo_v2"), ("jcb", "jcb_v1"), ("spmv", "spmv"),
       ("dxtc", "dxtc")]
CASES = [("em", "em_v1", "em_v2"), ("bo", "bo_v1", "bo_v2"), ("jcb", "jcb_v1", "jcb_v2")]
TABLE1 = ["basic", "SA", "SA-NA", "SA-NA-SM", "SA-NA-SM-TH", "default"]
TABLE2 = ["basic", "SA", "SA-NA", "default"]
RATES = [0.1, 0.01, 0.001]


def _progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _accuracy_loss(reports, reference) -> float:
    losses = [accuracy_loss(reports[k], reference[k]) for k in reference if k in reports]
    return float(np.mean(losses)) if losses else 0.0


class Bench:
    def __init__(self, samples_dir: Path, size: str, repeat: int, backend: str,
                 max_launches: int | None):
        self.samples_dir = samples_dir
        self.size = size
        self.repeat = repeat
        self.backend = backend
        self.max_launches = max_launches
        self._profilers: dict = {}
        self._checked: set = set()
        self._arrays: dict = {}  # sample -> its inputs at this size (seed 0), made once

    def profiler(self, name):
        from .runtime.samples import sample_profiler
        from .driver import load_sample

        if name not in self._profilers:
            self._profilers[name] = sample_profiler(load_sample(self.samples_dir / name),
                                                    self.backend)
        return self._profilers[name]

    def run(self, name, mode: Mode | None):
        from .driver import load_sample
        from .runtime.samples import run_sample

        prof = self.profiler(name)
        t0 = time.perf_counter()
        # the numpy reference of a large size can take a minute: check it on a sample's first
        # run; every run still compares its outputs with the uninstrumented kernel's, bit for bit
        check = name not in self._checked
        self._checked.add(name)
        if name not in self._arrays:
            # a large sample's inputs take seconds to make (co: 138M random floats): once a
            # sample, not once a mode; each run gets its own copy (the same seed's arrays)
            drv = load_sample(self.samples_dir / name).driver
            self._arrays[name] = drv.arrays(drv.sizes[self.size], np.random.default_rng(0)) \
                if self.size in drv.sizes else None
        result = run_sample(self.samples_dir / name, self.size, mode=mode, repeat=self.repeat,
                            profiler=prof, max_profiled=self.max_launches, check=check,
                            initial=self._arrays[name])
        wall = time.perf_counter() - t0
        native = sum(r.run.native_ms or 0 for r in result.reports.values())
        inst = sum(r.run.instrumented_ms or 0 for r in result.reports.values())
        counter_bytes = max((r.run.counter_bytes for r in result.reports.values()), default=0)
        where = {r.run.counters_in for r in result.reports.values()}
        identical = all(r.run.outputs_identical for r in result.reports.values())
        return {
            "sample": name, "mode": mode.name if mode else "native", "native_ms": native,
            "instrumented_ms": inst, "overhead": inst / native - 1 if native else None,
            "counter_bytes": counter_bytes, "counters_in": sorted(where),
            "outputs_identical": identical, "self_check": result.ok,
            "self_check_error": result.check_error, "wall_s": wall,
            "launches_profiled": sum(r.run.launches for r in result.reports.values()),
        }, result.reports


def _out_dir(out_dir: Path) -> None:
    """The results directory: created if needed; a file or an unwritable place is an
    OutputError before any work."""
    from .errors import OutputError

    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"--out {str(out_dir)!r} is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"--out {str(out_dir)!r}: cannot create it: {e.strerror}") from None


def new_out_dir(where: Path = Path(".")) -> Path:
    """A directory that did not exist, for a run given no --out: gmprof-bench-<UTC time>."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        path = where / (f"gmprof-bench-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not path.exists() and not path.is_symlink():
            return path
    from .errors import OutputError

    raise OutputError(f"cannot find a new directory name like {str(path)!r}; give --out DIR")


def _write(files: dict) -> None:
    """Results through gmprof.outputs: written whole, all or none."""
    from .outputs import write_outputs

    write_outputs({str(k): v for k, v in files.items()})


def run_bench(out_dir: Path, size: str = "large", repeat: int = 5, backend: str = "auto",
              max_launches: int | None = 3, quick: bool = False, apps=None, cases: bool = True,
              part: str | None = None) -> dict:
    """apps: which of the six to run (default all); cases: run the case studies; part: write
    paper_part_<part>.json only (parts of one evaluation run in several calls, then --merge)."""
    from .runtime.backend import get_backend

    be = get_backend(backend)
    bench = Bench(samples_dir(), size, repeat, backend, max_launches)
    info = {
        "device": be.device, "backend": be.name,
        "driver": getattr(be, "driver", None),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "size": size, "repeat": repeat, "max_profiled_launches_per_sample": max_launches,
        # as the user typed it: `python -m gmprof` and the script both read as `gmprof`
        "command": " ".join(["gmprof" if Path(sys.argv[0]).name in ("__main__.py", "cli.py",
                                                                    "gmprof") else sys.argv[0]]
                            + sys.argv[1:]),
    }
    results: dict = {"info": info, "table1": [], "table2": [], "sampling": [], "cases": [],
                     "space": []}
    _out_dir(out_dir)

    def save():
        # after every application, so a run cut short keeps what it measured
        if part:
            _write({out_dir / f"paper_part_{part}.json": json.dumps(results, indent=2,
                                                                    default=str)})

    chosen = [a for a in SIX if apps is None or a[0] in apps]
    if quick:
        chosen = chosen[:2]
    for app, name in chosen:
        for table, profile, modes in (("table1", "shm", TABLE1), ("table2", "dm", TABLE2)):
            _progress(f"{app} ({name}): {table} reference (basic, exact)")
            ref_row, ref_reports = bench.run(name, Mode.parse("basic", profile=profile))
            rows = []
            for m in modes:
                # the paper's TH: threshold 0xFF in 8-bit counters (a quarter of the space)
                mode = Mode.parse(m, profile=profile, threshold=255 if "TH" in m else None,
                                  counter_bits=8 if "TH" in m else 32)
                if m == "basic":
                    row, reports = ref_row, ref_reports
                else:
                    _progress(f"{app} ({name}): {table} {mode.name}")
                    row, reports = bench.run(name, mode)
                row["app"] = app
                row["accuracy_loss"] = _accuracy_loss(reports, ref_reports) \
                    if mode.threshold is None else None
                rows.append(row)
                results["space"].append({"app": app, "profile": profile, "mode": mode.name,
                                         "counter_bytes": row["counter_bytes"]})
            results[table].extend(rows)
            if profile == "shm":
                for rate in ([] if quick else RATES):
                    # the paper's sampler at every rate; ours (a register generator) at 1/100
                    for sampler in ("paper", "rng") if rate == 0.01 else ("paper",):
                        mode = Mode.parse("SM", sampling=rate, sampler=sampler, profile="shm")
                        _progress(f"{app} ({name}): sampling 1/{int(1 / rate)} ({sampler})")
                        row, reports = bench.run(name, mode)
                        row.update(app=app, rate=rate, sampler=sampler,
                                   accuracy_loss=_accuracy_loss(reports, ref_reports))
                        results["sampling"].append(row)
        save()
    for app, v1, v2 in ([] if quick or not cases else CASES):
        for name in (v1, v2):
            entry = {"app": app, "sample": name, "arrays": {}}
            for label, mode in (("exact", Mode.parse("default")),
                                ("threshold", Mode.parse("default", threshold=255)),
                                ("enhanced", Mode.parse("default", enhanced=True))):
                _progress(f"case study {name}: {label}")
                row, reports = bench.run(name, mode)
                entry[f"{label}_row"] = row
                # an array used by several kernels (em's E and M steps): sum its counts
                combined: dict = {}
                for rep in reports.values():
                    for a in rep.arrays:
                        if a.name in combined and combined[a.name][0].counts.shape == \
                                a.counts.shape:
                            combined[a.name][1] = combined[a.name][1] + a.counts
                        else:
                            combined.setdefault(a.name, [a, a.counts.copy(), None])
                        if a.live_ranges and a.live_ranges["ranges"]:
                            combined[a.name][2] = a.live_ranges
                for name_, (a, counts, lr) in combined.items():
                    cell = entry["arrays"].setdefault(name_, {"space": a.space})
                    mean = float(counts.mean()) if counts.size else 0.0
                    if label == "threshold" and a.threshold is not None:
                        # (an array counted exactly in this mode has no threshold: its
                        # counts are all static, or its sites counted without one)
                        cell[label] = f">={a.threshold}" if mean >= a.threshold else round(mean, 2)
                    else:
                        cell[label] = round(mean, 2)
                    if label == "enhanced" and lr:
                        cell["per_live_range"] = round(lr["accesses"] / lr["ranges"], 2)
            entry["native_ms"] = entry["exact_row"]["native_ms"]
            results["cases"].append(entry)
            save()
    _out_dir(out_dir)
    if part:
        _write({out_dir / f"paper_part_{part}.json": json.dumps(results, indent=2, default=str)})
        return results
    _write({out_dir / "paper.json": json.dumps(results, indent=2, default=str),
            out_dir / "paper.md": markdown(results)})
    return results


def merge_parts(directory: Path) -> dict:
    """Combine paper_part_*.json (one evaluation split over several runs) into paper.json/.md."""
    parts = sorted(directory.glob("paper_part_*.json"))
    if not parts:
        raise InputError(f"no paper_part_*.json in {directory}")
    merged: dict = {"table1": [], "table2": [], "sampling": [], "cases": [], "space": []}
    infos = []
    for p in parts:
        try:
            data = json.loads(p.read_text())
            data["info"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            from .errors import InputError

            raise InputError(f"{p}: not a part written by `gmprof bench --part` ({e})") from None
        infos.append(data["info"])
        for key in merged:
            merged[key].extend(data.get(key, []))
    # a later part that re-ran an application replaces the earlier rows for it
    def row_key(key, r):
        return (key, r.get("app"), r.get("sample"), r.get("mode"), r.get("profile"),
                r.get("rate"), r.get("sampler"))
    for key in merged:
        last: dict = {}
        for r in merged[key]:
            last[row_key(key, r)] = r
        merged[key] = list(last.values())
    info = dict(infos[0])
    info["date"] = ", ".join(sorted({i["date"] for i in infos}))
    info["command"] = "; ".join(dict.fromkeys(i["command"] for i in infos))
    merged["info"] = info
    _write({directory / "paper.json": json.dumps(merged, indent=2, default=str),
            directory / "paper.md": markdown(merged)})
    return merged


def _f(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def markdown(results: dict) -> str:
    info = results["info"]
    out = [f"# gmprof on {info['device']} — the paper's evaluation, reproduced",
           "",
           f"Device: {info['device']} ({info['backend']}), driver {info['driver']}; "
           f"{info['date']}; sample size `{info['size']}`; timings are medians of "
           f"{info['repeat']} runs with events, summed over the first "
           f"{info['max_profiled_launches_per_sample']} profiled launches of each sample. "
           f"Overhead = instrumented / native - 1. Command: `{info['command']}`.", ""]

    def table(rows, title, modes):
        out.append(f"## {title}")
        out.append("")
        out.append("| app | native ms | " + " | ".join(modes) + " |")
        out.append("|---|---|" + "---|" * len(modes))
        apps = list(dict.fromkeys(r["app"] for r in rows))
        for app in apps:
            mine = {r["mode"]: r for r in rows if r["app"] == app}
            native = next(iter(mine.values()))["native_ms"]
            cells = []
            for m in modes:
                r = next((r for k, r in mine.items() if k.startswith(m) or
                          (m == "default" and k == "default")), None)
                if m == "default":
                    r = mine.get("default")
                if r is None:
                    cells.append("-")
                    continue
                loss = r.get("accuracy_loss")
                cells.append(f"{r['instrumented_ms']:.2f} ({_f(r['overhead'])}x"
                             + (f", loss {loss:.3f}" if loss else "") + ")")
            out.append(f"| {app} | {native:.2f} | " + " | ".join(cells) + " |")
        avg = []
        for m in modes:
            vals = [r["overhead"] for r in rows if (r["mode"] == m or
                    (m != "default" and r["mode"].startswith(m) and r["mode"] != "default"))
                    and r["overhead"] is not None]
            avg.append(f"{np.mean(vals):.2f}x" if vals else "-")
        out.append("| **average** | | " + " | ".join(avg) + " |")
        out.append("")

    if results.get("profiles"):
        _profiles_table(out, results["profiles"])
    table(results["table1"], "Table 1: shared-memory profiling (time ms, overhead)", TABLE1)
    table(results["table2"], "Table 2: device-memory profiling (time ms, overhead)", TABLE2)
    if results["sampling"]:
        out.append("## Figures 3 and 4: sampling vs optimised modes (shared memory)")
        out.append("")
        out.append("Accuracy loss: |count - exact| / exact per element against basic mode, "
                   "averaged over elements and then arrays (a fraction: 1 is 100%).")
        out.append("")
        out.append("| app | mode | overhead | accuracy loss |")
        out.append("|---|---|---|---|")
        for r in results["table1"]:
            if r["mode"] in ("SA-NA-SM", "default"):
                out.append(f"| {r['app']} | {r['mode']} | {_f(r['overhead'])}x | "
                           f"{_f(r['accuracy_loss'], '{:.4f}')} |")
        for r in results["sampling"]:
            out.append(f"| {r['app']} | sampling 1/{int(round(1 / r['rate']))} ({r['sampler']}) | "
                       f"{_f(r['overhead'])}x | {_f(r['accuracy_loss'], '{:.4f}')} |")
        out.append("")
    if results["cases"]:
        out.append("## Tables 3-5: case studies (average count per element / shared word)")
        out.append("")
        out.append("| sample | array | space | exact | with TH=255 | per live range (enhanced) |")
        out.append("|---|---|---|---|---|---|")
        for e in results["cases"]:
            for name, cell in e["arrays"].items():
                out.append(f"| {e['sample']} | {name} | {cell['space']} | {cell.get('exact', '-')}"
                           f" | {cell.get('threshold', '-')} | {cell.get('per_live_range', '-')} |")
        out.append("")
        out.append("| case | v1 native ms | v2 native ms | speedup v1 -> v2 |")
        out.append("|---|---|---|---|")
        for app, v1, v2 in CASES:
            a = next((e for e in results["cases"] if e["sample"] == v1), None)
            b = next((e for e in results["cases"] if e["sample"] == v2), None)
            if a and b and b["native_ms"]:
                out.append(f"| {app} | {a['native_ms']:.2f} | {b['native_ms']:.2f} | "
                           f"{a['native_ms'] / b['native_ms']:.2f}x |")
        out.append("")
    out.append("## Space overhead (counter bytes)")
    out.append("")
    out.append("| app | profile | mode | counter bytes |")
    out.append("|---|---|---|---|")
    for r in results["space"]:
        out.append(f"| {r['app']} | {r['profile']} | {r['mode']} | {r['counter_bytes']:,} |")
    out.append("")
    if results.get("not_run"):
        out.append("Not run (the call's time budget was spent): "
                   + ", ".join(results["not_run"]) + ".")
        out.append("")
    checks = [r for t in ("table1", "table2", "sampling") for r in results[t]]
    bad = [r for r in checks if not r["outputs_identical"] or not r["self_check"]]
    out.append(f"Outputs bit-identical to the uninstrumented kernels and samples' self-checks: "
               f"{len(checks) - len(bad)} of {len(checks)} runs passed."
               + (" Failures: " + ", ".join(f"{r['sample']} {r['mode']}" for r in bad)
                  if bad else ""))
    return "\n".join(out) + "\n"


# issue 17's targets for the default mode's average overhead over the six applications
TARGETS = {"shm": 0.30, "dm": 0.15, "both": 0.40}


def _profiles_table(out: list, rows: list) -> None:
    """The default mode (and any other mode run per profile) with shared memory, device memory
    and both profiled: overhead per application, the average against issue 17's targets."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    for mode in modes:
        mine = [r for r in rows if r["mode"] == mode]
        profiles = [p for p in ("shm", "dm", "both") if any(r["profile"] == p for r in mine)]
        out.append(f"## Mode {mode}: overhead per profile")
        out.append("")
        out.append("| app | native ms | " + " | ".join(profiles) + " |")
        out.append("|---|---|" + "---|" * len(profiles))
        for app in dict.fromkeys(r["app"] for r in mine):
            cells = []
            for p in profiles:
                r = next((r for r in mine if r["app"] == app and r["profile"] == p), None)
                cells.append("-" if r is None else f"{r['instrumented_ms']:.2f} "
                             f"({_f(r['overhead'])}x)")
            native = next(r["native_ms"] for r in mine if r["app"] == app)
            out.append(f"| {app} | {native:.2f} | " + " | ".join(cells) + " |")
        avg = []
        for p in profiles:
            vals = [r["overhead"] for r in mine if r["profile"] == p and r["overhead"] is not None]
            avg.append(f"**{np.mean(vals):.2f}x**" if vals else "-")
        out.append("| **average** | | " + " | ".join(avg) + " |")
        if mode == "default":
            out.append("| target (issue 17) | | " + " | ".join(
                f"{TARGETS[p]:.2f}x" for p in profiles) + " |")
        out.append("")


def cmd_bench(args) -> int:
    if args.suite != "paper":
        raise OptionError(f"unknown suite {args.suite!r} (paper)")
    if args.merge:
        if args.out is None:
            raise OptionError("--merge reads the paper_part_*.json files in a directory: name "
                              "it with --out DIR")
        print(markdown(merge_parts(Path(args.out))))
        return 0
    apps = None if not args.apps else [] if args.apps == "none" else \
        [a for a in args.apps.split(",") if a]
    size = args.size
    if size is None:
        from .runtime.backend import get_backend

        size = "large" if get_backend(args.backend).name == "gpu" else "small"
    out = Path(args.out) if args.out is not None else new_out_dir()
    results = run_bench(out, size=size, repeat=args.repeat,
                        backend=args.backend, max_launches=args.max_launches, quick=args.quick,
                        apps=apps, cases=not args.no_cases, part=args.part)
    print(markdown(results))
    print(f"gmprof bench: results written to {out}{'/' if not str(out).endswith('/') else ''}",
          file=sys.stderr)
    return failed_status(results, args.error_exitcode)


def failed_status(results: dict, error_exitcode: int) -> int:
    """--error-exitcode when a run's outputs differed or a sample's self-check failed (the
    tables say which), else 0: a benchmark is a check too."""
    checks = [r for t in ("table1", "table2", "sampling") for r in results.get(t, [])]
    bad = [r for r in checks if not r["outputs_identical"] or not r["self_check"]]
    for r in bad:
        print(f"gmprof bench: error: {r['sample']} {r['mode']}: "
              + ("outputs differ" if not r["outputs_identical"] else
                 f"self-check failed: {r.get('self_check_error')}"), file=sys.stderr)
    return error_exitcode if bad else 0


def register(sub) -> None:
    from . import options as O

    p = sub.add_parser("bench", help="the paper's tables on this GPU (written to a new "
                                     "directory, or --out DIR)")
    p.add_argument("--suite", default="paper", choices=("paper",),
                   help="what to measure: the GMProf paper's six applications (Tables 1-2, "
                        "Figures 3-4)")
    p.add_argument("--out", metavar="DIR",
                   help="results directory, created if needed; its results are replaced "
                        "(default: a new directory gmprof-bench-DATE-TIME here; the committed "
                        "tables are docs/results)")
    p.add_argument("--size", help="the samples' size (default: large on a GPU, small on the "
                                  "CPU backend)")
    p.add_argument("--repeat", type=O.cli_type(O.count, "--repeat"), default=5,
                   help="timed runs of each launch, native and instrumented (medians reported)")
    p.add_argument("--backend", default="auto", choices=("auto", "gpu", "cpu"),
                   help="where kernels run (auto: the GPU if CuPy sees one, else the CPU)")
    p.add_argument("--max-launches", type=O.cli_type(O.count, "--max-launches", minimum=1),
                   default=3,
                   help="profile at most this many launches of a sample (the rest run natively)")
    p.add_argument("--quick", action="store_true", help="two apps, no sampling or case studies")
    p.add_argument("--apps", help="comma-separated subset of co,em,bo,jcb,spmv,dxtc")
    p.add_argument("--no-cases", action="store_true", help="skip the case studies")
    p.add_argument("--part", help="write paper_part_PART.json (to --merge later)")
    p.add_argument("--merge", action="store_true", help="merge paper_part_*.json in --out")
    p.add_argument("--error-exitcode", type=O.cli_type(O.count, "--error-exitcode",
                                                       maximum=255), default=1, metavar="N",
                   help="exit status when a run's outputs differ or a sample's self-check "
                        "fails; 0 reports and exits 0 (default 1)")
    p.set_defaults(run=cmd_bench)
