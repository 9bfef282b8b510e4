"""The run document (gmprof.run/2) as text for a terminal or a pipe.

Stage: report. Takes the document (gmprof.report.document) and a rich Console; prints, per
kernel, the launch, per-array counts, per-site executions and, with source=True, the source
view. Nothing is cut: tables fit the console (80 columns when piped, see tables.py), paths are
relative to the working directory, columns that carry nothing are left out, timings are shown
only where they were measured more than once, and every count says how it was obtained
(exact, thresholded >=THR, sampled with its rate, approximate).
"""
from __future__ import annotations

from gmprof.passes.tallies import TALLIES

from .source import _split_location, display_path, line_rows
from .tables import FOLD, NUM, WORD, Col, print_table
from .warpview import how_text, sample_note


def _split(value) -> str:
    """An array's reads or writes; None when the split is not proven (a note says why)."""
    return "n/a" if value is None else fmt_count(value)


def fmt_count(value, threshold=None) -> str:
    """A count as text: thousands separated, `>=THR` at or above the threshold."""
    if value is None:
        return ""
    if threshold is not None and value >= threshold:
        return f">={threshold}"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def fmt_ms(v) -> str:
    return "-" if v is None else f"{v:.3f} ms"


def dim3_text(d) -> str:
    return "(" + ",".join(str(x) for x in d) + ")"  # one word: wrapped whole


def lower_bound(a: dict, text: str) -> str:
    """A sum or mean over counters of which some saturated at the threshold is a lower bound."""
    return f">={text}" if a.get("at_threshold") and not text.startswith(">=") else text


def shape_text(shape) -> str:
    return "x".join(str(s) for s in shape) if shape else "scalar"


def per_text(a: dict) -> str:
    unit = a.get("counter_unit_bytes")
    if str(a.get("space", "")).startswith("shared") and unit == 4:
        return "4-byte word"
    return f"{unit}-byte element" if unit == a.get("elem_size") else f"{unit}-byte unit"


def location_text(location: str, single_file: str | None) -> str:
    where = _split_location(location)
    if where is None:
        return str(location)
    path, line, col = where
    if single_file is not None and path == single_file:
        return f"{line}:{col}"
    return f"{display_path(path)}:{line}:{col}"


def timing_measured(kernel: dict) -> bool:
    """Times are shown only when each was the median of more than one run."""
    return all((launch.get("timing_repeats") or 0) > 1 for launch in kernel["launches"]) \
        and kernel["run"].get("native_ms") is not None


def launch_shape_text(kernel: dict) -> str:
    """`grid (4,1,1), block (256,1,1)` when every launch has that shape, else `3 shapes`."""
    shapes = {(tuple(x["grid"]), tuple(x["block"]), x["shared_mem"])
              for x in kernel["launches"]}
    if len(shapes) != 1:
        return f"{len(shapes)} shapes"
    grid, block, smem = shapes.pop()
    if not any(grid):  # grids launched from the device: the host never saw their shapes
        return "launched from the device (shapes not recorded)"
    text = f"grid {dim3_text(grid)}, block {dim3_text(block)}"
    return text + (f", {smem:,} bytes of dynamic shared memory" if smem else "")


def counters_text(run: dict) -> str:
    """Where the counters lived, and why. `counter_bytes` are all in device memory (the device
    arrays' shadow counters and the copies of the blocks' counters); in SM mode each block's
    counters also take `block_counter_bytes` of its shared memory. A kernel whose every count
    comes from formulas updates no counter: no size is given for it."""
    total, why = run.get("counter_bytes") or 0, run.get("counters_why") or ""
    where = run.get("counters_in") or ""
    if why.startswith("none:"):
        return f"counters: none: {why[len('none:'):].strip()}"
    if why.startswith(where) and where:  # "device memory (no SM in this mode)"
        why = why[len(where):].lstrip(":").strip()
        why = why[1:-1] if why.startswith("(") and why.endswith(")") else why
    parts = [f"{total:,} bytes in device memory"] if total else []
    if where == "shared memory":
        block = run.get("block_counter_bytes")
        parts.append(f"{block:,} bytes a block in shared memory" if block else
                     "in each block's shared memory")
    elif not total and where:
        parts.append(f"in {where}")
    text = "counters: " + (" and ".join(parts) or "none")
    return text + (f" ({why})" if why else "")


