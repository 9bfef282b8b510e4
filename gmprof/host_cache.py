"""gmprof's cache of host-side results across processes, by content hash.

Stage: any (it imports nothing from gmprof but cache_dirs, which imports nothing). What is kept: lark's LALR tables for the grammar
(4 s a process on the H100's host) and static sites' counts (seconds per site at a large launch).
Each entry is named by the SHA-256 of everything its value depends on, the code that computes it
included, so a stale entry is never found, only left behind.

Entries live in the `host` cache of gmprof/cache_dirs.py ($GMPROF_CACHE_DIR/host, by default
~/.cache/gmprof/host), under the caches' size cap (a hit counts as a use); GMPROF_HOST_CACHE=0
turns the cache off. An entry is written to a temporary and renamed into place, and read back only if
its stored digest matches its bytes; any failure to read or write is a miss, never an error: a
cache must not make a run fail.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import cache_dirs

_MAGIC = b"gmprof-host-cache-1\n"


def directory() -> Path | None:
    """Where entries live, or None when the cache is off or cannot be created."""
    if os.environ.get("GMPROF_HOST_CACHE", "1") == "0":
        return None
    path = cache_dirs.kind_dir("host")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None


def key(*parts) -> str:
    """A content hash of parts (their repr: plain data, ints, strings, tuples, dicts)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def source_digest(*modules) -> str:
    """The SHA-256 of modules' source files: part of a key, so that a change in the code that
    computes an entry makes a new entry."""
    h = hashlib.sha256()
    for m in modules:
        h.update(Path(m.__file__).read_bytes())
    return h.hexdigest()


def load(kind: str, digest: str):
    """The value stored under (kind, digest), or None."""
    d = directory()
    if d is None:
        return None
    path = d / f"{kind}-{digest}.pickle"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    cache_dirs.touch(path)
    head = len(_MAGIC) + 64
    if not data.startswith(_MAGIC) or \
            hashlib.sha256(data[head:]).hexdigest().encode() != data[len(_MAGIC):head]:
        return None
    try:
        return pickle.loads(data[head:])
    except Exception:
        return None


def store(kind: str, digest: str, value) -> None:
    d = directory()
    if d is None:
        return
    try:
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        fd, tmp = tempfile.mkstemp(prefix=f"tmp-{os.getpid()}-", dir=d)
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(body).hexdigest().encode() + body)
        os.replace(tmp, d / f"{kind}-{digest}.pickle")
        cache_dirs.enforce_cap()
    except Exception:
        try:
            os.unlink(tmp)  # noqa: F821 (set when mkstemp succeeded)
        except Exception:
            pass


__all__ = ["directory", "key", "source_digest", "load", "store"]
