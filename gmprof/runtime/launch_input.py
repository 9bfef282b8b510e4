"""A launch as the user gives it, checked: the kernel, the launch shape, the run options and
the arguments, converted for the backend.

Stage: host runtime, first step of a launch. Takes the analysed program, the backend and what
the caller passed (a name expression, grid, block, arguments, dynamic shared memory, options);
returns a LaunchInput (the kernel's facts, 3-component grid and block, converted arguments and
their descriptions, the LaunchEnv that evaluates formulas at this launch) or raises a plain,
named error (OptionError, ArgumentError, GmprofError) before anything is compiled or run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gmprof.errors import ArgumentError, GmprofError, OptionError
from gmprof.options import count, launch_dims, not_text, seconds
from gmprof.mode import Mode

from gmprof.frontend import segment as S

from . import launchargs
from .launchenv import LaunchEnv, split_name_expression


@dataclass
class LaunchInput:
    name_expression: str
    kernel: str  # the kernel's name, without template arguments
    template_args: list
    facts: object  # FunctionFacts
    grid: tuple
    block: tuple
    shared_mem: int
    env: LaunchEnv
    args: list  # converted for the backend (device arrays, numpy scalars)
    largs: list  # launchargs.LaunchArg, one per parameter


@dataclass(frozen=True)
class RunOptions:
    mode: Mode
    repeat: int = 0
    warmup: int = 1
    timeout: float | None = None


def run_options(mode, repeat, warmup, timeout) -> RunOptions:
    for option, value in (("repeat", repeat), ("warmup", warmup), ("timeout", timeout)):
        not_text(value, option)
    mode = mode or Mode()
    if not isinstance(mode, Mode):
        raise OptionError(f"mode={mode!r}: expected a Mode (gmprof.api.make_mode makes one)")
    return RunOptions(mode, count(repeat, "repeat"), count(warmup, "warmup"),
                      timeout_option(timeout))


def timeout_option(timeout) -> float | None:
    return None if timeout is None else seconds(not_text(timeout, "timeout"), "timeout")


def kernel_facts(program, name_expression):
    """The analysed kernel a name expression names, or a plain error saying why not."""
    if not isinstance(name_expression, str) or not name_expression.strip():
        raise ArgumentError(f"kernel={name_expression!r}: expected a kernel's name or name "
                            "expression (a str such as 'saxpy' or 'matmul<16>')")
    kernel, _ = split_name_expression(name_expression)
    scope, _, plain = kernel.rpartition("::")
    facts = program.facts(plain)
    if facts is None or not facts.function.is_kernel or \
            (scope and scope.lstrip(":") != kernel_scope(program, facts.function)):
        raise missing_kernel(program.tu, kernel)
    return facts


def kernel_scope(program, fn) -> str:
    """The named namespaces around a kernel, `a::b` ('' at file scope; an unnamed namespace's
    members are found from the one around it)."""
    cache = program.tu.__dict__.setdefault("_gmprof_namespaces", {})
    if not cache:
        cache.update(S.namespaces(program.tu.segments))
    return "::".join(n for n in cache.get(fn.segment, ()) if n)


def qualified_kernel(program, fn) -> str:
    """A kernel's name as the file's scope finds it (`ns::k`)."""
    scope = kernel_scope(program, fn)
    return f"{scope}::{fn.name}" if scope else fn.name


def qualified(program, facts, name_expression: str) -> str:
    """The name expression as the compiler finds the kernel from the file's scope (the
    backend's module is asked for it there): `walk` in `namespace ns` -> `ns::walk`."""
    expr = name_expression.strip()
    if "::" in split_name_expression(expr)[0]:
        return expr.lstrip(":")
    scope = kernel_scope(program, facts.function)
    return f"{scope}::{expr}" if scope else expr


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


def check_shape(backend, fn, grid, block, args, shared_mem):
    """(grid, block) as 3-tuples, checked against the device and the kernel's parameters."""
    for what, value in (("grid", grid), ("block", block)):
        if isinstance(value, (str, bytes)):
            raise OptionError(f"{what}={value!r}: expected an int or a tuple of 1 to 3 ints, "
                              "not a string")
    grid3, block3 = launch_dims(grid, "grid"), launch_dims(block, "block")
    threads = block3[0] * block3[1] * block3[2]
    if threads > backend.max_threads_per_block:
        raise OptionError(f"block {block3} has {threads} threads; the device allows "
                          f"{backend.max_threads_per_block}")
    if isinstance(shared_mem, bool) or not isinstance(shared_mem, (int, np.integer)):
        raise OptionError(f"shared_mem={shared_mem!r}: expected a number of bytes (an int)")
    if shared_mem < 0:
        raise OptionError(f"shared_mem={shared_mem}: expected a number of bytes >= 0")
    if shared_mem > backend.max_shared_per_block:
        raise OptionError(f"shared_mem={shared_mem}: the device allows at most "
                          f"{backend.max_shared_per_block} bytes a block")
    params = fn.params
    if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__len__"):
        raise ArgumentError(f"args: expected a list or tuple of {len(params)} arguments "
                            f"(one per parameter of {fn.name}), not {type(args).__name__}")
    if len(args) != len(params):
        raise ArgumentError(f"{fn.name} takes {len(params)} arguments "
                            f"({', '.join(getattr(p, 'name', '?') or '?' for p in params)}), "
                            f"{len(args)} given")
    return grid3, block3


def launch_input(program, backend, name_expression, grid, block, args,
                 shared_mem) -> LaunchInput:
    """Check a launch and convert its arguments (sizes of the user's types come later, from
    the compiled module: LaunchInput.env.sizes)."""
    facts = kernel_facts(program, name_expression)
    kernel, template_args = split_name_expression(name_expression)
    kernel = kernel.rpartition("::")[2]
    name_expression = qualified(program, facts, name_expression)
    grid3, block3 = check_shape(backend, facts.function, grid, block, args, shared_mem)
    env = LaunchEnv(program, facts, template_args, grid3, block3, {}, {})
    converted, largs = launchargs.convert(facts, env, list(args), backend, program)
    return LaunchInput(name_expression, kernel, template_args, facts, grid3, block3,
                       shared_mem, env, converted, largs)


__all__ = ["LaunchInput", "RunOptions", "run_options", "timeout_option", "kernel_facts",
           "missing_kernel", "check_shape", "launch_input", "qualified_kernel"]
