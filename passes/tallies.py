"""Counter families beyond the access counts, each declared once: its storage, read-back,
decoding and report fields.

An access count (hooks.py) lives in storage every launch has: a site's execution count, an
object's counters. A family counts something else, per site or per element, in storage of its
own that exists only while its option is on (its GMPROF_* macro compiles its device code in).
Each family says, in one place:

  storage     per "site" (`words` u64 each, at the Launch field `launch_field`) or per
              "element" of the slots of `spaces` (`words` u64 each, at word `at` of the
              element's record in the launch's per-element records: Launch::tally, each
              object's first record in Object::reserved[1], `record_words()` a record);
              runtime/counters.py allocates it, fills the description and reads it back
  planning    `every_access`: every access reaches its hook (no loop counted once per entry,
              no weighted first iteration); `hooks_statics`: the spaces whose static sites get
              a hook too (plan.py)
  decoding    `site_values` (per site) or `array_value` (per element) turn the raw words into
              a value (runtime/decode.py), put on the Report's SiteStats / ArrayStats (`get`,
              `put`) and summed over launches (`merge`, report/model.py)
  the report  `to_doc` (a numpy array in it is an array of counts: report/document.py writes
              it as an array's `counts` are written), `from_doc` (report/fromdoc.py),
              `schema` (its field's JSON Schema, added to run.schema.json's site or array by
              report/check.py), `finish` (what it adds to the kernel's document once every site
              is in), `table` (its terminal table, report/terminal.py)
  option      `option` and `help` (cli_commands.py), `check` (modes it cannot run in)
  constants   its gmprof.cuh enums (tests/runtime/test_layout_constants.py checks them)

    family         per      words  option           report field
    WarpRequests   site     36     --access-stats   a site's and an array's `warps`
    Sharing        element  3      --sharing        an array's `sharing`

A new family is one class here and its entry in TALLIES, its device code in gmprof.cuh (inside
`#if GMPROF_<NAME>`, called from the hooks), and its tests (docs/architecture.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import block_sample as BS
from .block_sample import BlockSample
from .hooks import HOOK, LR_START


class Tally:
    """A counter family (the base: what most families share)."""

    name = ""  # the report's field, the read-back key, Mode.tallies' entry
    option: str | None = None  # the command line's flag
    help = ""
    per = "site"  # "site" or "element"
    words = 0  # u64 words per site or per element
    spaces = ("device",)  # per element: the slots that get records
    launch_field: str | None = None  # per site: the Launch field holding its buffer's address
    every_access = True
    hooks_statics: tuple = ()
    constants: dict = {}
    field = "sites"  # where its value goes: "sites" (SiteStats) or "arrays" (ArrayStats)
    schema: dict | None = None

    @property
    def macro(self) -> str:
        return "GMPROF_" + self.name.upper()

    @property
    def dest(self) -> str:
        return (self.option or "--" + self.name).lstrip("-").replace("-", "_")

    def on(self, mode) -> bool:
        return self.name in getattr(mode, "tallies", ())

    def check(self, mode) -> str | None:
        """Why it cannot run in this mode (None: it can)."""
        return None

    def check_launch(self, grid, block) -> str | None:
        return None

    # -- storage and read-back (per-site families; runtime/counters.py calls these with its
    # backend, the launch's Area and its Launch record) -----------------------------------
    def storage(self, backend, plan, area, launch, buffers) -> None:
        """Allocate the family's per-site buffer (zeroed) and point its Launch field at it."""
        buffers[self.name] = backend.zeros(max(len(plan.sites), 1) * self.words, np.uint64)
        launch[self.launch_field] = backend.address(buffers[self.name])

    def read_back(self, backend, buffers, n_sites: int):
        """The family's words after the launch: one row of `words` u64 per site."""
        return np.array(backend.to_host(buffers[self.name]), dtype=np.uint64,
                        copy=True).reshape(-1, self.words)

    # -- decoding --------------------------------------------------------------------------
    def site_values(self, plan, counters, info) -> dict:
        """site -> value (per-site families)."""
        return {}

    def array_value(self, ls, records, info):
        """An array's value from its per-element words (records: n_counters x words, u64)."""
        return None

    # -- the Report ------------------------------------------------------------------------
    def get(self, stats):
        return stats.tallies.get(self.name)

    def put(self, stats, value) -> None:
        if value is not None:
            stats.tallies[self.name] = value

    def merge(self, mine, other) -> None:
        """Add other's value (another launch of the same kernel) into mine's."""
        v = self.get(other)
        if v is None:
            return
        w = self.get(mine)
        self.put(mine, self.copy(v) if w is None else self.add(w, v))

    def copy(self, value):
        return value

    def add(self, mine, other):
        return mine

    # -- the document ----------------------------------------------------------------------
    def to_doc(self, value) -> dict:
        return dict(value)

    def from_doc(self, entry: dict, decode_counts):
        return None

    def finish(self, kernel: dict) -> None:
        """What it adds to the kernel's document once every site and array is in."""

    def table(self, kernel: dict):
        """(title, header, rows) of its terminal table, or None."""
        return None


