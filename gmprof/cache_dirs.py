"""gmprof's caches in one place: where they live, their size cap, and `gmprof cache`.

Stage: any (it imports nothing from gmprof). Every cache gmprof keeps lives under one root:

    $GMPROF_CACHE_DIR, else the platform's user cache directory (platformdirs: on Linux
    $XDG_CACHE_HOME/gmprof, by default ~/.cache/gmprof)
        cpu/         the CPU backend's compiled kernels, runtime object and precompiled header
                     (runtime/cpu.py, cpu_cache.py)
        cpu/program/ gmprof nvcc's runtime objects for whole programs (program/build.py);
                     kept: CMake builds link them by path (`--gmprof-link-flags`), so they are
                     neither evicted nor cleaned (but by `gmprof cache --clean --all`)
        host/        lark's parser tables and static sites' counts (host_cache.py)

GMPROF_CACHE_DIR names that root and nothing else. Together the caches are kept under
GMPROF_CACHE_MAX bytes (default 2 GiB; suffixes K, M, G; 0: no cap): after an entry is stored,
the least recently used entries (but cpu/program's) are removed until the total fits (an entry's last use is its
record's or its own modification time, which a hit refreshes); entries used in the last minute
are kept, so that a run never removes what it is using. `gmprof cache --info` shows the root,
each cache's entries and bytes and the cap; `gmprof cache --clean` empties them (`--all`:
cpu/program too).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

KINDS = ("cpu", "cpu/program", "host")
KEPT = ("cpu/program",)  # paths baked into builds: not evicted, cleaned only with all=True
DEFAULT_MAX = 2 << 30
_KEEP_RECENT_S = 60.0  # entries used this recently are never evicted
_CHECK_EVERY_S = 30.0  # a process walks the caches for the cap at most this often
_last_check = 0.0


def root() -> Path:
    """The caches' root directory (see the module docstring)."""
    env = os.environ.get("GMPROF_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("gmprof", appauthor=False))
    except ImportError:  # a dependency; without it, the XDG default
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "gmprof"


def kind_dir(kind: str) -> Path:
    """The directory of one cache (`cpu`, `cpu/program`, `host`), not created here."""
    return root() / kind


def max_bytes() -> int:
    """GMPROF_CACHE_MAX in bytes (0: no cap); a value that is not a size is the default."""
    text = os.environ.get("GMPROF_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", text.lower())
    if not m:
        return DEFAULT_MAX
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)]
    return int(float(m.group(1)) * scale)


@dataclass
class Entry:
    path: Path
    size: int
    used: float  # last use (seconds since the epoch)


def _size(path: Path) -> int:
    try:
        if path.is_dir() and not path.is_symlink():
            return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir())
        return path.lstat().st_size
    except OSError:
        return 0


def entries(kind: str) -> list[Entry]:
    """A cache's entries: each file or directory but temporaries, locks, records (`.sum`,
    counted with their entry) and the caches nested in it."""
    d = kind_dir(kind)
    nested = {k.split("/", 1)[1] for k in KINDS if k.startswith(kind + "/")}
    try:
        names = os.listdir(d)
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith("tmp-") or name.endswith((".lock", ".sum")) or name in nested:
            continue
        path, record = d / name, d / (name + ".sum")
        try:
            used = path.lstat().st_mtime
        except OSError:
            continue
        with contextlib.suppress(OSError):
            used = max(used, record.lstat().st_mtime)
        out.append(Entry(path, _size(path) + (_size(record) if record.exists() else 0), used))
    return out


def touch(path: Path) -> None:
    """Mark an entry (or its record) as just used, for least-recently-used eviction."""
    with contextlib.suppress(OSError):
        os.utime(path)


def remove(entry: Path) -> None:
    """An entry and its record, gone (an entry a process has loaded stays mapped in it)."""
    with contextlib.suppress(OSError):
        (entry.parent / (entry.name + ".sum")).unlink()
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            entry.unlink()


def enforce_cap(force: bool = False) -> int:
    """Remove the least recently used entries until every cache together fits the cap;
    returns the bytes removed. Walks the caches at most every 30 s per process (force: now)."""
    global _last_check
    cap = max_bytes()
    now = time.time()
    if cap <= 0 or (not force and now - _last_check < _CHECK_EVERY_S):
        return 0
    _last_check = now
    found = [e for kind in KINDS if kind not in KEPT for e in entries(kind)]
    total = sum(e.size for e in found)
    removed = 0
    for e in sorted(found, key=lambda e: e.used):
        if total <= cap:
            break
        if now - e.used < _KEEP_RECENT_S:
            continue
        remove(e.path)
        total -= e.size
        removed += e.size
    return removed


def info() -> dict:
    """What `gmprof cache --info` prints: the root, the cap, and each cache's entries."""
    kinds = {}
    for kind in KINDS:
        es = entries(kind)
        kinds[kind] = {"directory": str(kind_dir(kind)), "entries": len(es),
                       "bytes": sum(e.size for e in es)}
    return {"root": str(root()), "max_bytes": max_bytes(), "caches": kinds,
            "bytes": sum(k["bytes"] for k in kinds.values())}


def clean(all: bool = False) -> int:
    """Remove every entry of every cache (and leftover temporaries, locks and records), but
    the KEPT ones unless `all`; the root and files gmprof did not make in it are left.
    Returns the bytes removed."""
    removed = 0
    for kind in sorted(KINDS, key=len, reverse=True):  # nested caches first
        if kind in KEPT and not all:
            continue
        d = kind_dir(kind)
        nested = {k.split("/", 1)[1] for k in KINDS if k.startswith(kind + "/")}
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name in nested:
                continue
            path = d / name
            removed += _size(path)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
    return removed


__all__ = ["root", "kind_dir", "max_bytes", "entries", "touch", "remove", "enforce_cap",
           "info", "clean", "KINDS", "KEPT", "DEFAULT_MAX"]
