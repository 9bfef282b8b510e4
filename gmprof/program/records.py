"""Read the raw report files whole programs write, and turn them into Reports.

Stage: report (whole programs). Takes one or more files written at exit by gmprof's host runtime
(schema gmprof.raw/1, one per process: runtime_cu/host/gmprof_host.cpp) and returns a
ProgramReport: for each kernel, one Report summed over every profiled launch of every process
and device (decoded with gmprof/program/decode.py), plus the breakdown per process and device.
A file that is not a report, or whose source changed since the build, is a plain error naming it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from gmprof.errors import GmprofError

RAW_SCHEMA = "gmprof.raw/1"


@dataclass
class Part:
    """One process's share of one kernel (on one device)."""

    file: str
    pid: int
    host: str
    device: str
    kernel: str
    launches: int
    accesses: dict  # array name -> accesses
    ms: float | None


@dataclass
class ProgramReport:
    reports: dict = field(default_factory=dict)  # kernel name expression -> Report
    parts: list = field(default_factory=list)    # Part
    processes: list = field(default_factory=list)  # {file, pid, host, launches, profiled, ...}
    notes: list = field(default_factory=list)
    # launches that failed a check: {file, pid, kernel, launch (its number in the process),
    # grid, block, out_of_range}; and launches that failed to run (a device-side assert, a
    # fault), with `error` (CUDA's message) added and no counts
    failed_launches: list = field(default_factory=list)


def read_raw(path) -> dict:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise GmprofError(f"{path}: cannot read the report file: {exc.strerror}",
                          kind="input") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GmprofError(f"{path}: not a gmprof report file (not JSON: {exc.msg} at line "
                          f"{exc.lineno})", kind="input") from None
    if not isinstance(data, dict) or data.get("schema") != RAW_SCHEMA:
        raise GmprofError(f"{path}: not a gmprof report file of a whole program (schema "
                          f"{data.get('schema') if isinstance(data, dict) else None!r}, "
                          f"expected {RAW_SCHEMA!r})", kind="input")
    return data


def decode(paths) -> ProgramReport:
    from gmprof.runtime.session import Profiler

    from .countsfile import Counts
    from .children import child_mode
    from .decode import check_plan, decode_child_group, decode_group, mode_of

    out = ProgramReport()
    profilers: dict = {}
    # kernel -> (plan, function name, KernelAnalysis, {site: out of range}, translation unit)
    findings: dict = {}
    for path in paths:
        data = read_raw(path)
        counts = Counts(path, data)  # its counts file checked before anything is decoded
        modules = {m["id"]: m for m in data.get("modules", [])}
        out.processes.append({"file": str(path), "pid": data.get("pid"), "host": data.get("host"),
                              "backend": data.get("backend"), "launches": data.get("launches", 0),
                              "profiled": data.get("profiled", 0),
                              "not_instrumented": data.get("not_instrumented", {}),
                              "captured": data.get("captured", {}),
                              "device_launches": data.get("device_launches", [])})
        for note in data.get("notes", []):
            out.notes.append(f"{path}: {note}")
        for name, n in data.get("not_instrumented", {}).items():
            out.notes.append(f"{path}: {n} selected launch(es) of {name} ran unprofiled (gmprof "
                             "did not instrument that kernel; see the build's warnings)")
        for name, n in data.get("captured", {}).items():
            out.notes.append(f"{path}: {n} selected launch(es) of {name} were made into a CUDA "
                             "graph (a stream capture, a kernel node) and not profiled: "
                             "GMPROF_GRAPHS=0, the body of a conditional node that a file "
                             "gmprof did not translate added, a graph launched from the "
                             "device, one never instantiated, or the legacy stream while "
                             "another stream captured; "
                             "the graph's replays, if any, run the original kernel and are not "
                             "counted")
        for rec in data.get("device_launches", []):
            out.notes.append(f"{path}: {rec['count']} launch(es) of {rec['child']} made from the "
                             f"device by profiled {rec['parent']} (dynamic parallelism) ran the "
                             "original kernel, unprofiled: their accesses, and those of any "
                             "launches they made in turn, are not counted")
        for rec in data.get("failed", []):
            out.failed_launches.append(
                {"file": str(path), "pid": data.get("pid"), "kernel": rec["kernel"],
                 "launch": rec["index"], "grid": rec["grid"], "block": rec["block"],
                 "out_of_range": 0, "error": rec["error"]})
            out.notes.append(f"{path}: launch {rec['index']} of {rec['kernel']} (grid "
                             f"{tuple(rec['grid'])}, block {tuple(rec['block'])}) failed "
                             f"({rec['error']}); its counters are not in the report")
        devices = data.get("devices", {})
        for group in data.get("groups", []):
            module = modules.get(group["module"])
            if module is None:
                raise GmprofError(f"{path}: a group names module {group['module']!r}, which the "
                                  "file does not describe", kind="input")
            man = module["manifest"]
            key = (man["source"], json.dumps(man["defines"], sort_keys=True),
                   tuple(man["include_dirs"]))
            if key not in profilers:
                if not Path(man["source"]).is_file():
                    raise GmprofError(f"{path}: the program's source {man['source']} is gone; "
                                      "the report cannot be decoded without it", kind="input")
                prof = Profiler(man["source"], defines=man["defines"],
                                include_dirs=man["include_dirs"], backend="cpu")
                profilers[key] = prof
            prof = profilers[key]
            mode = mode_of(man["mode"])
            check_plan(prof, mode, man)
            sizes = {k: int(v) for k, v in module.get("sizes", {}).items()}
            device = devices.get(str(group["device"]), f"device {group['device']}")
            # (name expression, where it is defined): two files' kernels of one name (each in
            # its file's unnamed namespace, or `static`) are two kernels, never summed
            child = "device_grids" in group  # grids launched from the device
            kernel = (group["kernel"] + (FROM_DEVICE if child else ""),
                      _definition(prof, group["kernel"]))
            if kernel not in findings:
                facts = prof.kernel_facts(group["kernel"])
                findings[kernel] = (prof.plan(child_mode(mode) if child else mode), facts.name,
                                    prof.program.kernels[facts.name], {}, prof.tu)
            report = (decode_child_group if child else decode_group)(
                prof, mode, group, sizes, device, data.get("backend", "gpu"), counts,
                site_oor=findings[kernel][3])
            for run in report.launch_runs:
                if run["failed_check"]:
                    out.failed_launches.append(
                        {"file": str(path), "pid": data.get("pid"), "kernel": kernel,
                         "launch": run["index"], "grid": run["grid"], "block": run["block"],
                         "out_of_range": run["out_of_range"]})
            out.parts.append(Part(str(path), data.get("pid"), data.get("host"),
                                  f"{group['device']}: {device}", kernel,
                                  int(group["device_grids"]) if child else
                                  sum(int(x.get("repeat", 1)) for x in group["launches"]),
                                  {a.name: a.accesses for a in report.arrays},
                                  report.run.instrumented_ms))
            if kernel in out.reports:
                out.reports[kernel].merge(report)
            else:
                out.reports[kernel] = report
    _add_findings(out, _name_kernels(out, findings))
    return out


