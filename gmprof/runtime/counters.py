"""Counters for one launch: their layout, the launch description, and reading them back.

Stage: host runtime, between planning and running. Takes the plan, the checked launch and the
backend; lays out
  - a shadow array per profiled device object (one counter per element: unit = the element
    size, at least 4 bytes), in device memory;
  - the block's counter area: a header, one execution count per site, then the shared objects'
    counters (one per 4-byte word, at the mode's counter width) and, in enhanced mode, live-range
    statistics; in shared memory when it fits the per-block limit beside the kernel's own shared
    memory (SM), otherwise in device memory, and the report says why;
fills the launch description (layout.LAUNCH, copied into the module's `__gmprof_launch`), and
reads the counters back as host arrays for runtime/decode.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gmprof.errors import GmprofError
from gmprof.passes import block_sample as BS
from gmprof.passes import tallies as T
from gmprof.passes.hooks import HOOK, LR_START, DmGather, DmTwin
from gmprof.report import where

from . import layout as LY
from . import widen

TRACE_CAPACITY = LY.TRACE_CAPACITY
CLOCK_CAPACITY = LY.CLOCK_CAPACITY


@dataclass
class SlotLayout:
    """A slot's counters at one launch."""

    slot: object
    kind: int  # layout.KIND_DEVICE or KIND_SHARED
    n_counters: int = 0
    unit: int = 4
    elem_size: int = 4
    shape: tuple = ()
    base: int = 0
    bytes: int = 0
    area_offset: int = 0
    lr_offset: int = 0
    counters: object = None  # device array (device objects)
    oor: object = None
    fallback: bool = False  # a gather's pseudo-slot whose index memory is aliased
    # a slot whose twin sites the gather's walk counts at this launch (unlike_twins); None:
    # it has none
    twin_ok: bool | None = None
    # its first record in the launch's per-element records (passes/tallies.py); None: none
    tally_first: int | None = None


@dataclass
class Area:
    """The block's counter area: its size in 4-byte words, the shared objects' counters in it,
    where the live-range statistics start, and where it lives."""

    words: int
    obj_counters: int
    lr_offset: int
    sm: bool = False
    why: str = ""
    replicas: int = 1
    ws_rows: int = 0  # --access-stats: rows of warp statistics at the area's end (SM)
    ws_sites: tuple = ()  # the site id of each row


