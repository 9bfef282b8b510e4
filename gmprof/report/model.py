"""The Report: what one profiled launch (or several of one kernel) found, per array and per site.

Produced by the runtime from decoded counters and static formulas; consumed by the renderers
(text, JSON, CSV, HTML). Every count carries how it was obtained, so nothing is shown as exact
that is not:
  exact        counted atomically at run time, or proven by a static formula
  thresholded  saturated at THR (counts >= THR are shown as `>=THR`)
  sampled      counted for a sample of accesses and scaled by 1/rate
  approximate  counted with non-atomic updates (the paper's NA): concurrent updates may be lost;
               or code gmprof cannot see may access the array (lower bounds, with a note)
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from gmprof.passes.tallies import TALLIES, WarpStats  # noqa: F401 (WarpStats re-exported)

from . import where
from .interval import merged_samples
from .labels import APPROXIMATE, EXACT, SAMPLED, THRESHOLDED  # noqa: F401 (re-exported)

# merging two launches' counts keeps the weaker label (a sum is exact only if both parts are)
_LABEL_RANK = {EXACT: 0, THRESHOLDED: 1, APPROXIMATE: 2, SAMPLED: 3}


@dataclass
class ArrayStats:
    name: str
    space: str  # shared, shared_dynamic, device, global, constant
    elem_type: str
    shape: tuple  # declared shape (ints; a pointer parameter: the launch array's shape)
    elem_size: int  # bytes per element
    unit: int  # bytes per counter (4 for shared words; the element size, at least 4, for device)
    counts: np.ndarray  # int64 per counter unit (shared: per 4-byte word, summed over blocks)
    reads: int | None = 0  # accesses by read sites (read-write sites count in both);
    # None when not proven (decode._split)
    writes: int | None = 0
    out_of_range: int = 0
    label: str = EXACT
    threshold: int | None = None
    sampling: float | None = None
    static_share: float = 0.0  # fraction of the accesses proven statically
    live_ranges: dict | None = None  # enhanced mode: {'ranges', 'accesses', 'histogram'}
    # the counter families' values per array (passes/tallies.py), by family name
    tallies: dict = field(default_factory=dict)
    # sampled counts: {'rate', 'sampler', 'accesses', 'reads', 'writes'}, each count an
    # interval.Sampled (None: not split), from which report/interval.py makes its interval
    sample: dict | None = None
    where: str = ""  # 'shared memory (SM)' / 'device memory': where its counters lived
    declared_at: str = ""
    # trace mode: who shares the elements (runtime/sharing.py), what `gmprof advise` reads
    evidence: dict | None = None
    # merge() adds into counts in place only once it has made its own copy: the first
    # launch's array may be the caller's
    _owned: bool = field(default=False, repr=False, compare=False)
    # (counts object, summary) made where the counts were (Report.to_host: on the GPU, before
    # the read-back); valid while `counts` is that object and merge() has not added into it
    _summary: tuple | None = field(default=None, repr=False, compare=False)
    # (counts object, threshold, heat grid): made on the GPU by Report.to_host, as _summary
    _heat: tuple | None = field(default=None, repr=False, compare=False)

    def summary(self) -> dict:
        """accesses, min, max, mean, untouched and at_threshold in one pass each (the
        properties below each make their own: six passes over a large array)."""
        c = self.counts
        if self._summary is not None and self._summary[0] is c and \
                self._summary[1] == self.threshold:
            return dict(self._summary[2])
        if not c.size:
            return {"accesses": 0, "min": 0, "max": 0, "mean": 0.0, "untouched": 0,
                    "at_threshold": 0}
        xp = where.xp(c)  # numpy, or CuPy for counts still on the GPU
        total = int(c.sum())
        lo, hi = int(c.min()), int(c.max())
        out = {"accesses": total, "untouched": int(c.size - int(xp.count_nonzero(c)))}
        thr = self.threshold
        if thr is None or hi < thr:
            out.update(min=lo, max=hi, mean=total / c.size, at_threshold=0)
        else:
            capped = xp.minimum(c, thr)
            out.update(min=min(lo, thr), max=thr, mean=float(capped.mean()),
                       at_threshold=int(xp.count_nonzero(c >= thr)))
        return out

    def heat(self) -> dict:
        """The heat map's grid (heatgrid.heat_grid), from the cache when made for these counts."""
        from .heatgrid import heat_grid

        h = self._heat
        if h is not None and h[0] is self.counts and h[1] == self.threshold:
            return h[2]
        grid = heat_grid(self.grid(), threshold=self.threshold)
        self._heat = (self.counts, self.threshold, grid)
        return grid

    @property
    def accesses(self) -> int:
        return int(self.counts.sum())

    @property
    def counters(self) -> int:
        return int(self.counts.size)

    def _capped(self) -> np.ndarray:
        if self.threshold is None:
            return self.counts
        return np.minimum(self.counts, self.threshold)

    @property
    def min(self) -> int:
        return int(self._capped().min()) if self.counts.size else 0

    @property
    def max(self) -> int:
        return int(self._capped().max()) if self.counts.size else 0

    @property
    def mean(self) -> float:
        return float(self._capped().mean()) if self.counts.size else 0.0

    @property
    def untouched(self) -> int:
        return int((self.counts == 0).sum())

    @property
    def saturated(self) -> int:
        if self.threshold is None:
            return 0
        return int((self.counts >= self.threshold).sum())

    def fmt(self, value) -> str:
        """A count as text: `>=THR` at or above the threshold."""
        if self.threshold is not None and value >= self.threshold:
            return f">={self.threshold}"
        if isinstance(value, float):
            return f"{value:,.2f}"
        return f"{int(value):,}"

    def grid(self) -> np.ndarray:
        """Counts in the declared shape (2-D for heat maps). Shared arrays of elements wider
        than 4 bytes are shown per element (the max of its words, equal to each word's count
        when every access reads the whole element)."""
        counts = self._capped()
        if self.unit == 4 and self.elem_size > 4 and self.elem_size % 4 == 0 and \
                counts.size % (self.elem_size // 4) == 0:
            counts = counts.reshape(-1, self.elem_size // 4).max(axis=1)
        shape = tuple(int(s) for s in self.shape if s)
        if shape and int(np.prod(shape)) == counts.size:
            return counts.reshape(shape)
        return counts


@dataclass
class SiteStats:
    id: int
    location: str  # file:line:col
    text: str
    function: str
    object: str | None
    kind: str  # read / write / read-write
    executions: int
    how: str  # 'static', 'measured', 'thresholded', 'sampled', 'approximate', 'not counted'
    strategy: str = ""  # the planner's reason
    classes: list = field(default_factory=list)
    warps: "WarpStats | None" = None  # --access-stats
    # the other counter families' values (passes/tallies.py), by family name
    tallies: dict = field(default_factory=dict)


@dataclass
class RunInfo:
    kernel: str
    backend: str  # 'gpu' or 'cpu'
    device: str
    mode: str
    grid: tuple
    block: tuple
    shared_mem: int
    launches: int = 1
    native_ms: float | None = None
    instrumented_ms: float | None = None
    timing_repeats: int = 0
    counter_bytes: int = 0
    counters_in: str = ""  # 'shared memory' or 'device memory'
    counters_why: str = ""
    # in SM mode, the shared memory each block's counters take (besides counter_bytes, all
    # in device memory); None where not known (whole programs)
    block_counter_bytes: int | None = None
    outputs_identical: bool | None = None
    timing_note: str = ""

    @property
    def overhead(self) -> float | None:
        """The paper's measure: instrumented time / native time - 1."""
        if self.native_ms and self.instrumented_ms is not None:
            return self.instrumented_ms / self.native_ms - 1.0
        return None


def launch_entry(run: RunInfo) -> dict:
    return {"grid": list(run.grid), "block": list(run.block), "shared_mem": run.shared_mem,
            "native_ms": run.native_ms, "instrumented_ms": run.instrumented_ms,
            "timing_repeats": run.timing_repeats, "outputs_identical": run.outputs_identical}


@dataclass
class Report:
    run: RunInfo
    arrays: list[ArrayStats] = field(default_factory=list)
    sites: list[SiteStats] = field(default_factory=list)
    warnings: list = field(default_factory=list)  # Diagnostic
    notes: list = field(default_factory=list)  # plain strings (e.g. trace overflow)
    clock_records: int = 0
    clock_overflow: int = 0
    # each launch merged into this report (launch_entry); empty for a single launch, whose
    # `run` says it all
    launch_runs: list = field(default_factory=list)
    # the code of the kernel and the device functions it calls (gmprof.report.source), for the
    # source view; None where the caller attached none
    source: list | None = None

    def __str__(self) -> str:
        """The summary `gmprof profile` prints, as text: print(k.report)."""
        import io

        from rich.console import Console

        from .document import document
        from .terminal import render

        out = io.StringIO()
        render(document([self]), Console(file=out, width=100, color_system=None,
                                         force_terminal=False, highlight=False))
        return out.getvalue().rstrip("\n")

    def __repr__(self) -> str:
        launches = max(1, len(self.launch_runs))
        return (f"<gmprof.Report {self.run.kernel}: {len(self.arrays)} arrays, "
                f"{len(self.sites)} sites, {launches} launch{'es' if launches > 1 else ''}, "
                f"{self.run.mode} mode on {self.run.backend}>")

    def to_dict(self) -> dict:
        """The kernel's part of a run document (gmprof.report/2), every count as a list."""
        from .frames import to_dict

        return to_dict(self)

    def to_pandas(self, kind: str | None = None):
        """DataFrames (pandas needed): kind='arrays', 'sites', 'lines' or 'counts' (one row
        per counter), or a dict of the four (gmprof/report/frames.py)."""
        from .frames import to_pandas

        return to_pandas(self, kind)

    def _repr_html_(self) -> str:
        from .frames import repr_html

        return repr_html(self)

    def array(self, name: str) -> ArrayStats:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"no array named {name!r} in the report (arrays: "
                       f"{', '.join(a.name for a in self.arrays)})")

    def site(self, line: int, text: str | None = None) -> SiteStats:
        for s in self.sites:
            if int(s.location.split(":")[-2]) == line and (text is None or s.text == text):
                return s
        raise KeyError(f"no site at line {line}")

    def to_host(self) -> "Report":
        """Every array's counts on the host (a sample's launches kept them on the GPU while
        they were merged: where.py); the renderers and the API read numpy arrays."""
        for a in self.arrays:
            if where.on_device(a.counts):
                summary = a.summary()  # four reductions on the GPU, not on the host
                heat = a.heat()  # and the heat map's blocks
                a.counts = where.counts_to_host(a.counts)
                a._owned = True
                a._summary = (a.counts, a.threshold, summary)
                a._heat = (a.counts, a.threshold, heat)
        return self

    def launches_list(self) -> list[dict]:
        """One entry per launch (its shape, times and check), merged or not."""
        return list(self.launch_runs) or [launch_entry(self.run)]

    def merge(self, other: "Report") -> "Report":
        """Add another launch of the same kernel (counts and executions sum)."""
        # each launch's own shape and times, before the sums below overwrite them
        self.launch_runs = self.launches_list() + other.launches_list()
        by_name = {a.name: a for a in self.arrays}
        for a in other.arrays:
            mine = by_name.get(a.name)
            if mine is None:
                theirs, a = a, copy.copy(a)
                a.counts = a.counts.copy()  # summed into in place by later merges
                a.tallies = {}
                for t in TALLIES:
                    if t.field == "arrays":
                        t.merge(a, theirs)  # a copy: later merges add into it
                a.sample = copy.deepcopy(a.sample)  # added into by later merges
                self.arrays.append(a)
                by_name[a.name] = a
                continue
            if mine.sample is not None or a.sample is not None:
                mine.sample = merged_samples(mine, a)  # before the counts are summed
            mine._summary = mine._heat = None  # its counts change below
            if mine.counts.shape == a.counts.shape:
                # in place: 50 launches of a 16M-element array are 50 passes, not 50 copies;
                # on the GPU when both launches' counts are still there (where.py)
                add = where.like(where.to_host(a.counts), mine.counts) \
                    if where.on_device(mine.counts) != where.on_device(a.counts) else a.counts
                if mine.counts.dtype == np.int64 and mine._owned and \
                        getattr(mine.counts.flags, "writeable", True):
                    mine.counts += add
                else:
                    mine.counts = mine.counts.astype(np.int64) + add
                    mine._owned = True
            else:
                # the parameter named another array, of another size, at this launch: its counts
                # cannot be added element by element; say so rather than show a partial sum
                note = (f"{a.name}: launches passed arrays of different sizes "
                        f"({mine.counts.size:,} and {a.counts.size:,} counters); its counts are "
                        f"those of the launches with {mine.counts.size:,} only, its reads and "
                        "writes those of every launch")
                if note not in self.notes:
                    self.notes.append(note)
            # a sum is exact only when every part is: the least exact label wins
            if _LABEL_RANK[a.label] > _LABEL_RANK[mine.label]:
                mine.label = a.label
            mine.threshold = mine.threshold if mine.threshold is not None else a.threshold
            mine.sampling = mine.sampling if mine.sampling is not None else a.sampling
            # None: a launch's split is unknown (decode._split), so the sum's is too
            mine.reads = None if None in (mine.reads, a.reads) else mine.reads + a.reads
            mine.writes = None if None in (mine.writes, a.writes) else mine.writes + a.writes
            mine.out_of_range += a.out_of_range
            if a.evidence is not None or mine.evidence is not None:
                from .evidence import merge_evidence

                mine.evidence = merge_evidence(mine.evidence, a.evidence)
            if a.live_ranges and mine.live_ranges:
                for key in ("ranges", "accesses"):
                    mine.live_ranges[key] += a.live_ranges[key]
                mine.live_ranges["histogram"] = [x + y for x, y in zip(
                    mine.live_ranges["histogram"], a.live_ranges["histogram"])]
            for t in TALLIES:
                if t.field == "arrays":
                    t.merge(mine, a)
        by_id = {s.id: s for s in self.sites}
        for s in other.sites:
            if s.id in by_id:
                by_id[s.id].executions += s.executions
                for t in TALLIES:
                    if t.field == "sites":
                        t.merge(by_id[s.id], s)
            else:
                self.sites.append(s)
        self.run.launches += other.run.launches
        for attr in ("native_ms", "instrumented_ms"):
            a, b = getattr(self.run, attr), getattr(other.run, attr)
            if a is not None and b is not None:
                setattr(self.run, attr, a + b)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        # a later launch's failed check (outputs that differ) must not be lost in the merge
        seen = {(w.kind, w.message, str(w.location)) for w in self.warnings}
        for w in other.warnings:
            if (w.kind, w.message, str(w.location)) not in seen:
                seen.add((w.kind, w.message, str(w.location)))
                self.warnings.append(w)
        return self
