"""The values ValueAnalysis computes (values.py): what an expression's value depends on and its
affine form, with the tables of CUDA functions whose results the analysis knows how to follow."""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from . import symbolic as S
from .loops import Loop, Loops

TID = frozenset(S.THREAD_VARS)
# threadIdx.x / 32: constant within a warp. Not tid-invariant, but warp-uniform.
WARP_QUOTIENT = "warp.x"
BID = frozenset(S.BLOCK_VARS)

_BUILTIN_FIELDS = {
    ("threadIdx", "x"): "tid.x", ("threadIdx", "y"): "tid.y", ("threadIdx", "z"): "tid.z",
    ("blockIdx", "x"): "bid.x", ("blockIdx", "y"): "bid.y", ("blockIdx", "z"): "bid.z",
}
_PURE_INT_FUNCTIONS = {"min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax",
                       "abs", "labs", "llabs", "__mul24", "__umul24", "std::min", "std::max",
                       "::min", "::max"}
_WARP_FUNCTIONS = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                   "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__ballot_sync",
                   "__ballot", "__any_sync", "__all_sync", "__any", "__all", "__activemask",
                   "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
                   "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
                   "__reduce_or_sync", "__reduce_xor_sync", "__lanemask_lt"}
# Functions of their arguments only (CUDA's math API and intrinsics, vector constructors).
_PURE_FUNCTIONS = set("""
sqrt sqrtf rsqrt rsqrtf cbrt cbrtf rcbrt rcbrtf exp expf exp2 exp2f exp10 exp10f expm1 expm1f
log logf log2 log2f log10 log10f log1p log1pf pow powf sin sinf cos cosf tan tanf asin asinf
acos acosf atan atanf atan2 atan2f sinh sinhf cosh coshf tanh tanhf asinh asinhf acosh acoshf
atanh atanhf sinpi sinpif cospi cospif fabs fabsf fmin fminf fmax fmaxf fma fmaf fmod fmodf
floor floorf ceil ceilf round roundf rint rintf trunc truncf lrint lrintf lround lroundf
llrint llrintf llround llroundf copysign copysignf hypot hypotf erf erff erfc erfcf erfinv
erfinvf erfcinv erfcinvf normcdf normcdff normcdfinv normcdfinvf lgamma lgammaf tgamma tgammaf
isnan isinf isfinite signbit frexp frexpf ldexp ldexpf scalbn scalbnf nextafter nextafterf
remainder remainderf fdim fdimf saturate __saturatef __expf __exp10f __logf __log2f __log10f
__powf __sinf __cosf __tanf __fdividef __frcp_rn __fsqrt_rn __frsqrt_rn __fmul_rn __fmul_rz
__fadd_rn __fadd_rz __fsub_rn __fmaf_rn __fmaf_rz __fdiv_rn __dmul_rn __dadd_rn __fma_rn
__float2int_rn __float2int_rz __float2int_rd __float2int_ru __float2uint_rn __float2uint_rz
__int2float_rn __uint2float_rn __float_as_int __int_as_float __float_as_uint __uint_as_float
__double_as_longlong __longlong_as_double __popc __popcll __clz __clzll __ffs __ffsll __brev
__brevll __byte_perm __mulhi __umulhi __mul64hi __umul64hi __sad __usad __hadd __rhadd
__uhadd __urhadd __funnelshift_l __funnelshift_r __float2half __half2float
""".split())
_BLOCK_UNIFORM_FUNCTIONS = {"__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}


@dataclass(frozen=True)
class Value:
    deps: frozenset = frozenset()
    affine: S.Affine | None = None
    reasons: tuple = ()

    @property
    def tid_deps(self) -> frozenset:
        return self.deps & TID

    @property
    def launch_known(self) -> bool:
        return not self.deps

    def loops(self) -> set:
        return {d[1] for d in self.deps if isinstance(d, tuple) and d[0] == "loop"}

    def depends_on_loop(self, loop: Loop) -> bool:
        return ("loop", loop) in self.deps

    def with_deps(self, extra, reason: str | None = None) -> "Value":
        return Value(self.deps | frozenset(extra), self.affine if not extra else None,
                     self.reasons + ((reason,) if reason else ()))


def d_current_iteration(defs, loop: Loop, loops: Loops, use) -> bool:
    """Whether the single reaching definition in `defs` is made in the same iteration of `loop`
    as `use`: it comes before the use in the loop's body and is not inside a loop nested in
    `loop` that does not also hold the use (whose iterations would have ended)."""
    d = next(iter(defs))
    if d.kind not in ("init", "assign", "compound", "incdec") or d.node is None:
        return False
    if loop.node.stmt is None:
        return False
    body, ds, us = X.span(loop.node.stmt), X.span(d.node), X.span(use)
    if body is None or ds is None or us is None:
        return False
    if not (body.start <= ds.start and ds.end <= us.start and us.end <= body.end):
        return False
    return set(loops.of(d.node)) <= set(loops.of(use))


def const_value(sym) -> Value:
    return Value(frozenset(), S.Affine.constant(sym))


def join(values, affine=None, reason=None) -> Value:
    deps = frozenset()
    reasons = ()
    for v in values:
        deps |= v.deps
        reasons += v.reasons
    if reason:
        reasons += (reason,)
    return Value(deps, affine, tuple(dict.fromkeys(reasons)))


UNKNOWN_VALUE = Value(frozenset({"unknown"}), None, ("not analysable",))


@dataclass
class Context:
    """Where a function is being analysed: a kernel at the root, or a device function at a call
    site (its parameters bound to the caller's argument values)."""

    function: object  # FunctionFacts
    params: dict | None = None  # Symbol -> Value for a callee; None for a kernel
    caller: "Context | None" = None
    call: c_ast.Node | None = None
    depth: int = 0

    @property
    def chain(self) -> tuple:
        out, c = [], self
        while c is not None:
            out.append(c.call)
            c = c.caller
        return tuple(out)
