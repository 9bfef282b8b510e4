"""The Python API on bad arguments: every misuse is a GmprofError subclass naming the argument
(also a TypeError or ValueError where Python's convention says so), matched here by class and
kind, never a foreign exception or a crash; and nothing is converted silently. A Hypothesis
battery throws arbitrary launch arguments at a kernel."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pathlib import Path

import gmprof
from gmprof.errors import (ArgumentError, ArgumentValueError, GmprofError, InputError,
                           KernelTimeout, OptionError)

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels.cu"
TYPES = """
__global__ void types(float *y, const float *x, float a, int n, unsigned u, bool b, double d,
                      long long l)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + (float)d;
}
"""


@pytest.fixture(scope="module")
def prof():
    return gmprof.api.profiler(TYPES, backend="cpu")


def good():
    return [np.zeros(64, np.float32), np.ones(64, np.float32), 2.0, 64, 1, True, 0.5, 7]


def with_arg(k, v):
    a = good()
    a[k] = v
    return a


class LooksLikeAnArray:
    """Has an array's attributes, and no memory behind them."""

    nbytes, dtype, shape, ndim = 256, np.float32, (64,), 1


def read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


CASES = [
    # (keyword overrides of prof.launch, error class, TypeError/ValueError)
    ({"name_expression": None}, ArgumentError, TypeError),
    ({"name_expression": 3}, ArgumentError, TypeError),
    ({"name_expression": ""}, ArgumentError, TypeError),
    ({"name_expression": "nope"}, GmprofError, None),
    ({"name_expression": "types<"}, GmprofError, None),
    ({"grid": "16"}, OptionError, ValueError),
    ({"grid": (2.5,)}, OptionError, ValueError),
    ({"block": (2.5,)}, OptionError, ValueError),
    ({"grid": (1, 1, 1, 1)}, OptionError, ValueError),
    ({"grid": 2 ** 32}, OptionError, ValueError),
    ({"grid": (1, 65536)}, OptionError, ValueError),
    ({"grid": 0}, OptionError, ValueError),
    ({"grid": -1}, OptionError, ValueError),
    ({"grid": None}, OptionError, ValueError),
    ({"grid": True}, OptionError, ValueError),
    ({"block": 1025}, OptionError, ValueError),
    ({"block": (1, 1, 65)}, OptionError, ValueError),
    ({"shared_mem": -1}, OptionError, ValueError),
    ({"shared_mem": "1"}, OptionError, ValueError),
    ({"shared_mem": 1.0}, OptionError, ValueError),
    ({"shared_mem": 1 << 40}, OptionError, ValueError),
    ({"repeat": -1}, OptionError, ValueError),
    ({"repeat": 1.5}, OptionError, ValueError),
    ({"timeout": -1}, OptionError, ValueError),
    ({"timeout": float("nan")}, OptionError, ValueError),
    ({"timeout": "1"}, OptionError, ValueError),
    ({"mode": "SA-NA"}, OptionError, ValueError),  # a str where a Mode is needed
    ({"args": None}, ArgumentError, TypeError),
    ({"args": 5}, ArgumentError, TypeError),
    ({"args": good()[:3]}, ArgumentError, TypeError),
    ({"args": with_arg(2, None)}, ArgumentError, TypeError),         # None for a float
    ({"args": with_arg(2, "2")}, ArgumentError, TypeError),          # a string
    ({"args": with_arg(2, 2 + 1j)}, ArgumentError, TypeError),       # complex for a float
    ({"args": with_arg(2, np.complex64(1))}, ArgumentError, TypeError),
    ({"args": with_arg(2, 1e300)}, ArgumentValueError, ValueError),  # inf as float32
    ({"args": with_arg(2, 10 ** 400)}, ArgumentValueError, ValueError),
    ({"args": with_arg(3, 2 ** 40)}, ArgumentValueError, ValueError),  # does not fit int
    ({"args": with_arg(3, 3.5)}, ArgumentValueError, ValueError),
    ({"args": with_arg(3, float("nan"))}, ArgumentValueError, ValueError),
    ({"args": with_arg(3, np.int64(2 ** 33))}, ArgumentValueError, ValueError),
    ({"args": with_arg(4, -1)}, ArgumentValueError, ValueError),     # unsigned
    ({"args": with_arg(5, 2)}, ArgumentValueError, ValueError),      # bool
    ({"args": with_arg(7, 2 ** 63)}, ArgumentValueError, ValueError),
    ({"args": with_arg(3, np.zeros(3, np.int32))}, ArgumentError, TypeError),
    ({"args": with_arg(3, [1])}, ArgumentError, TypeError),
    ({"args": with_arg(0, None)}, ArgumentError, TypeError),
    ({"args": with_arg(0, 5)}, ArgumentError, TypeError),
    ({"args": with_arg(0, [0.0] * 64)}, ArgumentError, TypeError),
    ({"args": with_arg(0, LooksLikeAnArray())}, ArgumentError, TypeError),
    ({"args": with_arg(0, np.array([object()] * 64))}, ArgumentError, TypeError),
    ({"args": with_arg(0, np.array(["a"] * 64))}, ArgumentError, TypeError),
    ({"args": with_arg(0, np.zeros(64, np.float64))}, ArgumentError, TypeError),
    ({"args": with_arg(0, read_only(np.zeros(64, np.float32)))}, ArgumentError, TypeError),
]


