"""Compilers and runtime objects for whole programs: which backend, which commands, the host
runtime (and, on the CPU backend, the CUDA runtime emulation) compiled once and cached.

Stage: whole programs, build. Takes the backend asked for (GMPROF_BACKEND or --gmprof-backend:
gpu, cpu or auto) and the user's flags; returns commands and object files. On the GPU backend the
real nvcc compiles everything; on the CPU backend g++ compiles the translated .cu files against
gmprof's CUDA runtime emulation (runtime_cu/cpu/include) with the CPU execution header
force-included, as the single-kernel CPU backend does.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from gmprof._paths import runtime_cu_dir
from gmprof.errors import GmprofError

CXX = os.environ.get("GMPROF_CXX", "g++")
# as gmprof/runtime/cpu.py compiles kernels (why each: docs/cpu-backend.md), plus the whole-
# program switch and the emulated CUDA runtime in front of everything the program includes
CPU_FLAGS = ("-fno-strict-aliasing", "-fstack-clash-protection", "-DGMPROF_CPU_PROGRAM",
             "-DGMPROF_CPU_SEPARATE_RUNTIME")
CPU_LIBS = ("-lpthread", "-ldl", "-lrt")
HOST_GENCODE = ("-gencode=arch=compute_75,code=[sm_75,compute_75]",
                "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90")


def cpu_includes() -> list[str]:
    rt = runtime_cu_dir()
    return ["-include", str(rt / "cpu" / "gmprof_cpu.h"),
            "-include", str(rt / "cpu" / "include" / "cuda_runtime.h"),
            "-I", str(rt / "cpu" / "include")]


def find_nvcc() -> str | None:
    """The real nvcc: $GMPROF_NVCC, else the first `nvcc` on PATH that is not gmprof's own
    wrapper (so `NVCC=gmprof-nvcc` on PATH as `nvcc` does not call itself)."""
    env = os.environ.get("GMPROF_NVCC")
    if env:
        return env
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = Path(d) / "nvcc"
        if p.is_file() and os.access(p, os.X_OK):
            try:
                head = p.read_bytes()[:200]
            except OSError:
                continue
            if b"gmprof" in head:
                continue
            return str(p)
    cuda = Path("/usr/local/cuda/bin/nvcc")
    return str(cuda) if cuda.is_file() else None


def gpu_visible() -> bool:
    """Whether this machine has an NVIDIA GPU (a driver device node), without loading CUDA."""
    return any(Path(f"/dev/nvidia{k}").exists() for k in range(16))


def choose_backend(asked: str | None) -> str:
    asked = (asked or os.environ.get("GMPROF_BACKEND") or "auto").strip().lower()
    if asked not in ("auto", "gpu", "cpu"):
        raise GmprofError(f"GMPROF_BACKEND={asked!r}: expected gpu, cpu or auto", kind="bad-option")
    if asked == "auto":
        return "gpu" if gpu_visible() and find_nvcc() else "cpu"
    if asked == "gpu" and not find_nvcc():
        raise GmprofError("the GPU backend needs nvcc (set GMPROF_NVCC, or put it on PATH)",
                          kind="bad-option")
    return asked


def cache_dir() -> Path:
    from gmprof import cache_dirs

    d = cache_dirs.kind_dir("cpu/program")  # one place for every cache
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GmprofError(f"cannot use the cache directory {d}: {exc.strerror}",
                          kind="cache") from None
    return d


def _sources_digest(*parts: str) -> str:
    h = hashlib.sha256()
    rt = runtime_cu_dir()
    for sub in ("host", "cpu", "cpu/include"):
        for p in sorted((rt / sub).glob("*")):
            if p.is_file():
                h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    h.update((rt / "gmprof.cuh").read_bytes())
    for part in parts:
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


@functools.lru_cache(maxsize=None)  # (asked at every link: runtime_objects, gpu_link_flags)
def _version(cmd: str) -> str:
    try:
        out = subprocess.run([cmd, "--version"], capture_output=True, text=True)
    except OSError as exc:
        raise GmprofError(f"cannot run {cmd}: {exc.strerror}", kind="compile") from None
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else cmd


def _build_object(name: str, cmd_for, key_parts) -> Path:
    from gmprof.runtime import cpu_cache

    d = cache_dir()
    obj = d / f"{name}-{_sources_digest(*key_parts)}.o"
    if cpu_cache.lookup(obj):
        return obj
    tmp = cpu_cache.temp_file(d, ".o")
    try:
        cmd = cmd_for(tmp)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise GmprofError(f"gmprof's runtime ({name}) does not compile here: "
                              f"{(proc.stderr or proc.stdout).strip()[:2000]}", kind="compile")
        cpu_cache.store(tmp, obj)
    finally:
        if tmp.exists():
            tmp.unlink()
    return obj


def runtime_objects(backend: str, extra_flags=()) -> list[str]:
    """The objects every program built by gmprof nvcc links: the host runtime (and the CPU
    backend's CUDA runtime and scheduler)."""
    rt = runtime_cu_dir()
    if backend == "gpu":
        nvcc = find_nvcc()
        # compiled as CUDA: the fold of each launch's counters is a kernel of the runtime's own
        # (SASS for the common GPUs, PTX for the others)
        host = _build_object(
            "host-gpu", lambda out: [nvcc, "-O2", "-std=c++17", "-Xcompiler", "-fPIC", "-x", "cu",
                                     *HOST_GENCODE, "-c", str(rt / "host" / "gmprof_host.cpp"),
                                     "-o", str(out)],
            ("gpu", _version(nvcc), *extra_flags))
        return [str(host)]
    flags = ["-std=c++17", "-O2", "-fPIC", *CPU_FLAGS, *extra_flags]
    version = _version(CXX)
    cudart = _build_object(
        "cudart-cpu", lambda out: [CXX, *flags, "-c", str(rt / "cpu" / "gmprof_cudart.cpp"),
                                   "-o", str(out)], ("cpu-cudart", version, *flags))
    host = _build_object(
        "host-cpu", lambda out: [CXX, *flags, *cpu_includes(), "-c",
                                 str(rt / "host" / "gmprof_host.cpp"), "-o", str(out)],
        ("cpu-host", version, *flags))
    return [str(cudart), str(host)]


# Launches gmprof did not rewrite (a library's `<<<...>>>` in CUDA's headers: Thrust, CUB) call
# these, which the host runtime wraps to count them (gmprof_host.cpp count_unseen_launch): with
# CUDA 13's launch code; the wrappers exist where the runtime was compiled with CUDA 13 too
LAUNCH_WRAPS = ("__cudaLaunchKernel", "__cudaLaunchKernel_ptsz")


def gpu_link_flags(linker_prefix: str = "-Xlinker") -> list[str]:
    """What a program linked with gmprof's host runtime on a GPU adds to its link: the runtime's
    object, the wraps of the launches it counts, libdl. linker_prefix: `-Xlinker` (nvcc) or
    `-Wl,` (a link by the host compiler, as CMake does)."""
    wraps = []
    m = re.search(r"cuda_(\d+)\.", _version(find_nvcc()))
    if m and int(m.group(1)) >= 13:
        for name in LAUNCH_WRAPS:
            wraps += ([f"-Wl,--wrap={name}"] if linker_prefix == "-Wl," else
                      [linker_prefix, f"--wrap={name}"])
    return [*runtime_objects("gpu"), *wraps, "-ldl"]


def which(cmd: str) -> str | None:
    return shutil.which(cmd)