def space_text(space: str) -> str:
    """A memory space in CUDA's words (the document keeps the short names)."""
    return SPACES.get(space, space)


SPACES = {"shared": "shared", "shared_dynamic": "dynamic shared", "device": "device",
          "global": "__device__", "constant": "__constant__", "local": "local"}


def kernel_heading(kernel: dict) -> list[str]:
    run = kernel["run"]
    launches = kernel["launches"]
    n = sum(int(x.get("repeat", 1)) for x in launches)  # a graph's launch: once per replay
    head = f"kernel {run['kernel']}: {n} launch{'es' if n != 1 else ''}"
    shape = launch_shape_text(kernel)
    head += f", {shape}" if not shape.endswith("shapes") else f" of {shape}"
    head += f", mode {run['mode']}"
    lines = [head]
    if timing_measured(kernel):
        reps = min(x["timing_repeats"] for x in launches)
        over = run.get("overhead")
        what = f"median of {reps} runs" + (f", summed over {n} launches" if n > 1 else "")
        t = (f"time: native {fmt_ms(run['native_ms'])}, instrumented "
             f"{fmt_ms(run['instrumented_ms'])} ({what})")
        if over is not None:
            t += f", overhead {over:.2f}x"
        if run.get("timing_note"):
            t += f"; {run['timing_note']}"
        lines.append(t)
    lines.append(counters_text(run))
    ident = [x.get("outputs_identical") for x in launches]
    if any(v is False for v in ident):
        lines.append(f"outputs: DIFFER from the uninstrumented kernel's in "
                     f"{sum(v is False for v in ident)} of {n} launches")
    elif ident and all(v is True for v in ident):
        lines.append("outputs: identical to the uninstrumented kernel's" +
                     (" in every launch" if n > 1 else ""))
    return lines


def array_rows(kernel: dict) -> tuple[list[Col], list[list[str]]]:
    cols = [Col("array", FOLD), Col("space", WORD, hoist=True, hoist_as="{}"),
            Col("shape", FOLD), Col("counter per", WORD, hoist=True, hoist_as="one counter per {}"),
            Col("accesses", NUM), Col("reads", NUM), Col("writes", NUM), Col("min", NUM),
            Col("max", NUM), Col("mean", NUM),
            Col("untouched", NUM, drop_if=("0",)),
            Col("at threshold", NUM, drop_if=("0", "")),
            Col("out of range", NUM, drop_if=("0",)),
            Col("counts", WORD, hoist=True, hoist_as="counts {}")]
    rows = []
    for a in kernel["arrays"]:
        thr = a.get("threshold")
        label = a.get("label_short") or a.get("label", "")
        if a.get("counts_are", "accesses") != "accesses":
            label += ", last live range"
        rows.append([a["name"], space_text(a["space"]), shape_text(a["shape"]), per_text(a),
                     lower_bound(a, fmt_count(a["accesses"])), _split(a["reads"]),
                     _split(a["writes"]), fmt_count(a["min"], thr), fmt_count(a["max"], thr),
                     lower_bound(a, fmt_count(float(a["mean"]), thr)),
                     fmt_count(a["untouched"]),
                     fmt_count(a["at_threshold"]) if thr is not None else "",
                     fmt_count(a["out_of_range"]), label])
    return cols, rows


