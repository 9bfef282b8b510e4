"""Two runs side by side, per kernel and array: what changed from A to B (the paper's v1 -> v2
case studies: em_v1's model re-read from device memory, em_v2's staged in shared memory).

Stage: report. Takes two run documents (gmprof.run/2); returns a gmprof.diff/1 dict, and prints
it as tables. Kernels and arrays are matched by name; those in one run only are listed as such.
Counts with different labels (exact in A, sampled in B) are compared and flagged, never
silently: a sampled count is an estimate.

    {"schema": "gmprof.diff/1", "a": {...}, "b": {...},
     "kernels": [{"kernel", "in": "both" | "a" | "b",
                  "arrays": [{"name", "in", "space", "label_a", "label_b",
                              "accesses": [a, b], "reads": [a, b], "writes": [a, b],
                              "max": [a, b], "untouched": [a, b],
                              "warps" (--access-stats): {"what", "units", "requests",
                                        "ideal", "worst", "summary": [a, b] each}}],
                  "time_ms": {"native": [a, b], "instrumented": [a, b]} or null}]}
"""
from __future__ import annotations

from .tables import FOLD, NUM, WORD, Col, print_table
from .warpview import how_text, summary, worst

SCHEMA = "gmprof.diff/1"
FIELDS = ("accesses", "reads", "writes", "max", "untouched")


def _ident(doc: dict, name: str) -> dict:
    sample = doc.get("sample") or {}
    return {"file": name, "command": doc.get("command"), "sample": sample.get("name"),
            "size": sample.get("size"), "backend": doc.get("backend"),
            "device": doc.get("device")}


def _timed(k: dict) -> bool:
    return all((x.get("timing_repeats") or 0) > 1 for x in k.get("launches", [])) and \
        k["run"].get("native_ms") is not None


def diff(a: dict, b: dict, name_a: str = "A", name_b: str = "B") -> dict:
    ka = {k["kernel"]: k for k in a["kernels"]}
    kb = {k["kernel"]: k for k in b["kernels"]}
    names = list(ka) + [n for n in kb if n not in ka]
    out = {"schema": SCHEMA, "a": _ident(a, name_a), "b": _ident(b, name_b), "kernels": []}
    for n in names:
        x, y = ka.get(n), kb.get(n)
        entry = {"kernel": n, "in": "both" if x and y else ("a" if x else "b"), "arrays": [],
                 "time_ms": None}
        if x and y and _timed(x) and _timed(y):
            entry["time_ms"] = {"native": [x["run"]["native_ms"], y["run"]["native_ms"]],
                                "instrumented": [x["run"]["instrumented_ms"],
                                                 y["run"]["instrumented_ms"]]}
        arrs_a = {r["name"]: r for r in (x or {}).get("arrays", [])}
        arrs_b = {r["name"]: r for r in (y or {}).get("arrays", [])}
        for an in list(arrs_a) + [m for m in arrs_b if m not in arrs_a]:
            p, q = arrs_a.get(an), arrs_b.get(an)
            row = {"name": an, "in": "both" if p and q else ("a" if p else "b"),
                   "space": (p or q)["space"],
                   "label_a": p.get("label_short", p["label"]) if p else None,
                   "label_b": q.get("label_short", q["label"]) if q else None}
            for f in FIELDS:
                row[f] = [p[f] if p else None, q[f] if q else None]
            # --access-stats: wavefronts (shared) or sectors (device) per array, A -> B
            wp, wq = (p or {}).get("warps"), (q or {}).get("warps")
            if wp or wq:
                what = "wavefronts" if (wp or wq)["space"] == "shared" else "sectors"
                row["warps"] = {"what": what,
                                "units": [wp.get(what) if wp else None,
                                          wq.get(what) if wq else None],
                                "requests": [wp["requests"] if wp else None,
                                             wq["requests"] if wq else None],
                                "ideal": [w["ideal"] if w else None for w in (wp, wq)],
                                "worst": [worst(w) if w else None for w in (wp, wq)],
                                "summary": [summary(w) if w else None for w in (wp, wq)]}
                if any(w and w.get("sample") for w in (wp, wq)):  # (block-sampled runs)
                    row["warps"]["how"] = [how_text(w) if w else None for w in (wp, wq)]
            entry["arrays"].append(row)
        out["kernels"].append(entry)
    return out


