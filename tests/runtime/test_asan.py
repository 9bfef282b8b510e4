"""The kernels that used to corrupt the CPU backend's heap, under AddressSanitizer: the runtime
and every module compiled with -fsanitize=address ($GMPROF_CPU_SANITIZE, read in one place:
gmprof.runtime.cpu.sanitize_flags), in a process that loads the sanitizer first. Through the
profiler, the user's data stays exact and the sanitizer sees no bad access (the kernel's stray
writes land in gmprof's red zones, or fault at a guard page); launched directly on a user's
numpy array, the same kernel is caught by the sanitizer, which shows it is watching."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "badinput" / "kernels.cu"


def libasan() -> str | None:
    try:
        path = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return None
    return path if os.path.isabs(path) and os.path.exists(path) else None


pytestmark = pytest.mark.skipif(libasan() is None, reason="no libasan for g++")


def under_asan(script: str, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, GMPROF_CPU_SANITIZE="address", LD_PRELOAD=libasan(),
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0", GMPROF_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=ROOT)


PROFILED = f"""
    import numpy as np, gmprof
    from gmprof.errors import KernelFault
    from gmprof.runtime import cpu
    assert "-fsanitize=address" in cpu.compile_flags()
    prof = gmprof.api.profiler({str(KERNELS)!r}, backend="cpu")

    # 128 threads write one float each into 100: 28 stray writes
    y = np.full(100, 7.0, np.float32)
    guard = np.full(64, 5.0, np.float32)  # allocated next to y, as the heap would
    report = prof.launch("overrun", 2, 64, [y, 100], repeat=3)
    assert (y == 1.0).all() and (guard == 5.0).all()
    assert [w.kind for w in report.warnings if w.failed_check] == ["out-of-range"]

    # 4096 threads into 100 floats: faults at the guard page, the user's array untouched
    y = np.full(100, 7.0, np.float32)
    try:
        prof.launch("overrun", 64, 64, [y, 100])
        raise SystemExit("no fault")
    except KernelFault as e:
        assert e.kind == "invalid-address", e
    assert (y == 7.0).all()

    # a pointer to pointers: each row written once
    rows = [np.zeros(2, np.float32) for _ in range(4)]
    prof.launch("rows", 1, 32, [rows, 4], repeat=2)
    assert [float(r[0]) for r in rows] == [1.0, 2.0, 3.0, 4.0]
    print("exact")
"""

DIRECT = f"""
    import numpy as np
    from gmprof.runtime.cpu import CpuModule
    m = CpuModule(open({str(KERNELS)!r}).read(), ["overrun"], filename="kernels.cu")
    y = np.zeros(100, np.float32)
    m.launch("overrun", 2, 64, (y, np.int32(100)))
    print("not caught")
"""


def test_profiled_launches_keep_the_data_exact_under_asan(tmp_path):
    p = under_asan(PROFILED, tmp_path / "cache")
    assert "AddressSanitizer" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0 and "exact" in p.stdout, p.stderr[-3000:]


def test_the_sanitizer_is_watching(tmp_path):
    p = under_asan(DIRECT, tmp_path / "cache")
    assert "heap-buffer-overflow" in p.stderr and "not caught" not in p.stdout
