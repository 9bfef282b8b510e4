"""Merging the sharing evidence of several launches (runtime/sharing.py makes one launch's).

An array's evidence is a dict of counts (summed), largest sizes (`tile_elements`,
`max_elements_per_thread`: the larger), per-site lists (merged by site id) and flags (`staged`:
either launch's). Two launches' evidence merge into one that says what both did together.
"""
from __future__ import annotations

LARGEST = ("tile_elements", "max_elements_per_thread", "row_bytes", "blocks")
KEPT = ("padded_shape", "kind", "id")


def merge_evidence(a: dict | None, b: dict | None) -> dict | None:
    if a is None or b is None:
        return a if b is None else (b if a is None else a)
    return _merge(a, b)


def _merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for key, vb in b.items():
            va = a.get(key)
            if va is None:
                out[key] = vb
            elif vb is None:
                out[key] = va
            elif key in LARGEST:
                out[key] = max(va, vb)
            elif key in KEPT:
                out[key] = va
            elif key == "disjoint_from":  # never live together in any launch
                out[key] = sorted(set(va) & set(vb))
            elif key == "sites" and isinstance(va, list) and va and isinstance(va[0], dict):
                by_id = {s["id"]: s for s in va}
                for s in vb:
                    by_id[s["id"]] = _merge(by_id[s["id"]], s) if s["id"] in by_id else s
                out[key] = [by_id[k] for k in sorted(by_id)]
            else:
                out[key] = _merge(va, vb)
        return out
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) or bool(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return sorted(set(a) | set(b)) if all(isinstance(x, int) for x in a + b) else a
    return a


__all__ = ["merge_evidence"]
