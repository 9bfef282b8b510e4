"""One backend interface for running kernels: compile, allocate, launch, read back.

The GPU backend goes through CuPy (NVRTC); the CPU backend (cpu_backend.py) runs the same
device code as C++ fibers. The runtime never touches CuPy or ctypes directly: it asks a Backend.

    backend = get_backend("auto")          # GPU when CuPy sees one, else the CPU
    module = backend.compile(source, ["matmul<16>"], options=["-DGMPROF_SM=1"])
    a = backend.to_device(np.ones(16, np.float32))
    ms = module.launch("matmul<16>", grid, block, [a, np.int32(16)], shared_mem=0)
"""
from __future__ import annotations

import os
import time
from typing import Any, Protocol, Sequence

import numpy as np

from ..errors import CompileError, GmprofError, KernelFault, KernelTimeout, OptionError
from ..passes.targets import NVRTC


class Module(Protocol):
    def launch(self, name: str, grid, block, args: Sequence, shared_mem: int = 0,
               timeout: float | None = None) -> float: ...
    def get_global(self, name: str) -> tuple[int, int]: ...
    def static_shared_bytes(self, name: str) -> int: ...


class Backend(Protocol):
    name: str
    device: str
    max_threads_per_block: int
    max_shared_per_block: int  # with opt-in (dynamic + static)
    target: Any  # passes.targets.Target: what the generated source is written for
    def compile(self, source: str, names: Sequence[str], options: Sequence[str] = (),
                filename: str = "kernel.cu") -> Module: ...
    def to_device(self, array: np.ndarray) -> Any: ...
    def zeros(self, n: int, dtype) -> Any: ...
    def copy(self, array) -> Any: ...  # device to device
    def same_bytes(self, a, b) -> bool: ...  # compared where they live
    def to_host(self, array) -> np.ndarray: ...
    def address(self, array) -> int: ...
    def copy_to_address(self, address: int, data: bytes) -> None: ...
    def read_address(self, address: int, size: int) -> bytes: ...
    def synchronize(self) -> None: ...


def gpu_available() -> bool:
    if os.environ.get("GMPROF_BACKEND") == "cpu":
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


_BACKENDS: dict = {}


def get_backend(name: str = "auto"):
    if name == "auto":
        name = "gpu" if gpu_available() else "cpu"
    if not isinstance(name, str) or name not in ("gpu", "cpu"):
        raise OptionError(f"unknown backend {name!r}: use auto, gpu or cpu")
    if name not in _BACKENDS:
        if name == "gpu":
            if not gpu_available():
                raise GmprofError("backend 'gpu' asked for, but CuPy sees no CUDA GPU here "
                                  "(use --backend cpu)", kind="no-gpu")
            _BACKENDS[name] = GpuBackend()
        else:
            from .cpu_backend import CpuBackend

            _BACKENDS[name] = CpuBackend()
    return _BACKENDS[name]


# CUDA's errors that end a kernel that faulted (the context is lost with them): the kind of
# KernelFault, as the CPU backend names the same faults
_GPU_FAULTS = {
    "ILLEGAL_ADDRESS": "invalid-address", "IllegalAddress": "invalid-address",
    "MISALIGNED_ADDRESS": "invalid-address", "MisalignedAddress": "invalid-address",
    "INVALID_ADDRESS_SPACE": "invalid-address", "InvalidAddressSpace": "invalid-address",
    "ILLEGAL_INSTRUCTION": "illegal-instruction", "IllegalInstruction": "illegal-instruction",
    "INVALID_PC": "illegal-instruction", "InvalidPc": "illegal-instruction",
    "HARDWARE_STACK_ERROR": "stack-overflow", "HardwareStackError": "stack-overflow",
    "ASSERT": "assert", "Assert": "assert",
    "LAUNCH_FAILED": "trap", "LaunchFailure": "trap",
}


def gpu_fault(name: str, error) -> KernelFault | None:
    """The user's kernel fault behind a CUDA error raised by a launch or its wait, as a
    KernelFault (exit status 1); None for an error that is not a fault. The CUDA context is lost
    with it: the process ends without CUDA's clean-up (the CLI, as after a time-out), and no
    count of the launch can be read; the CPU backend runs the same launch and names the site."""
    text = str(error)
    kind = next((k for code, k in _GPU_FAULTS.items() if code in text), None)
    if kind is None:
        return None
    exc = KernelFault(f"kernel `{name}` faulted on the GPU ({text.strip()}): the launch did not "
                      "complete and its counts are lost with the CUDA context; run it with "
                      "--backend cpu, where gmprof names the access that faulted", kind=kind)
    exc.kernel_still_running = True  # end the process without CUDA's clean-up
    return exc


