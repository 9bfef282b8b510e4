"""Per-warp requests (--access-stats) for the outputs: an array's sum over its sites, the
figures every output shows (per request, the ideal, the worst request) and a line of words.

Stage: report. Takes the `warps` objects of a run document (gmprof.run/2: a site's, or an
array's, summed by passes/tallies.py WarpRequests.finish); returns numbers, CSV cells and text, so that CSV, HTML and `gmprof
diff` say the same thing:

    shared, one wavefront a request:    "1 wavefronts/req, conflict-free"
    shared, every request 8 wavefronts:  "8 wavefronts/req (8-way)"
    shared, some 8, some 4:             "6.67 wavefronts/req (up to 8-way)"
    device:                             "32 sectors/req (ideal 4)"

An N-way conflict is a request that needs N wavefronts where one would do (accesses of 4 bytes
or less: one a request is the ideal, 32 the most); 8- and 16-byte accesses need 2 and 4 at
best, so for them the line gives the ideal instead. The histogram's last bin holds the
requests of 32 units or more.
"""
from __future__ import annotations

BINS = 32
# the CSV columns of a site's or an array's warp requests (csvout.py appends them)
CSV_COLUMNS = ["warp_space", "requests", "wavefronts", "sectors", "lines", "ideal", "worst",
               "per_request", "ideal_per_request", "histogram", "warps_how"]


def what(w: dict) -> str:
    """The unit of a request's cost: wavefronts (shared memory) or 32-byte sectors."""
    return "wavefronts" if w["space"] == "shared" else "sectors"


def units(w: dict) -> int:
    return w.get(what(w)) or 0


def worst(w: dict) -> int | None:
    """The most units one request needed (BINS: BINS or more); None without a histogram (an
    array saved before the histogram was summed) or without requests."""
    hist = w.get("histogram")
    if not hist:
        return None
    return max((k + 1 for k, n in enumerate(hist) if n), default=None)


def _num(x: float) -> str:
    """2 decimals, trailing zeros dropped: 6.67, 3.6, 32."""
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def how_text(w: dict) -> str:
    """How the figures were obtained: `static`, `measured`, `static+measured`, and for a
    launch that measured a sample of its blocks (passes/block_sample.py) the sample's label:
    `measured, sampled 1/256 of blocks` (or approximate, without an interval)."""
    smp = w.get("sample")
    return w.get("how", "") + (f", {smp['text']}" if smp else "")


def sample_note(w: dict) -> str:
    """A sampled figure's label and 95% intervals in words ('' for an exact one):
    `sampled 1/256 of blocks; 95%: 3.52-3.61 sectors/req, 1.2M-1.3M requests`."""
    smp = w.get("sample")
    if not smp:
        return ""
    parts = []
    per = smp.get("per_request_interval")
    if per:
        parts.append(f"{_num(per[0])}-{_num(per[1])} {what(w)}/req")
    req = smp.get("requests_interval")
    if req:
        parts.append(f"{req[0]:,.0f}-{req[1]:,.0f} requests")
    return smp["text"] + (f"; 95%: {', '.join(parts)}" if parts else "")


def summary(w: dict) -> str:
    """One line of words for a site or an array (the source view's column, the panel); a
    sampled one ends with its label and intervals (sample_note)."""
    note = sample_note(w)
    return _summary(w) + (f" ({note})" if note else "")


def _summary(w: dict) -> str:
    n = w["requests"]
    if not n:
        return f"no requests ({what(w)})"
    per, ideal = units(w) / n, w["ideal"] / n
    if w["space"] != "shared":
        return f"{_num(per)} sectors/req (ideal {_num(ideal)})"
    if units(w) == w["ideal"]:
        return f"{_num(per)} wavefronts/req, conflict-free"
    top = worst(w)
    if w["ideal"] == n and top:
        # one wavefront a request is the ideal only when every request is one word a lane
        # (4 bytes or less): at most 32 wavefronts, so the last bin is exactly 32
        bins = [k for k, c in enumerate(w["histogram"]) if c]
        return f"{_num(per)} wavefronts/req ({'' if len(bins) == 1 else 'up to '}{top}-way)"
    return f"{_num(per)} wavefronts/req (ideal {_num(ideal)})"


def histogram_pairs(w: dict) -> list[tuple[str, int]]:
    """Requests by units, the bins that have any: [('4', 36), ('8', 72)] ('32+' last)."""
    hist = w.get("histogram") or []
    return [(f"{k + 1}" + ("+" if k + 1 == BINS else ""), c) for k, c in enumerate(hist) if c]


def csv_cells(w: dict | None) -> list:
    """CSV_COLUMNS' cells: empty for a site or array without statistics; wavefronts empty
    for device memory, sectors and lines for shared memory."""
    if not w:
        return [""] * len(CSV_COLUMNS)
    n, shared = w["requests"], w["space"] == "shared"
    top = worst(w)
    return [w["space"], n, units(w) if shared else "", "" if shared else units(w),
            "" if shared or w.get("lines") is None else w["lines"], w["ideal"],
            "" if top is None else top,
            f"{units(w) / n:.4f}" if n else "", f"{w['ideal'] / n:.4f}" if n else "",
            " ".join(f"{k}:{c}" for k, c in histogram_pairs(w)), how_text(w)]
