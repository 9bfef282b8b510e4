"""Profile launches: plan, instrument, compile, launch, decode the counters, build the Report.

The host runtime's driver. A Profiler holds one analysed translation unit; `launch()` profiles
one launch of one kernel:
  1. check the launch (grid and block within the device's limits, one argument per parameter,
     array dtypes matching the parameter types, enough shared memory) - plain errors, named;
  2. evaluate the static sites' formulas with the launch's values (a site whose formula cannot
     be evaluated at this launch is counted on the device instead: the source is re-planned);
  3. lay out the counters: a shadow array per device object, the block's counter area (in
     shared memory when it fits the per-block limit with the kernel's own shared memory: SM;
     otherwise in device memory, and the report says why);
  4. run the uninstrumented kernel on a copy of the inputs and the instrumented one on another,
     compare their outputs byte for byte, time both (events, median of repeats);
  5. decode the counters, add the static counts, label every count, and return a Report.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from gmprof.errors import ArgumentError, Diagnostic, GmprofError, OptionError
from gmprof.passes import symbolic as S
from gmprof.passes.plan import HOOK, LR_START, NONE, STATIC, Mode, plan_counters
from gmprof.report.model import (APPROXIMATE, EXACT, SAMPLED, THRESHOLDED, ArrayStats, Report,
                                 RunInfo, SiteStats)

from . import layout as LY
from .backend import get_backend
from .launchenv import LaunchEnv, clean_type, split_name_expression
from .static_counts import count_static

TRACE_CAPACITY = 1 << 22
CLOCK_CAPACITY = 1 << 16


@dataclass
class _Slot:
    """A slot's layout for one launch."""

    slot: object
    kind: int
    n_counters: int = 0
    unit: int = 4
    elem_size: int = 4
    shape: tuple = ()
    base: int = 0
    bytes: int = 0
    area_offset: int = 0
    lr_offset: int = 0
    counters: object = None  # device array (device objects)
    oor: object = None


@dataclass
class _Prepared:
    kernel: str
    name_expression: str
    facts: object
    env: LaunchEnv
    static: dict = field(default_factory=dict)  # SiteClass -> StaticCount
    demoted: frozenset = frozenset()