def interval_rows(kernel: dict) -> tuple[list[Col], list[list[str]]]:
    """Sampled arrays: each count's 95% interval (report/interval.py), beside its estimate."""
    cols = [Col("array", FOLD), Col("accesses", NUM), Col("95% interval", WORD),
            Col("reads", WORD), Col("writes", WORD), Col("max per element", WORD),
            Col("interval", WORD, hoist=True, hoist_as="interval: {}")]

    def span(e):
        return "-" if e is None else f"{e['low']:,.0f} .. {e['high']:,.0f}"

    rows = []
    for a in kernel["arrays"]:
        iv = a.get("intervals")
        if not iv:
            continue
        acc = iv["accesses"]
        rows.append([a["name"], fmt_count(a["accesses"]), span(acc), span(iv["reads"]),
                     span(iv["writes"]), span(iv["max"]), acc["interval"]])
    return cols, rows


def site_tables(kernel: dict) -> list[tuple[str, list[Col], list[list[str]]]]:
    """The access sites, one table per file (in the order the sites come), each titled with
    its file so a row needs only line:col: a path folded in a narrow column reads badly."""
    by_file: dict = {}
    for s in kernel["sites"]:
        where = _split_location(s["location"])
        by_file.setdefault(where[0] if where else None, []).append(s)
    cols = [Col("line:col", FOLD), Col("expression", FOLD), Col("access", WORD),
            Col("executions", NUM), Col("counted", WORD, hoist=True, hoist_as="counted: {}")]
    out = []
    for path, sites in by_file.items():
        rows = [[location_text(s["location"], path), s["text"], s["kind"],
                 fmt_count(s["executions"]) if s["executions"] is not None else "-",
                 s.get("how_text") or s["how"]] for s in sites]
        title = f"access sites in {display_path(path)}" if path else "access sites"
        out.append((title, cols, rows))
    return out


def warp_rows(kernel: dict) -> tuple[list[Col], list[list[str]]]:
    """Per-warp requests of the sites (--access-stats): shared wavefronts and device sectors
    per request beside the ideal, the most a request needed, and how they were obtained."""
    cols = [Col("line:col", FOLD), Col("expression", FOLD), Col("space", WORD),
            Col("requests", NUM), Col("per request", NUM), Col("ideal", NUM),
            Col("worst", NUM), Col("lines", NUM), Col("counted", WORD)]
    rows = []
    for s in kernel["sites"]:
        w = s.get("warps")
        if not w or not w["requests"]:
            continue
        units = w.get("wavefronts", w.get("sectors"))
        worst = max((k + 1 for k, n in enumerate(w["histogram"]) if n), default=0)
        what = "wavefronts" if w["space"] == "shared" else "sectors"
        rows.append([location_text(s["location"], None), s["text"], f"{w['space']} {what}",
                     fmt_count(w["requests"]), f"{units / w['requests']:,.2f}",
                     f"{w['ideal'] / w['requests']:,.2f}",
                     # shared, one word a lane (ideal 1 a request): 32 wavefronts at most
                     (">=" if worst == 32 and (w["space"] != "shared" or
                                               w["ideal"] != w["requests"]) else "") +
                     str(worst),
                     "" if w["lines"] is None else f"{w['lines'] / w['requests']:,.2f}",
                     how_text(w)])
    return cols, rows


def warp_caption(kernel: dict) -> str:
    """The warp table's note on its sampled sites (none for an exact run): each one's 95%
    intervals (passes/block_sample.py)."""
    notes = [f"{location_text(s['location'], None)}: {sample_note(s['warps'])}"
             for s in kernel["sites"] if s.get("warps") and s["warps"].get("sample")
             and s["warps"]["requests"]]
    if not notes:
        return ""
    return ("sampled sites: the measured blocks' sums scaled to the grid (docs/report.md)\n" +
            "\n".join(notes))


