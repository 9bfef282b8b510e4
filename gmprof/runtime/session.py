"""Profile launches: the host runtime's driver, one step a module.

A Profiler holds one analysed translation unit; `profile_launch()` profiles one launch of one
kernel and returns a LaunchResult (the Report, and what the tests look at: the plan, the static
counts, the trace); `launch()` returns just the Report.

  1. check the launch and convert its arguments                     launch_input.py
  2. evaluate the static sites' formulas with the launch's values    static_launch.py
     (a site whose formula cannot be evaluated at this launch is counted on the device
     instead: the source is re-planned)
  3. lay out the counters and fill the launch description            counters.py
  4. compile (cached), run the native and instrumented kernels on    modules.py, runs.py
     copies of the inputs, compare their outputs, time both; where a   widen.py
     32-bit counter may have passed 2^32, again with 64-bit counters
  5. decode the counters, add the static counts, label every count   runtime/decode.py
     and add the failed checks                                       report/findings.py
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gmprof import timing
from gmprof.errors import KernelFault
from gmprof.mode import Mode
from gmprof.passes import block_sample as BS
from gmprof.passes.defer import deferred_walks, replay_expression
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.decode import decode
from gmprof.report.findings import add_findings
from gmprof.report.model import Report, RunInfo

from . import counters as C
from . import launchargs
from .backend import get_backend
from .launch_input import kernel_facts, launch_input, run_options, timeout_option
from .modules import Modules
from .runs import run_native, run_profiled
from .static_launch import StaticLaunchCounts
from .widen import may_wrap


@dataclass(frozen=True)
class LaunchResult:
    """One profiled launch: its report, the plan it ran with, the static sites' counts at the
    launch (SiteClass -> StaticCount) and, in trace mode, the trace records as columns (site,
    object, size, address, block, thread)."""

    report: Report
    plan: object
    static: dict
    trace: tuple | None = None


class Profiler:
    def __init__(self, path=None, *, text: str | None = None, name: str | None = None,
                 defines: dict | None = None, include_dirs=None, backend: str = "auto",
                 arch=None):
        self.pipeline = Pipeline()
        self.backend = get_backend(backend)
        # device code is read as the device pass of the GPU that runs it (the CPU backend
        # compiles that same branch: __CUDA_ARCH__ below)
        with timing.phase("parse"):
            self.tu = self.pipeline.load(path, text=text, name=name, defines=defines,
                                         include_dirs=include_dirs,
                                         arch=arch or getattr(self.backend, "arch", None))
        with timing.phase("analyze"):
            self.program = self.pipeline.analyze(self.tu)
        self.defines = dict(defines or {})
        if self.backend.name == "cpu":
            self.defines.setdefault("__CUDA_ARCH__", str(self.tu.cuda_arch))
        self.modules = Modules(self.program, self.backend, self.defines, self.pipeline)
        self._plans: dict = {}
        self._static = StaticLaunchCounts(self.program)
        self._static_sums: dict = {}  # runtime/decode.static_sum's cache
        # launches (kernel, grid, block) whose 32-bit counters could pass 2^32: their next
        # launches start with 64-bit counters (a solver repeats its launches)
        self._wide: set = set()
        self._launches = 0  # profiled launches: each samples with its own seed (counters.py)

    def plan(self, mode: Mode, demoted: frozenset = frozenset(), for_launch=False,
             samples_blocks=False):
        """for_launch: a launch's plan (gathers.py twins without hooks, decided with the
        launch's arrays); False: a plan any launch can use (what whole programs compile).
        samples_blocks: the launch's grid measures a sample of its blocks (--access-stats)."""
        # (the sampler's seed is the launch's, not the plan's: one plan and module for all)
        key = (dataclasses.replace(mode, sampling_seed=0), demoted, for_launch, samples_blocks)
        if key not in self._plans:
            with timing.phase("plan"):
                self._plans[key] = self.pipeline.plan(self.program, mode, demoted,
                                                      for_launch, samples_blocks)
        return self._plans[key]

    def kernel_facts(self, name_expression):
        """The analysed kernel a name expression names, or a plain error saying why not."""
        return kernel_facts(self.program, name_expression)

    def launch(self, name_expression: str, grid, block, args, shared_mem: int = 0,
               mode: Mode | None = None, repeat: int = 0, compare_native: bool = True,
               warmup: int = 1, timeout: float | None = None,
               keep_on_device: bool = False) -> Report:
        return self.profile_launch(name_expression, grid, block, args, shared_mem, mode,
                                   repeat, compare_native, warmup, timeout,
                                   keep_on_device).report

    def profile_launch(self, name_expression: str, grid, block, args, shared_mem: int = 0,
                       mode: Mode | None = None, repeat: int = 0, compare_native: bool = True,
                       warmup: int = 1, timeout: float | None = None,
                       keep_on_device: bool = False) -> LaunchResult:
        """keep_on_device: the report's device arrays' counts stay on the GPU (CuPy arrays,
        report/where.py) for the caller to merge there and call Report.to_host() at the end;
        otherwise every count is a numpy array."""
        opts = run_options(mode, repeat, warmup, timeout)
        mode = opts.mode
        self._launches += 1
        backend = self.backend
        li = launch_input(self.program, backend, name_expression, grid, block, args,
                          shared_mem)
        li.env.sizes.update(self.modules.sizes())
        launchargs.check_records(li.facts, li.env, li.largs)  # needs the structs' sizes

        def native():
            return self.modules.module(None, [li.name_expression])

        # 1. static formulas at this launch (failures are counted on the device instead)
        # (a global's size is read from a module named by the kernel's plain name)
        with timing.phase("static counts"):
            static = self._static.evaluate(
                self.plan(mode), li,
                lambda name: self.modules.module(
                    None, [li.name_expression.split("<", 1)[0]]).get_global(name)[1],
                warps=mode.warps)
        wide_key = (li.kernel, tuple(li.grid), tuple(li.block))
        if wide_key in self._wide:
            mode = mode.widened()
        start = None
        while True:
            try:
                plan, slots, area, runs = self._run(mode, li, static, shared_mem, native, opts,
                                                    keep_on_device, start)
            except KernelFault as e:
                # a GPU fault knows no line of the user's (the CPU backend's name the access):
                # it is located at the kernel
                if e.location is None:
                    e.location = self.program.kernels[li.kernel].kernel.function.location
                raise
            start = runs.start
            wrapped = may_wrap(plan, slots, runs.counters, mode)
            if not wrapped:
                break
            # counts up to the sites' sums could have reached one counter: run again, wide
            self._wide.add(wide_key)
            mode = mode.widened()
        if runs.counters is not None and static.warps:
            runs.counters["static_warps"] = self._static.at_bases(
                static, lambda sc: _device_base(plan, slots, self.program.kernels[li.kernel],
                                                sc))
        info = RunInfo(name_expression, backend.name, backend.device, mode.name, li.grid,
                       li.block, shared_mem)
        info.outputs_identical = not runs.differ
        info.native_ms, info.instrumented_ms = runs.native_ms, runs.instrumented_ms
        info.timing_repeats = runs.repeats
        if backend.name == "cpu":
            info.timing_note = "CPU-emulated times (not comparable with GPU times)"
        info.counters_in = "shared memory" if area.sm else "device memory"
        info.counters_why = area.why
        info.block_counter_bytes = area.words * 4 if area.sm else 0
        info.counter_bytes = C.counter_bytes(slots, area.words * area.replicas, mode)

        # 5. the report
        ka = self.program.kernels[li.kernel]
        with timing.phase("decode"):
            report, trace = decode(plan, li.kernel, ka, slots, runs.counters, static.counts,
                                   static.demoted, info, mode, self.tu.warnings,
                                   self._static_sums)
            # the native run's launch diagnostics (the instrumented run's repeat them)
            add_findings(report, plan, li.kernel, ka, static.counts, li.largs, runs.differ,
                         runs.failures, runs.diagnostics)
        if not keep_on_device:
            with timing.phase("read back"):
                report.to_host()
        return LaunchResult(report, plan, dict(static.counts), trace)

    def _run(self, mode, li, static, shared_mem, native, opts, keep_on_device, start):
        """Steps 2-4 at one counter width: (plan, slots, area, Runs)."""
        backend, name_expression = self.backend, li.name_expression
        # (two bodies only where some blocks are not measured: dual.py)
        samples = bool(mode.warps and BS.shift(li.grid[0] * li.grid[1] * li.grid[2],
                                               mode.warps_blocks))
        plan = self.plan(mode, static.demoted, for_launch=True, samples_blocks=samples)

        # 2. layout (planned again where the arrays rule out a gather or a twin: counted by
        # their own hooks at this launch)
        slots = C.layout_slots(self.program, plan, li, native)
        unlike = C.unlike_twins(plan, slots)
        if unlike:
            plan = self.plan(mode, static.demoted | unlike, for_launch=True,
                             samples_blocks=samples)
            slots = C.layout_slots(self.program, plan, li, native)
        area = C.area(plan, slots, mode)
        C.place_area(area, mode, backend, native().static_shared_bytes(name_expression),
                     shared_mem, li.grid[0] * li.grid[1] * li.grid[2],
                     counted=plan.counts_on_device(li.kernel))
        # a kernel whose walks are deferred (passes/defer.py) comes with its replay kernel
        kernel = self.program.kernels[li.kernel].kernel.name
        deferred = len(deferred_walks(plan, kernel))
        names = [name_expression]
        if deferred:
            names.append(replay_expression(name_expression, kernel))
        module = self.modules.module(plan, names, sm=area.sm)
        module = self._keep_occupancy(module, plan, area, li, native(), shared_mem, names)
        C.aim_at_module(slots, module)
        if area.sm and getattr(backend, "carveout", "") == "fit":
            # the counter area's shared memory taken from the grid's needs, not L1 (carveout.py)
            module.fit_carveout(name_expression, li.grid, li.block,
                                C.dynamic_shared_bytes(area, shared_mem))

        # 3. buffers and the launch description
        launch, buffers = C.describe(backend, plan, slots, area, mode, li.grid, li.block,
                                     shared_mem, self._launches, deferred=deferred)

        def read_counters():
            with timing.phase("read back"):
                C.check_guards(backend, buffers, slots)
                C.check_ranks(buffers, backend)
                return C.read_back(slots, buffers, backend, mode, keep_on_device)

        # 4. run native and instrumented on separate copies, compare, time
        with timing.phase("launch, copy, compare"):
            runs = run_profiled(backend, li, native(), module,
                                C.dynamic_shared_bytes(area, shared_mem), launch, slots,
                                self.modules.global_names(), opts, read_counters, start,
                                replay=(names[1], buffers["replay_blocks"])
                                if deferred else None)
        if runs.counters is not None:
            runs.counters.update(C.gather_values(slots, li, backend))
        return plan, slots, area, runs

    def _keep_occupancy(self, module, plan, area, li, native, shared_mem, names):
        """The instrumented module (holding `names`), compiled again with a register cap
        where its registers cost it blocks a SM the native kernel has (occupancy.py); GPU
        only."""
        if not hasattr(module, "blocks_per_sm"):
            return module
        from .occupancy import register_cap

        name, threads = li.name_expression, int(li.block[0] * li.block[1] * li.block[2])
        ours = native.blocks_per_sm(name, threads, shared_mem)
        theirs = module.blocks_per_sm(name, threads, C.dynamic_shared_bytes(area, shared_mem))
        if ours is None or theirs is None:
            return module
        cap = register_cap(ours, theirs, module.registers(name), threads)
        if cap is None:
            return module
        capped = self.modules.module(plan, names, sm=area.sm, max_registers=cap)
        again = capped.blocks_per_sm(name, threads, C.dynamic_shared_bytes(area, shared_mem))
        return capped if again is not None and again > theirs else module

    def run_native(self, name_expression, grid, block, args, shared_mem=0,
                   timeout: float | None = None) -> float:
        """Launch the uninstrumented kernel (a sample's helper launch); arrays updated."""
        timeout = timeout_option(timeout)
        li = launch_input(self.program, self.backend, name_expression, grid, block, args,
                          shared_mem)
        module = self.modules.module(None, [li.name_expression])
        with timing.phase("launch, copy, compare"):
            return run_native(self.backend, module, li, timeout)


def _device_base(plan, slots, ka, sc) -> int | None:
    """Where a static site's device array started in the instrumented run (None: a shared
    array, or not known)."""
    target, _ = ka.targets.get(sc, (None, None))
    slot = plan.slot_of(target or sc.site.object)
    if slot is None or slot.kind != "device":
        return None
    for ls in slots.values():
        if ls.slot is slot and ls.base:
            return int(ls.base)
    return None


__all__ = ["Profiler", "LaunchResult"]
