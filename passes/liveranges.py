"""FindLiveRanges: the statements that start and end a shared array's live ranges (Algorithm 2).

Read-only analysis. A live range of shared data starts where a shared array is written with a
value that comes from device memory (a copy `tile[ty][tx] = in[i]`, a copy through a local
temporary `float v = in[i]; ... tile[k] = v;`, a tile-copy loop, or a value computed from device
data), and ends where device memory is written with a value that comes from that shared array
(`out[i] = tile[tx][ty]`, or a result computed from it). Values are followed through local
variables with the reaching definitions.

Returns, per kernel, a LiveRanges with the start and end sites of each shared array; the
enhanced profiling mode resets and records counters at these statements.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .accesses import READ
from .scopes import LOCAL, PARAM

_DEVICE_SPACES = ("device", "global", "constant")


@dataclass
class LiveRangeSite:
    site: object  # the AccessSite that starts or ends the live range
    shared: object  # the shared MemoryObject
    other: tuple  # the device objects on the other side (sources of a start, targets of an end)
    copy: bool  # a plain copy (True) or a computed value (False)


@dataclass
class LiveRanges:
    starts: dict = field(default_factory=dict)  # shared MemoryObject -> [LiveRangeSite]
    ends: dict = field(default_factory=dict)

    def arrays(self) -> list:
        return list(dict.fromkeys(list(self.starts) + list(self.ends)))


class FindLiveRanges:
    def __init__(self, facts):
        self.facts = facts
        self.names = facts.names
        self.reaching = facts.dataflow
        self.sites_by_node = {s.node: s for s in facts.sites}
        self._memo: dict = {}

    def run(self) -> LiveRanges:
        result = LiveRanges()
        for site in self.facts.sites:
            if site.kind == READ or site.object is None:
                continue
            value = self._stored_value(site)
            if value is None:
                continue
            sources, copy = self.sources(value)
            if site.object.is_shared:
                devices = tuple(o for o in sources if o.space in _DEVICE_SPACES)
                if devices:
                    result.starts.setdefault(site.object, []).append(
                        LiveRangeSite(site, site.object, devices, copy))
            elif site.object.space in _DEVICE_SPACES:
                for shared in (o for o in sources if o.is_shared):
                    result.ends.setdefault(shared, []).append(
                        LiveRangeSite(site, shared, (site.object,), copy))
        return result

    def _stored_value(self, site):
        parents = self.facts.parents
        node, parent = site.node, parents.get(site.node)
        while isinstance(parent, c_ast.StructRef) and parent.name is node:
            node, parent = parent, parents.get(parent)
        if isinstance(parent, c_ast.Assignment) and parent.lvalue is node:
            return parent.rvalue
        return None

    def sources(self, expr, depth: int = 0) -> tuple[tuple, bool]:
        """(memory objects the value of `expr` is read from, whether it is a plain copy)."""
        if expr is None or depth > 20:
            return (), False
        key = expr
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = ((), False)  # cycle guard (loop-carried temporaries)
        out: list = []
        copy = False
        site = self.sites_by_node.get(expr)
        if site is not None and site.object is not None:
            out.append(site.object)
            copy = True
        elif isinstance(expr, c_ast.ID):
            sym = self.names[expr]
            if sym is not None and sym.kind in (LOCAL, PARAM):
                defs = self.reaching.at(expr)
                copy = bool(defs)
                for d in defs:
                    rhs = d.rhs if d.kind in ("init", "assign") else None
                    if rhs is None:
                        copy = False
                        continue
                    objs, c = self.sources(rhs, depth + 1)
                    out.extend(objs)
                    copy = copy and c
        elif isinstance(expr, (c_ast.Cast, X.CxxCast)):
            return self.sources(expr.expr, depth + 1)
        else:
            for node in _reads_in(expr):
                objs, _ = self.sources(node, depth + 1)
                out.extend(objs)
        result = (tuple(dict.fromkeys(out)), copy)
        self._memo[key] = result
        return result


def _reads_in(expr):
    """The maximal sub-expressions of expr that are memory reads or variables."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (c_ast.ArrayRef, c_ast.ID)) or (
                isinstance(node, c_ast.UnaryOp) and node.op == "*") or (
                isinstance(node, c_ast.StructRef) and node.type == "->"):
            yield node
            continue
        if isinstance(node, c_ast.StructRef):
            stack.append(node.name)
            continue
        stack.extend(child for _, child in node.children())


def find_live_ranges(facts) -> LiveRanges:
    return FindLiveRanges(facts).run()
