"""The CPU backend behind the runtime's Backend interface (see backend.py).

Device memory is host memory: "device arrays" are numpy arrays, each in its own mapping fenced
by red zones and guard pages (guarded.py), addresses are their data pointers, and kernels run
through gmprof/runtime/cpu.py (g++ and fibers). After each launch the red zones of the arrays
passed to the kernel are checked: writes past an end are listed in `memory_errors`, and the
session reports them (the user's own arrays are never handed to a kernel: the session copies
them). Timings are wall-clock times of the CPU emulation, labelled as such in reports and never
compared with GPU times.
"""
from __future__ import annotations

import ctypes
import platform

import numpy as np

from ..errors import GmprofError
from ..passes.targets import CPU
from . import guarded
from .launchargs import host_same_bytes


def check_red_zones(args) -> list[tuple[int, str]]:
    """(index, description) for each argument whose red zones were written; they are put back,
    so that the next launch's writes are seen."""
    out = []
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            continue
        region = guarded.region_of(a)
        if region is None:
            continue
        damage = region.damage()
        if damage is not None:
            out.append((i, guarded.describe(region, damage)))
            region.repair()
    return out


class CpuModuleAdapter:
    def __init__(self, module):
        self.module = module
        self.memory_errors: list[tuple[int, str]] = []  # (argument index, what was written)

    def launch(self, name, grid, block, args, shared_mem=0, timeout=None) -> float:
        args = list(args)
        try:
            return self.module.launch(name, tuple(grid), tuple(block), args, shared_mem,
                                      timeout=timeout)
        finally:
            self.memory_errors = check_red_zones(args)

    @property
    def diagnostics(self):
        return self.module.diagnostics

    def get_global(self, name):
        return self.module.get_global(name)

    def static_shared_bytes(self, name) -> int:
        return 0  # blocks' static shared arrays are ordinary statics here: no per-block limit


class CpuBackend:
    name = "cpu"
    target = CPU  # what the generated source is written for
    max_threads_per_block = 1024
    # no hardware limit; keep the H100's so plans and errors match what a GPU would do
    max_shared_per_block = 227 * 1024

    def __init__(self):
        self.device = f"CPU backend ({platform.machine()}, fibers)"

    def compile(self, source, names, options=(), filename="kernel.cu", globals=()):
        from .cpu import CpuModule

        module = CpuModule(source, list(names), globals=list(globals), options=list(options),
                           filename=filename)
        return CpuModuleAdapter(module)

    def to_device(self, array):
        return guarded.copy_of(array)

    def zeros(self, n, dtype):
        # gmprof's own buffers (counters, the trace): red zones poisoned under ASan
        return guarded.zeros(int(n), dtype, poison=True)

    def to_host(self, array):
        return np.asarray(array)

    def copy(self, array):
        return guarded.copy_of(array)

    def same_bytes(self, a, b) -> bool:
        return host_same_bytes(np.asarray(a), np.asarray(b))

    def address(self, array) -> int:
        return int(array.ctypes.data)

    def copy_to_address(self, address, data: bytes):
        ctypes.memmove(address, data, len(data))

    def read_address(self, address, size) -> bytes:
        return ctypes.string_at(address, size)

    def check_guards(self, arrays) -> list[str]:
        """Descriptions of the red zones written around these arrays (gmprof's own buffers)."""
        return [text for _, text in check_red_zones(arrays)]

    def synchronize(self):
        pass


__all__ = ["CpuBackend", "GmprofError"]
