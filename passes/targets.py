"""Where the emitted translation unit goes: nvcc, NVRTC or the CPU backend's g++.

The one place the backends' differences in the generated text live; the rewriter and emit()
take a Target and ask it. A Target says
  device_only      host code is blanked line for line (NVRTC and the CPU backend compile device
                   code only; `gmprof instrument` without --device-only keeps the host code
                   for nvcc)
  system_headers   the <...> includes kept in a device-only unit (the rest are host headers)
  patches()        the edits this compiler needs besides the counters: the CPU backend has no
                   `extern __shared__`, so each such declaration becomes
                   `GMPROF_DYNAMIC_SHARED(T, name);` (runtime_cu/cpu/ defines it); and its
                   shifts must clamp their amount as a GPU's do (x86 masks it), so each shift
                   in device code becomes a call of runtime_cu/cpu/gmprof_cpu.h's

    extern __shared__ float s[];   ->   GMPROF_DYNAMIC_SHARED(float, s);      (CPU only)
    dw << 32 - bit                 ->   gmprof_shl(dw , 32 - bit)             (CPU only)
    x >>= k                        ->   gmprof_shr_assign(x , k)              (CPU only)
    k<<<g, b>>>(x)  (device code)  ->   k * ::gmprof_cpu::DeviceLaunch(g, b)(x)  (CPU only:
                                        g++ has no `<<<`; the child is queued, gmprof_cpu.h)
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .patches import PREFIX, REPLACE, SUFFIX, Patch
from .symbols import type_text

_SHIFTS = {"<<": "gmprof_shl", ">>": "gmprof_shr", "<<=": "gmprof_shl_assign",
           ">>=": "gmprof_shr_assign"}

# System headers NVRTC can compile (device-side); anything else in <...> is host-only.
_NVRTC_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cooperative_groups", "cub/", "cuda/",
                  "curand_kernel.h", "math_constants.h", "mma.h", "cuda_pipeline",
                  "sm_", "vector_types.h", "vector_functions.h")
_CPU_HEADERS = ("stdio.h", "stdlib.h", "math.h", "stdint.h", "assert.h", "limits.h", "float.h",
                "cstdio", "cstdlib", "cmath", "cstdint", "cassert", "climits", "cfloat",
                "string.h", "cstring",
                # the CPU backend's own (runtime_cu/cpu/include/)
                "cooperative_groups", "cuda_fp16.h", "cuda_bf16.h")


@dataclass(frozen=True)
class Target:
    name: str
    device_only: bool
    system_headers: tuple
    dynamic_shared_macro: bool = False  # extern __shared__ -> GMPROF_DYNAMIC_SHARED

    def keeps_system_include(self, body: str) -> bool:
        name = body.strip()[1:-1].strip() if body.strip().startswith("<") else ""
        return any(name == h or name.startswith(h) for h in self.system_headers)

    def patches(self, program) -> dict:
        """SourceFile -> [Patch]: this compiler's edits besides the counters."""
        out: dict = {}
        if not self.dynamic_shared_macro:
            return out

        def replace(decl, source, start, end):
            t = decl.type
            while isinstance(t, c_ast.ArrayDecl):
                t = t.type
            text = f"GMPROF_DYNAMIC_SHARED({type_text(t)}, {decl.name});"
            out.setdefault(source, []).append(Patch(start, REPLACE, text, end - start,
                                                    end=end))

        for facts in program.functions:
            spans = facts.function.parsed.statement_spans
            for obj in facts.objects:
                if not obj.is_shared or obj.function is None:
                    continue
                decl = obj.symbol.decl
                statement = spans.get(decl)
                if statement is not None and "extern" in (decl.storage or []):
                    replace(decl, statement.source, statement.start, statement.end)
        for var in program.tu.variables:
            if var.space == "__shared__" and var.decl is not None and \
                    "extern" in (var.decl.storage or []):
                replace(var.decl, var.source, var.segment.start, var.segment.end)
        for facts in program.functions:
            for source, patch in shift_patches(facts.function.parsed.funcdef):
                out.setdefault(source, []).append(patch)
            for source, patch in launch_patches(facts.function.parsed.funcdef):
                out.setdefault(source, []).append(patch)
        return out


def launch_patches(funcdef):
    """(source, Patch) that write each launch from device code for g++ (see the docstring):
    only `<<<` and `>>>` are replaced, so that the edits before the kernel's name (the copies'
    launch counter, gmprof/program/copies.py) stay where they are. A launch whose brackets a
    macro wrote, or with a comment inside them, is left as written (g++ then fails on it)."""
    for node in X.walk(funcdef):
        if not isinstance(node, X.KernelLaunch) or not node.config:
            continue
        name, first, last = X.span(node.name), X.span(node.config[0]), X.span(node.config[-1])
        if name is None or first is None or last is None or \
                not name.source is first.source is last.source:
            continue
        text = name.source.text
        open_at = text.rfind("<<<", name.start, first.start)
        close_at = text.find(">>>", last.end)
        if open_at < 0 or text[open_at + 3:first.start].strip() or close_at < 0 or \
                text[last.end:close_at].strip():
            continue
        n = close_at + 3 - name.start
        yield name.source, Patch(open_at, REPLACE, " * ::gmprof_cpu::DeviceLaunch(", n,
                                 end=open_at + 3)
        yield name.source, Patch(close_at, REPLACE, ")", n, end=close_at + 3)


def shift_patches(funcdef):
    """(source, Patch) that write each shift of a function as a call (see the docstring): the
    operator becomes a comma and the call wraps both operands. Shifts written by a macro have
    no place in the user's text and keep their operator."""
    for node in X.walk(funcdef):
        if not isinstance(node, (c_ast.BinaryOp, c_ast.Assignment)) or node.op not in _SHIFTS:
            continue
        whole = X.span(node)
        left = X.span(node.left if isinstance(node, c_ast.BinaryOp) else node.lvalue)
        right = X.span(node.right if isinstance(node, c_ast.BinaryOp) else node.rvalue)
        if whole is None or left is None or right is None or \
                not whole.source is left.source is right.source:
            continue
        text = whole.source.text
        at = text.find(node.op, left.end, right.start)
        if at < 0 or text[left.end:right.start].count(node.op[0]) != len(node.op) - \
                node.op.endswith("="):
            continue  # a comment or a parenthesis between them: left as written
        n = whole.end - whole.start
        yield whole.source, Patch(whole.start, PREFIX, f"{_SHIFTS[node.op]}(", n)
        yield whole.source, Patch(at, REPLACE, ",", n, end=at + len(node.op))
        yield whole.source, Patch(whole.end, SUFFIX, ")", n)


NVCC = Target("nvcc", device_only=False, system_headers=_NVRTC_HEADERS)
NVRTC = Target("nvrtc", device_only=True, system_headers=_NVRTC_HEADERS)
CPU = Target("cpu", device_only=True, system_headers=_CPU_HEADERS, dynamic_shared_macro=True)

__all__ = ["Target", "NVCC", "NVRTC", "CPU"]