# ---------------------------------------------------------------- per-warp requests

# per site, u64 each (gmprof.cuh GMPROF_WARPS, warp_record)
WS_REQUESTS, WS_UNITS, WS_IDEAL, WS_LINES, WS_HIST = 0, 1, 2, 3, 4
WS_BINS = 32  # requests by wavefronts (shared) or sectors (device): 1..32, the last 32 or more
WS_STRIDE = WS_HIST + WS_BINS
# a sampled launch (passes/block_sample.py): per area row, the measured blocks' r^2, u^2 and
# r u (doubles; gmprof.cuh flush), after the area rows' site table
WS_SQUARES = 3


@dataclass
class WarpStats:
    """A site's warp requests (--access-stats; the model: runtime/warp_requests.py).
    units: wavefronts (shared memory) or 32-byte sectors (device memory), summed over the
    requests; ideal: what a conflict-free (shared) or perfectly coalesced (device) request
    needs; lines: 128-byte lines (device); histogram[k]: requests of k + 1 units (the last:
    32 or more). how: 'static' (from the formula) or 'measured' (by the hook)."""

    space: str  # 'shared' or 'device'
    requests: int
    units: int
    ideal: int
    lines: int
    histogram: list
    how: str
    # measured in 1 block in R (passes/block_sample.py; None: every block, exact)
    sample: BlockSample | None = None

    def add(self, other: "WarpStats") -> None:
        self.requests += other.requests
        self.units += other.units
        self.ideal += other.ideal
        self.lines += other.lines
        self.histogram = [a + b for a, b in zip(self.histogram, other.histogram)]
        if other.how != self.how:
            self.how = "static+measured"
        if self.sample is not None or other.sample is not None:
            # a static part, or a launch measured in every block, adds no variance
            mine = self.sample or BlockSample((1,) if self.how != "static" else (), 0, 0)
            if other.sample is not None:
                mine.add(other.sample)
            elif other.how != "static":
                mine.add(None)
            self.sample = mine

    @property
    def per_request(self) -> float:
        return self.units / self.requests if self.requests else 0.0

    @property
    def ideal_per_request(self) -> float:
        return self.ideal / self.requests if self.requests else 0.0

    def to_dict(self) -> dict:
        return {"space": self.space, "requests": self.requests,
                ("wavefronts" if self.space == "shared" else "sectors"): self.units,
                "ideal": self.ideal, "lines": self.lines if self.space == "device" else None,
                "histogram": list(self.histogram), "how": self.how,
                **({"sample": self.sample.doc(self.requests, self.units)}
                   if self.sample is not None else {})}