class GpuModule:
    def __init__(self, backend, raw, names):
        self.backend = backend
        self.raw = raw
        self.names = names
        self._functions: dict = {}
        self._carveouts: dict = {}  # fit_carveout's answers
        self._blocks: dict = {}  # blocks_per_sm's answers

    def function(self, name):
        if name not in self._functions:
            try:
                self._functions[name] = self.raw.get_function(name)
            except Exception as exc:
                raise GmprofError(f"kernel {name!r} not found in the compiled module: {exc}",
                                  kind="no-kernel")
        return self._functions[name]

    def launch(self, name, grid, block, args, shared_mem=0, timeout=None) -> float:
        import cupy as cp

        fn = self.function(name)
        # the opt-in is needed once the kernel's static and dynamic shared memory together pass
        # 48 KiB, i.e. dynamic bytes past 48 KiB less the static ones (em_v1's instrumented
        # kernel: 17 KB static, 33 KB of counters: CUDA_ERROR_INVALID_VALUE without it)
        if shared_mem > 48 * 1024 - self.static_shared_bytes(name):
            fn.max_dynamic_shared_size_bytes = shared_mem
        start, end = cp.cuda.Event(), cp.cuda.Event()
        try:
            start.record()
            fn(tuple(grid), tuple(block), tuple(args), shared_mem=shared_mem)
            end.record()
            return self._wait(name, start, end, timeout)
        except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
            fault = gpu_fault(name, e)
            if fault is None:
                raise
            raise fault from None

    def _wait(self, name, start, end, timeout) -> float:
        import cupy as cp

        if timeout:
            # a running GPU kernel cannot be stopped from the host: say so, and let the process
            # end (which ends the kernel with its context)
            deadline = time.monotonic() + timeout
            while not end.done:
                if time.monotonic() > deadline:
                    exc = KernelTimeout(f"kernel `{name}` did not finish within {timeout:g} s "
                                        "(the time limit; --timeout SECONDS, 0 for none); it is "
                                        "still running on the GPU until this process ends",
                                        kind="timeout")
                    # the CLI must then end without the interpreter's normal exit, whose
                    # CUDA clean-up would wait for the kernel forever
                    exc.kernel_still_running = True
                    raise exc
                time.sleep(0.001)
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) / 1e3

    def get_global(self, name):
        ptr = self.raw.get_global(name)
        size = int(ptr.mem.size) or self._driver_size(name)
        return int(ptr.ptr), size

    def _driver_size(self, name) -> int:
        """A module variable's size in bytes, from the driver (CuPy reports 0): without it the
        user's `__device__` variables could not be saved, compared and restored around a launch."""
        import ctypes

        try:
            self.function(self.names[0])  # the module is loaded with its first function
            handle = getattr(self.raw, "module", None) or getattr(self.raw, "_module", None)
            module = int(handle.ptr)
            cuda = ctypes.CDLL("libcuda.so.1")
            dptr, size = ctypes.c_uint64(), ctypes.c_size_t()
            status = cuda.cuModuleGetGlobal_v2(ctypes.byref(dptr), ctypes.byref(size),
                                               ctypes.c_void_p(module), name.encode())
        except (AttributeError, IndexError, OSError, TypeError, GmprofError):
            return 0
        return int(size.value) if status == 0 else 0

    def static_shared_bytes(self, name) -> int:
        return int(self.function(name).shared_size_bytes)

    def blocks_per_sm(self, name, threads: int, dynamic: int) -> int | None:
        """The occupancy API's blocks a SM for a launch of `threads` threads with `dynamic`
        bytes of dynamic shared memory (None: not known). Asked once per shape."""
        import ctypes

        key = (name, int(threads), int(dynamic))
        if key in self._blocks:
            return self._blocks[key]
        fn = self.function(name)
        blocks = None
        try:
            # a CuPy RawKernel's CUfunction is its compiled Function's (RawKernel.kernel)
            ptr = int(getattr(fn, "ptr", None) or fn.kernel.ptr)
            n = ctypes.c_int(0)
            if ctypes.CDLL("libcuda.so.1").cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    ctypes.byref(n), ctypes.c_void_p(ptr), ctypes.c_int(int(threads)),
                    ctypes.c_size_t(int(dynamic))) == 0:
                blocks = n.value
        except (OSError, AttributeError, TypeError, ValueError):  # no driver library
            blocks = None
        self._blocks[key] = blocks
        return blocks

    def registers(self, name) -> int:
        return int(self.function(name).num_regs)

    def fit_carveout(self, name, grid, block, dynamic: int) -> int | None:
        """Prefer the smallest shared-memory part of the SM that holds the blocks of this
        launch that can be resident at once (carveout.py; GMPROF_CARVEOUT=fit): the percent
        set, or None (left to the driver)."""
        import ctypes

        from .carveout import fit_percent

        key = (name, tuple(grid), tuple(block), dynamic)
        if key in self._carveouts:
            return self._carveouts[key]
        fn = self.function(name)
        be = self.backend
        percent = None
        try:
            blocks = self.blocks_per_sm(name, int(np.prod(block)), dynamic)
            if blocks is not None:
                percent = fit_percent(int(fn.shared_size_bytes), dynamic,
                                      be.reserved_shared_per_block, int(np.prod(grid)),
                                      be.sm_count, blocks, be.max_shared_per_sm)
            if percent is not None:
                ptr = int(getattr(fn, "ptr", None) or fn.kernel.ptr)
                cuda = ctypes.CDLL("libcuda.so.1")
                try:
                    fn.preferred_shared_memory_carveout = percent
                except AttributeError:  # 9: CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
                    if cuda.cuFuncSetAttribute(ctypes.c_void_p(ptr), 9,
                                               ctypes.c_int(percent)) != 0:
                        percent = None
        except (OSError, AttributeError, TypeError, ValueError):
            percent = None
        self._carveouts[key] = percent
        return percent


