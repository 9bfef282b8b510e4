"""The CPU backend behind the runtime's Backend interface (see backend.py).

Device memory is host memory: "device arrays" are numpy arrays, addresses are their data
pointers, and kernels run through gmprof/runtime/cpu.py (g++ and fibers). Timings are wall-clock
times of the CPU emulation, labelled as such in reports and never compared with GPU times.
"""
from __future__ import annotations

import ctypes
import platform

import numpy as np

from ..errors import GmprofError


class CpuModuleAdapter:
    def __init__(self, module):
        self.module = module

    def launch(self, name, grid, block, args, shared_mem=0) -> float:
        return self.module.launch(name, tuple(grid), tuple(block), list(args), shared_mem)

    def get_global(self, name):
        return self.module.get_global(name)

    def static_shared_bytes(self, name) -> int:
        return 0  # blocks' static shared arrays are ordinary statics here: no per-block limit


class CpuBackend:
    name = "cpu"
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
        return np.ascontiguousarray(array).copy()

    def zeros(self, n, dtype):
        return np.zeros(int(n), dtype=dtype)

    def to_host(self, array):
        return np.asarray(array)

    def address(self, array) -> int:
        return int(array.ctypes.data)

    def copy_to_address(self, address, data: bytes):
        ctypes.memmove(address, data, len(data))

    def synchronize(self):
        pass


__all__ = ["CpuBackend", "GmprofError"]
