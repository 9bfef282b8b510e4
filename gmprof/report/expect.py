"""Expectations on a run's counts: `reads_per_element <= 2` checked against a run document.

Stage: report (reading). Takes Expectations (a target, a metric, a bound; read from a
`gmprof check` file by expect_file.py, or made by the pytest plugin) and one run document
(gmprof.run/2, document.py) and returns an Outcome per expectation: the value the document
holds and whether the bound holds. Every number comes from the document as `gmprof profile
--json` writes it; nothing is counted again here. docs/workflows/assertions.md is the
language's reference:

    Expectation(Target("array", "A", kernel="k"), "reads_per_element", Bound("<=", 2))
    -> Outcome(..., value=4, passed=False)
       .message: "kernel k, array A: reads_per_element is 4, expected <= 2"

A count obtained other than exactly says so in the message (`is 96 (sampled rate 0.5)`); a
thresholded count at its threshold is only a lower bound, so an upper bound on it cannot hold;
a warp statistic estimated from a sample of the blocks (--access-stats on a large grid) holds a
bound only where its whole 95% interval does (`is 7.79 (sampled 1/4 of blocks, 95% 6.84-8.75),
expected <= 8` fails).
"""
from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass

from gmprof.errors import GmprofError, Location

OPERATORS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
             "==": operator.eq, "!=": operator.ne}


class ExpectError(GmprofError):
    """A mistake in the expectations (an unknown metric, array or name, a bad bound): a usage
    error, status 2, located where the file says it."""

    kind = "bad-expectation"


# -- bounds ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """`op rhs`: rhs a number or an arithmetic expression of the launch's values (`n * n`,
    `gridDim.x * 32`: expression_value)."""

    op: str
    rhs: object  # int, float, or the expression's text

    @classmethod
    def parse(cls, value, location: Location | None = None) -> "Bound":
        """A number (meaning ==) or a string `OP EXPR` (OP one of <= < >= > == !=)."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ExpectError(f"expected a number or a string such as \"<= 2\", not "
                              f"{_toml_type(value)}", location)
        if not isinstance(value, str):
            _finite(value, location)
            return cls("==", value)
        text = value.strip()
        for op in sorted(OPERATORS, key=len, reverse=True):
            if text.startswith(op):
                rhs = text[len(op):].strip()
                if not rhs:
                    break
                expression_names(rhs, location)  # a syntax error shows before any run
                return cls(op, rhs)
        raise ExpectError(f"{value!r}: expected OP VALUE, OP one of {', '.join(OPERATORS)} "
                          "(\"<= 2\", \"== n * n\"), or a plain number", location)

    def __str__(self) -> str:
        rhs = self.rhs if isinstance(self.rhs, str) else number_text(self.rhs)
        return f"{self.op} {rhs}"


def _toml_type(value) -> str:
    return {bool: "a boolean", list: "a list", dict: "a table"}.get(type(value),
                                                                    type(value).__name__)


def _finite(value, location):
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpectError(f"{value}: a bound must be a finite number", location)


_DIMS = ("gridDim", "blockDim")
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
          ast.Pow: operator.pow}


def _parse_expr(text: str, location):
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        raise ExpectError(f"{text!r}: not an arithmetic expression (numbers, names, "
                          "+ - * / // % **, parentheses)", location) from None


def expression_names(text: str, location=None) -> set:
    """The names an expression uses (gridDim.x as 'gridDim.x'); a located error for anything
    but numbers, names, parentheses and + - * / // % **."""
    names = set()

    def walk(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in _DIMS and node.attr in ("x", "y", "z"):
            names.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            walk(node.left)
            walk(node.right)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            walk(node.operand)
        else:
            raise ExpectError(f"{text!r}: only numbers, names (a launch's scalar arguments, "
                              "gridDim.x, blockDim.y, ...) and + - * / // % ** are allowed",
                              location)

    walk(_parse_expr(text, location))
    return names


def expression_value(text: str, names: dict, location=None):
    """The value of an expression over `names` (name -> number)."""
    missing = sorted(expression_names(text, location) - set(names))
    if missing:
        known = ", ".join(sorted(names)) or "none"
        raise ExpectError(f"{text!r}: unknown name {missing[0]} (known here: {known})",
                          location)

    def value(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Attribute):
            return names[f"{node.value.id}.{node.attr}"]
        if isinstance(node, ast.UnaryOp):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        return _ARITH[type(node.op)](value(node.left), value(node.right))

    try:
        return value(_parse_expr(text, location))
    except (ZeroDivisionError, OverflowError) as e:
        raise ExpectError(f"{text!r}: {e}", location) from None


def number_text(v) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.6g}"
    return str(int(v)) if isinstance(v, float) else str(v)


