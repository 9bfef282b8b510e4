"""The CPU backend's compile cache survives damage: a truncated library, runtime object or
precompiled header is rebuilt (never loaded: a truncated library faults with SIGBUS on every
later run), temporaries of dead processes are removed, a cache path that cannot be used is a
plain error, and an edited #include'd header is seen, by a new module and by a running
process's profiler."""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

import gmprof
from gmprof.errors import CacheError
from gmprof.runtime.cpu import CpuModule

SRC = "__global__ void put(int *o, int v) { o[threadIdx.x] = v + 1; }\n"


def launch(m, v=1):
    out = np.zeros(4, np.int32)
    m.launch("put", 1, 4, (out, np.int32(v)))
    return out.tolist()


def entries(cache, pattern):
    return [p for p in Path(cache).glob(pattern) if not p.name.endswith((".sum", ".lock"))]


def truncate(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def test_a_truncated_library_is_rebuilt(tmp_path):
    m = CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    assert not m.cached and launch(m) == [2] * 4
    (so,) = entries(tmp_path, "*.so")
    truncate(so)
    m2 = CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    assert not m2.cached  # rebuilt, not loaded
    assert launch(m2, 5) == [6] * 4
    m3 = CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    assert m3.cached and launch(m3) == [2] * 4


def test_a_library_without_its_record_is_rebuilt(tmp_path):
    CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    (so,) = entries(tmp_path, "*.so")
    Path(str(so) + ".sum").unlink()  # as a process killed between the two renames leaves it
    assert not CpuModule(SRC, ["put"], cache_dir=str(tmp_path)).cached


def test_a_truncated_runtime_object_and_header_are_rebuilt(tmp_path):
    CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    (obj,) = entries(tmp_path, "runtime-*.o")
    truncate(obj)
    (pch,) = entries(tmp_path, "pch-*")
    truncate(pch / "gmprof_cpu.h.gch")
    m = CpuModule(SRC.replace("+ 1", "+ 2"), ["put"], cache_dir=str(tmp_path))
    assert launch(m) == [3] * 4


def _build_and_launch(job):
    cache, v = job
    m = CpuModule(SRC.replace("+ 1", f"+ {v}"), ["put"], cache_dir=cache)
    return launch(m)


def test_processes_that_start_together_on_a_cold_cache_all_compile(tmp_path):
    """Four processes, each its own kernel, one empty cache (make -j, a pool of workers): the
    runtime object and the precompiled header are built once and never pulled from under a
    process that uses them (the oracle's 16 workers on a cold cache lost kernels to a
    precompiled-header directory another worker had just deleted as record-less)."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(4) as pool:
        outs = pool.map(_build_and_launch, [(str(tmp_path), v) for v in range(2, 6)])
    assert outs == [[1 + v] * 4 for v in range(2, 6)]
    assert len(entries(tmp_path, "pch-*")) == 1 and len(entries(tmp_path, "runtime-*.o")) == 1


def test_a_young_entry_without_its_record_is_left_to_its_publisher(tmp_path):
    from gmprof.runtime import cpu_cache

    entry = tmp_path / "pch-x"
    entry.mkdir()
    (entry / "h").write_text("x")  # renamed into place, its record not yet written
    assert not cpu_cache.lookup(entry) and entry.exists()
    os.utime(entry, (time.time() - 3600,) * 2)  # a publisher killed an hour ago
    assert not cpu_cache.lookup(entry) and not entry.exists()


def test_temporaries_of_ended_processes_are_removed(tmp_path):
    dead = tmp_path / "tmp-999999999-abc"  # no such process
    dead.mkdir()
    (dead / "kernel.cpp").write_text("x")
    old = tmp_path / "gmprof-cpu-old"  # the names before records; a day old
    old.mkdir()
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    mine = tmp_path / f"tmp-{os.getpid()}-live"  # this process's: kept
    mine.mkdir()
    CpuModule(SRC, ["put"], cache_dir=str(tmp_path))
    assert not dead.exists() and not old.exists() and mine.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("tmp-")] == [mine.name]


def test_a_cache_path_that_is_a_file_is_a_plain_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a directory")
    with pytest.raises(CacheError, match="not a directory"):
        CpuModule(SRC, ["put"], cache_dir=str(f))
    with pytest.raises(CacheError):
        CpuModule(SRC, ["put"], cache_dir=str(f / "below"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_cache_is_a_plain_error(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        with pytest.raises(CacheError, match="not writable"):
            CpuModule(SRC, ["put"], cache_dir=str(d))
    finally:
        d.chmod(0o700)


def test_an_edited_header_is_seen_by_a_new_module(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "value.h").write_text("#define VALUE 10\n")
    src = '#include "value.h"\n__global__ void put(int *o, int v) { o[threadIdx.x] = VALUE; }\n'
    cache = tmp_path / "cache"
    m = CpuModule(src, ["put"], options=[f"-I{inc}"], cache_dir=str(cache))
    assert launch(m) == [10] * 4
    (inc / "value.h").write_text("#define VALUE 20\n")
    m2 = CpuModule(src, ["put"], options=[f"-I{inc}"], cache_dir=str(cache))
    assert not m2.cached and launch(m2) == [20] * 4


def test_an_edited_header_is_seen_by_a_running_profiler(tmp_path):
    (tmp_path / "value.cuh").write_text("#define VALUE 10\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "value.cuh"\n'
                   "__global__ void put(int *o) { o[threadIdx.x] = VALUE; }\n")
    out = np.zeros(4, np.int32)
    gmprof.profile(src, "put", 1, 4, [out], backend="cpu")
    assert out.tolist() == [10] * 4
    (tmp_path / "value.cuh").write_text("#define VALUE 20\n")
    gmprof.profile(src, "put", 1, 4, [out], backend="cpu")
    assert out.tolist() == [20] * 4
