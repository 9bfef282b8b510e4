"""Advice: from a run document's counts to changes, each with its evidence and its prediction.

Stage: report. Reads a run document (report/document.py) and gives, per kernel, a ranked list
of changes, each naming its array and sites, the counts it rests on and what it predicts in
numbers (device-memory reads, wavefronts, sectors, bytes), the way GMProf's case studies read
their tables (§7: em's mu and invVar and bo's lattice rows staged in shared memory because every
block re-read them; a rarely used shared array moved out; jcb's output tile, with no reuse in
any live range, given up for a tile of the input). The kinds:

  stage      a device array (or the block's tile of it) staged in shared memory: the sharing
             evidence of a trace run (runtime/sharing.py) gives the device reads left (one per
             element per block that reads it first) and the block's footprint, checked against
             the shared memory left (48 KiB less what the kernel's shared arrays take)
  constant   a small (<= 64 KiB), read-only array every warp reads uniformly (the static
             analysis's `tid-invariant` or `warp-uniform` sites): one constant-cache request a
             warp
  registers  elements a thread reads again that no other thread writes
  padding    a shared array whose row stride is a power of two, with its sites' wavefronts now
             and with one element of padding a row (the trace's requests, regrouped)
  shared     shared words never used, an array used far less than the kernel's others, one
             whose live ranges (--enhanced) show no reuse, or two arrays never live at once
             in a block (one buffer can hold both): the bytes that could go
  coalesce   device sites whose warp requests take more sectors than their bytes need
             (--access-stats)

A stage, constant or registers advice must save a tenth of the array's reads (and more than
one a block). Ranked by the memory traffic each would save, in bytes (device reads x element size, sectors x
32, wavefronts x 128); advice that frees shared memory without saving traffic comes last, by the
bytes it frees. Each prediction is labelled: `exact` where it is counted from this run's trace
(what the changed kernel would read at the same launches), `bound` where it is an upper bound.
"""
from __future__ import annotations

SHARED_BYTES = 48 * 1024  # a block's static shared memory without the opt-in
CONSTANT_BYTES = 64 * 1024
REGISTER_ELEMENTS = 32  # a thread's elements worth keeping in registers, at most
WAVEFRONT_BYTES = 128
SECTOR_BYTES = 32
RARE = 1 / 8  # an array used less than this share of the kernel's median shared array
UNCOALESCED = 1.25  # sectors per request above the ideal by this factor
MIN_SECTORS = 2  # ... and by this many sectors a request (less: alignment, or a few rows)
MIN_SHARE = 0.1  # a change that saves less of an array's reads is not advised
ORDER = ("stage", "constant", "registers", "coalesce", "padding", "shared")


def advise(doc: dict) -> dict:
    """kernel name -> its ranked advice (a list of dicts)."""
    writers = {}  # array name -> kernels that write it (a __constant__ copy must follow them)
    for k in doc.get("kernels", []):
        for a in k["arrays"]:
            if a["space"] != "shared" and a.get("writes"):
                writers.setdefault(a["name"], []).append(k["kernel"])
    return {k["kernel"]: kernel_advice(k, writers) for k in doc.get("kernels", [])}


def kernel_advice(k: dict, writers: dict | None = None) -> list[dict]:
    sites = {s["id"]: s for s in k["sites"]}
    out = []
    used = shared_bytes_used(k)
    shared = [a for a in k["arrays"] if a["space"].startswith("shared")]
    for a in k["arrays"]:
        if a["space"].startswith("shared"):
            out += _padding(a, sites) + _shared(a, shared)
            continue
        found = _stage(a, sites, used) + _constant(a, sites, k, writers or {}) + _registers(a)
        out += [x for x in found if _worth_it(x, a)] + _coalesce(a, sites)
    out.sort(key=lambda x: (-x["saves_bytes"], -x.get("frees_bytes", 0),
                            ORDER.index(x["kind"]), x["array"]))
    for rank, item in enumerate(out, 1):
        item["rank"] = rank
    return out


