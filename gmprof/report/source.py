"""The source view: each kernel's code, line by line, with the reads, writes and executions of
the access sites on each line (as Nsight Compute's source page, with gmprof's counts).

Stage: report. `attach_source(report, tu)` copies the code of the report's kernel and of the
device functions its sites lie in (from the frontend's TranslationUnit) into `report.source`,
so a saved report re-renders without the .cu file. `line_rows(kernel)` rolls a kernel's sites
(gmprof.run/2 JSON, see gmprof.report.document) up per line:

    __global__ void k(float *a) {          line 3:  reads 0   writes 0   executions 0
        a[threadIdx.x] = 2 * a[threadIdx.x];  line 4: reads 64 writes 64 executions 128
                                                      counted: static, arrays: a
"""
from __future__ import annotations

import os


def _split_location(location: str) -> tuple[str, int, int] | None:
    """'dir/k.cu:12:5' -> ('dir/k.cu', 12, 5); None when it is not file:line:col."""
    parts = str(location).rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def attach_source(report, tu) -> None:
    """Set report.source to the code of every function that holds one of the report's sites
    (the kernel and the device functions it calls), the kernel first."""
    names = []
    for s in report.sites:
        if s.function not in names:
            names.append(s.function)
    kernel = report.run.kernel.split("<", 1)[0].strip()
    if kernel in names:
        names.remove(kernel)
    names.insert(0, kernel)
    functions = []
    for name in names:
        fn = tu.function(name) if tu is not None else None
        if fn is None or fn.source is None:
            continue
        src, seg = fn.source, fn.segment
        first, _ = src.line_col(seg.start)
        last, _ = src.line_col(max(seg.end - 1, seg.start))
        lines = [src.line_text(n).rstrip("\r") for n in range(first, last + 1)]
        functions.append({"function": name, "file": src.name, "first_line": first,
                          "lines": lines})
    report.source = functions


def line_rows(kernel: dict) -> list[dict]:
    """Per function of a kernel's source view, its lines with the counts of the sites on them.

    kernel: one entry of a gmprof.run/2 document's "kernels". Returns
    [{"function", "file", "rows": [{"line", "text", "reads", "writes", "executions", "how",
    "arrays", "sites"}]}]. reads/writes: the executions of the read (write) sites on the line,
    a read-write site counting in both; executions: of every counted site on the line; how: how
    those counts were obtained (the sites' labels, `not counted` for local arrays); arrays: the
    arrays the sites touch. A line without counted sites has None counts."""
    by_line: dict = {}
    for s in kernel.get("sites", []):
        where = _split_location(s.get("location", ""))
        if where is None:
            continue
        key = (where[0], where[1])
        row = by_line.setdefault(key, {"reads": None, "writes": None, "executions": None,
                                       "how": [], "arrays": [], "sites": []})
        how = s.get("how_text") or s.get("how")
        if how not in row["how"]:
            row["how"].append(how)
        if s.get("object") and s["object"] not in row["arrays"]:
            row["arrays"].append(s["object"])
        row["sites"].append(s.get("id"))
        if s.get("executions") is None or s.get("how") == "not counted":
            continue  # a local array's access: no count, not a count of 0
        n = int(s["executions"])
        for field, kinds in (("executions", None), ("reads", ("read", "read-write")),
                             ("writes", ("write", "read-write"))):
            if kinds is None or s.get("kind") in kinds:
                row[field] = (row[field] or 0) + n
            elif row[field] is None:
                row[field] = 0
    out = []
    for fn in kernel.get("source") or []:
        rows = []
        for i, text in enumerate(fn["lines"]):
            line = fn["first_line"] + i
            counts = by_line.get((fn["file"], line))
            row = {"line": line, "text": text}
            if counts is None:
                row.update(reads=None, writes=None, executions=None, how=[], arrays=[],
                           sites=[])
            else:
                row.update(counts)
            rows.append(row)
        out.append({"function": fn["function"], "file": fn["file"], "rows": rows})
    return out


def display_path(path: str, cwd: str | None = None) -> str:
    """A file's name as a person at this shell would type it: relative to the working directory
    when it lies under it, else as given."""
    if not path:
        return path
    cwd = cwd or os.getcwd()
    try:
        absolute = os.path.abspath(path)
        rel = os.path.relpath(absolute, cwd)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path
