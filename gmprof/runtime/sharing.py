"""Who shares what: the evidence `gmprof advise` reasons from, computed from a trace-mode launch.

Stage: host runtime, beside the decoder (decode.py calls it in trace mode). Per-element counts
say how often an element was accessed, not by whom; advice needs by whom. From the trace (every
access: site, address, block, thread, in the order the accesses ran) this module finds, per
device array:

- staging (shared memory): the read sites worth staging (a site that reads an element more than
  once in a block; a group of sites that read the same elements of a block between them, a
  stencil's neighbours; a site reading back what its own block wrote), and the device reads a
  staged kernel would still make: one per element per block whose first access to it in the
  block is a read (an element the block writes first needs none), plus every read of the sites
  left alone; only where an element passes between the block's threads (else registers do).
  Also the elements a block would stage (the largest block's footprint) and
  elements written by one block and read by another (then staging is not safe without a
  grid-wide barrier).
- registers: the reads a thread makes again of an element no other thread writes (each such
  (thread, element) pair needs one read), and the most such elements one thread holds;

and per shared array, its reads and those of a word the reading thread wrote last itself, the
shared arrays never live at the same time as it in any block (`disjoint_from`: one's last
access in the block comes before the other's first: they could share storage); per
two-dimensional shared array, each site's warp requests' wavefronts as the accesses
were and with each row padded by one element (the lanes' offsets regrouped into requests by
site, block, warp and the lane's k-th execution of the site: exact for warps that run the site
together, as these kernels' do), by the model of warp_requests.py.

Every number is a count of this launch's accesses (summed over launches by Report.merge).
"""
from __future__ import annotations

import numpy as np

from . import layout as LY
from .warp_requests import shared_request

READS = ("read", "read-write")
WRITES = ("write", "read-write")
# requests per site the padding model regroups (beyond: the first ones, and it says so)
MAX_REQUESTS = 20000


def sharing_evidence(plan, per_slot, trace, block_threads: int) -> dict:
    """array name -> its evidence (a dict of plain ints, lists and dicts: JSON as it is)."""
    if trace is None:
        return {}
    sites, objs, sizes, addrs, blocks, threads = trace
    kind = {sp.site.id: sp.site.kind for sp in plan.sites.values()}
    order = np.arange(len(sites), dtype=np.int64)
    out = {}
    spans = {}  # shared array -> {block: (first, last) record}
    for slot, entry in per_slot.items():
        ls = entry[0]
        if getattr(slot, "gather", None) is not None or not ls.n_counters:
            continue
        if ls.kind == LY.KIND_DEVICE:
            if not ls.base:
                continue
            mask = ((addrs >= ls.base) & (addrs < ls.base + ls.bytes)) | (objs == slot.index)
            off = addrs[mask].astype(np.int64) - np.int64(ls.base)
            elem = off // ls.unit
            keep = (elem >= 0) & (elem < ls.n_counters)
            rec = _Records(sites[mask][keep], elem[keep], blocks[mask][keep].astype(np.int64),
                           threads[mask][keep].astype(np.int64), order[mask][keep], kind)
            ev = _device(rec, ls.n_counters, block_threads)
        else:
            mask = objs == slot.index
            args = (sites[mask], addrs[mask].astype(np.int64), sizes[mask],
                    blocks[mask].astype(np.int64), threads[mask].astype(np.int64), order[mask])
            ev = dict(_padding(*args, ls, kind) or {}, **_own(*args, kind))
            spans[slot.name] = _spans(blocks[mask].astype(np.int64), order[mask])
        if ev:
            out[slot.name] = ev
    for name, span in spans.items():
        if name in out and span:
            out[name]["disjoint_from"] = sorted(
                other for other, o in spans.items()
                if other != name and o and _disjoint(span, o))
    return out


def _spans(block, order) -> dict:
    """block -> (its first, its last) access of the array, in the order the accesses ran."""
    if not len(block):
        return {}
    ub, inv = np.unique(block, return_inverse=True)
    first = np.full(len(ub), np.iinfo(np.int64).max, np.int64)
    last = np.full(len(ub), -1, np.int64)
    np.minimum.at(first, inv, order)
    np.maximum.at(last, inv, order)
    return dict(zip(ub.tolist(), zip(first.tolist(), last.tolist())))