class Profiler:
    def __init__(self, path=None, *, text: str | None = None, name: str | None = None,
                 defines: dict | None = None, include_dirs=None, backend: str = "auto"):
        from gmprof.frontend.program import load
        from gmprof.passes.pipeline import analyze

        self.tu = load(path, text=text, name=name, defines=defines, include_dirs=include_dirs)
        self.program = analyze(self.tu)
        self.backend = get_backend(backend)
        self.defines = dict(defines or {})
        self._plans: dict = {}
        self._modules: dict = {}
        self._sizes: dict | None = None
        self._instantiations: set = set()
        self._static_cache: dict = {}

    # -- plans and modules -----------------------------------------------------------------
    def plan(self, mode: Mode, demoted: frozenset = frozenset()):
        key = (mode, demoted)
        if key not in self._plans:
            self._plans[key] = plan_counters(self.program, mode, demoted=demoted)
        return self._plans[key]

    def source(self, mode: Mode | None, demoted=frozenset(), sm=None):
        """(text, defines) of the device translation unit for this backend."""
        from gmprof.passes.rewrite import emit, instrument, native_patches

        cpu = self.backend.name == "cpu"
        if mode is None:
            patches = native_patches(self.program, cpu=cpu)
            text = emit(self.program, patches, device_only=True, cpu=cpu, header=False,
                        extra=self._sizeof_kernel())
            return text, {}
        plan = self.plan(mode, demoted)
        patches, rewriter = instrument(plan, cpu=cpu)
        defines = plan.mode.defines(sm=sm) | {"GMPROF_SHARED_BASES": int(rewriter.needs_shared_bases)}
        text = emit(self.program, patches, device_only=True, cpu=cpu, header=True)
        return text, defines

    def module(self, mode: Mode | None, names, demoted=frozenset(), sm=None):
        # one module serves every plain kernel of the file (and the template instantiations
        # asked for so far), so launching another kernel does not compile again
        plain = [f.name for f in self.tu.kernels if f.parsed is not None and
                 not f.template_params]
        wanted = set(names) | set(plain) | self._instantiations
        if mode is None:
            wanted.add("__gmprof_sizeof")
        self._instantiations |= {n for n in names if "<" in n}
        names = sorted(wanted)
        text, defines = self.source(mode, demoted, sm)
        options = tuple(f"-D{k}={v}" if v is not None else f"-D{k}"
                        for k, v in {**self.defines, **defines}.items())
        key = (text, options, tuple(sorted(names)))
        if key not in self._modules:
            kwargs = {}
            if self.backend.name == "cpu":
                # the CPU module exports accessors for the globals the runtime reads or fills
                kwargs["globals"] = ([] if mode is None else ["__gmprof_launch"]) + \
                    [v.name for v in self.tu.variables if v.name and v.space != "__shared__"]
            self._modules[key] = self.backend.compile(text, list(names), options,
                                                      filename=self.tu.main.name, **kwargs)
        return self._modules[key]

    def _sizeof_kernel(self) -> str:
        """A kernel that reports sizeof of the user's own types (for counters per element)."""
        from gmprof.runtime.launchenv import _SCALAR_SIZES, vector_size

        names = []
        for facts in self.program.functions:
            for obj in facts.objects:
                t = clean_type(obj.elem_type)
                if t in _SCALAR_SIZES or vector_size(t) or t in names or t == "?":
                    continue
                if facts.function.template_params and any(
                        tp.name == t for tp in facts.function.template_params):
                    continue
                if t in self.tu.oracle.types or t in self.tu.macros:
                    names.append(t)
        self._size_names = names
        body = " ".join(f"out[{k}] = sizeof({t});" for k, t in enumerate(names))
        return ('extern "C" __global__ void __gmprof_sizeof(unsigned long long *out) { '
                f"{body} }}\n")

    def sizes(self) -> dict:
        if self._sizes is None:
            mod = self.module(None, ["__gmprof_sizeof"])  # compiled with the kernels' TU
            names = self._size_names
            self._sizes = {}
            if names:
                out = self.backend.zeros(len(names), np.uint64)
                mod.launch("__gmprof_sizeof", (1, 1, 1), (1, 1, 1), [out])
                values = self.backend.to_host(out)
                self._sizes = {n: int(v) for n, v in zip(names, values)}
        return self._sizes

    # -- checking a launch -----------------------------------------------------------------
    def kernel_facts(self, name_expression):
        """The analysed kernel a name expression names, or a plain error saying why not."""
        if not isinstance(name_expression, str) or not name_expression.strip():
            raise ArgumentError(f"kernel={name_expression!r}: expected a kernel's name or name "
                                "expression (a str such as 'saxpy' or 'matmul<16>')")
        kernel, _ = split_name_expression(name_expression)
        facts = self.program.facts(kernel)
        if facts is None or not facts.function.is_kernel:
            raise missing_kernel(self.tu, kernel)
        return facts

    def _check(self, facts, name_expression, grid, block, args, shared_mem):
        from gmprof.options import launch_dims

        fn = facts.function
        for what, value in (("grid", grid), ("block", block)):
            if isinstance(value, (str, bytes)):
                raise OptionError(f"{what}={value!r}: expected an int or a tuple of 1 to 3 ints, "
                                  "not a string")
        grid3, block3 = launch_dims(grid, "grid"), launch_dims(block, "block")
        threads = block3[0] * block3[1] * block3[2]
        if threads > self.backend.max_threads_per_block:
            raise OptionError(f"block {block3} has {threads} threads; the device allows "
                              f"{self.backend.max_threads_per_block}")
        if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)):
            raise OptionError(f"shared_mem={shared_mem!r}: expected a number of bytes (an int)")
        if shared_mem < 0:
            raise OptionError(f"shared_mem={shared_mem}: expected a number of bytes >= 0")
        if shared_mem > self.backend.max_shared_per_block:
            raise OptionError(f"shared_mem={shared_mem}: the device allows at most "
                              f"{self.backend.max_shared_per_block} bytes a block")
        params = fn.params
        if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__len__"):
            raise ArgumentError(f"args: expected a list or tuple of {len(params)} arguments "
                                f"(one per parameter of {fn.name}), not {type(args).__name__}")
        if len(args) != len(params):
            raise ArgumentError(f"{fn.name} takes {len(params)} arguments "
                                f"({', '.join(getattr(p, 'name', '?') or '?' for p in params)}), "
                                f"{len(args)} given")
        return grid3, block3

    # -- a launch ------------------------------------------------------------------------
    def launch(self, name_expression: str, grid, block, args, shared_mem: int = 0,
               mode: Mode | None = None, repeat: int = 0, compare_native: bool = True,
               warmup: int = 1, timeout: float | None = None) -> Report:
        from gmprof.options import count, not_text, seconds

        from . import launchargs

        for option, value in (("repeat", repeat), ("warmup", warmup), ("timeout", timeout)):
            not_text(value, option)
        mode = mode or Mode()
        if not isinstance(mode, Mode):
            raise OptionError(f"mode={mode!r}: expected a Mode (gmprof.api.make_mode makes one)")
        repeat = count(repeat, "repeat")
        warmup = count(warmup, "warmup")
        self._timeout = None if timeout is None else seconds(timeout, "timeout")
        facts = self.kernel_facts(name_expression)
        kernel, template_args = split_name_expression(name_expression)
        grid3, block3 = self._check(facts, name_expression, grid, block, args, shared_mem)
        env = LaunchEnv(self.program, facts, template_args, grid3, block3, {}, {})
        args, largs = launchargs.convert(facts, env, list(args), self.backend, self.program)
        backend = self.backend
        try:
            env.sizes.update(self.sizes())
        except GmprofError:
            raise
        prepared = _Prepared(kernel, name_expression, facts, env)

        # 1. static formulas at this launch (failures are counted on the device instead)
        ka = self.program.extra["kernels"][kernel]
        base_plan = self.plan(mode)
        demoted = set()
        for sc in ka.classes:
            sp = base_plan.sites.get(sc.site)
            if sp is None or sp.strategy != STATIC:
                continue
            # repeated launches with the same values (iterations of a solver) reuse the counts
            key = (id(sc), grid3, block3, shared_mem, tuple(template_args),
                   tuple(sorted((k, _hashable(v)) for k, v in env.scalars.items())),
                   tuple(int(a.nbytes) for a in args if _is_array(a)))
            try:
                if key not in self._static_cache:
                    self._static_cache[key] = self._count_static(sc, sp, env, grid3, block3,
                                                                 args, shared_mem, facts)
                prepared.static[sc] = self._static_cache[key]
            except S.Unknown:
                demoted.add(sc.site.id)
                prepared.static.pop(sc, None)
        prepared.demoted = frozenset(demoted)
        plan = self.plan(mode, prepared.demoted)
        self.last_static = dict(prepared.static)  # SiteClass -> StaticCount (for the tests)
        self.last_plan = plan

        # 2. layout
        slots = self._layout(plan, prepared, args, shared_mem)
        area_words, obj_counters, lr_offset = self._area(plan, slots, mode)
        counter_t = LY.counter_dtype(mode.counter_bits)
        area_bytes = area_words * 4
        native = self.module(None, [name_expression])
        static_smem = native.static_shared_bytes(name_expression)
        need = static_smem + ((shared_mem + 15) & ~15) + area_bytes
        sm = mode.sm and not mode.trace
        why = "SM mode: the block's counters live in shared memory" if sm else \
            "device memory (" + ("trace mode" if mode.trace else "no SM in this mode") + ")"
        if sm and need > backend.max_shared_per_block:
            sm = False
            why = (f"device memory: the kernel's {static_smem + shared_mem} bytes of shared "
                   f"memory plus {area_bytes} bytes of counters exceed the "
                   f"{backend.max_shared_per_block}-byte limit per block")
        module = self.module(mode, [name_expression], prepared.demoted, sm=sm)
        dyn = ((shared_mem + 15) & ~15) + area_bytes if sm else shared_mem

        # 3. buffers and the launch description
        replicas = LY.area_replicas(grid3[0] * grid3[1] * grid3[2], sm)
        area_global = backend.zeros(max(area_words, 1) * replicas, np.uint32)
        unknown_oor = backend.zeros(1, np.uint32)
        launch = LY.new_launch()
        launch["flags"] = LY.FLAG_WARP_UNIFORM_OK if block3[0] % 32 == 0 else 0
        launch["area_words"] = area_words
        launch["dyn_user_bytes"] = shared_mem
        launch["n_sites"] = len(plan.sites)
        launch["obj_counters"] = obj_counters
        launch["lr_offset"] = lr_offset
        launch["area_global"] = backend.address(area_global)
        launch["area_replicas"] = replicas
        launch["unknown_oor"] = backend.address(unknown_oor)
        buffers = {"area": area_global, "unknown_oor": unknown_oor,
                   "area_shape": (replicas, area_words, len(plan.sites), obj_counters)}
        for key, ls in slots.items():
            if key[0] == "slot" and ls.kind == LY.KIND_DEVICE:
                # a file-scope variable: the instrumented module's own copy is the one its
                # kernel accesses (the native module's address was only for the layout)
                ls.base = module.get_global(ls.slot.object.name)[0]
        for ls in slots.values():
            o = launch["obj"][ls.slot.index]
            o["kind"] = ls.kind
            o["n_counters"] = ls.n_counters
            o["unit"] = ls.unit
            o["unit_shift"] = ls.unit.bit_length() - 1 if ls.unit & (ls.unit - 1) == 0 else 255
            ls.oor = backend.zeros(1, np.uint32)
            o["oor"] = backend.address(ls.oor)
            if ls.kind == LY.KIND_DEVICE:
                ls.counters = backend.zeros(max(ls.n_counters, 1), counter_t)
                o["base"], o["bytes"] = ls.base, ls.bytes
                o["counters"] = backend.address(ls.counters)
            else:
                o["area_offset"] = ls.area_offset
                o["lr_offset"] = ls.lr_offset
        if mode.trace:
            buffers["trace"] = backend.zeros(4 * TRACE_CAPACITY, np.uint64)
            buffers["trace_count"] = backend.zeros(1, np.uint64)
            launch["trace"] = backend.address(buffers["trace"])
            launch["trace_capacity"] = TRACE_CAPACITY
            launch["trace_count"] = backend.address(buffers["trace_count"])
        if mode.sampling is not None:
            threads = block3[0] * block3[1] * block3[2] * grid3[0] * grid3[1] * grid3[2]
            buffers["sample_state"] = backend.zeros(threads, np.uint32)
            launch["sample_state"] = backend.address(buffers["sample_state"])
            launch["sample_threshold"] = min(int(mode.sampling * 2 ** 32), 2 ** 32 - 1)
            launch["sampler"] = 1 if mode.sampler == "paper" else 0
            launch["seed"] = 12345
            seq_len = 1 << 16
            rng = np.random.default_rng(2024)
            seq = (rng.random(seq_len) < mode.sampling).astype(np.uint8)
            buffers["sample_seq"] = backend.to_device(seq)
            launch["sample_seq"] = backend.address(buffers["sample_seq"])
            launch["sample_seq_len"] = seq_len
        if mode.enhanced:
            buffers["clock"] = backend.zeros(2 * CLOCK_CAPACITY, np.uint64)
            buffers["clock_count"] = backend.zeros(1, np.uint64)
            launch["clock_log"] = backend.address(buffers["clock"])
            launch["clock_capacity"] = CLOCK_CAPACITY
            launch["clock_count"] = backend.address(buffers["clock_count"])
        # (the struct's layout is checked against the compiler's in tests/runtime/test_layout.py;
        # CuPy does not report a module global's true size)
        const_addr, _ = module.get_global("__gmprof_launch")
        backend.copy_to_address(const_addr, launch.tobytes())

        # 4. run native and instrumented on separate copies, compare, time
        from . import module_state

        before = launchargs.Copies.snapshot(backend, largs)
        info = RunInfo(name_expression, backend.name, backend.device, mode.name, grid3, block3,
                       shared_mem)
        native_run = launchargs.Copies(backend, largs, before)
        inst_run = launchargs.Copies(backend, largs, before)
        for ls_key, ls in slots.items():
            if ls.kind == LY.KIND_DEVICE and ls.slot.kernel == kernel:
                ls.base = backend.address(inst_run.args[ls_key[1]])  # the trace is decoded with it
                launch["obj"][ls.slot.index]["base"] = ls.base
        backend.copy_to_address(const_addr, launch.tobytes())
        # the instrumented module starts from the native module's __device__ variables
        names = self._global_names()
        module_state.copy_into(backend, module_state.snapshot(backend, native, names), module)
        native_times, inst_times = [], []
        t = self._run(native, name_expression, grid3, block3, native_run.args, shared_mem)
        native_times.append(t)
        failures = self._memory_errors(native, largs, "native")
        diagnostics = list(getattr(native, "diagnostics", []))
        native_out = native_run.read()
        native_globals = module_state.snapshot(backend, native, names)
        t = self._run(module, name_expression, grid3, block3, inst_run.args, dyn)
        inst_times.append(t)
        self._check_counter_buffers(buffers, slots)
        inst_out = inst_run.read()
        differ = launchargs.compare(native_out, inst_out, largs)
        differ += [f"__device__ variable {n}" for n in module_state.differing(
            native_globals, module_state.snapshot(backend, module, names))]
        info.outputs_identical = not differ
        counters = self._read(slots, buffers, backend, mode)
        self.last_trace = None
        if repeat:
            scratch_native = launchargs.Copies(backend, largs, before)
            scratch_inst = launchargs.Copies(backend, largs, before)
            for ls_key, ls in slots.items():
                if ls.kind == LY.KIND_DEVICE and ls.slot.kernel == kernel:
                    launch["obj"][ls.slot.index]["base"] = backend.address(
                        scratch_inst.args[ls_key[1]])
            backend.copy_to_address(const_addr, launch.tobytes())
            for _ in range(warmup):
                self._run(native, name_expression, grid3, block3, scratch_native.args, shared_mem)
                self._run(module, name_expression, grid3, block3, scratch_inst.args, dyn)
            native_times, inst_times = [], []
            for _ in range(repeat):
                native_times.append(self._run(native, name_expression, grid3, block3,
                                              scratch_native.args, shared_mem))
                inst_times.append(self._run(module, name_expression, grid3, block3,
                                            scratch_inst.args, dyn))
            # the repeated launches are compared too (both ran warmup + repeat times from the
            # same inputs); their writes stay in their copies, and module state goes back to
            # what the profiled launch left
            if not differ:
                late = launchargs.compare(scratch_native.read(), scratch_inst.read(), largs)
                differ += [f"{n} (after {warmup + repeat} repeated launches)" for n in late]
                info.outputs_identical = not differ
            module_state.restore(backend, native_globals)
            module_state.copy_into(backend, native_globals, module)
        info.native_ms = statistics.median(native_times) * 1e3
        info.instrumented_ms = statistics.median(inst_times) * 1e3
        info.timing_repeats = max(repeat, 1)
        if backend.name == "cpu":
            info.timing_note = "CPU-emulated times (not comparable with GPU times)"
        info.counters_in = "shared memory" if sm else "device memory"
        info.counters_why = why
        info.counter_bytes = self._counter_bytes(slots, area_words * replicas, sm, mode)
        # the user's arrays end as the native kernel leaves them
        launchargs.store_back(backend, largs, native_out, before)
        report = self._report(plan, prepared, slots, counters, info, mode, grid3, block3)
        from .launchcheck import add_findings

        # the native run's launch diagnostics (the instrumented run's repeat them)
        add_findings(report, self, plan, prepared, slots, largs, differ, failures,
                     diagnostics or list(getattr(module, "diagnostics", [])))
        return report

    def _global_names(self) -> list[str]:
        return [v.name for v in self.tu.variables if v.name and v.space != "__shared__"]

    def _run(self, module, name_expression, grid, block, args, shared_mem) -> float:
        timeout = getattr(self, "_timeout", None)
        if timeout is None:
            return module.launch(name_expression, grid, block, args, shared_mem)
        return module.launch(name_expression, grid, block, args, shared_mem, timeout=timeout)

    def _memory_errors(self, module, largs, run: str) -> list:
        """Writes past the ends of the arrays the backend handed to the kernel (the CPU
        backend's red zones), as (parameter name, description)."""
        out = []
        for index, text in getattr(module, "memory_errors", []):
            name = largs[index].name if 0 <= index < len(largs) else f"argument {index + 1}"
            out.append((name, f"the {run} run {text}"))
        return out

    def _check_counter_buffers(self, buffers, slots) -> None:
        check = getattr(self.backend, "check_guards", None)
        if check is None:
            return
        arrays = [v for v in buffers.values() if isinstance(v, np.ndarray)]
        arrays += [x for ls in slots.values() for x in (ls.counters, ls.oor)
                   if isinstance(x, np.ndarray)]
        damaged = check(arrays)
        if damaged:
            # counters never write outside their buffers: this is gmprof's bug, not the user's
            raise RuntimeError(f"gmprof's counters wrote outside their buffers: {damaged}")

    def run_native(self, name_expression, grid, block, args, shared_mem=0,
                   timeout: float | None = None) -> float:
        """Launch the uninstrumented kernel (a sample's helper launch); arrays updated."""
        from gmprof.errors import CheckFailed
        from gmprof.options import not_text, seconds

        from . import launchargs

        self._timeout = None if timeout is None else seconds(not_text(timeout, "timeout"),
                                                               "timeout")
        facts = self.kernel_facts(name_expression)
        grid3, block3 = self._check(facts, name_expression, grid, block, args, shared_mem)
        env = LaunchEnv(self.program, facts, split_name_expression(name_expression)[1],
                        grid3, block3, {}, {})
        args, largs = launchargs.convert(facts, env, list(args), self.backend, self.program)
        module = self.module(None, [name_expression])
        before = launchargs.Copies.snapshot(self.backend, largs)
        run = launchargs.Copies(self.backend, largs, before)
        t = self._run(module, name_expression, grid3, block3, run.args, shared_mem)
        errors = self._memory_errors(module, largs, "native")
        if errors:
            raise CheckFailed(f"kernel `{name_expression}`: accesses outside its arrays: " +
                              "; ".join(f"{name!r}: {text}" for name, text in errors),
                              kind="out-of-range")
        launchargs.store_back(self.backend, largs, run.read(), before)
        return t

    # -- layout --------------------------------------------------------------------------
    def _layout(self, plan, prepared, args, shared_mem) -> dict:
        """Slots this launch fills, keyed by ('param', index) / ('slot', index)."""
        from gmprof.passes.symbols import DEVICE

        env = prepared.env
        facts = prepared.facts
        reachable = {facts.name} | {callee.name for _, callee in
                                    self.program.extra["kernels"][facts.name].calls}
        out: dict = {}
        profile = plan.mode.profile
        for slot in plan.slots:
            obj = slot.object
            if (profile == "shm" and slot.kind == "device") or \
                    (profile == "dm" and slot.kind == "shared"):
                continue  # not profiled in this mode: no counters
            if slot.kind == "device" and slot.kernel == facts.name:
                idx = next(i for i, p in enumerate(facts.function.params)
                           if getattr(p, "name", None) == obj.name)
                arr = args[idx]
                elem = self._elem_size(env, obj.elem_type, arr)
                unit = max(elem, 4)
                nbytes = int(arr.nbytes)
                ls = _Slot(slot, LY.KIND_DEVICE, -(-nbytes // unit), unit, elem,
                           tuple(arr.shape), 0, nbytes)
                out[("param", idx)] = ls
            elif slot.kind == "device" and slot.kernel is None:
                if not any(sp.slot is slot and sp.site.function.name in reachable
                           for sp in plan.sites.values()):
                    continue
                module = self.module(None, [prepared.name_expression])
                try:
                    addr, size = module.get_global(obj.name)
                except Exception as exc:
                    raise GmprofError(f"cannot find the file-scope variable {obj.name}: {exc}")
                elem = self._elem_size(env, obj.elem_type, None)
                unit = max(elem, 4)
                shape = self._shape(env, obj)
                if shape is not None:
                    size = elem * int(np.prod(shape)) if shape else elem
                else:
                    shape = (size // max(elem, 1),)
                out[("slot", slot.index)] = _Slot(slot, LY.KIND_DEVICE, -(-size // unit), unit,
                                                  elem, shape, addr, size)
            elif slot.kind == "shared":
                if not any(o.function in reachable for o in slot.objects):
                    continue
                if slot.dynamic:
                    nbytes = shared_mem
                    elem = self._elem_size(env, obj.elem_type, None)
                    shape = (nbytes // max(elem, 1),)
                else:
                    elem = self._elem_size(env, obj.elem_type, None)
                    shape = self._shape(env, obj)
                    if shape is None:
                        raise GmprofError(f"the size of shared array {obj.name} "
                                          f"({obj.shape_text}) is not known at launch")
                    nbytes = elem * int(np.prod(shape)) if shape else elem
                out[("slot", slot.index)] = _Slot(slot, LY.KIND_SHARED, -(-nbytes // 4), 4,
                                                  elem, shape, 0, nbytes)
        return out

    def _elem_size(self, env, elem_type, arr) -> int:
        try:
            return int(env.sizeof(elem_type))
        except S.Unknown:
            if arr is not None:
                return int(np.dtype(arr.dtype).itemsize)
            return 4

    def _shape(self, env, obj):
        from pycparser import c_ast

        decl = obj.symbol.decl
        t = getattr(decl, "type", None)
        if t is None and hasattr(decl, "decl") and decl.decl is not None:
            t = decl.decl.type
        dims = []
        while isinstance(t, c_ast.ArrayDecl):
            if t.dim is None:
                return None
            try:
                dims.append(int(env.node(t.dim)))
            except S.Unknown:
                return None
            t = t.type
        return tuple(dims)

    def _area(self, plan, slots, mode):
        """Offsets in the block's area; returns (area words, object counters, lr offset)."""
        size = LY.counter_dtype(mode.counter_bits).itemsize
        offset = 0
        for ls in slots.values():
            if ls.kind == LY.KIND_SHARED:
                ls.area_offset = offset
                offset += ls.n_counters
        words = LY.AREA_HEADER + len(plan.sites) + -(-offset * size // 4)
        lr_offset = 0
        if mode.enhanced:
            lr_offset = words
            for ls in slots.values():
                if ls.kind == LY.KIND_SHARED and ls.slot.live_ranges:
                    ls.lr_offset = words
                    words += LY.LR_STRIDE
            if words == lr_offset:
                lr_offset = 0
        return words, offset, lr_offset

    def _counter_bytes(self, slots, area_words, sm, mode) -> int:
        size = LY.counter_dtype(mode.counter_bits).itemsize
        total = area_words * 4  # the device-memory copies of the area
        for ls in slots.values():
            if ls.kind == LY.KIND_DEVICE:
                total += ls.n_counters * size + 4
        return total

    # -- reading back --------------------------------------------------------------------
    def _read(self, slots, buffers, backend, mode) -> dict:
        # copies: on the CPU backend "device" buffers are the host arrays themselves, and the
        # timing repetitions that follow keep counting into them
        area = np.array(backend.to_host(buffers["area"]), copy=True)
        replicas, area_words, n_sites, obj_counters = buffers["area_shape"]
        if replicas > 1:
            area = LY.fold_replicas(area, replicas, area_words, n_sites, obj_counters,
                                    mode.counter_bits, mode.threshold)
        out = {"area": area.astype(np.int64),
               "unknown_oor": int(backend.to_host(buffers["unknown_oor"])[0])}
        out["area_bytes"] = area.view(np.uint8)
        for key, ls in slots.items():
            if ls.kind == LY.KIND_DEVICE:
                out[key] = backend.to_host(ls.counters)[:ls.n_counters].astype(np.int64)
            out[("oor",) + key] = int(backend.to_host(ls.oor)[0])
        if mode.trace:
            n = int(backend.to_host(buffers["trace_count"])[0])
            out["trace_total"] = n
            out["trace"] = np.array(backend.to_host(buffers["trace"])[:4 * min(n, TRACE_CAPACITY)],
                                    copy=True).reshape(-1, 4)
        if mode.enhanced:
            n = int(backend.to_host(buffers["clock_count"])[0])
            out["clock_total"] = n
        return out

    def _count_static(self, sc, sp, env, grid, block, args, shared_mem, facts):
        ka = self.program.extra["kernels"][facts.name]
        target, _ = ka.targets.get(sc, (None, None))
        obj = target or sc.site.object
        if obj is None:
            raise S.Unknown("no target object")
        # the counter unit and count of the object at this launch
        if obj.is_shared:
            if obj.space == "shared_dynamic":
                nbytes = shared_mem
            else:
                shape = self._shape(env, obj)
                if shape is None:
                    raise S.Unknown("shared array size unknown")
                nbytes = int(env.sizeof(obj.elem_type)) * int(np.prod(shape) if shape else 1)
            unit, n_units, per_word = 4, -(-nbytes // 4), True
        else:
            elem = int(env.sizeof(obj.elem_type))
            unit = max(elem, 4)
            if obj.space == "device":
                idx = next(i for i, p in enumerate(facts.function.params)
                           if getattr(p, "name", None) == obj.name)
                nbytes = int(args[idx].nbytes)
            else:
                shape = self._shape(env, obj)
                if shape is not None:
                    nbytes = elem * int(np.prod(shape)) if shape else elem
                else:
                    mod = self.module(None, [facts.name])
                    nbytes = mod.get_global(obj.name)[1]
            n_units, per_word = -(-nbytes // unit), False
        size = int(S.evaluate(sc.formula.access_size, env))
        return count_static(sc.formula, env, grid, block, n_units, unit, size, per_word)

    # -- the report ----------------------------------------------------------------------
    def _report(self, plan, prepared, slots, counters, info, mode, grid, block) -> Report:
        report = Report(info, warnings=list(self.tu.warnings))
        kernel = prepared.kernel
        ka = self.program.extra["kernels"][kernel]
        size = LY.counter_dtype(mode.counter_bits).itemsize
        area_bytes = counters["area_bytes"]
        obj_base = (LY.AREA_HEADER + len(plan.sites)) * 4
        scale = 1.0 / mode.sampling if mode.sampling is not None else None
        label = EXACT
        if mode.sampling is not None:
            label = SAMPLED
        elif mode.na:
            label = APPROXIMATE
        elif mode.threshold is not None:
            label = THRESHOLDED
        per_slot: dict = {}
        for key, ls in slots.items():
            if ls.kind == LY.KIND_DEVICE:
                counts = counters[key]
            else:
                raw = area_bytes[obj_base + ls.area_offset * size:
                                 obj_base + (ls.area_offset + ls.n_counters) * size]
                counts = raw.view(LY.counter_dtype(mode.counter_bits)).astype(np.int64)
            per_slot[ls.slot] = [ls, counts.copy(), counters[("oor",) + key], 0]
        site_exec = {}
        area = counters["area"]
        for sp in plan.sites.values():
            if sp.strategy in (HOOK, LR_START):
                site_exec[sp.site] = int(area[LY.AREA_HEADER + sp.site.id])
        if mode.trace:
            self._decode_trace(plan, counters, per_slot, site_exec)
        # static sites: their formulas' counts
        static_exec: dict = {}
        for sc, count in prepared.static.items():
            target, _ = ka.targets.get(sc, (None, None))
            slot = plan.slot_of(target or sc.site.object)
            if slot is None or slot not in per_slot:
                continue
            entry = per_slot[slot]
            n = min(len(entry[1]), len(count.counts))
            entry[1][:n] += count.counts[:n]
            entry[2] += count.out_of_range
            entry[3] += count.executions
            static_exec[sc.site] = static_exec.get(sc.site, 0) + count.executions
        site_exec.update(static_exec)
        # arrays
        reads: dict = {}
        writes: dict = {}
        for sp in plan.sites.values():
            if sp.slot is None or sp.site not in site_exec:
                continue
            n = site_exec[sp.site]
            if sp.site.kind in ("read", "read-write"):
                reads[sp.slot] = reads.get(sp.slot, 0) + n
            if sp.site.kind in ("write", "read-write"):
                writes[sp.slot] = writes.get(sp.slot, 0) + n
        for slot, (ls, counts, oor, static_execs) in per_slot.items():
            obj = slot.object
            if scale is not None:
                counts = np.rint(counts * scale).astype(np.int64)
            arr = ArrayStats(
                name=slot.name, space=obj.space, elem_type=obj.elem_type, shape=ls.shape,
                elem_size=ls.elem_size, unit=ls.unit, counts=counts,
                reads=int(reads.get(slot, 0) * (scale or 1)),
                writes=int(writes.get(slot, 0) * (scale or 1)), out_of_range=oor,
                label=label, threshold=mode.threshold,
                sampling=mode.sampling, declared_at=str(obj.location),
                where=("shared memory (SM)" if info.counters_in == "shared memory"
                       else "device memory") if ls.kind == LY.KIND_SHARED else "device memory")
            total = max(int(counts.sum()), 1)
            arr.static_share = min(1.0, static_execs / total) if static_execs else 0.0
            if mode.enhanced and ls.lr_offset:
                stats = area[ls.lr_offset:ls.lr_offset + LY.LR_STRIDE]
                arr.live_ranges = {"ranges": int(stats[0]), "accesses": int(stats[1]),
                                   "histogram": [int(x) for x in stats[2:]]}
            report.arrays.append(arr)
        # sites
        for sp in plan.site_list:
            site = sp.site
            if not self._site_in_kernel(site, kernel, ka):
                continue
            if sp.strategy == STATIC:
                how = "static"
            elif sp.strategy == NONE:
                how = "not counted"
            elif mode.sampling is not None:
                how = "sampled"
            elif mode.threshold is not None:
                how = "thresholded"
            elif mode.na:
                how = "approximate"
            else:
                how = "measured"
            n = site_exec.get(site, 0)
            if scale is not None and how == "sampled":
                n = int(round(n * scale))
            classes = sorted({c for sc in sp.classes for c in sc.classes})
            report.sites.append(SiteStats(site.id, str(site.location), site.text,
                                          site.function.name, site.object_name, site.kind, n,
                                          how, sp.reason, classes))
        if counters.get("unknown_oor"):
            report.notes.append(f"{counters['unknown_oor']} accesses went to addresses outside "
                                "every known object")
        if mode.trace and counters["trace_total"] > TRACE_CAPACITY:
            report.notes.append(f"trace overflow: {counters['trace_total'] - TRACE_CAPACITY} of "
                                f"{counters['trace_total']} accesses were not recorded")
        if mode.enhanced:
            report.clock_records = min(counters["clock_total"], CLOCK_CAPACITY)
            report.clock_overflow = max(0, counters["clock_total"] - CLOCK_CAPACITY)
            if report.clock_overflow:
                report.notes.append(f"live-range clock log overflow: {report.clock_overflow} "
                                    "records dropped")
        if prepared.demoted:
            report.notes.append(f"{len(prepared.demoted)} static site(s) could not be counted "
                                "from their formula at this launch and were counted on the device")
        if info.outputs_identical is False:
            report.notes.append("the instrumented kernel's outputs differ from the native "
                                "kernel's (a gmprof bug, or a kernel with a data race)")
        return report

    def _site_in_kernel(self, site, kernel, ka) -> bool:
        return site.function.name == kernel or any(
            callee.function is site.function for _, callee in ka.calls)

    def _decode_trace(self, plan, counters, per_slot, site_exec):
        """Trace records -> counts per element (the oracle's own arithmetic, in numpy)."""
        rec = counters["trace"]
        if rec.size == 0:
            return
        sites = (rec[:, 0] >> 32).astype(np.int64)
        objs = (rec[:, 0] & 0xFFFF).astype(np.int64)
        objs[objs == 0xFFFF] = -1
        sizes = ((rec[:, 0] >> 16) & 0xFFFF).astype(np.int64)
        addrs = rec[:, 1].astype(np.uint64)
        for sp in plan.sites.values():
            if sp.strategy in (HOOK, LR_START):
                site_exec[sp.site] = int((sites == sp.site.id).sum())
        counters["trace_records"] = (sites, objs, sizes, addrs, rec[:, 2], rec[:, 3])
        self.last_trace = counters["trace_records"]
        for slot, entry in per_slot.items():
            ls = entry[0]
            if ls.kind == LY.KIND_DEVICE:
                mask = (addrs >= ls.base) & (addrs < ls.base + ls.bytes) if ls.base else \
                    np.zeros(len(addrs), bool)
                off = (addrs[mask] - np.uint64(ls.base)).astype(np.int64)
                size = sizes[mask]
                counts = np.zeros(ls.n_counters, np.int64)
                first = off // ls.unit
                last = (off + size - 1) // ls.unit
                for k in range(int((last - first).max()) + 1 if len(first) else 0):
                    idx = first + k
                    keep = idx <= last
                    counts += np.bincount(idx[keep], minlength=ls.n_counters)[:ls.n_counters]
                entry[1] = counts
            else:
                # the hooks record shared accesses as byte offsets within the array
                mask = objs == slot.index
                off = addrs[mask].astype(np.int64)
                size = sizes[mask]
                counts = np.zeros(ls.n_counters, np.int64)
                first = off // 4
                last = (off + size - 1) // 4
                for k in range(int((last - first).max()) + 1 if len(first) else 0):
                    idx = first + k
                    keep = (idx <= last) & (idx >= 0) & (idx < ls.n_counters)
                    counts += np.bincount(idx[keep], minlength=ls.n_counters)[:ls.n_counters]
                entry[1] = counts


def missing_kernel(tu, name: str) -> GmprofError:
    """The error for a kernel name that names no usable kernel: one that did not parse (why,
    located at the problem), a __device__ function, or no function at all (the kernels that
    exist, parsed or not, named apart)."""
    fn = tu.function(name)
    if fn is not None and fn.parsed is None:
        why = fn.error.message if fn.error is not None else "unknown reason"
        where = fn.error.location if fn.error is not None and fn.error.location else fn.location
        return GmprofError(f"kernel {name!r} did not parse, so it cannot be analysed: {why}",
                           where, kind="kernel-not-parsed")
    if fn is not None and not fn.is_kernel:
        return GmprofError(f"{name!r} is a __device__ function, not a kernel (__global__)",
                           fn.location, kind="no-kernel")
    ok = [k.name for k in tu.kernels if k.parsed is not None]
    bad = [k.name for k in tu.kernels if k.parsed is None]
    text = f"kernels: {', '.join(ok) or 'none'}"
    if bad:
        text += f"; did not parse: {', '.join(bad)}"
    return GmprofError(f"no kernel named {name!r} in {tu.main.name} ({text})", kind="no-kernel")


def _hashable(v):
    return v.item() if isinstance(v, np.generic) else v


def _is_array(a) -> bool:
    return hasattr(a, "nbytes") and hasattr(a, "dtype") and hasattr(a, "shape") and \
        getattr(a, "ndim", 0) >= 0 and not isinstance(a, np.generic)


__all__ = ["Profiler", "Diagnostic", "field"]