def _worth_it(item: dict, a: dict) -> bool:
    """A change of where an array is read is advised when it saves a tenth of the array's
    reads, and more than one read a block (a few reads of a scalar are not worth a change)."""
    saved = item.get("saves_reads", 0)
    blocks = (a.get("evidence") or {}).get("blocks") or 1
    return saved >= MIN_SHARE * (a.get("reads") or 0) and saved > blocks


def shared_bytes_used(k: dict) -> int:
    """The shared memory a block of the kernel takes: its static shared arrays and the launch's
    dynamic shared memory (where the extern arrays live)."""
    static = sum(a["counters"] * 4 for a in k["arrays"] if a["space"] == "shared")
    return static + int(k["run"].get("shared_mem") or 0)


def top_for(advice: list[dict], array: str) -> dict | None:
    """The first (best ranked) advice naming an array."""
    return next((x for x in advice if x["array"] == array), None)


def _at(site) -> str:
    """`text at file:line:col`, the file relative to the working directory (as the tables)."""
    from .source import display_path

    path, line, col = site["location"].rsplit(":", 2)
    return f"{site['text']} at {display_path(path)}:{line}:{col}"


def _where(sites, ids) -> list[str]:
    return [_at(sites[i]) for i in ids if i in sites]


def _item(kind, a, text, evidence, prediction, saves_bytes, sites=(), **more) -> dict:
    return {"kind": kind, "array": a["name"], "space": a["space"], "sites": list(sites),
            "text": text, "evidence": evidence, "prediction": prediction,
            "saves_bytes": int(saves_bytes), **more}


def _stage(a, sites, used) -> list[dict]:
    ev = (a.get("evidence") or {}).get("staging")
    reads = a.get("reads") or 0
    if not ev or not reads or ev["written_by_other_blocks"]:
        return []
    after = ev["predicted_reads"]
    if after >= reads:
        return []
    size = a["elem_size"]
    tile = ev["tile_elements"] * size
    free = max(SHARED_BYTES - used, 0)
    fits = tile <= free
    blocks = a["evidence"].get("blocks", 0)
    where = _where(sites, ev["sites"])
    per_elem = reads / a["counters"] if a["counters"] else 0
    many = "s" if ev["tile_elements"] > 1 else ""
    tile_text = (f"the block's {ev['tile_elements']:,} element{many} ({tile:,} bytes) fit in the "
                 f"{free:,} bytes of shared memory left" if fits else
                 f"the block's {ev['tile_elements']:,} element{many} ({tile:,} bytes) do not fit in "
                 f"the {free:,} bytes left: stage tiles of at most {free // size:,} elements "
                 "in turn")
    produced = ev["loads"] == 0 and ev["reads"]
    text = (f"stage {a['name']} in shared memory ({', '.join(where)}): "
            + ("its blocks write every element they read, so the staged copy needs no device "
               "read; " if produced else
               f"each element is read {per_elem:,.1f} times on average by {blocks} blocks; ")
            + f"{tile_text}; device-memory reads {reads:,} -> {after:,}")
    per_site = []
    for row in a["evidence"].get("sites", []):
        site = sites.get(row["id"], {})
        w = site.get("warps") or {}
        per_site.append({"site": _at(site) if site else row["id"], "reads": row["reads"],
                         "block_elements": row["block_elements"], "staged": row["staged"],
                         "requests": w.get("requests"), "sectors": w.get("sectors"),
                         "sample": (w.get("sample") or {}).get("text")})
    prediction = {"device_reads": after, "label": "exact"}
    if per_site and all(p["sectors"] is not None for p in per_site):
        # --access-stats: the staged loads coalesced (a block's elements in a contiguous run
        # at best), the other sites' sectors as they were
        prediction["sectors_at_least"] = -(-ev["loads"] * size // SECTOR_BYTES) + sum(
            p["sectors"] for p in per_site if not p["staged"])
        prediction["sectors_now"] = sum(p["sectors"] for p in per_site)
        sampled = sorted({p["sample"] for p in per_site if p["sample"]})
        if sampled:  # sectors estimated from a sample of the blocks (--access-stats)
            prediction["sectors_label"] = "; ".join(sampled)
    return [_item("stage", a, text,
                  {"reads": reads, "reads_per_element": per_elem, "blocks": blocks,
                   "sites": per_site,
                   "staged_reads": ev["reads"], "block_elements": ev["loads"],
                   "other_reads": ev["other_reads"], "tile_elements": ev["tile_elements"],
                   "tile_bytes": tile, "shared_free_bytes": free, "fits": fits},
                  prediction,
                  (reads - after) * size, where, saves_reads=reads - after)]


