"""The CMake recipe: one include file that makes every CUDA target of a project profiled.

Stage: whole programs, for `gmprof nvcc --gmprof-cmake`. CMake compiles CUDA sources through
CMAKE_CUDA_COMPILER_LAUNCHER but links CUDA programs with the host compiler, which no launcher
wraps; and on the CPU backend the CUDA runtime emulation replaces libcudart (linking CMake's
static cudart too gave 69 duplicate symbols). The file this writes sets all of it for the
backend chosen now, so that the recipe is the same on every machine:

    cmake -S . -B build -DCMAKE_PROJECT_INCLUDE="$(gmprof nvcc --gmprof-cmake)"
    cmake --build build

It is included at the end of the project's `project()` (CMake >= 3.15), before any target is
made: the launcher is this Python running gmprof's CLI (no PATH lookup at build time), the
backend is fixed with --gmprof-backend in CMAKE_CUDA_FLAGS, and the host runtime's objects,
copied into the build tree at configure time, go into every CUDA link through
CMAKE_CUDA_STANDARD_LIBRARIES. Returns its path (in the program cache, named by its contents;
a cleaned cache only means running the command again before the next configure).
"""
from __future__ import annotations

import hashlib
import sys

from .build import cache_dir


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "/").replace('"', '\\"') + '"'


def cmake_include(backend: str, link_flags: list[str]) -> str:
    launcher = ";".join([sys.executable, "-m", "gmprof.cli"])
    objects = [f for f in link_flags if not f.startswith("-")]
    libs = [f for f in link_flags if f.startswith("-")]
    lines = [
        "# made by `gmprof nvcc --gmprof-cmake` (gmprof/program/cmake.py): every CUDA target of",
        "# this project is instrumented by gmprof; each program writes its report at exit",
        f"set(CMAKE_CUDA_COMPILER_LAUNCHER {_quote(launcher)})",
        f'string(APPEND CMAKE_CUDA_FLAGS " --gmprof-backend {backend}")',
        "# the runtime's objects, copied into the build tree (a cleaned gmprof cache leaves the",
        "# build working)",
        'set(_gmprof_rt "${CMAKE_BINARY_DIR}/gmprof-runtime")',
        "file(COPY " + " ".join(_quote(o) for o in objects) + ' DESTINATION "${_gmprof_rt}")',
    ]
    for o in objects:
        name = o.replace("\\", "/").rsplit("/", 1)[-1]
        lines.append(f'string(APPEND CMAKE_CUDA_STANDARD_LIBRARIES " ${{_gmprof_rt}}/{name}")')
    lines.append("string(APPEND CMAKE_CUDA_STANDARD_LIBRARIES " + _quote(" " + " ".join(libs))
                 + ")")
    if backend == "cpu":
        # the CPU backend's CUDA runtime emulation replaces libcudart
        lines.append("set(CMAKE_CUDA_RUNTIME_LIBRARY None)")
    text = "\n".join(lines) + "\n"
    name = f"gmprof-{backend}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.cmake"
    path = cache_dir() / name
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return str(path)


__all__ = ["cmake_include"]