def layout_slots(program, plan, li, native) -> dict:
    """The slots this launch fills, keyed by ('param', index) / ('slot', index).
    native() -> the native module (where file-scope variables' addresses are found)."""
    env = li.env
    facts = li.facts
    reachable = {facts.name} | {callee.name for _, callee in
                                program.kernels[facts.name].calls}
    out: dict = {}
    profile = plan.mode.profile
    for slot in plan.slots:
        obj = slot.object
        if (profile == "shm" and slot.kind == "device") or \
                (profile == "dm" and slot.kind == "shared"):
            continue  # not profiled in this mode: no counters
        if slot.kind == "device" and slot.kernel == facts.name:
            idx = next(i for i, p in enumerate(facts.function.params)
                       if getattr(p, "name", None) == obj.name)
            arr = li.args[idx]
            elem = env.elem_size(obj.elem_type, arr)
            unit = max(elem, 4)
            nbytes = int(arr.nbytes)
            ls = SlotLayout(slot, LY.KIND_DEVICE, -(-nbytes // unit), unit, elem,
                            tuple(arr.shape), 0, nbytes)
            if slot.gather is not None:
                # a gather's pseudo-slot over the index array (passes/gathers.py): counted per
                # access instead when that memory is also another argument's
                ls.fallback = _aliased(li.args, idx)
                out[("gather", idx, slot.index)] = ls
            else:
                out[("param", idx)] = ls
        elif slot.kind == "device" and slot.kernel is None:
            if not any(sp.slot is slot and sp.site.function.name in reachable
                       for sp in plan.sites.values()):
                continue
            module = native()
            try:
                addr, size = module.get_global(obj.name)
            except Exception as exc:
                raise GmprofError(f"cannot find the file-scope variable {obj.name}: {exc}",
                                  kind="no-variable")
            elem = env.elem_size(obj.elem_type)
            unit = max(elem, 4)
            shape = env.shape(obj)
            if shape is not None:
                size = elem * int(np.prod(shape)) if shape else elem
            else:
                shape = (size // max(elem, 1),)
            out[("slot", slot.index)] = SlotLayout(slot, LY.KIND_DEVICE, -(-size // unit), unit,
                                                   elem, shape, addr, size)
        elif slot.kind == "shared":
            if not any(o.function in reachable for o in slot.objects):
                continue
            elem = env.elem_size(obj.elem_type)
            if slot.dynamic:
                nbytes = li.shared_mem
                shape = (nbytes // max(elem, 1),)
            else:
                shape = env.shape(obj)
                if shape is None:
                    raise GmprofError(f"the size of shared array {obj.name} "
                                      f"({obj.shape_text}) is not known at launch",
                                      kind="unknown-size")
                nbytes = elem * int(np.prod(shape)) if shape else elem
            out[("slot", slot.index)] = SlotLayout(slot, LY.KIND_SHARED, -(-nbytes // 4), 4,
                                                   elem, shape, 0, nbytes)
    unlike_twins(plan, out)
    return out


def unlike_twins(plan, slots) -> frozenset:
    """The ids of the gathers whose index memory is aliased at this launch, and of the twin
    sites (passes/gathers.py) whose gather's index walk cannot count them; twin_ok set on the
    slots whose twins it counts: the index memory
    not aliased, and the twin's array alike to the index array (as many bytes, elements of the
    counter unit's size), so that element e of the walk is element e of the twin's array,
    inside it exactly when inside the index."""
    by_slot = {ls.slot: ls for ls in slots.values()}
    # gathers whose index memory is another argument's too: counted per access
    unlike = {sp.site.id for sp in plan.sites.values() if isinstance(sp.hook, DmGather) and
              by_slot.get(sp.hook.pseudo) is not None and by_slot[sp.hook.pseudo].fallback}
    for sp in plan.sites.values():
        if not isinstance(sp.hook, DmTwin):
            continue
        walk, twin = by_slot.get(sp.hook.pseudo), by_slot.get(sp.slot)
        if twin is None:
            continue
        alike = walk is not None and not walk.fallback and \
            twin.elem_size == twin.unit == walk.elem_size == walk.unit and \
            twin.n_counters == walk.n_counters and twin.bytes == walk.bytes
        twin.twin_ok = alike and twin.twin_ok is not False
        if not alike:
            unlike.add(sp.site.id)
    return frozenset(unlike)


def _aliased(args, idx: int) -> bool:
    """Whether argument idx's memory overlaps another array argument's."""
    def span(a):
        ptr = getattr(getattr(a, "data", None), "ptr", None)
        if ptr is None:
            ptr = a.__array_interface__["data"][0]
        return int(ptr), int(ptr) + int(a.nbytes)

    lo, hi = span(args[idx])
    for k, a in enumerate(args):
        if k != idx and hasattr(a, "nbytes") and hasattr(a, "shape"):
            a_lo, a_hi = span(a)
            if a_lo < hi and lo < a_hi:
                return True
    return False


def gather_values(slots, li, backend) -> dict:
    """For each gather pseudo-slot, the index array's contents (never written by the kernel:
    what the gather's index reads read), keyed like its counters with 'values' in front: a
    copy where the array is (the GPU for a GPU launch; decode folds the gather there)."""
    out = {}
    for key, ls in slots.items():
        if key[0] == "gather" and not ls.fallback:
            arr = li.args[key[1]]
            out[("values",) + key] = arr.reshape(-1).copy() if where.on_device(arr) else \
                np.asarray(backend.to_host(arr)).reshape(-1)
    return out


def area(plan, slots, mode) -> Area:
    """Offsets in the block's area (sets each shared slot's area_offset and lr_offset)."""
    size = LY.counter_dtype(mode.counter_bits).itemsize
    offset = 0
    for ls in slots.values():
        if ls.kind == LY.KIND_SHARED:
            ls.area_offset = offset
            offset += ls.n_counters
    words = LY.area_words(len(plan.sites), offset * size)
    lr_offset = 0
    if mode.enhanced:
        lr_offset = words
        for ls in slots.values():
            if ls.kind == LY.KIND_SHARED and ls.slot.live_ranges:
                ls.lr_offset = words
                words += LY.LR_STRIDE
        if words == lr_offset:
            lr_offset = 0
        words += words & 1  # copies of the area stay 8-byte aligned
    measured = ()
    if mode.warps:
        # a row of u64 warp statistics for each measured site, each measured block's in
        # device memory (describe: block_rows)
        measured = tuple(sorted(sp.site.id for sp in plan.sites.values()
                                if sp.strategy in (HOOK, LR_START)))
    return Area(words, offset, lr_offset, ws_rows=len(measured), ws_sites=measured)


def place_area(a: Area, mode, backend, static_smem: int, shared_mem: int, n_blocks: int,
               counted: bool = True) -> Area:
    """SM when the mode asks for it and the area fits beside the kernel's shared memory.
    counted=False: the kernel updates no counter (Plan.counts_on_device): no shared memory
    is taken from it; the area stays in device memory, zero."""
    sm = mode.sm and not mode.trace
    if a.ws_rows and (not sm or not BS.shift(n_blocks, mode.warps_blocks)):
        # the warp statistics go to one row a site for all blocks: no per-block sums (they
        # serve a sampled launch's interval; every block measured, they would take a row
        # each in device memory)
        a.ws_rows, a.ws_sites = 0, ()
    area_bytes = a.words * 4
    need = static_smem + ((shared_mem + 15) & ~15) + area_bytes
    why = "SM mode: the block's counters live in shared memory" if sm else \
        "device memory (" + ("trace mode" if mode.trace else "no SM in this mode") + ")"
    if not counted:
        a.sm, a.why, a.replicas = False, ("none: every count of this kernel comes from "
                                          "formulas at launch (no counter on the device)"), 1
        return a
    if sm and need > backend.max_shared_per_block:
        sm = False
        why = (f"device memory: the kernel's {static_smem + shared_mem} bytes of shared "
               f"memory plus {area_bytes} bytes of counters exceed the "
               f"{backend.max_shared_per_block}-byte limit per block")
    a.sm, a.why = sm, why
    a.replicas = LY.area_replicas(n_blocks, sm)
    return a


def dynamic_shared_bytes(a: Area, shared_mem: int) -> int:
    """The instrumented launch's dynamic shared memory: the user's, then the area in SM."""
    return ((shared_mem + 15) & ~15) + a.words * 4 if a.sm else shared_mem


def padded_counters(n: int, counter_t, backend_name: str = "gpu") -> int:
    """Counters to allocate for n: on a GPU a whole number of 32-bit words (at least one),
    because an 8-bit counter there is updated through a CAS of its aligned word (gmprof.cuh
    counter_cas), which must not reach past the buffer. The CPU backend's updates touch only
    the counter's own bytes: no padding, so its red zones (poisoned under AddressSanitizer)
    start right after the last counter."""
    size = np.dtype(counter_t).itemsize
    if backend_name == "cpu":
        return max(n, 1)
    return -(-max(n, 1) * size // 4) * 4 // size


def describe(backend, plan, slots, a: Area, mode, grid3, block3, shared_mem, launch_number=0,
             deferred: int = 0):
    """(the launch description, its buffers): counters allocated, zeroed, their addresses in
    the description. deferred: the kernel's deferred walks (passes/defer.py)."""
    counter_t = LY.counter_dtype(mode.counter_bits)
    area_global = backend.zeros(max(a.words, 1) * a.replicas, np.uint32)
    # a test build's counters start near 2^32 (widen.counter_origin): the first copy of the
    # area's 32-bit object counters, and every device counter (read_back takes it off again)
    origin = widen.counter_origin if mode.counter_bits == 32 else 0
    if origin and a.obj_counters:
        start = LY.sites_end(len(plan.sites))
        area_global[start:start + a.obj_counters] = origin
    unknown_oor = backend.zeros(1, np.uint64)
    launch = LY.new_launch()
    launch["flags"] = (LY.FLAG_WARP_UNIFORM_OK if block3[0] % 32 == 0 else 0) | \
        ((a.ws_rows << LY.FLAG_WS_ROWS_SHIFT) if a.sm else 0)
    launch["area_words"] = a.words
    launch["dyn_user_bytes"] = shared_mem
    launch["n_sites"] = len(plan.sites)
    launch["obj_counters"] = a.obj_counters
    launch["lr_offset"] = a.lr_offset
    launch["area_global"] = backend.address(area_global)
    launch["area_replicas"] = a.replicas
    launch["unknown_oor"] = backend.address(unknown_oor)
    buffers = {"area": area_global, "unknown_oor": unknown_oor,
               "area_shape": (a.replicas, a.words, len(plan.sites), a.obj_counters)}
    # the device's object scans (pointers resolved at run time) stop after the last slot filled
    launch["n_objects"] = 1 + max((ls.slot.index for ls in slots.values()), default=0)
    for ls in slots.values():
        o = launch["obj"][ls.slot.index]
        o["kind"] = ls.kind
        o["n_counters"] = ls.n_counters
        o["unit"] = ls.unit
        o["unit_shift"] = ls.unit.bit_length() - 1 if ls.unit & (ls.unit - 1) == 0 else 255
        ls.oor = backend.zeros(1, np.uint64)
        o["oor"] = backend.address(ls.oor)
        if ls.kind == LY.KIND_DEVICE:
            # a slot that range sites count into carries its difference array after its
            # counters (n_counters + 1 entries, see gmprof.cuh's dm_range); padding after both
            extra = ls.n_counters + 1 if ls.slot.ranges else 0
            # (plan.py plans ranges with 32- and 64-bit counters only: the entries wrap at
            # their width)
            assert not extra or np.dtype(counter_t).itemsize >= 4, \
                "range sites with narrow counters"
            ls.counters = backend.zeros(
                padded_counters(ls.n_counters + extra, counter_t, backend.name), counter_t)
            o["base"], o["bytes"] = ls.base, ls.bytes
            o["reserved"][0] = (1 if ls.fallback else 0) | (2 if ls.twin_ok else 0)
            o["counters"] = backend.address(ls.counters)
            if origin:
                ls.counters[:ls.n_counters] = origin
        else:
            o["area_offset"] = ls.area_offset
            o["lr_offset"] = ls.lr_offset
            o["bytes"] = ls.bytes  # the hooks' range check (the last word may be padding)
    if LY.device_disjoint((ls.base, ls.bytes) for ls in slots.values()
                          if ls.kind == LY.KIND_DEVICE):
        launch["flags"] |= LY.FLAG_DEVICE_DISJOINT
    if mode.trace:
        buffers["trace"] = backend.zeros(4 * TRACE_CAPACITY, np.uint64)
        buffers["trace_count"] = backend.zeros(1, np.uint64)
        launch["trace"] = backend.address(buffers["trace"])
        launch["trace_capacity"] = TRACE_CAPACITY
        launch["trace_count"] = backend.address(buffers["trace_count"])
    if mode.sampling is not None:
        threads = block3[0] * block3[1] * block3[2] * grid3[0] * grid3[1] * grid3[2]
        buffers["sample_state"] = backend.zeros(threads, np.uint32)
        launch["sample_state"] = backend.address(buffers["sample_state"])
        launch["sample_threshold"] = round(mode.sample_rate * 2 ** 32)
        launch["sampler"] = 1 if mode.sampler == "paper" else 0
        # every launch its own draws (gmprof.cuh Sampler): a solver's launches, alike, would
        # otherwise keep the same accesses each time, and their sum vary as one launch's times
        # the launches rather than as independent samples
        rng = np.random.default_rng([mode.sampling_seed, launch_number])
        launch["seed"] = int(rng.integers(1, 2 ** 32))
        # the paper's sequence: exactly `ones` ones at random places (Mode.paper_sequence)
        seq_len, ones = mode.paper_sequence()
        seq = np.zeros(seq_len, np.uint8)
        seq[rng.choice(seq_len, ones, replace=False)] = 1
        buffers["sample_seq"] = backend.to_device(seq)
        launch["sample_seq"] = backend.address(buffers["sample_seq"])
        launch["sample_seq_len"] = seq_len
        buffers["sample_sq"] = backend.zeros(max(len(plan.sites), 1), np.float64)
        launch["sample_sq"] = backend.address(buffers["sample_sq"])
    if mode.enhanced:
        buffers["clock"] = backend.zeros(2 * CLOCK_CAPACITY, np.uint64)
        buffers["clock_count"] = backend.zeros(1, np.uint64)
        launch["clock_log"] = backend.address(buffers["clock"])
        launch["clock_capacity"] = CLOCK_CAPACITY
        launch["clock_count"] = backend.address(buffers["clock_count"])
    _tallies(backend, plan, slots, mode, launch, buffers, grid3, block3, a)
    if mode.warps and not mode.trace:
        # a large grid's hooked sites measured in 1 block in 2^s (passes/block_sample.py);
        # the seed: the launch's number, so that a solver's launches measure other blocks
        blocks = int(grid3[0]) * int(grid3[1]) * int(grid3[2])
        s = BS.shift(blocks, mode.warps_blocks)
        launch["stats_sampling"] = BS.field_value(s, launch_number)
        if s:
            buffers["warps_sample"] = (blocks, s, launch_number & BS.SEED_MASK)
        rows = a.ws_rows if a.sm else 0
        if deferred or rows:
            measured = BS.measured_count(blocks, s, launch_number & BS.SEED_MASK)
            block_buffers(backend, launch, buffers, block3, deferred, rows, measured)
    return launch, buffers


# Deferred walks (passes/defer.py, gmprof.cuh Deferred): bytes a record.
DEFERRED_BYTES = 40


def block_buffers(backend, launch, buffers, block3, walks: int, rows: int,
                  measured: int) -> None:
    """The measured blocks' own buffers (gmprof.cuh block_rank): `rows` statistics rows each
    (block_rows), the records of `walks` deferred walks a thread each (passes/defer.py), and
    the ticket that ranks them; buffers['replay_blocks']: the replay kernel's blocks."""
    threads = int(block3[0]) * int(block3[1]) * int(block3[2])
    ticket = backend.zeros(1, np.uint32)
    buffers["defer_ticket"], buffers["defer_capacity"] = ticket, measured
    launch["defer_ticket"], launch["defer_capacity"] = backend.address(ticket), measured
    if rows:
        buffers["block_rows"] = backend.zeros(max(measured * rows * T.WS_STRIDE, 1), np.uint64)
        launch["block_rows"] = backend.address(buffers["block_rows"])
    if walks:
        records = backend.zeros(measured * threads * walks * DEFERRED_BYTES // 8, np.uint64)
        buffers["defer"], buffers["replay_blocks"] = records, measured
        launch["defer"], launch["defer_walks"] = backend.address(records), walks


def check_ranks(buffers, backend) -> None:
    """The measured blocks take tickets modulo the host's count of them (their ranks): a
    launch whose tickets do not end on a multiple of it measured other blocks than the host's
    estimate assumes (rows and records shared by two blocks)."""
    ticket = buffers.get("defer_ticket")
    if ticket is not None and int(backend.to_host(ticket)[0]) % buffers["defer_capacity"]:
        raise GmprofError("the blocks that measured their access statistics were not the "
                          f"{buffers['defer_capacity']:,} gmprof counted (passes/block_sample.py):"
                          " their statistics rows or records overlap", kind="launch")


def _tallies(backend, plan, slots, mode, launch, buffers, grid3, block3, a) -> None:
    """The counter families' storage (passes/tallies.py): a per-site family's buffer at its
    Launch field; the per-element families' records (every per-element family's words, one
    record per counter of each slot of their spaces) at Launch::tally, each object's first
    record in Object::reserved[1]."""
    on = T.active(mode)
    for t in on:
        # (the command line checked the mode; a Mode built in Python is checked here)
        why = t.check(mode) or t.check_launch(grid3, block3)
        if why:
            raise GmprofError(why, kind="launch")
        if t.per == "site":
            t.storage(backend, plan, a, launch, buffers)
    spaces = {space for t in on if t.per == "element" for space in t.spaces}
    if not spaces:
        return
    kinds = {"device": LY.KIND_DEVICE, "shared": LY.KIND_SHARED}
    first = 0
    for key, ls in slots.items():
        if key[0] != "gather" and any(ls.kind == kinds[s] for s in spaces):
            ls.tally_first = first
            launch["obj"][ls.slot.index]["reserved"][1] = first
            first += ls.n_counters
    if first >= 2 ** 32:
        raise GmprofError(f"{first:,} elements are more than the per-element counters can "
                          "number (2^32)", kind="launch")
    buffers["tally"] = backend.zeros(max(first, 1) * T.record_words(), np.uint64)
    launch["tally"] = backend.address(buffers["tally"])
    launch["tally_words"] = T.record_words()


def point_at(launch, slots, kernel: str, backend, args) -> None:
    """Aim the kernel's own device-array slots at the arrays of one run (args: that run's
    copies, by parameter index)."""
    for key, ls in slots.items():
        if ls.kind == LY.KIND_DEVICE and ls.slot.kernel == kernel:
            launch["obj"][ls.slot.index]["base"] = backend.address(args[key[1]])


def device_counts(raw, n: int, ranges: bool):
    """A device object's counts (int64, a fresh array where raw lives: numpy or CuPy): its
    counters, plus (range sites) the prefix sum of its difference array, in the device's
    modular arithmetic at the counters' width (an entry's -W is 2^32 - W, or 2^64 - W)."""
    xp = where.xp(raw)
    raw = xp.asarray(raw)
    if ranges:
        width = raw.dtype
        runs = xp.cumsum(raw[n:2 * n], dtype=width)  # wraps as the device's atomics do
        total = raw[:n] + runs  # (at the counters' width, wrapping as the device's would)
        return total.astype(xp.int64)
    return raw[:n].astype(xp.int64)


def shared_counts(area_u32, n_sites: int, ls, counter_bits: int) -> np.ndarray:
    """A shared slot's counts (int64, a fresh array) from its block area's words."""
    ctype = LY.counter_dtype(counter_bits)
    start = LY.sites_end(n_sites) * 4 + ls.area_offset * ctype.itemsize
    raw = area_u32.view(np.uint8)[start:start + ls.n_counters * ctype.itemsize]
    return raw.view(ctype).astype(np.int64)


def aim_at_module(slots, module) -> None:
    """Aim the file-scope variables' slots at the instrumented module's own copies: its kernel
    accesses those, not the native module's (whose addresses only gave the layout)."""
    for key, ls in slots.items():
        if key[0] == "slot" and ls.kind == LY.KIND_DEVICE:
            try:
                ls.base = module.get_global(ls.slot.object.name)[0]
            except Exception as exc:
                raise GmprofError(f"cannot find the file-scope variable "
                                  f"{ls.slot.object.name} in the instrumented module: {exc}",
                                  kind="no-variable")


def counter_bytes(slots, area_words: int, mode) -> int:
    size = LY.counter_dtype(mode.counter_bits).itemsize
    total = area_words * 4  # the device-memory copies of the area
    for ls in slots.values():
        if ls.kind == LY.KIND_DEVICE:
            extra = ls.n_counters + 1 if ls.slot.ranges else 0
            total += padded_counters(ls.n_counters + extra,
                                     LY.counter_dtype(mode.counter_bits)) * \
                size + 8  # (as a GPU allocates them; the out-of-range count is a u64)
    return total


def check_guards(backend, buffers, slots) -> None:
    """Counters never write outside their buffers: a damaged guard is gmprof's bug."""
    check = getattr(backend, "check_guards", None)
    if check is None:
        return
    arrays = [v for v in buffers.values() if isinstance(v, np.ndarray)]
    arrays += [x for ls in slots.values() for x in (ls.counters, ls.oor)
               if isinstance(x, np.ndarray)]
    damaged = check(arrays)
    if damaged:
        raise RuntimeError(f"gmprof's counters wrote outside their buffers: {damaged}")


def read_back(slots, buffers, backend, mode, keep_on_device: bool = False) -> dict:
    """The counters as host arrays: 'area' (int64 words, replicas folded), 'area_bytes', per
    device slot its counters, ('oor',) + key per slot, 'unknown_oor', and the trace and clock
    log counts. keep_on_device: device slots' counters stay on the GPU (a sample's launches
    are added there; report/where.py), except in trace mode (decoded on the host)."""
    keep = keep_on_device and backend.name == "gpu" and not mode.trace
    # copies: on the CPU backend "device" buffers are the host arrays themselves, and the
    # timing repetitions that follow keep counting into them
    raw = np.array(backend.to_host(buffers["area"]), copy=True)
    replicas, area_words, n_sites, obj_counters = buffers["area_shape"]
    if replicas > 1:
        raw = LY.fold_replicas(raw, replicas, area_words, n_sites, obj_counters,
                               mode.counter_bits, mode.threshold)
    out = {"area": raw.astype(np.int64), "sites": LY.site_counts(raw, n_sites),
           "unknown_oor": int(backend.to_host(buffers["unknown_oor"])[0])}
    out["area_bytes"] = raw.view(np.uint8)
    origin = widen.counter_origin if mode.counter_bits == 32 else 0
    for key, ls in slots.items():
        if ls.kind == LY.KIND_DEVICE:
            out[key] = device_counts(ls.counters if keep else backend.to_host(ls.counters),
                                     ls.n_counters, ls.slot.ranges) - origin
        else:
            out[key] = shared_counts(raw, n_sites, ls, mode.counter_bits) - origin
        out[("oor",) + key] = int(backend.to_host(ls.oor)[0])
    if mode.trace:
        n = int(backend.to_host(buffers["trace_count"])[0])
        out["trace_total"] = n
        out["trace"] = np.array(backend.to_host(buffers["trace"])[:4 * min(n, TRACE_CAPACITY)],
                                copy=True).reshape(-1, 4)
    if mode.enhanced:
        n = int(backend.to_host(buffers["clock_count"])[0])
        out["clock_total"] = n
    # the counter families' words (passes/tallies.py): per site, and the per-element records
    for t in T.active(mode):
        if t.per == "site":
            out[t.name] = t.read_back(backend, buffers, n_sites)
    if "warps_sample" in buffers:
        blocks, s, seed = buffers["warps_sample"]
        out["warps_sample"] = T.by_name("warps").sample_back(backend, buffers, n_sites,
                                                              blocks, s, seed)
    if "tally" in buffers:
        out["tally"] = np.array(backend.to_host(buffers["tally"]), dtype=np.uint64,
                                copy=True).reshape(-1, T.record_words())
    if mode.sampling is not None and "sample_sq" in buffers:
        out["sample_sq"] = np.array(backend.to_host(buffers["sample_sq"]), dtype=np.float64,
                                    copy=True)
    return out


__all__ = ["SlotLayout", "Area", "layout_slots", "unlike_twins", "area", "place_area", "dynamic_shared_bytes",
           "describe", "padded_counters", "point_at", "aim_at_module", "gather_values",
           "device_counts", "counter_bytes",
           "check_guards", "read_back",
           "TRACE_CAPACITY", "CLOCK_CAPACITY"]