def change(a, b) -> str:
    """b against a: the difference and the ratio (`-9,000 (x0.25)`), `new`, `gone`, `same`."""
    if a is None and b is None:
        return ""
    if a is None:
        return "new"
    if b is None:
        return "gone"
    if a == b:
        return "same"
    if a == 0:
        return f"{b - a:+,} (from 0)"
    return f"{b - a:+,} (x{b / a:.3g})"


def _n(v) -> str:
    return "-" if v is None else f"{v:,}"


def render(d: dict, console) -> None:
    from rich.text import Text

    def say(text, style=None):
        console.print(Text(text, style=style, overflow="fold"), soft_wrap=False)

    for side in ("a", "b"):
        i = d[side]
        what = f"sample {i['sample']} ({i['size']})" if i.get("sample") else i.get("command")
        say(f"{side.upper()}: {i['file']}: {what or '-'} on {i['backend']}: {i['device']}")
    for k in d["kernels"]:
        say("")
        if k["in"] != "both":
            say(f"kernel {k['kernel']}: only in {k['in'].upper()}", "bold")
            continue
        say(f"kernel {k['kernel']}", "bold")
        t = k.get("time_ms")
        if t:
            say(f"time, native: {t['native'][0]:.3f} ms -> {t['native'][1]:.3f} ms; "
                f"instrumented: {t['instrumented'][0]:.3f} ms -> {t['instrumented'][1]:.3f} ms")
        cols = [Col("array", FOLD), Col("space", WORD, hoist=True, hoist_as="{}"),
                Col("accesses A", NUM), Col("accesses B", NUM), Col("change", WORD),
                Col("counts", WORD, hoist=True, hoist_as="counts {}"),
                Col("reads A", NUM), Col("reads B", NUM), Col("writes A", NUM),
                Col("writes B", NUM)]
        rows = []
        for r in k["arrays"]:
            la, lb = r["label_a"], r["label_b"]
            label = la or lb if la == lb or not (la and lb) else f"{la} in A, {lb} in B"
            rows.append([r["name"], r["space"], _n(r["accesses"][0]), _n(r["accesses"][1]),
                         change(*r["accesses"]), label, _n(r["reads"][0]), _n(r["reads"][1]),
                         _n(r["writes"][0]), _n(r["writes"][1])])
        print_table(console, "arrays, A -> B", cols, rows, split="reads A",
                    split_title="reads and writes, A -> B", carry=("counts",))
        wrows = [[r["name"], r["warps"]["what"], _n(r["warps"]["units"][0]),
                  _n(r["warps"]["units"][1]), change(*r["warps"]["units"]),
                  _n(r["warps"]["requests"][0]), _n(r["warps"]["requests"][1])]
                 for r in k["arrays"] if r.get("warps")]
        if wrows:
            print_table(console, "warp requests (--access-stats), A -> B",
                        [Col("array", FOLD), Col("counts", WORD), Col("A", NUM),
                         Col("B", NUM), Col("change", WORD), Col("requests A", NUM),
                         Col("requests B", NUM)], wrows)
            for r in k["arrays"]:
                if r.get("warps"):  # the conflict's degree or the coalescing, in words
                    a, b = (x or "-" for x in r["warps"]["summary"])
                    say(f"{r['name']}: {a} -> {b}")
        mixed = [r["name"] for r in k["arrays"] if r["label_a"] and r["label_b"] and
                 r["label_a"] != r["label_b"]]
        if mixed:
            say(f"note: {', '.join(mixed)}: counted differently in A and B; the change "
                "compares an estimate with a count", "yellow")
