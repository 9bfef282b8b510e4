"""A saved run document, checked against its JSON Schema before anything renders it.

Stage: report (reading). Takes a parsed gmprof.run/2 document (`gmprof report`, `gmprof diff`)
and returns nothing, or raises an InputError located at the first value that breaks
gmprof/report/run.schema.json, as a JSON pointer:

    run.json: error: /kernels/0/arrays/2/reads: -5 is less than the minimum of 0

The schema is the one docs/report.md describes and tests/report/test_schema.py checks every
document against, validated with jsonschema. The per-counter lists (an array's `counts`, its
heat map's cells: tens of thousands of numbers) are checked by a fast loop first and only a
value it doubts goes to jsonschema, which gives the message: validating them one by one through
jsonschema takes about 20 us a number, seconds for a large run.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from . import countcodec

SCHEMA_FILE = Path(__file__).with_name("run.schema.json")
_BULK = ("counts",)                 # an array's per-counter counts
_CELLS = ("mean", "min", "max")     # its heat map's cells


@functools.lru_cache(maxsize=1)
def _validators():
    import jsonschema

    schema = full_schema()
    cls = jsonschema.Draft202012Validator
    defs = schema["$defs"]
    count = cls(defs["count"])
    cell = cls({"type": ["number", "null"], "minimum": 0})
    return cls(schema), count, cell


def full_schema() -> dict:
    """run.schema.json with each counter family's field (passes/tallies.py: its `schema`) in
    the site or the array it belongs to: the one schema of a run document."""
    from gmprof.passes.tallies import TALLIES

    schema = json.loads(SCHEMA_FILE.read_text())
    for t in TALLIES:
        if t.schema is not None:
            where = "site" if t.field == "sites" else "array"
            schema["$defs"][where]["properties"][t.name] = t.schema
    return schema


def _pointer(path) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _short(value) -> str:
    """A value as JSON writes it (null, "12"), shortened."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= 60:
        return text
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return text[:57] + "..."


def _message(error, path) -> str:
    """jsonschema's message for an error, its value written as JSON and shortened."""
    message = error.message.replace(repr(error.instance), _short(error.instance), 1)
    where = _pointer(path)
    return f"{where}: {message}" if where else message


def _is_count(x) -> bool:
    return type(x) is int and 0 <= x < 1 << 63  # (an int64: run.schema.json $defs/count)


def _is_cell(x) -> bool:
    return x is None or (type(x) in (int, float) and x >= 0)


def _first_bad(values, good, path):
    """(path, value) of the first value in a (nested) list that `good` refuses, else None."""
    if not isinstance(values, list):
        return None
    for i, x in enumerate(values):
        if isinstance(x, list):
            bad = _first_bad(x, good, path + [i])
            if bad:
                return bad
        elif not good(x):
            return path + [i], x
    return None


def _bulk_errors(doc, count, cell):
    """Errors in the per-counter lists, and the document with them emptied (for the rest of
    the schema, which then sees valid empty lists)."""
    kernels = doc.get("kernels")
    if not isinstance(kernels, list):
        return [], doc
    doc = dict(doc, kernels=list(kernels))
    found = []
    for ki, k in enumerate(doc["kernels"]):
        if not isinstance(k, dict) or not isinstance(k.get("arrays"), list):
            continue
        k = doc["kernels"][ki] = dict(k, arrays=list(k["arrays"]))
        for ai, a in enumerate(k["arrays"]):
            if not isinstance(a, dict):
                continue
            a = k["arrays"][ai] = dict(a)
            base = ["kernels", ki, "arrays", ai]
            checks = [(a, key, base + [key], count) for key in _BULK]
            if isinstance(a.get("heatmap"), dict):
                a["heatmap"] = dict(a["heatmap"])
                checks += [(a["heatmap"], key, base + ["heatmap", key], cell) for key in _CELLS]
            for holder, key, path, validator in checks:
                values = holder.get(key)
                if not isinstance(values, list):
                    continue  # null, or a type the schema refuses with its own message
                good = _is_count if validator is count else _is_cell
                # counts are one flat list (a list in it is refused); heat-map cells are rows
                bad = _first_bad(values, good, path) if validator is not count else next(
                    ((path + [i], x) for i, x in enumerate(values) if not good(x)), None)
                if bad:
                    errors = list(validator.iter_errors(bad[1]))
                    if errors:
                        found.append(_message(errors[0], bad[0]))
                holder[key] = []
    return found, doc


