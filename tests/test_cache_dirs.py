"""Caches in one place (gmprof/cache_dirs.py): GMPROF_CACHE_DIR is the root of every cache,
the platform's user cache directory by default; GMPROF_CACHE_MAX caps them together with
least-recently-used eviction; `gmprof cache --info/--clean`. Entries here are files made by
the test, with sizes and ages chosen by hand."""
from __future__ import annotations

import json
import os
import time

import pytest

from gmprof import cache_dirs, host_cache
from gmprof.cli import main


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("GMPROF_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("GMPROF_CACHE_MAX", raising=False)
    return tmp_path / "c"


def test_one_root_for_every_cache(root):
    from gmprof.program.build import cache_dir as program_dir
    from gmprof.runtime.cpu import default_cache_dir

    assert cache_dirs.root() == root
    assert default_cache_dir() == root / "cpu"
    assert program_dir() == root / "cpu" / "program"
    assert host_cache.directory() == root / "host"


def test_default_root_is_the_platform_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("GMPROF_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dirs.root() == tmp_path / "xdg" / "gmprof"


@pytest.mark.parametrize("text, want", [("", 2 << 30), ("1000", 1000), ("3K", 3072),
                                        ("1.5M", 3 << 19), ("2GiB", 2 << 30), ("0", 0),
                                        ("lots", 2 << 30)])
def test_cap_from_the_environment(monkeypatch, text, want):
    monkeypatch.setenv("GMPROF_CACHE_MAX", text)
    assert cache_dirs.max_bytes() == want


def _entry(directory, name, size, age_s):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(b"x" * size)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_least_recently_used_entries_go_first(root, monkeypatch):
    # four 1,000-byte entries across the caches (4,000 bytes), used 4, 3, 2 hours and 1 s
    # ago; under a cap of 2,500 bytes the two least recent (4 h, 3 h) go: 2,000 bytes remain
    old = _entry(root / "cpu", "a.so", 1000, 4 * 3600)
    older_host = _entry(root / "host", "static-1.pickle", 1000, 3 * 3600)
    kept = _entry(root / "cpu", "b.so", 1000, 2 * 3600)
    recent = _entry(root / "host", "static-2.pickle", 1000, 1)
    monkeypatch.setenv("GMPROF_CACHE_MAX", "2500")
    assert cache_dirs.enforce_cap(force=True) == 2000
    assert not old.exists() and not older_host.exists()
    assert kept.exists() and recent.exists()


def test_objects_builds_link_are_never_evicted(root, monkeypatch):
    # CMake bakes cpu/program's paths into its link line (--gmprof-link-flags)
    linked = _entry(root / "cpu" / "program", "cudart-cpu-1.o", 1000, 9 * 3600)
    monkeypatch.setenv("GMPROF_CACHE_MAX", "10")
    assert cache_dirs.enforce_cap(force=True) == 0 and linked.exists()


def test_a_hit_counts_as_a_use(root, monkeypatch):
    monkeypatch.setenv("GMPROF_CACHE_MAX", "0")  # no eviction while storing
    host_cache.store("t", "aa", {"v": 1})
    host_cache.store("t", "bb", {"v": 2})
    for name, age in (("t-aa.pickle", 7200), ("t-bb.pickle", 3600)):
        t = time.time() - age
        os.utime(root / "host" / name, (t, t))
    assert host_cache.load("t", "aa") == {"v": 1}  # aa used now: bb is the least recent
    size = (root / "host" / "t-bb.pickle").stat().st_size
    monkeypatch.setenv("GMPROF_CACHE_MAX", str(size + 10))
    cache_dirs.enforce_cap(force=True)
    assert (root / "host" / "t-aa.pickle").exists()
    assert not (root / "host" / "t-bb.pickle").exists()


def test_entries_used_in_the_last_minute_are_kept(root, monkeypatch):
    fresh = _entry(root / "cpu", "b.so", 5000, 5)
    monkeypatch.setenv("GMPROF_CACHE_MAX", "100")
    assert cache_dirs.enforce_cap(force=True) == 0 and fresh.exists()


def test_cache_info_and_clean(root, capsys):
    _entry(root / "cpu", "a.so", 100, 0)
    (root / "cpu" / "a.so.sum").write_text("{}")  # its record, counted with it
    _entry(root / "host", "lark-1.tables", 50, 0)
    (root / "mine.txt").write_text("not gmprof's")
    assert main(["cache", "--info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["root"] == str(root) and data["max_bytes"] == 2 << 30
    assert data["caches"]["cpu"]["entries"] == 1 and data["caches"]["cpu"]["bytes"] == 102
    assert data["caches"]["host"] == {"directory": str(root / "host"), "entries": 1,
                                      "bytes": 50}
    assert main(["cache", "--info"]) == 0
    assert f"cache root: {root}" in capsys.readouterr().out
    linked = _entry(root / "cpu" / "program", "host-cpu-1.o", 10, 0)
    assert main(["cache", "--clean"]) == 0
    assert [p.name for p in (root / "cpu").iterdir()] == ["program"]
    assert not list((root / "host").iterdir())
    assert linked.exists()  # builds link it by path: kept
    assert (root / "mine.txt").exists()  # only gmprof's caches are emptied
    assert main(["cache", "--clean", "--all"]) == 0
    assert not linked.exists() and "configure them again" in capsys.readouterr().out


def test_cache_needs_info_or_clean(capsys):
    assert main(["cache"]) == 2
    assert "one of the arguments --info --clean is required" in capsys.readouterr().err