FROM_DEVICE = " (launched from the device)"  # the report's name of a child kernel's entry


def _definition(prof, kernel: str) -> tuple:
    """(file, line) of the definition of the kernel a name expression names in prof's unit."""
    name = prof.kernel_facts(kernel).name
    fn = next((f for f in prof.tu.kernels if f.name == name), None)
    if fn is None:
        return ("", 0)
    return (str(fn.source.path or fn.source.name), fn.location.line)


def _name_kernels(out: ProgramReport, findings: dict) -> dict:
    """Each kernel keyed by its name expression, or, where kernels of one name are defined in
    several places, by `name (file:line)`; the findings keyed alike."""
    places: dict = {}
    for expr, where in findings:
        places.setdefault(expr, set()).add(where)

    def name(key) -> str:
        expr, (file, line) = key
        return expr if len(places[expr]) == 1 else f"{expr} ({Path(file).name}:{line})"

    for key, report in out.reports.items():
        report.run.kernel = name(key)
    out.reports = {name(k): r for k, r in out.reports.items()}
    for part in out.parts:
        part.kernel = name(part.kernel)
    for f in out.failed_launches:
        if isinstance(f["kernel"], tuple):
            f["kernel"] = name(f["kernel"])
    return {name(k): v for k, v in findings.items()}


class _StaticSite(NamedTuple):
    site: object


def _add_findings(out: ProgramReport, findings: dict) -> None:
    """The failed checks of each kernel's summed report, worded as `gmprof profile` words them
    (report/findings.py): accesses out of range, located at the site that made them; and the
    kernel's source, for the source view (--source, the HTML page)."""
    from types import SimpleNamespace

    from gmprof.report.findings import add_findings
    from gmprof.report.source import attach_source

    for kernel, report in out.reports.items():
        plan, name, ka, site_oor, tu = findings[kernel]
        attach_source(report, tu)
        static = {_StaticSite(site): SimpleNamespace(out_of_range=n)
                  for site, n in site_oor.items()}
        add_findings(report, plan, name, ka, static, [], [], [], [])
        bad = [f for f in out.failed_launches if f["kernel"] == kernel and "error" not in f]
        if bad:
            shown = ", ".join(f"{f['launch']} (process {f['pid']})" for f in bad[:10])
            report.notes.append(f"launches of {kernel} that accessed out of range (each "
                                f"process's launches numbered from 0): {shown}"
                                f"{', ...' if len(bad) > 10 else ''}")


__all__ = ["decode", "read_raw", "ProgramReport", "Part"]
