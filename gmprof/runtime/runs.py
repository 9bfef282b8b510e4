"""Running a profiled launch: the native and the instrumented kernel side by side, timed.

Stage: host runtime, after the counters are laid out. Each kernel runs on its own copy of the
inputs (launchargs.Copies); the instrumented module starts from the native module's __device__
variables; the outputs (arrays and __device__ variables) are compared byte for byte, on the device; with
`repeat`, both run again on scratch copies (after `warmup` launches) for the timing, which is
the median. The user's arrays end as the native kernel leaves them. Returns Runs: the times, the
outputs that differ, the native run's writes past the ends of its arrays (the CPU backend's red
zones) and the backend's launch diagnostics; the counters are read by the caller's callback
right after the instrumented run, before any repetition adds to them.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from gmprof import timing
from gmprof.errors import CheckFailed

from . import launchargs, module_state
from .layout import KIND_DEVICE
from .counters import point_at


@dataclass
class Runs:
    native_ms: float
    instrumented_ms: float
    repeats: int
    differ: list = field(default_factory=list)  # what differs between the two runs' outputs
    failures: list = field(default_factory=list)  # (parameter, text): native writes outside
    diagnostics: list = field(default_factory=list)  # the backend's, from the native run
    counters: dict = field(default_factory=dict)  # what read_counters returned
    # the inputs and the native module's __device__ variables before the launch: a launch run
    # again (with wider counters, widen.py) starts from them, not from what this run left
    start: tuple | None = None


def launch_once(module, li, args, shared_mem, timeout) -> float:
    """One launch; seconds it took (events on a GPU)."""
    if timeout is None:
        return module.launch(li.name_expression, li.grid, li.block, args, shared_mem)
    return module.launch(li.name_expression, li.grid, li.block, args, shared_mem,
                         timeout=timeout)


def launch_instrumented(module, li, args, shared_mem, timeout, replay) -> float:
    """One instrumented launch, and its replay kernel's after it (passes/defer.py: replay is
    (name expression, blocks) or None): seconds both took, the user's cost of the profile."""
    seconds = launch_once(module, li, args, shared_mem, timeout)
    if replay is not None and replay[1]:
        name, blocks = replay
        kwargs = {} if timeout is None else {"timeout": timeout}
        seconds += module.launch(name, (int(blocks), 1, 1), li.block, [], shared_mem, **kwargs)
    return seconds


def memory_errors(module, largs, run: str) -> list:
    """Writes past the ends of the arrays the backend handed to the kernel (the CPU backend's
    red zones), as (parameter name, description)."""
    out = []
    for index, text in getattr(module, "memory_errors", []):
        name = largs[index].name if 0 <= index < len(largs) else f"argument {index + 1}"
        out.append((name, f"the {run} run {text}"))
    return out


