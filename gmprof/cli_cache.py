"""`gmprof cache --info | --clean`: gmprof's caches (gmprof/cache_dirs.py), shown or emptied
(argument parsing and output only).

    gmprof cache --info      the root ($GMPROF_CACHE_DIR or the platform's user cache
                             directory), each cache's entries and bytes, the cap
    gmprof cache --clean     remove every entry; the next run rebuilds what it needs
"""
from __future__ import annotations

import json


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def cmd_cache(args) -> int:
    from . import cache_dirs

    if args.clean:
        removed = cache_dirs.clean(all=args.all)
        print(f"removed {_bytes(removed)} from {cache_dirs.root()}")
        if args.all:
            print("note: CMake builds configured with `gmprof nvcc --gmprof-link-flags` link "
                  "objects that were removed: configure them again")
        else:
            print(f"kept {', '.join(k + '/' for k in cache_dirs.KEPT)}: builds link its "
                  "objects by path (--all removes them too)")
        return 0
    data = cache_dirs.info()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    cap = data["max_bytes"]
    print(f"cache root: {data['root']} (GMPROF_CACHE_DIR)")
    print(f"size cap: {_bytes(cap) if cap else 'none'} (GMPROF_CACHE_MAX); in use: "
          f"{_bytes(data['bytes'])}")
    for kind, k in data["caches"].items():
        kept = "  (kept: builds link it)" if kind in cache_dirs.KEPT else ""
        print(f"  {kind + '/':13} {k['entries']:6,} entries  {_bytes(k['bytes']):>10}  "
              f"{k['directory']}{kept}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("cache", help="show (--info) or empty (--clean) gmprof's caches")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--info", action="store_true",
                      help="where the caches are, their entries and bytes, the size cap")
    what.add_argument("--clean", action="store_true",
                      help="remove every cached entry (compiled kernels, parser tables, "
                           "static counts); the next run rebuilds what it needs")
    p.add_argument("--all", action="store_true",
                   help="with --clean: also remove cpu/program, the whole-program runtime "
                        "objects (rebuilt by the next gmprof nvcc; a CMake project configured "
                        "with --gmprof-cmake keeps its own copies)")
    p.add_argument("--json", action="store_true", help="--info as JSON")
    p.set_defaults(run=cmd_cache)
