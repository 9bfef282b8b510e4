"""The CPU backend's cache of compiled files: written atomically, verified, rebuilt when damaged.

Stage: host runtime, CPU backend (compiling). Input: the cache directory, a cache entry's path
(`<key>.so`, `runtime-<key>.o`, `pch-<key>/`) and, once built, the files it was built from.
Output: entries that are either whole and current or absent.

Each entry is renamed into place from a temporary, and then its record, `<entry>.sum`, is
written (also by rename), last: the entry's size and SHA-256, and the files the compiler read
that are not part of the key (headers the kernel `#include`s, from g++'s dependency list) with
their SHA-256. An entry without a record, with a record that does not match its bytes (a file
truncated by a full disk or a killed copy), or whose headers have changed since, is deleted and
rebuilt; a truncated shared library would otherwise fault (SIGBUS) every time it is loaded.

Temporaries (build directories, private copies of a library) carry the creating process's id:
those of processes that no longer exist (a compile killed with SIGKILL) are removed by the next
build, and any older than a day.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from gmprof.errors import CacheError

TEMP_PREFIX = "tmp-"
_STALE_S = 86400.0
_PUBLISHING_S = 120.0  # an entry younger than this may still be waiting for its record


def checked_dir(path: Path) -> Path:
    """The cache directory, created if needed; a CacheError when it cannot be used."""
    hint = "set GMPROF_CACHE_DIR to a writable directory"
    if path.exists() and not path.is_dir():
        raise CacheError(f"the cache directory {path} is not a directory; {hint}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheError(f"cannot create the cache directory {path}: {e.strerror}; {hint}") \
            from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CacheError(f"the cache directory {path} is not writable; {hint}")
    return path


def digest_file(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record(entry: Path) -> Path:
    return entry.with_name(entry.name + ".sum")


def _entry_digest(entry: Path) -> tuple[int, str]:
    if entry.is_dir():  # a directory entry (the precompiled header): every file in it
        h = hashlib.sha256()
        size = 0
        for p in sorted(entry.iterdir()):
            s, d = digest_file(p)
            h.update(p.name.encode() + b"\0" + d.encode() + b"\0")
            size += s
        return size, h.hexdigest()
    return digest_file(entry)


def _deps_current(deps) -> bool:
    for path, want in deps:
        try:
            if digest_file(Path(path))[1] != want:
                return False
        except OSError:
            return False
    return True


def lookup(entry: Path, data: bytes | None = None) -> bool:
    """Whether the entry is whole and current. A damaged or stale one is deleted. `data`: the
    entry's bytes when the caller has read them already (verified as they are, so what is
    checked is what is used)."""
    rec = _record(entry)
    if not entry.exists() and not rec.exists():
        return False
    try:
        young = time.time() - entry.lstat().st_mtime < _PUBLISHING_S
    except OSError:
        young = False
    try:
        info = json.loads(rec.read_text())
        if data is not None:
            size, digest = len(data), digest_bytes(data)
        else:
            size, digest = _entry_digest(entry)
        ok = info.get("size") == size and info.get("sha256") == digest and \
            _deps_current(info.get("deps", []))
    except (OSError, ValueError, AttributeError, TypeError):
        ok = False
    if ok:
        from gmprof import cache_dirs

        cache_dirs.touch(rec)  # used now: least-recently-used eviction keeps it longest
    if not ok and not young:
        # a young entry without its record (or with another process's) is most likely being
        # published by another process right now: deleting it would pull it from under that
        # process; the caller rebuilds and replaces it instead
        discard(entry)
    return ok


def discard(entry: Path) -> None:
    with contextlib.suppress(OSError):
        _record(entry).unlink()
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            entry.unlink()


def store(built: Path, entry: Path, deps=()) -> None:
    """Rename a built file (or directory) into place, then write its record."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    try:
        os.replace(built, entry)
    except OSError:
        if not entry.exists():
            raise
        return  # another process put the same entry there first; its record follows
    size, digest = _entry_digest(entry)
    deps = [(str(p), digest_file(Path(p))[1]) for p in deps]
    text = json.dumps({"size": size, "sha256": digest, "deps": deps})
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(), dir=entry.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, _record(entry))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    from gmprof import cache_dirs

    cache_dirs.enforce_cap()  # every cache together under GMPROF_CACHE_MAX


@contextlib.contextmanager
def locked(cache_dir: Path, name: str):
    """Hold an exclusive lock named for an entry shared by every kernel (the runtime object, the
    precompiled header) while checking, building and publishing it: processes that start
    together (make -j, a pool of workers) build it once, and none replaces a directory another
    is reading from."""
    import fcntl

    fd = os.open(cache_dir / f"{name}.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _temp_prefix() -> str:
    return f"{TEMP_PREFIX}{os.getpid()}-"


@contextlib.contextmanager
def temp_dir(cache_dir: Path):
    """A build directory in the cache (same filesystem: the result is renamed out of it)."""
    prune(cache_dir)
    path = Path(tempfile.mkdtemp(prefix=_temp_prefix(), dir=cache_dir))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def temp_file(cache_dir: Path, suffix: str = "") -> Path:
    fd, path = tempfile.mkstemp(prefix=_temp_prefix(), suffix=suffix, dir=cache_dir)
    os.close(fd)
    return Path(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def prune(cache_dir: Path) -> None:
    """Remove the temporaries of processes that have ended, and any older than a day (the
    pre-record `gmprof-cpu-*` names included)."""
    now = time.time()
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return
    for name in names:
        if name.startswith(TEMP_PREFIX):
            pid_text = name[len(TEMP_PREFIX):].split("-", 1)[0]
            dead = pid_text.isdigit() and int(pid_text) != os.getpid() and \
                not _alive(int(pid_text))
        elif name.startswith("gmprof-cpu-"):
            dead = False
        else:
            continue
        path = cache_dir / name
        try:
            old = now - path.lstat().st_mtime > _STALE_S
        except OSError:
            continue
        if dead or old:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()


def parse_deps(text: str) -> list[str]:
    """The files of a make rule written by g++ -MD (`kernel.o: a.cpp b.h \\` ...)."""
    body = text.replace("\\\n", " ")
    _, _, rest = body.partition(": ")
    out, cur = [], []
    i = 0
    while i < len(rest):
        ch = rest[i]
        if ch == "\\" and i + 1 < len(rest) and rest[i + 1] == " ":
            cur.append(" ")
            i += 2
            continue
        if ch.isspace():
            if cur:
                out.append("".join(cur))
                cur = []
            if ch == "\n":
                break
        else:
            cur.append(ch)
        i += 1
    if cur:
        out.append("".join(cur))
    return out


__all__ = ["checked_dir", "lookup", "store", "discard", "temp_dir", "temp_file", "prune",
           "parse_deps", "digest_bytes"]
