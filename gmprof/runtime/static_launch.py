"""Static sites at one launch: their formulas evaluated with the launch's values.

Stage: host runtime, after the launch is checked. Takes the kernel's classified sites, the plan
of the mode (which sites it leaves to a formula), the LaunchInput and a way to ask the native
module for a file-scope variable's size; returns StaticCounts per SiteClass (counts per counter
unit, out-of-range accesses, executions: static_counts.py does the counting) and the ids of the
sites whose formula could not be evaluated at this launch, which are counted on the device
instead (the caller re-plans with them demoted).

Repeated launches with the same values (iterations of a solver) reuse the counts: the cache is
keyed by the SiteClass object and everything of the launch a formula can read. Across
processes, counts are kept by the hash of the evaluated formula (static_cache.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gmprof.passes import symbolic as S
from gmprof.passes.plan import STATIC

from . import static_cache
from .static_counts import count_prepared, prepare
from .static_warps import warp_stats


@dataclass(frozen=True)
class StaticSites:
    counts: dict  # SiteClass -> StaticCount
    demoted: frozenset  # site ids counted on the device at this launch
    warps: dict = None  # SiteClass -> per-warp statistics (static_warps.py), --access-stats
    # SiteClass -> (prepared formula, executions): the statistics again at another base
    warp_inputs: dict = None


class StaticLaunchCounts:
    """Evaluates static sites' formulas at launches of one program, with a cache."""

    def __init__(self, program):
        self.program = program
        self._cache: dict = {}
        self._warps: dict = {}  # (cache key, base mod 128) -> statistics or None

    def evaluate(self, plan, li, global_size, warps: bool = False) -> StaticSites:
        """global_size(name) -> bytes of a file-scope variable (from the native module).
        warps: also each site's per-warp statistics; a site whose formula does not give them
        is demoted (counted by a hook, which measures them)."""
        ka = self.program.kernels[li.kernel]
        env = li.env
        counts: dict = {}
        warp: dict = {}
        warp_inputs: dict = {}
        demoted = set()
        for sc in ka.classes:
            sp = plan.sites.get(sc.site)
            if sp is None or sp.strategy != STATIC:
                continue
            key = (sc, li.grid, li.block, li.shared_mem, tuple(li.template_args),
                   tuple(sorted((k, _hashable(v)) for k, v in env.scalars.items())),
                   tuple(int(a.nbytes) for a in li.args if _is_array(a)))
            try:
                if key not in self._cache:
                    inputs = self._inputs(ka, sc, li, global_size)
                    self._cache[key] = (inputs, static_cache.cached(
                        inputs, lambda: count_prepared(inputs)))
                inputs, counts[sc] = self._cache[key]
                if warps:
                    # (at base 0: a run's copies of the arrays are 256-byte aligned, as
                    # cudaMalloc's; at_bases redoes a site whose array starts elsewhere)
                    executions = int(counts[sc].executions)
                    stats = self._warp_stats(key, inputs, executions, 0)
                    if stats is None:
                        raise S.Unknown("its warps' requests are past the enumeration budget")
                    warp[sc] = stats
                    warp_inputs[sc] = (key, inputs, executions)
            except S.Unknown:
                demoted.add(sc.site.id)
        # a site demoted in one context is counted by its hook in all
        counts = {sc: c for sc, c in counts.items() if sc.site.id not in demoted}
        warp = {sc: w for sc, w in warp.items() if sc.site.id not in demoted}
        return StaticSites(counts, frozenset(demoted), warp, warp_inputs)

    def _warp_stats(self, key, inputs, executions: int, base: int):
        wkey = (key, base % 128)
        if wkey not in self._warps:
            self._warps[wkey] = warp_stats(inputs, executions, base)
        return self._warps[wkey]

    def at_bases(self, static: StaticSites, base_of) -> dict:
        """The static sites' warp statistics with each device array where the instrumented
        run had it: base_of(SiteClass) -> its array's first byte, or None (a shared array, or
        the base assumed). A site whose statistics cannot be had at that base (past the
        enumeration budget, where its base-0 ones were not) is left without them."""
        out = {}
        for sc, stats in (static.warps or {}).items():
            base = base_of(sc)
            if base is not None and base % 128:
                key, inputs, executions = static.warp_inputs[sc]
                stats = self._warp_stats(key, inputs, executions, int(base))
            if stats is not None:
                out[sc] = stats
        return out

    def _count(self, ka, sc, li, global_size):
        """One static site's StaticCount at the launch (bench/static_sites.py reads it)."""
        inputs = self._inputs(ka, sc, li, global_size)
        return static_cache.cached(inputs, lambda: count_prepared(inputs))

    def _inputs(self, ka, sc, li, global_size) -> tuple:
        """The site's formula evaluated at the launch (static_counts.prepare)."""
        env = li.env
        target, _ = ka.targets.get(sc, (None, None))
        obj = target or sc.site.object
        if obj is None:
            raise S.Unknown("no target object")
        # the counter unit and count of the object at this launch
        if obj.is_shared:
            if obj.space == "shared_dynamic":
                nbytes = li.shared_mem
            else:
                shape = env.shape(obj)
                if shape is None:
                    raise S.Unknown("shared array size unknown")
                nbytes = int(env.sizeof(obj.elem_type)) * int(np.prod(shape) if shape else 1)
            unit, n_units, per_word = 4, -(-nbytes // 4), True
        else:
            elem = int(env.sizeof(obj.elem_type))
            unit = max(elem, 4)
            if obj.space == "device":
                idx = next(i for i, p in enumerate(li.facts.function.params)
                           if getattr(p, "name", None) == obj.name)
                nbytes = int(li.args[idx].nbytes)
            else:
                shape = env.shape(obj)
                if shape is not None:
                    nbytes = elem * int(np.prod(shape)) if shape else elem
                else:
                    nbytes = global_size(obj.name)
            n_units, per_word = -(-nbytes // unit), False
        size = int(S.evaluate(sc.formula.access_size, env))
        # (the same launch in the next process, a sample run again, reads the counts back
        # from static_cache)
        return prepare(sc.formula, env, li.grid, li.block, n_units, unit, size, per_word,
                       nbytes)


def _hashable(v):
    return v.item() if isinstance(v, np.generic) else v


def _is_array(a) -> bool:
    return hasattr(a, "nbytes") and hasattr(a, "dtype") and hasattr(a, "shape") and \
        getattr(a, "ndim", 0) >= 0 and not isinstance(a, np.generic)


__all__ = ["StaticLaunchCounts", "StaticSites"]
