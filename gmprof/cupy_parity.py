"""What code written for cupy.RawKernel / cupy.RawModule reads besides calling a kernel:
`attributes`, `num_regs`, `max_threads_per_block`, `max_dynamic_shared_size_bytes` (settable),
`compile()`, and `RawModule.get_global`.

Stage: API (gmprof.api's RawKernel and RawModule mix these in). Every value is the native
(uninstrumented) kernel's, so code that sizes its launches from them sizes them as it would
without gmprof. On a GPU they come from CuPy's own function object for the native module. On
the CPU backend there are no registers nor binary versions, and they are these documented
constants (CPU_ATTRIBUTES): num_regs 0, max_threads_per_block 1024 (the backend's limit),
shared_size_bytes 0 (a block's static shared arrays are ordinary statics there),
const_size_bytes and local_size_bytes 0, binary_version and ptx_version 0,
preferred_shared_memory_carveout -1, cache_mode_ca 0.

max_dynamic_shared_size_bytes is CUDA's cudaFuncAttributeMaxDynamicSharedMemorySize: 48 KiB
until set, as in CUDA; a call with more dynamic shared memory than it allows is refused with a
plain error on both backends, as CuPy's launch fails, so code that forgets to raise it fails
here as it would on a GPU.
"""
from __future__ import annotations

from .errors import ArgumentError, OptionError

DEFAULT_DYNAMIC_SHARED = 48 * 1024

CPU_ATTRIBUTES = {
    "binary_version": 0, "cache_mode_ca": 0, "const_size_bytes": 0, "local_size_bytes": 0,
    "max_threads_per_block": 1024, "num_regs": 0, "preferred_shared_memory_carveout": -1,
    "ptx_version": 0, "shared_size_bytes": 0,
}


class KernelAttributes:
    """Mixed into gmprof.RawKernel: needs self.name and self._profiler() (the cached
    Profiler of the kernel's code, gmprof.api)."""

    _max_dynamic_shared: int | None = None

    def _native_module(self):
        prof = self._profiler()
        prof.kernel_facts(self.name)  # a plain error for a kernel the code does not have
        names = list(dict.fromkeys([self.name, *getattr(self, "name_expressions", [])]))
        return prof, prof.modules.module(None, names)

    def compile(self, log_stream=None):
        """Compile the native module now (CuPy compiles on the first call otherwise); a
        kernel that does not compile is a GmprofError here rather than at the first call."""
        self._native_module()

    @property
    def attributes(self) -> dict:
        """cupy.RawKernel.attributes: the native kernel's, from CuPy on a GPU, else the CPU
        backend's constants (see the module docstring)."""
        prof, module = self._native_module()
        if prof.backend.name == "gpu":
            out = dict(module.function(self.name).attributes)
        else:
            out = dict(CPU_ATTRIBUTES,
                       max_threads_per_block=int(prof.backend.max_threads_per_block))
        out["max_dynamic_shared_size_bytes"] = self.max_dynamic_shared_size_bytes
        return out

    @property
    def num_regs(self) -> int:
        return int(self.attributes["num_regs"])

    @property
    def max_threads_per_block(self) -> int:
        return int(self.attributes["max_threads_per_block"])

    @property
    def shared_size_bytes(self) -> int:
        return int(self.attributes["shared_size_bytes"])

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        if self._max_dynamic_shared is not None:
            return self._max_dynamic_shared
        return DEFAULT_DYNAMIC_SHARED

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"max_dynamic_shared_size_bytes={value!r}: expected a "
                                "non-negative int (bytes)")
        limit = int(self._profiler().backend.max_shared_per_block)
        if value > limit:
            raise OptionError(f"max_dynamic_shared_size_bytes={value:,}: more than the "
                              f"{limit:,} bytes of shared memory a block may have on this "
                              "device")
        self._max_dynamic_shared = value

    def _check_shared_mem(self, shared_mem) -> None:
        if isinstance(shared_mem, int) and shared_mem > self.max_dynamic_shared_size_bytes:
            raise OptionError(f"shared_mem={shared_mem:,} bytes of dynamic shared memory is "
                              f"more than {self.name}'s max_dynamic_shared_size_bytes "
                              f"({self.max_dynamic_shared_size_bytes:,}); as CUDA requires "
                              "above 48 KiB, set kernel.max_dynamic_shared_size_bytes = "
                              f"{shared_mem} first")


def get_global(module, name: str):
    """cupy.RawModule.get_global: the native module's file-scope variable (__device__,
    __constant__) `name`, which every profiled launch starts from (the instrumented module
    copies it: runtime/module_state.py). On a GPU a cupy.cuda.MemoryPointer, as CuPy gives;
    on the CPU backend a writable numpy uint8 array over the variable's bytes (`.view(dtype)`
    to read or fill it as its type)."""
    import ctypes

    import numpy as np

    if not isinstance(name, str) or not name:
        raise ArgumentError(f"name={name!r}: expected a variable's name (a str)")
    prof = module._profiler()
    known = prof.modules.global_names()
    if name not in known:
        raise ArgumentError(f"no __device__ or __constant__ variable named {name!r} in the "
                            f"module (variables: {', '.join(known) or 'none'})")
    names = list(module.name_expressions) or \
        [f.name for f in prof.tu.kernels if f.parsed is not None and not f.template_params]
    native = prof.modules.module(None, names)
    if prof.backend.name == "gpu":
        return native.raw.get_global(name)
    address, size = native.get_global(name)
    return np.frombuffer((ctypes.c_uint8 * size).from_address(address), dtype=np.uint8)


__all__ = ["KernelAttributes", "get_global", "CPU_ATTRIBUTES", "DEFAULT_DYNAMIC_SHARED"]