def _disjoint(a: dict, b: dict) -> bool:
    """Whether two arrays are never live at once in a block: in every block that uses both,
    one's last access comes before the other's first."""
    return all(a[k][1] < b[k][0] or b[k][1] < a[k][0] for k in a.keys() & b.keys())


class _Records:
    def __init__(self, site, elem, block, thread, order, kind):
        self.site, self.elem, self.block, self.thread, self.order = site, elem, block, \
            thread, order
        self.read, self.write = _kinds(site, kind)


def _kinds(site, kind) -> tuple:
    """(is a read, is a write) per record, from its site's kind."""
    top = int(max(kind, default=0)) + 1
    rd = np.zeros(top + 1, bool)
    wr = np.zeros(top + 1, bool)
    for s, k in kind.items():
        rd[s], wr[s] = k in READS, k in WRITES
    site = np.clip(np.asarray(site, np.int64), 0, top)
    return rd[site], wr[site]


def _device(r: _Records, n: int, block_threads: int) -> dict | None:
    if not r.read.any():
        return None
    pair = r.block * n + r.elem  # (block, element)
    site_ids = sorted({int(s) for s in r.site[r.read]})
    per_site = {}
    pairs_of = {}
    for s in site_ids:
        sel = r.read & (r.site == s)
        pairs_of[s] = np.unique(pair[sel])
        per_site[s] = {"reads": int(sel.sum()), "block_elements": int(len(pairs_of[s]))}
    self_reuse = [s for s in site_ids if per_site[s]["reads"] > per_site[s]["block_elements"]]
    loners = [s for s in site_ids if s not in self_reuse]
    written = np.unique(pair[r.write])
    group = []
    for s in loners:
        others = [pairs_of[o] for o in loners if o != s]
        if others and np.isin(pairs_of[s], np.concatenate(others)).mean() >= 0.5:
            group.append(s)  # a stencil: its elements are its neighbours' too
        elif len(written) and np.isin(pairs_of[s], written).mean() >= 0.5:
            group.append(s)  # it reads back what its block wrote: the staged copy has it
    staged = self_reuse + group
    if staged and not _crossed(r, n, block_threads, staged):
        staged = []  # each element is one thread's: registers, not shared memory
    ev = {"blocks": int(len(np.unique(r.block))),
          "sites": [{"id": s, **per_site[s], "staged": s in staged} for s in site_ids],
          "staging": None, "registers": _registers(r, n, block_threads)}
    if staged:
        ev["staging"] = _staging(r, n, pair, staged)
    return ev


def _crossed(r: _Records, n: int, block_threads: int, staged) -> bool:
    """Whether some element the staged sites read in a block passes between its threads: read
    by two of them, or read by one and written by another."""
    g = r.block * max(block_threads, 1) + r.thread
    sel = (r.read & np.isin(r.site, staged)) | r.write
    pairs = np.unique(np.stack([r.block[sel] * n + r.elem[sel], g[sel]], axis=1), axis=0)
    return bool(len(pairs)) and len(np.unique(pairs[:, 0])) < len(pairs)