def _constant(a, sites, k, writers) -> list[dict]:
    reads = a.get("reads") or 0
    nbytes = a["counters"] * a["counter_unit_bytes"]
    mine = [s for s in sites.values() if s["object"] == a["name"] and s["kind"] != "write"]
    if not reads or a.get("writes") or nbytes > CONSTANT_BYTES or not mine or \
            not all({"tid-invariant", "warp-uniform"} & set(s["classes"]) for s in mine):
        return []
    blocks = (a.get("evidence") or {}).get("blocks") or k["run"]["grid"][0] * \
        k["run"]["grid"][1] * k["run"]["grid"][2] * k["run"]["launches"]
    staging = (a.get("evidence") or {}).get("staging")
    after = staging["loads"] if staging else min(reads, a["counters"] * blocks)
    requests = sum(s["warps"]["requests"] for s in mine if s.get("warps"))
    label = "measured" if requests else "bound"
    if not requests:
        requests = -(-sum(s["executions"] or 0 for s in mine) // 32)
    others = [w for w in writers.get(a["name"], []) if w != k["kernel"]]
    text = (f"make {a['name']} __constant__ ({nbytes:,} bytes, read-only here, every warp reads "
            f"one element at a time): {requests:,} constant-cache requests instead of {reads:,} "
            f"device reads; device-memory reads at most {after:,} (a miss per element per "
            "block)" + (f"; {', '.join(others)} writes it: copy it into the symbol after "
                        "(cudaMemcpyToSymbol)" if others else ""))
    return [_item("constant", a, text,
                  {"reads": reads, "bytes": nbytes, "warp_uniform_sites": len(mine),
                   "written_by": others},
                  {"device_reads": after, "constant_requests": requests, "label": "bound",
                   "requests_are": label},
                  (reads - after) * a["elem_size"], _where(sites, [s["id"] for s in mine]),
                  saves_reads=reads - after)]


def _registers(a) -> list[dict]:
    ev = (a.get("evidence") or {}).get("registers")
    reads = a.get("reads") or 0
    if not ev or not ev["rereads"] or ev["max_elements_per_thread"] > REGISTER_ELEMENTS:
        return []
    after = reads - ev["rereads"]
    text = (f"keep {a['name']} in registers: {ev['pairs']:,} (thread, element) pairs are read "
            f"again ({ev['rereads']:,} reads) and no other thread writes them; at most "
            f"{ev['max_elements_per_thread']} element"
            f"{'s' if ev['max_elements_per_thread'] > 1 else ''} a thread; device-memory reads "
            f"{reads:,} -> {after:,}")
    return [_item("registers", a, text, dict(ev, reads=reads),
                  {"device_reads": after, "label": "exact"},
                  ev["rereads"] * a["elem_size"], saves_reads=ev["rereads"])]


def _coalesce(a, sites) -> list[dict]:
    out = []
    for s in sites.values():
        w = s.get("warps")
        if s["object"] != a["name"] or not w or w["space"] != "device" or not w["requests"]:
            continue
        if w["sectors"] <= w["ideal"] * UNCOALESCED or \
                w["sectors"] - w["ideal"] < MIN_SECTORS * w["requests"]:
            continue
        text = (f"coalesce {_at(s)}: {w['sectors'] / w['requests']:.1f} "
                f"sectors per request where its bytes need {w['ideal'] / w['requests']:.1f} "
                f"(consecutive lanes, consecutive elements); sectors {w['sectors']:,} -> "
                f"{w['ideal']:,}")
        evidence = {"requests": w["requests"], "sectors": w["sectors"], "ideal": w["ideal"],
                    "how": w["how"]}
        sample = w.get("sample")
        if sample:  # estimated from a sample of the blocks: say so, with its interval
            text += f" ({_sample_text(sample)})"
            evidence["sample"] = sample
        out.append(_item("coalesce", a, text, evidence,
                         {"sectors": w["ideal"], "label": "bound"},
                         (w["sectors"] - w["ideal"]) * SECTOR_BYTES,
                         [_at(s)]))
    return out


def _sample_text(sample: dict) -> str:
    """`sampled 1/4 of blocks, 95% 6.84-8.75 sectors/req` (passes/block_sample.py's doc)."""
    iv = sample.get("per_request_interval")
    if not iv:
        return sample["text"]
    return f"{sample['text']}, 95% {iv[0]:.2f}-{iv[1]:.2f} sectors/req"


def _power_of_two(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def _padding(a, sites) -> list[dict]:
    ev = (a.get("evidence") or {}).get("padding")
    if not ev or not _power_of_two(ev["row_bytes"] // 4):
        return []
    rows = ev["sites"]
    now = sum(_measured(sites, r)[0] for r in rows)
    after = sum(r["padded_wavefronts"] for r in rows)
    ideal = sum(r["ideal"] for r in rows)
    if after >= now:
        return []
    per_site = []
    for r in rows:
        n, how = _measured(sites, r)
        req = max(r["requests"], 1)
        per_site.append({"site": _where(sites, [r["id"]])[0] if r["id"] in sites else r["id"],
                         "requests": r["requests"], "wavefronts": n, "how": how,
                         "degree": round(n / req, 2),
                         "padded_wavefronts": r["padded_wavefronts"],
                         "padded_degree": round(r["padded_wavefronts"] / req, 2)})
    shape = "".join(f"[{x}]" for x in ev["padded_shape"])
    detail = "; ".join(f"{p['site']}: {p['degree']:g} -> {p['padded_degree']:g} wavefronts a "
                       "request" for p in per_site)
    text = (f"pad {a['name']}'s rows by one element (declared [{']['.join(map(str, a['shape']))}], "
            f"a row of {ev['row_bytes'] // 4} words, a power of two: its columns fall in one "
            f"bank) to {shape}: {detail}; wavefronts {now:,} -> {after:,} (ideal {ideal:,})")
    return [_item("padding", a, text, {"row_words": ev["row_bytes"] // 4, "sites": per_site,
                                       "wavefronts": now, "ideal": ideal},
                  {"wavefronts": after, "padded_shape": ev["padded_shape"], "label": "exact"},
                  (now - after) * WAVEFRONT_BYTES, [p["site"] for p in per_site])]


def _measured(sites, r) -> tuple[int, str]:
    """A site's wavefronts: --access-stats' where the run measured them, else the trace's."""
    w = sites.get(r["id"], {}).get("warps")
    if w and w.get("wavefronts") is not None and w["requests"] == r["all_requests"]:
        return w["wavefronts"], w["how"]
    return r["wavefronts"], "trace"


def _share_storage(a, shared) -> list[dict]:
    """Static shared arrays never live at once in any block (the trace's evidence): the smaller
    can live in the larger's storage. Said once a pair, under the first name."""
    out = []
    by_name = {o["name"]: o for o in shared}
    for name in (a.get("evidence") or {}).get("disjoint_from", []):
        b = by_name.get(name)
        if b is None or a["space"] != "shared" or b["space"] != "shared" or name < a["name"]:
            continue
        freed = min(a["counters"], b["counters"]) * 4
        text = (f"{a['name']} and {b['name']} are never live at the same time in a block "
                "(each block is done with one before it first touches the other): one buffer "
                f"can hold both, freeing {freed:,} bytes of shared memory")
        out.append(_item("shared", a, text, {"with": b["name"], "bytes": [a["counters"] * 4,
                                                                          b["counters"] * 4]},
                         {"bytes_freed": freed, "label": "observed in this run"}, 0,
                         frees_bytes=freed))
    return out


def _shared(a, shared) -> list[dict]:
    if a["space"] != "shared" or not a["counters"]:
        return []
    out = []
    nbytes = a["counters"] * 4
    # the trace run's count where there is one: an --enhanced run's counts are each word's
    # last live range, where a word used only in earlier ranges shows 0
    untouched = (a.get("evidence") or {}).get("untouched")
    if untouched is None:
        untouched = a["untouched"] if a.get("counts_are") == "accesses" else 0
    shape = [int(x) for x in a["shape"]]
    padding = len(shape) == 2 and _power_of_two(shape[1] - 1) and untouched == shape[0] * (
        a["elem_size"] // 4 or 1)
    if untouched and not padding:
        text = (f"{a['name']}: {untouched:,} of its {a['counters']:,} words are never used "
                f"at this run's sizes: {untouched * 4:,} bytes of shared memory could go")
        out.append(_item("shared", a, text, {"untouched": untouched, "words": a["counters"]},
                         {"bytes_freed": untouched * 4, "label": "exact"}, 0,
                         frees_bytes=untouched * 4))
    out += _share_storage(a, shared)
    lr = a.get("live_ranges")
    ev = a.get("evidence") or {}
    private = ev.get("reads") and ev.get("reads_own_writes") == ev["reads"]
    if lr and lr.get("ranges") and lr["accesses"] / lr["ranges"] <= 2 and private:
        mean = lr["accesses"] / lr["ranges"]
        text = (f"{a['name']}: {mean:.1f} accesses a word per live range ({lr['ranges']:,} "
                "ranges): written and read back once by the same thread, no reuse; the data can stay in device "
                f"memory or registers, freeing {nbytes:,} bytes of shared memory")
        out.append(_item("shared", a, text, {"live_ranges": lr["ranges"],
                                             "accesses_per_range": mean},
                         {"bytes_freed": nbytes, "label": "exact"}, 0, frees_bytes=nbytes))
        return out
    others = sorted(o["mean"] for o in shared if o is not a and o["counters"])
    if others and not lr:
        median = others[len(others) // 2]
        if a["mean"] < median * RARE:
            text = (f"{a['name']} is rarely used: {a['mean']:,.1f} accesses a word against a "
                    f"median of {median:,.1f} for the kernel's other shared arrays; moved to "
                    f"device memory it frees {nbytes:,} bytes for a busier array, at the cost of "
                    f"its {a['accesses']:,} accesses in device memory")
            out.append(_item("shared", a, text, {"mean": a["mean"], "median_others": median,
                                                 "accesses": a["accesses"]},
                             {"bytes_freed": nbytes, "device_accesses": a["accesses"],
                              "label": "exact"}, 0, frees_bytes=nbytes))
    return out


def render_kernel(k: dict, console) -> None:
    """A kernel's advice as text: one numbered paragraph a change, best first, wrapped to the
    console's width with a hanging indent."""
    import textwrap

    from rich.text import Text

    items = k.get("advice") or []
    console.print(Text(f"{k['kernel']}: {len(items)} advice" +
                       (" (ranked by the memory traffic each saves)" if items else ""),
                       style="bold"))
    for item in items:
        saves = (f"saves {item['saves_bytes']:,} bytes of traffic" if item["saves_bytes"]
                 else f"frees {item.get('frees_bytes', 0):,} bytes of shared memory")
        head = f"  {item['rank']:>2}. [{item['kind']}] "
        console.print(Text(textwrap.fill(
            f"{head}{item['text']} ({saves}; prediction {item['prediction'].get('label')})",
            width=max(60, min(console.width, 100)), subsequent_indent=" " * len(head),
            break_on_hyphens=False)))
    if not items:
        console.print(Text("  none: no array's counts call for a change"))


__all__ = ["advise", "kernel_advice", "render_kernel", "shared_bytes_used", "top_for"]