# -- metrics --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """A metric's value in a document: `number`, or None when the document does not hold it
    (`why` says so); `lower`: a lower bound (counters at a threshold); `label`: how it was
    obtained when not exactly."""

    number: object = None
    why: str = ""
    lower: bool = False
    label: str = ""
    # an estimate's 95% interval (block-sampled warp statistics): a bound holds where it holds
    # over the whole interval
    interval: tuple | None = None

    def text(self) -> str:
        if self.number is None:
            return self.why
        text = (">=" if self.lower else "") + number_text(self.number)
        return f"{text} ({self.label})" if self.label else text


def _label(entry) -> str:
    short = entry.get("label_short", "exact")
    return "" if short == "exact" else short


def _array_count(key):
    def get(a):
        v = a.get(key)
        if v is None:
            return Value(why=f"not known ({key} of this array was not proven)")
        lower = bool(a.get("at_threshold")) and key in ("accesses",)
        return Value(v, lower=lower, label=_label(a))
    return get


def _per_element(stat, only=None):
    """max/min/mean of an array's per-counter counts; `only` ('reads' or 'writes'): the counts
    are accesses, reads and writes together, so they are reads only where nothing writes."""
    other = {"reads": "writes", "writes": "reads"}.get(only)

    def get(a):
        if other and a.get(other):
            also = "written" if other == "writes" else "read"
            return Value(why=f"not known: the array is also {also} ({a[other]} {other}) and "
                             "its per-element counts hold reads and writes together; use "
                             "accesses_per_element")
        # at the threshold a count is only known to be at least that (mean: some are)
        thr = a.get("threshold")
        lower = thr is not None and (a[stat] >= thr or stat == "mean" and a["at_threshold"])
        return Value(a[stat], lower=lower, label=_label(a))
    return get


def _warp(what, per=None, space=None):
    """A warp-request statistic (--access-stats) of an array's or a site's `warps`."""
    def get(entry):
        w = entry.get("warps")
        if not w:
            return Value(why="not known: no warp requests recorded (profile with "
                             "--access-stats, access_stats=True in pytest's gmprof_profile; "
                             "a site that is not counted has none)")
        if space and w["space"] != space:
            raise _WrongSpace(w["space"])
        num = w.get(what, 0)
        label, interval = _sampled(w.get("sample"), what, per)
        if per is None:
            return Value(num, label=label, interval=interval)
        if not w.get(per):  # no request: a ratio of nothing, which no bound should pass
            return Value(why="not known: no warp requests (the accesses never ran)")
        return Value(num / w[per], label=label, interval=interval)
    return get


def _sampled(sample, what, per) -> tuple:
    """(label, 95% interval) of a warp statistic estimated from a sample of the blocks
    (`warps.sample`, passes/block_sample.py); ("", None) when measured in every block. A
    statistic whose interval the document does not hold (per ideal; an approximate sample)
    has its label alone."""
    if not sample:
        return "", None
    key = {None: "requests_interval" if what == "requests" else "units_interval",
           "requests": "per_request_interval"}.get(per)
    iv = sample.get(key) if key else None
    if not iv:
        return sample["text"], None
    return (f"{sample['text']}, 95% {number_text(iv[0])}-{number_text(iv[1])}",
            (iv[0], iv[1]))


class _WrongSpace(Exception):
    pass


def _kernel_sum(key):
    def get(k):
        values = [a.get(key) for a in k["arrays"]]
        if any(v is None for v in values):
            return Value(why=f"not known (an array's {key} was not proven)")
        labels = sorted({_label(a) for a in k["arrays"]} - {""})
        lower = key == "accesses" and any(a.get("at_threshold") for a in k["arrays"])
        return Value(sum(values), lower=lower, label=", ".join(labels))
    return get


def _executions(s):
    if s["executions"] is None:
        return Value(why="not counted")
    how = s["how"]
    return Value(s["executions"], label="" if how in ("static", "measured") else
                 s.get("how_text", how))


def _warps(*args):
    get = _warp(*args)
    return {"array": get, "site": get}


# metric name -> {target kind ('kernel', 'array', 'site'): entry of the document -> Value}
METRICS = {
    "launches": {"kernel": lambda k: Value(k["run"]["launches"])},
    **{key: {"array": _array_count(key), "kernel": _kernel_sum(key)}
       for key in ("accesses", "reads", "writes", "out_of_range")},
    "untouched": {"array": _array_count("untouched")},
    "counters": {"array": _array_count("counters")},
    **{f"{what}_per_element{suffix}": {"array": _per_element(stat, only)}
       for what, only in (("accesses", None), ("reads", "reads"), ("writes", "writes"))
       for suffix, stat in (("", "max"), ("_mean", "mean"), ("_min", "min"))},
    "executions": {"site": _executions},
    "requests": _warps("requests"),
    "wavefronts": _warps("wavefronts", None, "shared"),
    "sectors": _warps("sectors", None, "device"),
    "bank_conflict_degree": _warps("wavefronts", "ideal", "shared"),
    "wavefronts_per_request": _warps("wavefronts", "requests", "shared"),
    "sectors_per_request": _warps("sectors", "requests", "device"),
    "sectors_per_ideal": _warps("sectors", "ideal", "device"),
}
# the metrics that need --access-stats
WARP_METRICS = frozenset(name for name, kinds in METRICS.items()
                         if kinds.get("site") is not None and name != "executions")


def metric(name: str, target_kind: str, location=None):
    """The getter of metric `name` for a target kind; a located error (with the closest
    names) if there is none."""
    kinds = METRICS.get(name)
    if kinds is not None and target_kind in kinds:
        return kinds[target_kind]
    import difflib

    names = sorted(n for n, k in METRICS.items() if target_kind in k)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else \
        f" (metrics of {_a(target_kind)}: {', '.join(names)})"
    if kinds is not None:
        raise ExpectError(f"{name} is not a metric of {_a(target_kind)}{hint}", location)
    raise ExpectError(f"unknown metric {name!r}{hint}", location)


def _a(kind: str) -> str:
    return {"array": "an array", "site": "a site", "kernel": "a kernel"}[kind]


# -- targets and evaluation -----------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What an expectation is about: kind 'kernel', 'array' or 'site'; name the array's name or
    the site's `LINE:COL` (or its exact text); kernel None for the run's only kernel."""

    kind: str
    name: str | None = None
    kernel: str | None = None
    location: Location | None = None  # where the file names it