@pytest.mark.parametrize("kw,cls,builtin", CASES, ids=[str(i) for i in range(len(CASES))])
def test_misuse_is_a_plain_error(prof, kw, cls, builtin):
    call = {"name_expression": "types", "grid": 1, "block": 64, "args": good()}
    call.update(kw)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in call["args"]] \
        if isinstance(call["args"], list) else None
    with pytest.raises(cls) as e:
        prof.launch(**call)
    if builtin is not None:
        assert isinstance(e.value, builtin)
    assert e.value.kind and "Traceback" not in str(e.value)
    if before is not None:  # nothing ran: the arrays are as they were
        for b, a in zip(before, call["args"]):
            if isinstance(b, np.ndarray) and b.dtype != object:
                np.testing.assert_array_equal(a, b)


def test_a_read_only_array_for_a_const_parameter_is_fine(prof):
    args = good()
    args[1] = read_only(args[1])
    prof.launch("types", 1, 64, args)
    np.testing.assert_array_equal(args[0], np.full(64, 2.5, np.float32))  # 2 * 1 + 0.5


@pytest.mark.parametrize("call,cls", [
    (lambda: gmprof.profile(5, "k", 1, 1, []), ArgumentError),
    (lambda: gmprof.profile(b"__global__ void k(){}", "k", 1, 1, []), ArgumentError),
    (lambda: gmprof.profile("/nonexistent/k.cu", "k", 1, 1, []), InputError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), backend="tpu"), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), backend=None), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), mode=3), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), mode="XX"), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), sampling=2), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), sampling="0.1"), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), threshold="5"), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), threshold=0), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), counter_bits=7), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), profile="all"), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), defines=["A"]), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), defines={"1A": 1}), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, good(), include_dirs=5), OptionError),
    (lambda: gmprof.profile(TYPES, "types", 1, 64, np.zeros(3)), ArgumentError),
    (lambda: gmprof.RawKernel(None, "k"), ArgumentError),
    (lambda: gmprof.RawKernel(TYPES, None), ArgumentError),
    (lambda: gmprof.RawKernel(TYPES, "types", options=("-I",)), OptionError),
    (lambda: gmprof.RawKernel(TYPES, "types", options=("-D",)), OptionError),
    (lambda: gmprof.RawKernel(TYPES, "types", options=(5,)), OptionError),
    (lambda: gmprof.RawKernel(TYPES, "types", options=("-D1x",)), OptionError),
    (lambda: gmprof.RawKernel(TYPES, "types", bogus=1), OptionError),
    (lambda: gmprof.RawKernel(TYPES, "types", device="cpu")(1, 64, None), ArgumentError),
])
def test_api_entry_points(call, cls):
    with pytest.raises(cls):
        call()


def test_raw_kernel_options_are_parsed():
    defines, includes = gmprof.api.parse_options(("-DA=1", "-D", "B", "-I", "/x", "-I/y",
                                                  "--define-macro=C", "-std=c++17"))
    assert defines == {"A": "1", "B": None, "C": None} and includes == ["/x", "/y"]


# -- Hypothesis: arbitrary launch arguments ---------------------------------------------------

def arrays():
    dtypes = st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.bool_, np.complex64,
                              np.int64])
    return st.builds(lambda dt, n, ro: read_only(np.zeros(n, dt)) if ro else np.zeros(n, dt),
                     dtypes, st.integers(0, 80), st.booleans())


ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True),
    st.complex_numbers(), st.text(max_size=3), st.binary(max_size=3), arrays(),
    st.lists(st.integers(), max_size=3), st.just(LooksLikeAnArray()), st.just({}),
    st.sampled_from([np.float32(1), np.int8(-1), np.uint64(2 ** 63), np.float64("inf"),
                     np.bool_(True), np.void(b"1234")]),
)
# (a valid grid of 2^31 - 1 blocks runs until its time limit: one plain test below has it)
DIMS = st.one_of(st.integers(-2, 3), st.integers(2 ** 31, 2 ** 33),
                 st.tuples(st.integers(-1, 4), st.integers(-1, 3)),
                 st.lists(st.integers(0, 2), max_size=4), st.floats(0, 3), st.text(max_size=3),
                 st.none())


@settings(max_examples=int(os.environ.get("GMPROF_HYPOTHESIS_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(bad=st.dictionaries(st.integers(0, 7), ANYTHING, max_size=2),
       count=st.sampled_from([8, 8, 8, 7, 9]),
       grid=st.one_of(st.sampled_from([1, 2, (2, 1)]), DIMS),
       block=st.one_of(st.sampled_from([64, 32, (8, 8)]), DIMS))
def test_arbitrary_arguments(prof, bad, count, grid, block):
    """Zero to two arguments replaced by anything, sometimes one too few or too many."""
    args = good()
    for k, v in bad.items():
        args[k] = v
    args = (args + [None])[:count]
    try:
        prof.launch("types", grid, block, args, timeout=20)
    except GmprofError as e:
        assert e.kind


def test_the_largest_grid_ends_at_its_time_limit(prof):
    """2^31 - 1 blocks is within CUDA's limits: the static counts give up (they would enumerate
    2^37 threads) and the launch is stopped by its time limit, with a plain error."""
    with pytest.raises(KernelTimeout):
        prof.launch("types", 2 ** 31 - 1, 64, good(), timeout=1)