def run_profiled(backend, li, native, instrumented, dyn_shared: int, launch, slots,
                 global_names, opts, read_counters, start: tuple | None = None,
                 replay: tuple | None = None) -> Runs:
    """launch: the filled launch description (its device-array bases are aimed at each run's
    copies here); read_counters() -> dict, called after the instrumented run. start: an
    earlier run's Runs.start, to run the same launch again from the same state. replay: the
    replay kernel run after each instrumented launch (launch_instrumented)."""
    largs, timeout = li.largs, opts.timeout
    const_addr, _ = instrumented.get_global("__gmprof_launch")
    # (the struct's layout is checked against the compiler's in tests/runtime/test_layout.py;
    # CuPy does not report a module global's true size)
    if start is None:
        start = (launchargs.Copies.snapshot(backend, largs),
                 module_state.snapshot(backend, native, global_names))
    else:
        module_state.restore(backend, start[1])
    before = start[0]
    native_run = launchargs.Copies(backend, largs, before)
    inst_run = launchargs.Copies(backend, largs, before)
    for key, ls in slots.items():
        if ls.kind == KIND_DEVICE and ls.slot.kernel == li.kernel:
            ls.base = backend.address(inst_run.args[key[1]])  # the trace is decoded with it
    point_at(launch, slots, li.kernel, backend, inst_run.args)
    backend.copy_to_address(const_addr, launch.tobytes())
    # the instrumented module starts from the native module's __device__ variables
    module_state.copy_into(backend, module_state.changed(
        module_state.snapshot(backend, native, global_names),
        getattr(native, "initial_globals", None)), instrumented)
    # (named for a progress display: a launch of minutes says which run it is in)
    with timing.phase("launch, copy, compare", f"running {li.name_expression} (native run)",
                      "native"):
        native_times = [launch_once(native, li, native_run.args, li.shared_mem, timeout)]
    failures = memory_errors(native, largs, "native")
    diagnostics = list(getattr(native, "diagnostics", []))
    native_out = native_run.device  # left as the native run wrote them (repeats use scratch)
    native_globals = module_state.snapshot(backend, native, global_names)
    with timing.phase("launch, copy, compare",
                      f"running {li.name_expression} (instrumented run)", "instrumented"):
        inst_times = [launch_instrumented(instrumented, li, inst_run.args, dyn_shared, timeout,
                                          replay)]
    counters = read_counters()
    differ = launchargs.compare(native_out, inst_run.device, largs, backend)
    # (a variable neither run changed holds each module's own initial value: not an output)
    differ += [f"__device__ variable {n}" for n in module_state.differing(
        module_state.changed(native_globals, getattr(native, "initial_globals", None)),
        module_state.snapshot(backend, instrumented, global_names))]
    if opts.repeat:
        scratch_native = launchargs.Copies(backend, largs, before)
        scratch_inst = launchargs.Copies(backend, largs, before)
        point_at(launch, slots, li.kernel, backend, scratch_inst.args)
        backend.copy_to_address(const_addr, launch.tobytes())
        for _ in range(opts.warmup):
            launch_once(native, li, scratch_native.args, li.shared_mem, timeout)
            launch_instrumented(instrumented, li, scratch_inst.args, dyn_shared, timeout, replay)
        native_times, inst_times = [], []
        for _ in range(opts.repeat):
            native_times.append(launch_once(native, li, scratch_native.args, li.shared_mem,
                                             timeout))
            inst_times.append(launch_instrumented(instrumented, li, scratch_inst.args,
                                                  dyn_shared, timeout, replay))
        # the repeated launches are compared too (both ran warmup + repeat times from the
        # same inputs); their writes stay in their copies, and module state goes back to
        # what the profiled launch left
        if not differ:
            late = launchargs.compare(scratch_native.device, scratch_inst.device, largs,
                                      backend)
            differ += [f"{n} (after {opts.warmup + opts.repeat} repeated launches)"
                       for n in late]
        module_state.restore(backend, native_globals)
        module_state.copy_into(backend, native_globals, instrumented)
    # the user's arrays end as the native kernel leaves them
    launchargs.store_back(backend, largs, native_out, before)
    return Runs(statistics.median(native_times) * 1e3, statistics.median(inst_times) * 1e3,
                max(opts.repeat, 1), differ, failures,
                diagnostics or list(getattr(instrumented, "diagnostics", [])), counters,
                start)


def run_native(backend, module, li, timeout) -> float:
    """Launch the uninstrumented kernel alone (a sample's helper launch); arrays updated."""
    before = launchargs.Copies.snapshot(backend, li.largs)
    run = launchargs.Copies(backend, li.largs, before)
    with timing.phase("launch, copy, compare", f"running {li.name_expression} (not profiled)",
                      "unprofiled"):
        t = launch_once(module, li, run.args, li.shared_mem, timeout)
    errors = memory_errors(module, li.largs, "native")
    if errors:
        raise CheckFailed(f"kernel `{li.name_expression}`: accesses outside its arrays: " +
                          "; ".join(f"{name!r}: {text}" for name, text in errors),
                          kind="out-of-range")
    launchargs.store_back(backend, li.largs, run.device, before)
    return t


__all__ = ["Runs", "run_profiled", "run_native", "launch_once", "memory_errors"]