def _staging(r: _Records, n: int, pair, staged) -> dict:
    sread = r.read & np.isin(r.site, staged)
    # the first access of each (block, element) among the staged reads and the block's writes
    sel = sread | r.write
    p, o, is_read = pair[sel], r.order[sel], sread[sel]
    idx = np.lexsort((o, p))
    p, is_read = p[idx], is_read[idx]
    first = np.ones(len(p), bool)
    first[1:] = p[1:] != p[:-1]
    loads = int((first & is_read).sum())
    kept = int((r.read & ~sread).sum())
    staged_pairs = np.unique(pair[sread])
    per_block = np.bincount(staged_pairs // n) if len(staged_pairs) else np.zeros(1, np.int64)
    # elements written by one block and read (staged) by another
    wpairs = np.unique(pair[r.write])
    nblocks = np.bincount(wpairs % n, minlength=n)
    wb = np.full(n, -1, np.int64)
    wb[wpairs % n] = wpairs // n
    re, rb = r.elem[sread], r.block[sread]
    foreign = (nblocks[re] > 1) | ((nblocks[re] == 1) & (wb[re] != rb))
    return {"sites": [int(s) for s in staged], "reads": int(sread.sum()),
            "loads": loads, "other_reads": kept, "predicted_reads": loads + kept,
            "tile_elements": int(per_block.max()),
            "written_by_other_blocks": int(len(np.unique(re[foreign])))}


def _registers(r: _Records, n: int, block_threads: int) -> dict:
    g = r.block * max(block_threads, 1) + r.thread
    # per element: how many distinct threads write it, and one of them
    w = np.unique(np.stack([r.elem[r.write], g[r.write]], axis=1), axis=0) if r.write.any() \
        else np.zeros((0, 2), np.int64)
    writers = np.bincount(w[:, 0], minlength=n) if len(w) else np.zeros(n, np.int64)
    one = np.full(n, -1, np.int64)
    if len(w):
        one[w[:, 0]] = w[:, 1]
    key = g[r.read] * n + r.elem[r.read]
    keys, counts = np.unique(key, return_counts=True)
    tg, te = keys // n, keys % n
    private = (writers[te] == 0) | ((writers[te] == 1) & (one[te] == tg))
    again = private & (counts > 1)
    per_thread = np.bincount(tg[again]) if again.any() else np.zeros(1, np.int64)
    return {"rereads": int((counts[again] - 1).sum()), "pairs": int(again.sum()),
            "max_elements_per_thread": int(per_thread.max())}


def _own(site, off, size, block, thread, order, kind) -> dict:
    """Shared words' reads, and those of a word the reading thread itself wrote last: where
    every read is, the words carry nothing between threads (a register would do)."""
    rd, wr = _kinds(site, kind)
    if not rd.any():
        return {}
    word = off // 4
    idx = np.lexsort((order, word, block))
    b, w, t, r, x = block[idx], word[idx], thread[idx], rd[idx], wr[idx]
    pos = np.arange(len(idx))
    new = np.r_[True, (b[1:] != b[:-1]) | (w[1:] != w[:-1])]
    start = np.maximum.accumulate(np.where(new, pos, 0))
    # the last write at or before each record, within its (block, word)
    last = np.maximum.accumulate(np.where(x, pos, -1))
    valid = last >= start
    writer = np.where(valid, t[np.maximum(last, 0)], -1)
    own = r & valid & (writer == t)
    return {"reads": int(r.sum()), "reads_own_writes": int(own.sum())}


def _padding(site, off, size, block, thread, order, ls, kind) -> dict | None:
    shape = tuple(int(x) for x in ls.shape)
    if len(shape) < 2 or shape[-1] < 2 or not len(site):
        return None
    row = shape[-1] * ls.elem_size
    pad = ls.elem_size
    padded = off + (off // row) * pad
    warp = thread // 32
    lane = thread % 32
    out = []
    for s in sorted({int(x) for x in site}):
        sel = site == s
        o, po, sz = off[sel], padded[sel], size[sel]
        b, wp, ln, od, t = block[sel], warp[sel], lane[sel], order[sel], thread[sel]
        # the lane's k-th execution of the site
        idx = np.lexsort((od, t, b))
        pos = np.arange(len(idx))
        new = np.r_[True, (b[idx][1:] != b[idx][:-1]) | (t[idx][1:] != t[idx][:-1])]
        k = np.empty(len(idx), np.int64)
        k[idx] = pos - np.maximum.accumulate(np.where(new, pos, 0))
        req = np.lexsort((ln, k, wp, b))
        keys = np.stack([b[req], wp[req], k[req]], axis=1)
        starts = np.flatnonzero(np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)])
        ends = np.r_[starts[1:], len(req)]
        now = after = ideal = 0
        for a, e in list(zip(starts, ends))[:MAX_REQUESTS]:
            lanes = req[a:e]
            w0, i0 = shared_request(o[lanes], int(sz[lanes[0]]))
            w1, _ = shared_request(po[lanes], int(sz[lanes[0]]))
            now, after, ideal = now + w0, after + w1, ideal + i0
        out.append({"id": s, "kind": kind.get(s), "requests": int(min(len(starts),
                                                                       MAX_REQUESTS)),
                    "all_requests": int(len(starts)), "wavefronts": int(now),
                    "padded_wavefronts": int(after), "ideal": int(ideal)})
    return {"padding": {"row_bytes": int(row), "padded_shape": [*shape[:-1], shape[-1] + 1],
                        "sites": out}}


__all__ = ["sharing_evidence"]