def print_source(console, kernel: dict) -> None:
    for fn in line_rows(kernel):
        first, last = fn["rows"][0]["line"], fn["rows"][-1]["line"]
        title = (f"source of {fn['function']}, {display_path(fn['file'])} lines "
                 f"{first}-{last}: site executions per line")
        cols = [Col("line", NUM), Col("reads", NUM), Col("writes", NUM),
                Col("executions", NUM),
                Col("counted", WORD, hoist=True, hoist_as="counted: {}"),
                Col("code", FOLD, keep_spaces=True)]
        rows = []
        for r in fn["rows"]:
            counted = ", ".join(h for h in r["how"] if h != "not counted")
            dash = "-" if r["sites"] and r["executions"] is None else ""
            rows.append([str(r["line"]), fmt_count(r["reads"]) or dash,
                         fmt_count(r["writes"]) or dash, fmt_count(r["executions"]) or dash,
                         counted, r["text"].expandtabs(4)])
        # lines without sites have no label: hoist only when every labelled line agrees
        labels = {row[4] for row in rows if row[4]}
        if len(labels) <= 1:
            cols[4] = Col("counted", WORD, drop_if=("",))
            title += f" (counted: {labels.pop()})" if labels else ""
            for row in rows:
                row[4] = ""
        print_table(console, title, cols, rows,
                    caption="-: not counted (an access to a local array, or one left out by "
                            "--profile)" if any(r == "-" for row in rows for r in row[1:4])
                    else "")


def render(doc: dict, console, source: bool = False) -> None:
    from rich.text import Text

    def say(text, style=None):
        # wrapped between words to the console's width (a pipe's 80 columns), never cut
        console.print(Text(text, style=style, overflow="fold"), soft_wrap=False)

    sample = doc.get("sample")
    where = f"{doc.get('backend')}: {doc.get('device')}"
    if sample:
        say(f"sample {sample['name']} ({sample['size']}) on {where}", "bold")
    else:
        say(f"on {where}", "bold")
    for kernel in doc["kernels"]:
        say("")
        for i, line in enumerate(kernel_heading(kernel)):
            say(line, "bold" if i == 0 else ("bold red" if "DIFFER" in line else None))
        cols, rows = array_rows(kernel)
        notes = []
        for a in kernel["arrays"]:
            if a.get("counts_are", "accesses") != "accesses":
                notes.append(f"{a['name']}: enhanced mode: accesses, min, max, mean and "
                             "untouched count each word's last live range only; reads and "
                             "writes count every access")
        print_table(console, "arrays", cols, rows, split="accesses",
                    split_title="counts per array")
        for n in notes:
            say(n, "yellow")
        cols, rows = interval_rows(kernel)
        if rows:
            print_table(console, "sampled counts: 95% intervals from the sampling design "
                        "(docs/report.md)", cols, rows, order=(FOLD, WORD))
        for a in kernel["arrays"]:
            L = a.get("live_ranges")
            if L and L.get("ranges"):
                say(f"live ranges of {a['name']} ({a.get('label_short') or a['label']}, per "
                    "live range, enhanced mode): "
                    f"{L['ranges']:,} (word, live range) pairs, {L['accesses']:,} accesses in "
                    f"them, {L['accesses'] / L['ranges']:,.2f} per pair; pairs by accesses "
                    f"1, 2, 3, 4, 5-8, 9-16, ...: {', '.join(f'{x:,}' for x in L['histogram'])}")
        for title, cols, rows in site_tables(kernel):
            # a long expression folds before `not counted` breaks in two
            print_table(console, title, cols, rows, order=(FOLD, WORD))
        cols, rows = warp_rows(kernel)
        if rows:
            print_table(console, "warp requests (shared: wavefronts, bank conflicts; device: "
                        "32-byte sectors and 128-byte lines, coalescing; per request)", cols,
                        rows, order=(FOLD, WORD), caption=warp_caption(kernel))
        for t in TALLIES:  # the other counter families' tables (passes/tallies.py)
            table = t.table(kernel)
            if table is not None:
                title, header, rows = table
                # (header: (name, "num" / "word" / "fold"), tables.py's kinds of column)
                print_table(console, title, [Col(name, kind) for name, kind in header], rows,
                            order=(FOLD, WORD))
        if kernel.get("advice") is not None:  # gmprof advise, --advice
            from .advice import render_kernel

            render_kernel(kernel, console)
        if source:
            print_source(console, kernel)
        for note in kernel.get("notes", []):
            say(f"note: {note}", "yellow")