@dataclass(frozen=True)
class Expectation:
    target: Target
    metric: str
    bound: Bound
    location: Location | None = None  # where the file states it


@dataclass
class Outcome:
    expectation: Expectation
    subject: str  # "kernel k, array A"
    value: Value
    expected: str  # "<= 2" with its expression's value
    passed: bool

    @property
    def message(self) -> str:
        e = self.expectation
        return f"{self.subject}: {e.metric} is {self.value.text()}, expected {self.expected}"


def kernel_entry(doc: dict, name: str | None, location=None) -> dict:
    kernels = doc["kernels"]
    names = [k["kernel"] for k in kernels]
    if name is None:
        if len(kernels) == 1:
            return kernels[0]
        raise ExpectError(f"the run profiled {len(kernels)} kernels ({', '.join(names) or 'none'}):"
                          " name one ([kernel.NAME.array.A])", location)
    for k in kernels:
        if k["kernel"] == name:
            return k
    base = [k for k in kernels if k["kernel"].split("<")[0] == name]
    if len(base) == 1:  # a template kernel by its name: matmul for matmul<16>
        return base[0]
    raise ExpectError(f"no kernel {name!r} in the run (kernels: {', '.join(names) or 'none'})",
                      location)


def _find(kernel: dict, target: Target) -> dict:
    if target.kind == "kernel":
        return kernel
    k = kernel["kernel"]
    if target.kind == "array":
        for a in kernel["arrays"]:
            if a["name"] == target.name:
                return a
        names = ", ".join(a["name"] for a in kernel["arrays"]) or "none"
        raise ExpectError(f"kernel {k} has no array {target.name!r} (arrays: {names})",
                          target.location)
    name = target.name
    position = re.fullmatch(r"(?:(.+):)?\d+:\d+", name)
    if position:  # LINE:COL, or FILE:LINE:COL for a site in another file (a header)
        tail = ("/" if position.group(1) else ":") + name
        found = [s for s in kernel["sites"] if s["location"] == name or
                 s["location"].endswith(tail)]
    else:
        found = [s for s in kernel["sites"] if s["text"] == name]
    if len(found) == 1:
        return found[0]
    if found:
        places = ", ".join(":".join(s["location"].rsplit(":", 2)[-2:]) for s in found)
        raise ExpectError(f"kernel {k}: {len(found)} sites read {name!r} (at {places}): "
                          "name one by LINE:COL", target.location)
    sites = ", ".join(f"{':'.join(s['location'].rsplit(':', 2)[-2:])} {s['text']}"
                      for s in kernel["sites"]) or "none"
    raise ExpectError(f"kernel {k} has no site {name!r} (sites: {sites})", target.location)


