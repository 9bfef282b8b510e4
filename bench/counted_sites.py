"""Which access sites of the samples are still counted on the device, how, and why: where the
profiling overhead comes from, found without a GPU (issue 17).

    python3 bench/counted_sites.py [--samples co,spmv,...|all] [--profiles shm,dm,both]
                                   [--mode default] [--json]

For every sample and profile, prints each site the planner leaves to a run-time hook (static
sites and local arrays cost nothing and are only counted), with
  mode      EACH (every thread updates a counter), WARP / UNIFORM (one lane per group),
            BLOCK (one thread per block)
  how       per access; x trips (counted once per entry of loops it is invariant in);
            range (two difference-array updates per entry of its loop); spread (a BLOCK shared
            site's iterations shared out over the block, per entry); gather (its index's
            range, turned into counts on the host); twin (a range whose elements are a
            gather's index walk: nothing, where the arrays are alike at the launch); @entry:
            made before the loop, its body as written (passes/entry.py), @1st: in its first
            iteration
  depth     the loops around it (a per-access hook in a deep loop is the expensive kind)
  why       the planner's reason (the first thing static analysis could not prove)
Counts that fail their formula at a launch are demoted to hooks at run time; they are not
shown here (the report's site list says so).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIX = "co,em_v1,bo_v2,jcb_v1,spmv,dxtc"


def _how(sp, plan) -> str:
    """The kind of count; for a count per loop entry, where it is made: at the loop's entry
    (`@entry`, passes/entry.py: the loop's body as written) or in its first iteration
    (`@1st`: a branch and the hook's code in every iteration's body)."""
    kind = sp.hook.template
    if kind == "dm_twin":
        return "twin"
    loop = sp.hook.loop
    if loop is not None:
        where = "@entry" if loop in getattr(plan, "entry", {}) else "@1st"
        return {"dm_gather": "gather", "sm_spread_block": "spread"}.get(kind, "range") + where
    if sp.weight_loops:
        return "x trips(" + ",".join(loop.label for loop in sp.weight_loops) + ")"
    return "per access"


def _depth(sp) -> int:
    return max((len(sc.loops) for sc in sp.classes), default=0)


def sites(sample_dir: Path, profile: str, mode_name: str) -> list[dict]:
    from gmprof.driver import load_sample
    from gmprof.mode import Mode
    from gmprof.passes.pipeline import Pipeline

    sample = load_sample(sample_dir)
    pipeline = Pipeline()
    tu = pipeline.load(sample_dir / sample.driver.source, defines=dict(sample.driver.defines))
    program = pipeline.analyze(tu)
    plan = pipeline.plan(program, Mode.parse(mode_name, profile=profile))
    rows = []
    for sp in plan.site_list:
        if sp.strategy not in ("hook", "lr_start"):
            continue
        site = sp.site
        rows.append({"sample": sample_dir.name, "profile": profile,
                     "location": str(site.location) if hasattr(site, "location") else "",
                     "text": getattr(site, "text", ""),
                     "object": sp.slot.name if sp.slot is not None else "(found at run time)",
                     "mode": sp.mode, "how": _how(sp, plan), "depth": _depth(sp),
                     "why": sp.reason})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=SIX, help="comma-separated sample names, or all")
    ap.add_argument("--profiles", default="shm,dm,both")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    names = sorted(p.parent.name for p in (ROOT / "samples").glob("*/driver.py")) \
        if args.samples == "all" else args.samples.split(",")
    out = []
    for name in names:
        for profile in args.profiles.split(","):
            rows = sites(ROOT / "samples" / name, profile, args.mode)
            out.extend(rows)
            if args.json:
                continue
            print(f"{name} {profile}: {len(rows)} counted site(s)")
            for r in rows:
                print(f"  {r['location']:28} {r['text'][:34]:34} {r['object'][:10]:10} "
                      f"{r['mode']:7} {r['how']:16} depth {r['depth']}  {r['why'][:90]}")
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
