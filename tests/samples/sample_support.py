"""Helpers for the sample tests: where the samples are, their kernels' signatures, and the source
rewrite the CPU backend needs until gmprof's frontend does it.

Imported by the test modules beside it (pytest puts this folder on sys.path) and by gpu_run.py.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np

from gmprof.driver import Sample, load_sample

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples"
SIZES = ("small", "large")


def sample_names() -> list[str]:
    return sorted(p.parent.name for p in SAMPLES_DIR.glob("*/driver.py"))


@functools.lru_cache(maxsize=None)
def sample(name: str) -> Sample:
    return load_sample(SAMPLES_DIR / name)


def kernel_names(s: Sample) -> list[str]:
    """Every kernel name expression the sample launches, at any size, in first-use order."""
    names: dict[str, None] = {}
    for size in s.driver.sizes.values():
        for launch in s.driver.launches(size):
            names.setdefault(launch.kernel, None)
    return list(names)


# --- kernel signatures -------------------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_GLOBAL = re.compile(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)")


def kernel_params(source: str) -> dict[str, list[tuple[str, bool]]]:
    """{kernel name: [(base type, is_pointer), ...]} for each __global__ function in the text."""
    out = {}
    for m in _GLOBAL.finditer(_COMMENT.sub(" ", source)):
        params = []
        for decl in filter(None, (p.strip() for p in m.group(2).split(","))):
            words = decl.replace("*", " * ").split()
            pointer = "*" in words
            base = " ".join(w for w in words[:-1] if w not in ("const", "*", "__restrict__"))
            params.append((base, pointer))
        out[m.group(1)] = params
    return out


#: numpy dtype (and, for vector types, the innermost extent) of each C type the samples use
C_TYPES = {"float": (np.float32, 1), "int": (np.int32, 1), "unsigned int": (np.uint32, 1),
           "float4": (np.float32, 4)}


def base_name(kernel: str) -> str:
    """matmul_tiled<16> -> matmul_tiled"""
    return kernel.split("<", 1)[0].strip()


# --- the CPU backend's input (temporary) -------------------------------------------------------

# TEMPORARY: gmprof's frontend will inline local includes and rewrite dynamic shared memory
# itself; until it does, the CPU test feeds the backend this regex rewrite. Remove it then.
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)
_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+([\w ]+?)\s+(\w+)\s*\[\s*\]\s*;")


def cpu_source(s: Sample) -> str:
    """The sample's kernel text with local #includes inlined and extern __shared__ rewritten."""

    def inline(path: Path, seen: frozenset) -> str:
        def include(m: re.Match) -> str:
            target = (path.parent / m.group(1)).resolve()
            if not target.is_file():
                return m.group(0)  # not a local header: leave it to the backend
            if target in seen:
                return ""  # included already (the header's own guard would skip it)
            return inline(target, seen | {target})

        return _INCLUDE.sub(include, path.read_text())

    text = inline(s.source_path, frozenset({s.source_path.resolve()}))
    return _EXTERN_SHARED.sub(r"GMPROF_DYNAMIC_SHARED(\1, \2);", text)