def subject(kernel: dict, target: Target, entry: dict) -> str:
    k = f"kernel {kernel['kernel']}"
    if target.kind == "array":
        return f"{k}, array {entry['name']}"
    if target.kind == "site":
        where = ":".join(entry["location"].rsplit(":", 2)[-2:])
        return f"{k}, site {where} {entry['text']}"
    return k


def launch_names(kernel: dict, scalars: dict | None = None) -> dict:
    """The names a bound's expression may use for a kernel: the launch's scalars (a .cu
    file's --arg values, a sample's size parameters) and gridDim/blockDim when every launch
    had the same shape."""
    names = dict(scalars or {})
    shapes = {(tuple(l["grid"]), tuple(l["block"])) for l in kernel.get("launches") or []} or \
        {(tuple(kernel["run"]["grid"]), tuple(kernel["run"]["block"]))}
    if len(shapes) == 1:
        grid, block = next(iter(shapes))
        for dim, values in (("gridDim", grid), ("blockDim", block)):
            for axis, v in zip("xyz", values):
                names[f"{dim}.{axis}"] = v
    return names


def evaluate(doc: dict, expectations, scalars: dict | None = None) -> list[Outcome]:
    """An Outcome per expectation, in order; an ExpectError (status 2) for a kernel, array,
    site or name the run does not have, or a metric the target has not."""
    out = []
    for e in expectations:
        kernel = kernel_entry(doc, e.target.kernel, e.target.location or e.location)
        entry = _find(kernel, e.target)
        get = metric(e.metric, e.target.kind, e.location)
        try:
            value = get(entry)
        except _WrongSpace as space:
            raise ExpectError(f"{e.metric} is a {'shared' if str(space) == 'device' else 'device'}"
                              f"-memory metric; {subject(kernel, e.target, entry)} is in "
                              f"{space} memory", e.location) from None
        rhs = e.bound.rhs
        if isinstance(rhs, str):
            rhs = expression_value(rhs, launch_names(kernel, scalars), e.location)
        expected = str(e.bound) if not isinstance(e.bound.rhs, str) or \
            number_text(rhs) == e.bound.rhs else f"{e.bound} = {number_text(rhs)}"
        out.append(Outcome(e, subject(kernel, e.target, entry), value, expected,
                           _holds(value, e.bound.op, rhs)))
    return out


def _holds(value: Value, op: str, rhs) -> bool:
    if value.number is None:
        return False
    if value.lower:  # the count is at least `number`: only a lower bound can be proven
        return op in (">=", ">") and OPERATORS[op](value.number, rhs)
    if value.interval is not None:  # an estimate: the bound must hold over its interval
        lo, hi = value.interval
        if op == "!=":
            return not lo <= rhs <= hi
        return OPERATORS[op](lo, rhs) and OPERATORS[op](hi, rhs)
    return OPERATORS[op](value.number, rhs)