def _grid_dims(cells, depth: int):
    """The lengths of a grid of `depth` (1 or 2) dimensions of numbers, None if it is not
    one (a ragged or deeper list)."""
    rows = [cells] if depth == 1 else cells
    if not all(isinstance(row, list) and not any(isinstance(c, list) for c in row)
               for row in rows):
        return None
    if depth == 1:
        return [len(cells)]
    widths = {len(row) for row in rows}
    return None if len(widths) > 1 else [len(rows), widths.pop() if widths else 0]


def _array_errors(doc):
    """What the schema cannot say about an array's figures: they agree with its counters."""
    for ki, k in enumerate(doc["kernels"]):
        for ai, a in enumerate(k["arrays"]):
            where, n = f"/kernels/{ki}/arrays/{ai}", a["counters"]
            counts = a["counts"]
            if isinstance(counts, dict):  # packed (countcodec.py): it decodes, none negative
                try:
                    counts = countcodec.decode(counts)
                except countcodec.CountsError as e:
                    yield f"{where}/counts: {e}"
                    continue
                if counts.size and int(counts.min()) < 0:
                    yield f"{where}/counts: packed counts hold a negative count"
            if counts is not None and len(counts) != n:
                yield f"{where}/counts: {len(counts):,} counts for {n:,} counters"
            if a["min"] > a["max"]:
                yield f"{where}/min: {a['min']} is more than the maximum, {a['max']}"
            for key in ("untouched", "at_threshold"):
                if a[key] > n:
                    yield f"{where}/{key}: {a[key]:,} is more than the {n:,} counters"
        # a whole program's launch captured into a CUDA graph is one entry, `repeat` times
        listed = sum(int(x.get("repeat", 1)) for x in k["launches"])
        if k["run"]["launches"] != listed:
            yield (f"/kernels/{ki}/run/launches: {k['run']['launches']} where \"launches\" "
                   f"lists {listed}")


def _heat_errors(doc):
    """What the schema cannot say about a heat map: its cells make the grid its shape and
    block describe (the HTML page draws cell i at rows i*block...), and its shape holds the
    declared shape's elements."""
    for ki, k in enumerate(doc["kernels"]):
        for ai, a in enumerate(k["arrays"]):
            h, where = a["heatmap"], f"/kernels/{ki}/arrays/{ai}/heatmap"
            shape, block, declared = h["shape"], h["block"], h["declared"]
            if len(block) != len(shape):
                yield f"{where}/block: {block} for a grid of shape {shape}"
                continue
            if math.prod(declared) != math.prod(shape):
                yield (f"{where}/shape: {shape} does not hold the declared shape "
                       f"{declared}'s {math.prod(declared)} elements")
                continue
            want = [0] if 0 in shape else [-(-n // b) for n, b in zip(shape, block)]
            for key in ("mean", "min", "max"):
                cells = h[key]
                if cells is None or (not cells and 0 in shape):
                    continue
                if _grid_dims(cells, len(shape)) != want:
                    yield (f"{where}/{key}: not a grid of {' x '.join(map(str, want))} cells "
                           f"(shape {shape} in blocks of {block})")
                    break


def check(doc: dict, name: str) -> None:
    """Raise an InputError naming the first value of `doc` that the schema refuses."""
    import jsonschema

    from gmprof.errors import InputError, Location

    full, count, cell = _validators()
    bulk, rest = _bulk_errors(doc, count, cell)
    error = jsonschema.exceptions.best_match(full.iter_errors(rest))
    if error is not None:
        message = _message(error, error.absolute_path)
    elif bulk:
        message = bulk[0]
    else:
        message = next(_array_errors(doc), None) or next(_heat_errors(doc), None)
        if message is None:
            return
    raise InputError(message, Location(name, 0, 0))  # the file as a whole: the pointer says where


__all__ = ["check", "full_schema", "SCHEMA_FILE"]
