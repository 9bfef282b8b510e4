"""Compiled modules of one translation unit: native and instrumented, cached per source.

Stage: host runtime. Takes the analysed program, the backend and the user's -D defines; makes
the device translation unit's text for a plan (or the native one, with a kernel that reports
sizeof of the user's own types), compiles it with the backend, and keeps the modules: one
module serves every plain kernel of the file and the template instantiations asked for so
far, so launching another kernel does not compile again.
"""
from __future__ import annotations

import numpy as np

from gmprof import timing
from gmprof.passes.pipeline import Pipeline

from . import module_state
from .launch_input import qualified_kernel
from .launchenv import _SCALAR_SIZES, clean_type, vector_size


class Modules:
    def __init__(self, program, backend, defines: dict, pipeline: Pipeline | None = None):
        self.program = program
        self.pipeline = pipeline or Pipeline()
        self.tu = program.tu
        self.backend = backend
        self.defines = dict(defines)
        self._modules: dict = {}
        self._sources: dict = {}  # (id(plan), sm) -> (plan, text, defines)
        self._instantiations: set = set()
        self._size_names: list = []
        self._sizes: dict | None = None

    def source(self, plan, sm=None):
        """(text, defines) of the device translation unit for this backend: instrumented for
        a plan, native for None."""
        target = self.backend.target
        if plan is None:
            text = self.pipeline.emit(self.program, None, target, header=False,
                                      extra=self._sizeof_kernel())
            return text, {}
        # the macros go to the compiler, not into the text (one text serves SM on and off)
        text, done = self.pipeline.instrumented_source(self.program, plan, target, sm=sm,
                                                       defines=False)
        return text, done.defines

    def module(self, plan, names, sm=None, max_registers: int | None = None):
        """The compiled module of a plan (None: native) holding the kernels `names`;
        max_registers: compiled with --maxrregcount (occupancy.py)."""
        # (each as the file's scope finds it: `ns::k` for a kernel in a namespace)
        plain = [qualified_kernel(self.program, f) for f in self.tu.kernels
                 if f.parsed is not None and not f.template_params]
        wanted = set(names) | set(plain) | self._instantiations
        if plan is None:
            wanted.add("__gmprof_sizeof")
        self._instantiations |= {n for n in names if "<" in n}
        asked = [n for n in names if not n.startswith("__gmprof")]
        names = sorted(wanted)
        # a plan's text is made once (the Profiler keeps its plans: 50 launches, one text)
        made = self._sources.get((id(plan), sm))
        if made is None or made[0] is not plan:
            with timing.phase("instrument"):
                made = (plan, *self.source(plan, sm))
            self._sources[(id(plan), sm)] = made
        _, text, defines = made
        options = tuple(f"-D{k}={v}" if v is not None else f"-D{k}"
                        for k, v in {**self.defines, **defines}.items())
        if max_registers:
            options += (f"--maxrregcount={int(max_registers)}",)
        key = (text, options, tuple(sorted(names)))
        if key not in self._modules:
            kwargs = {}
            if self.backend.name == "cpu":
                # the CPU module exports accessors for the globals the runtime reads or fills
                kwargs["globals"] = ([] if plan is None else ["__gmprof_launch"]) + \
                    self.global_names()
            what = ", ".join(asked or [n for n in names if not n.startswith("__gmprof")]) \
                or self.tu.main.name
            where = "CPU backend" if self.backend.name == "cpu" else "GPU"
            with timing.phase("compile", f"compiling {what}"
                              f"{', instrumented' if plan is not None else ''} ({where})"):
                self._modules[key] = self.backend.compile(text, list(names), options,
                                                          filename=self.tu.main.name, **kwargs)
            if plan is None:
                # the native module's variables as loaded: runs.py gives the instrumented
                # module only those a run has changed since, and compares only those
                # (module_state.changed)
                self._modules[key].initial_globals = module_state.snapshot(
                    self.backend, self._modules[key], self.global_names())
        return self._modules[key]

    def global_names(self) -> list[str]:
        """The file-scope (__device__, __constant__) variables' names."""
        return [v.name for v in self.tu.variables if v.name and v.space != "__shared__"]

    def _sizeof_kernel(self) -> str:
        """A kernel that reports sizeof of the user's own types (for counters per element)."""
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
        """sizeof of the user's own types, from the compiled native module."""
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


__all__ = ["Modules"]
