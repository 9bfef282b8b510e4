"""Per-warp requests of the same samples from several checkouts, repeated, side by side.

Measured warp statistics (--access-stats) group lanes by the warp's active mask at the access,
so they see the warp as the instrumented code runs it: a warp left split by instrumentation
counts a request per part. This runs `gmprof profile SAMPLE --access-stats --json` in each
checkout (each with its own PYTHONPATH) REPEAT times and prints, per kernel and memory space,
the requests and wavefronts/sectors summed over sites, and any site whose numbers change
between checkouts or runs. Used on a GPU to find the request miscount of issue 27:

    python3 bench/warp_convergence.py --checkouts . .v_fix --samples co,em_v1 --size small
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def profile(checkout, sample, size, backend):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout) + os.pathsep +
                   os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, "-m", "gmprof", "profile", os.path.join("samples", sample),
               "--size", size, "--access-stats", "--backend", backend, "-o", out]
        r = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            return None, (r.stderr or r.stdout)[-400:]
        with open(out) as f:
            return json.load(f), ""


def site_rows(doc):
    rows = {}
    for k in doc["kernels"]:
        for s in k["sites"]:
            w = s.get("warps")
            if not w:
                continue
            units = w.get("wavefronts", w.get("sectors", 0)) or 0
            key = (k["kernel"], s["location"].split("/")[-1], s.get("text", "")[:40])
            rows[key] = (w["space"], w["requests"], units, w.get("how", ""))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkouts", nargs="+", default=["."])
    ap.add_argument("--samples", default="co,em_v1")
    ap.add_argument("--size", default="small")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backend", default="gpu")
    a = ap.parse_args()
    for sample in a.samples.split(","):
        runs = {}
        for c in a.checkouts:
            for i in range(a.repeat):
                doc, err = profile(c, sample, a.size, a.backend)
                if doc is None:
                    print(f"{sample} {c} run {i}: failed: {err}")
                    continue
                runs[(c, i)] = site_rows(doc)
        print(f"== {sample} ({a.size}, {a.backend})")
        for (c, i), rows in runs.items():
            tot = {}
            for (kern, _, _), (space, req, units, _) in rows.items():
                t = tot.setdefault((kern, space), [0, 0])
                t[0] += req
                t[1] += units
            print(f"  {c:10s} run {i}: " + "; ".join(
                f"{k} {sp}: {r} requests, {u} units" for (k, sp), (r, u) in sorted(tot.items())))
        keys = sorted({k for rows in runs.values() for k in rows})
        for key in keys:
            vals = {ci: rows.get(key) for ci, rows in runs.items()}
            if len({v[1:3] if v else None for v in vals.values()}) > 1:
                print(f"  differs: {key[0]} {key[1]} {key[2]!r}: " + ", ".join(
                    f"{c}#{i}={v[1]}/{v[2]}" if v else f"{c}#{i}=-" for (c, i), v in vals.items()))


if __name__ == "__main__":
    main()