class GpuBackend:
    name = "gpu"
    target = NVRTC  # what the generated source is written for

    def __init__(self):
        import cupy as cp

        self.cp = cp
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        self.device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        self.max_threads_per_block = int(props["maxThreadsPerBlock"])
        self.max_shared_per_block = int(props.get("sharedMemPerBlockOptin",
                                                  props["sharedMemPerBlock"]))
        self.sm_count = int(props.get("multiProcessorCount", 0))
        self.max_shared_per_sm = int(props.get("sharedMemPerMultiprocessor", 0))
        self.reserved_shared_per_block = int(props.get("reservedSharedMemPerBlock", 0))
        # the instrumented launch's L1 / shared split (carveout.py): 'fit' unless
        # GMPROF_CARVEOUT=driver leaves it to the driver
        self.carveout = os.environ.get("GMPROF_CARVEOUT", "fit")
        self.max_grid = tuple(int(x) for x in props["maxGridSize"])
        self.max_block = tuple(int(x) for x in props["maxThreadsDim"])
        self.driver = cp.cuda.runtime.driverGetVersion()
        # NVRTC compiles for this device: the frontend reads its __CUDA_ARCH__ branch
        self.arch = f"sm_{props['major']}{props['minor']}"

    def compile(self, source, names, options=(), filename="kernel.cu", globals=()):
        cp = self.cp
        opts = ("-std=c++17",)
        try:
            raw = cp.RawModule(code=source, options=opts + tuple(options),
                               name_expressions=list(names))
            raw.compile()
        except cp.cuda.compiler.CompileException as exc:
            raise CompileError(_first_compile_error(str(exc), filename)) from None
        return GpuModule(self, raw, names)

    def to_device(self, array):
        return self.cp.asarray(np.ascontiguousarray(array))

    def zeros(self, n, dtype):
        return self.cp.zeros(int(n), dtype=dtype)

    def copy(self, array):
        """A fresh C-contiguous device copy (device to device for a CuPy array)."""
        return self.cp.array(array, copy=True, order="C")

    def same_bytes(self, a, b) -> bool:
        """Byte equality computed on the device; one bool comes back."""
        cp = self.cp
        if a.nbytes != b.nbytes:
            return False
        if a.nbytes == 0:
            return True
        a = cp.ascontiguousarray(cp.asarray(a)).reshape(-1).view(cp.uint8)
        b = cp.ascontiguousarray(cp.asarray(b)).reshape(-1).view(cp.uint8)
        if a.nbytes % 8 == 0:
            a, b = a.view(cp.uint64), b.view(cp.uint64)
        return bool((a == b).all())

    def to_host(self, array):
        return self.cp.asnumpy(array)

    def address(self, array) -> int:
        return int(array.data.ptr)

    def copy_to_address(self, address, data: bytes):
        cp = self.cp
        buf = np.frombuffer(data, np.uint8)
        cp.cuda.runtime.memcpy(address, buf.ctypes.data, buf.nbytes,
                               cp.cuda.runtime.memcpyHostToDevice)

    def read_address(self, address, size) -> bytes:
        cp = self.cp
        buf = np.empty(int(size), np.uint8)
        cp.cuda.runtime.memcpy(buf.ctypes.data, address, buf.nbytes,
                               cp.cuda.runtime.memcpyDeviceToHost)
        return buf.tobytes()

    def synchronize(self):
        self.cp.cuda.runtime.deviceSynchronize()


def _first_compile_error(log: str, filename: str) -> str:
    lines = [ln for ln in log.splitlines() if "error" in ln]
    first = lines[0].strip() if lines else log.strip().splitlines()[-1] if log.strip() else log
    return f"the instrumented kernel does not compile: {first}"


def wall_timer():
    return time.perf_counter()