class WarpRequests(Tally):
    """Per-warp requests per site (issue 27): shared wavefronts (bank conflicts), device
    sectors and lines (coalescing); static sites' from their formulas (runtime/static_warps.py,
    passed in counters['static_warps']), the others by their hooks (gmprof.cuh warp_shared,
    warp_device)."""

    name = "warps"
    option = "--access-stats"
    help = ("per-warp requests of every site: shared-memory wavefronts (bank conflicts) and "
            "device-memory sectors (coalescing)")
    per = "site"
    words = WS_STRIDE
    launch_field = "warp_stats"
    constants = {"WS_REQUESTS": WS_REQUESTS, "WS_UNITS": WS_UNITS, "WS_IDEAL": WS_IDEAL,
                 "WS_LINES": WS_LINES, "WS_HIST": WS_HIST, "WS_BINS": WS_BINS,
                 "WS_STRIDE": WS_STRIDE, "WS_SQUARES": WS_SQUARES}
    # (the fields are run.schema.json's $defs/warps, which an array's sum shares)
    schema = {
        "description": "--access-stats: the site's warp requests (docs/report.md)",
        "allOf": [{"$ref": "#/$defs/warps"}, {"required": ["lines", "histogram", "how"]}]
    }

    # a count made once per loop entry (a range, a weighted first iteration) keeps its kind,
    # with the whole loop's requests costed beside it (a walk: hooks.walk_call) or a
    # per-access warp_dm/warp_sm call at the access (hooks.warp_call); static sites stay
    # static, their requests computed at the launch (runtime/static_warps.py)
    every_access = False

    def on(self, mode) -> bool:
        return bool(getattr(mode, "warps", False))  # (Mode's own flag: it came first)

    def storage(self, backend, plan, area, launch, buffers) -> None:
        """A row per site, then (counters in shared memory) the rows the blocks flush from
        their counter areas (gmprof.cuh flush: the measured sites' statistics are summed in
        the block's area, `area.ws_rows` rows for the sites `area.ws_sites`), then each
        site's area row (0xffffffff: none), two u32 to a u64, little-endian."""
        n, rows = max(len(plan.sites), 1), area.ws_rows if area.sm else 0
        # (then, for a sampled launch, WS_SQUARES doubles per area row: gmprof.cuh flush)
        ws = backend.zeros((n + rows) * WS_STRIDE + (-(-n // 2) + WS_SQUARES * rows
                                                      if rows else 0), np.uint64)
        if rows:
            row_of = np.full(2 * -(-n // 2), 0xFFFFFFFF, np.uint32)
            row_of[list(area.ws_sites)] = np.arange(rows, dtype=np.uint32)
            ws[(n + rows) * WS_STRIDE:(n + rows) * WS_STRIDE + len(row_of) // 2] = \
                backend.to_device(row_of.view(np.uint64))
        buffers[self.name] = ws
        buffers[self.name + "_sites"] = area.ws_sites[:rows]
        launch[self.launch_field] = backend.address(ws)

    def read_back(self, backend, buffers, n_sites: int):
        """Per site: its row plus the blocks' flushed area row."""
        raw = np.array(backend.to_host(buffers[self.name]), dtype=np.uint64, copy=True)
        sites, n = list(buffers[self.name + "_sites"]), max(n_sites, 1)
        rows = raw[:(n + len(sites)) * WS_STRIDE].reshape(-1, WS_STRIDE)
        per_site = rows[:n].copy()
        per_site[sites] += rows[n:]
        return per_site

    def sample_back(self, backend, buffers, n_sites: int, blocks: int, s: int, seed: int):
        """A sampled launch's ingredients (passes/block_sample.py): the rate, the grid's
        blocks and those measured, and each area row's site with its squares."""
        raw = np.array(backend.to_host(buffers[self.name]), dtype=np.uint64, copy=True)
        sites, n = list(buffers[self.name + "_sites"]), max(n_sites, 1)
        start = (n + len(sites)) * WS_STRIDE + -(-n // 2)
        sq = raw[start:start + WS_SQUARES * len(sites)].view(np.float64).reshape(-1, WS_SQUARES)
        return {"rate": 1 << s, "blocks": blocks,
                "measured": BS.measured_count(blocks, s, seed),
                "squares": {int(site): tuple(float(x) for x in sq[k])
                            for k, site in enumerate(sites)}}

    def get(self, stats):
        return stats.warps

    def put(self, stats, value) -> None:
        stats.warps = value

    def copy(self, value):
        sample = value.sample
        return WarpStats(**{**vars(value), "sample": None if sample is None else
                            BS.BlockSample(**vars(sample))})

    def add(self, mine, other):
        mine.add(other)
        return mine

    def site_values(self, plan, counters, info) -> dict:
        """site -> WarpStats: a hooked site's from the device's per-site statistics, a static
        site's from its formulas, summed over its contexts."""
        out: dict = {}
        raw = counters.get(self.name)
        smp = counters.get(self.name + "_sample")  # a launch measured in some blocks only
        for sp in plan.sites.values():
            if sp.strategy in (HOOK, LR_START) and raw is not None and sp.site.id < len(raw):
                row = raw[sp.site.id]
                if int(row[WS_REQUESTS]):
                    vals = [int(x) for x in row[:WS_HIST + WS_BINS]]
                    sample = None
                    if smp is not None and smp.get("weighted"):
                        # whole programs: weighted on the device, no per-block sums
                        sample = BS.BlockSample(smp["rates"], 0, 0, None, None, None,
                                                BS.WEIGHTED_WHY)
                    elif smp is not None:
                        # the measured blocks' sums x blocks / measured blocks
                        sample = BS.site_sample(vals[:2], smp["squares"].get(sp.site.id),
                                                smp["blocks"], smp["measured"], smp["rate"])
                        vals = [BS.scaled(v, smp["blocks"], smp["measured"]) for v in vals]
                    out[sp.site] = WarpStats(
                        _space(sp), vals[WS_REQUESTS], vals[WS_UNITS], vals[WS_IDEAL],
                        vals[WS_LINES], vals[WS_HIST:WS_HIST + WS_BINS], "measured", sample)
        for sc, st in (counters.get("static_warps") or {}).items():
            sp = plan.sites.get(sc.site)
            w = out.get(sc.site)
            if w is None:
                out[sc.site] = WarpStats(_space(sp), st["requests"], st["units"], st["ideal"],
                                         st["lines"], list(st["histogram"]), "static")
            else:
                w.add(WarpStats(w.space, st["requests"], st["units"], st["ideal"],
                                st["lines"], list(st["histogram"]), "static"))
        return out

    def to_doc(self, value) -> dict:
        return value.to_dict()

    def from_doc(self, entry, decode_counts):
        units = entry.get("wavefronts" if entry["space"] == "shared" else "sectors", 0)
        return WarpStats(entry["space"], entry["requests"], units, entry["ideal"],
                         entry["lines"] or 0, list(entry["histogram"]), entry["how"],
                         BS.from_doc(entry.get("sample")))

    def finish(self, kernel: dict) -> None:
        """Each array's warp requests: its sites' summed (requests, wavefronts or sectors, the
        ideal, lines, the histogram; `how` static, measured, or static+measured when its sites
        differ)."""
        for a in kernel["arrays"]:
            ws = [s["warps"] for s in kernel["sites"]
                  if s.get("warps") and s["object"] == a["name"]]
            if not ws:
                continue
            unit = "wavefronts" if ws[0]["space"] == "shared" else "sectors"
            hows = {w["how"] for w in ws}
            a["warps"] = {"space": ws[0]["space"], "requests": sum(w["requests"] for w in ws),
                          unit: sum(w.get(unit, 0) for w in ws),
                          "ideal": sum(w["ideal"] for w in ws),
                          "lines": None if unit == "wavefronts" else
                          sum(w["lines"] or 0 for w in ws),
                          "histogram": [sum(col) for col in zip(*(w["histogram"] for w in ws))],
                          "how": hows.pop() if len(hows) == 1 else "static+measured"}
            if any(w.get("sample") for w in ws):
                a["warps"]["sample"] = _array_sample(a["warps"], ws, unit)


def _array_sample(total: dict, ws: list, unit: str) -> dict:
    """An array's `sample` from its sites' (ws: their `warps`): their rates and blocks; its
    intervals add the sampled sites' half-widths around the array's sum (a bound: the sites'
    block sums may be correlated, and their covariances are not kept); none per request;
    approximate if any site is."""
    samples = [w["sample"] for w in ws if w.get("sample")]
    first = samples[0]
    approx = any(s["label"] == "approximate" for s in samples)
    rates = sorted({r for s in samples for r in s["rates"]})
    out = {"label": "approximate" if approx else "sampled", "rate": rates[-1],
           "rates": rates, "blocks": first["blocks"],
           "measured_blocks": first["measured_blocks"],
           "text": next((s["text"] for s in samples if s["label"] == "approximate"),
                        first["text"]),
           "variance": None, "requests_interval": None, "units_interval": None,
           "per_request_interval": None}
    if not approx:
        for key, field in (("requests_interval", "requests"), ("units_interval", unit)):
            below = sum(w[field] - w["sample"][key][0] for w in ws if w.get("sample"))
            above = sum(w["sample"][key][1] - w[field] for w in ws if w.get("sample"))
            out[key] = [max(total[field] - below, 0.0), total[field] + above]
    return out


def _space(sp) -> str:
    slot = sp.slot if sp is not None else None
    return "shared" if slot is not None and slot.kind == "shared" else "device"


# ---------------------------------------------------------------- sharing between blocks

@dataclass
class SharingStats:
    """An array's sharing between blocks and warps (--sharing), per counter unit (an element,
    or a 4-byte word of an array of narrower elements): how many blocks and how many warps
    touched it. label: 'exact' where each block's accesses to an element came in one turn
    (the CPU backend runs blocks one after another), else 'approximate' (an upper bound)."""

    blocks: np.ndarray  # int64 per unit
    warps: np.ndarray  # int64 per unit
    label: str
    label_text: str

    def summary(self) -> dict:
        touched = self.blocks > 0
        n = int(touched.sum())
        return {"touched": n,
                "blocks_max": int(self.blocks.max()) if self.blocks.size else 0,
                "blocks_mean": float(self.blocks[touched].mean()) if n else 0.0,
                "reused_across_blocks": int((self.blocks > 1).sum()),
                "warps_max": int(self.warps.max()) if self.warps.size else 0,
                "warps_mean": float(self.warps[touched].mean()) if n else 0.0,
                "reused_across_warps": int((self.warps > 1).sum())}


_EXACT_TEXT = ("exact: each block's accesses to an element came in one turn (the CPU backend "
               "runs blocks one after another)")
_UPPER_TEXT = ("approximate, an upper bound: blocks that ran at the same time and touched an "
               "element in turns count once a turn (the distinct blocks and warps are at most "
               "these counts)")


class Sharing(Tally):
    """Per element of each device array: how many distinct blocks and warps touched it
    (issue 27: reuse across blocks is what makes an array worth staging in shared memory).
    Each element's record holds the last block to touch it with the mask of that block's
    warps that have, and two counts: the times the element passed to another block, and the
    times a warp touched it first in its block's turn; the hooks update them with one 64-bit
    compare-and-swap of the record's state (gmprof.cuh share_element). Exact when each
    block's accesses to the element come in one turn, as on the CPU backend; on a GPU, blocks
    running at once may take turns: an upper bound, labelled approximate. Every access to a
    device array is hooked (its static sites too) and recorded before sampling: the counts
    do not depend on the mode's sampling, threshold or atomics."""

    name = "sharing"
    option = "--sharing"
    help = ("per element of each device array: how many distinct blocks and warps touched it "
            "(reuse across blocks: worth staging in shared memory)")
    per = "element"
    words = 3  # the state (last block + 1 << 32 | its warps' mask), blocks, warps
    spaces = ("device",)
    field = "arrays"
    hooks_statics = ("device",)
    # (SHARE_AT: its first word in an element's record, at(self); the test checks them)
    constants = {"SHARE_AT": 0, "SHARE_STATE": 0, "SHARE_BLOCKS": 1, "SHARE_WARPS": 2,
                 "SHARE_WORDS": 3}
    schema = {
        "description": "--sharing: blocks and warps per element (docs/report.md)",
        "type": "object",
        "required": ["label", "label_text", "touched", "blocks_max", "blocks_mean",
                     "reused_across_blocks", "warps_max", "warps_mean",
                     "reused_across_warps", "blocks_per_element", "warps_per_element"],
        "properties": {
            "label": {"enum": ["exact", "approximate"]},
            "label_text": {"type": "string", "minLength": 1},
            "touched": {"$ref": "#/$defs/count"},
            "blocks_max": {"$ref": "#/$defs/count"},
            "blocks_mean": {"type": "number", "minimum": 0},
            "reused_across_blocks": {"$ref": "#/$defs/count"},
            "warps_max": {"$ref": "#/$defs/count"},
            "warps_mean": {"type": "number", "minimum": 0},
            "reused_across_warps": {"$ref": "#/$defs/count"},
            "blocks_per_element": {"$ref": "#/$defs/counts"},
            "warps_per_element": {"$ref": "#/$defs/counts"}
        }
    }

    def check(self, mode):
        if mode.trace:
            return "--sharing counts in the hooks, not in trace mode (use another --mode)"
        if mode.profile == "shm":
            return "--sharing counts device arrays: not with --profile shm"
        return None

    def check_launch(self, grid, block):
        blocks = int(np.prod([int(x) for x in grid]))
        if blocks >= 2 ** 32 - 1:
            return (f"--sharing numbers blocks in 32 bits: a grid of {blocks:,} blocks is "
                    "too large")
        return None

    def array_value(self, ls, records, info):
        exact = getattr(info, "backend", None) == "cpu"
        return SharingStats(records[:, 1].astype(np.int64), records[:, 2].astype(np.int64),
                            "exact" if exact else "approximate",
                            _EXACT_TEXT if exact else _UPPER_TEXT)

    def copy(self, value):
        return SharingStats(value.blocks.copy(), value.warps.copy(), value.label,
                            value.label_text)

    def add(self, mine, other):
        # another launch's blocks are other blocks: their counts add
        if mine.blocks.shape != other.blocks.shape:
            mine.label, mine.label_text = "approximate", (
                "of the launches whose array had this size only (launches passed arrays of "
                "different sizes)")
            return mine
        mine.blocks = mine.blocks + other.blocks
        mine.warps = mine.warps + other.warps
        if other.label != "exact":
            mine.label, mine.label_text = other.label, other.label_text
        return mine

    def to_doc(self, value) -> dict:
        return {"label": value.label, "label_text": value.label_text, **value.summary(),
                "blocks_per_element": value.blocks, "warps_per_element": value.warps}

    def from_doc(self, entry, decode_counts):
        blocks = decode_counts(entry["blocks_per_element"])
        warps = decode_counts(entry["warps_per_element"])
        if blocks is None or warps is None:
            return None
        return SharingStats(blocks, warps, entry["label"], entry["label_text"])

    def table(self, kernel):
        rows = []
        for a in kernel["arrays"]:
            s = a.get(self.name)
            if not s:
                continue
            rows.append([a["name"], f"{s['touched']:,}", f"{s['blocks_max']:,}",
                         f"{s['blocks_mean']:,.2f}", f"{s['reused_across_blocks']:,}",
                         f"{s['warps_max']:,}", f"{s['warps_mean']:,.2f}",
                         f"{s['reused_across_warps']:,}", s["label"]])
        if not rows:
            return None
        header = [("array", "fold"), ("touched", "num"), ("blocks max", "num"),
                  ("blocks mean", "num"), ("in 2+ blocks", "num"), ("warps max", "num"),
                  ("warps mean", "num"), ("in 2+ warps", "num"), ("counted", "word")]
        return ("sharing per element (--sharing): distinct blocks and warps that touched it; "
                "means over the elements touched", header, rows)


# ---------------------------------------------------------------- the table

TALLIES = (WarpRequests(), Sharing())


def by_name(name: str) -> Tally:
    return next(t for t in TALLIES if t.name == name)


def active(mode) -> tuple:
    """The families on in this mode."""
    return tuple(t for t in TALLIES if t.on(mode))


def per_element() -> tuple:
    return tuple(t for t in TALLIES if t.per == "element")


def record_words() -> int:
    """u64 words of one element's record: every per-element family's words, in table order
    (a family's place in it, `at`, is a constant of its device code)."""
    return sum(t.words for t in per_element())


def at(family: Tally) -> int:
    """The family's first word in an element's record."""
    out = 0
    for t in per_element():
        if t is family:
            return out
        out += t.words
    raise ValueError(f"{family.name} has no per-element words")


def every_access(mode) -> bool:
    """Whether a family on needs every access to reach its hook (plan.py: no weighted first
    iteration, no range counted once per loop entry)."""
    return any(t.every_access for t in active(mode))


def hooks_statics(mode, slot) -> bool:
    """Whether a static site of slot gets a hook anyway (a family on counts what its formula
    does not give)."""
    kind = slot.kind if slot is not None else None
    return any(kind in t.hooks_statics for t in active(mode))


def check(mode) -> str | None:
    """Why the families on cannot run in this mode (None: they can)."""
    for t in active(mode):
        why = t.check(mode)
        if why:
            return why
    return None


__all__ = ["Tally", "TALLIES", "WarpRequests", "WarpStats", "Sharing", "SharingStats", "active", "at", "by_name",
           "check", "every_access", "hooks_statics", "per_element", "record_words",
           "WS_REQUESTS", "WS_UNITS", "WS_IDEAL", "WS_LINES", "WS_HIST", "WS_BINS",
           "WS_STRIDE"]
