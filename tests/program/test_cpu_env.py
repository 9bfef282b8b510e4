"""The CPU backend's GMPROF_CPU_* variables get the same verdict on every path: a whole program
built with `gmprof nvcc` stops at a bad value before any kernel runs (one line naming the
variable and the value, status 2, no report: runtime_cu/cpu/gmprof_cpu_env.h), and gmprof profile
refuses the same values with the same words (gmprof/runtime/cpu_env.py). Good values run as
before.

One program, built once on the CPU backend; each case is one run of it (milliseconds)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import env, gmprof
from test_run_options import OUT, PROGRAM

from gmprof.errors import OptionError
from gmprof.runtime import cpu_env

# the program of test_run_options (`app NAME VALUE` sets a variable before its launch)
KERNEL = "__global__ void add1(int *a) { a[threadIdx.x] += 1; }\n"

STACK = "expected a stack size in KiB, from 16 to 1048576"
TIMEOUT = "expected seconds >= 0 (0: no limit)"
LIVELOCK = "expected seconds > 0"
SWITCH = "expected 0 or 1"
VARIABLES = ("GMPROF_CPU_STACK_KB", "GMPROF_CPU_TIMEOUT_S", "GMPROF_CPU_LIVELOCK_S",
             "GMPROF_CPU_GRAPH_DUMP")

BAD = [
    ("GMPROF_CPU_STACK_KB", "abc", STACK),
    ("GMPROF_CPU_STACK_KB", "-3", STACK),
    ("GMPROF_CPU_STACK_KB", "12x", STACK),
    ("GMPROF_CPU_STACK_KB", "", STACK),
    ("GMPROF_CPU_STACK_KB", "15", STACK),  # below the 16 KiB gmprof profile always refused
    ("GMPROF_CPU_STACK_KB", "1048577", STACK),  # past 1 GiB a thread
    ("GMPROF_CPU_STACK_KB", "99999999999999999999999", STACK),  # past 64 bits
    ("GMPROF_CPU_STACK_KB", " 64", STACK),
    ("GMPROF_CPU_TIMEOUT_S", "abc", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "-3", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "12x", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "inf", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "1e3", TIMEOUT),
    ("GMPROF_CPU_TIMEOUT_S", "9" * 400, TIMEOUT),  # past a double
    ("GMPROF_CPU_TIMEOUT_S", "1.2.3", TIMEOUT),
    ("GMPROF_CPU_LIVELOCK_S", "abc", LIVELOCK),
    ("GMPROF_CPU_LIVELOCK_S", "-3", LIVELOCK),
    ("GMPROF_CPU_LIVELOCK_S", "0", LIVELOCK),
    ("GMPROF_CPU_LIVELOCK_S", ".", LIVELOCK),
    ("GMPROF_CPU_LIVELOCK_S", "", LIVELOCK),
    ("GMPROF_CPU_GRAPH_DUMP", "yes", SWITCH),
    ("GMPROF_CPU_GRAPH_DUMP", "2", SWITCH),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("cpu_env")
    (d / "t.cu").write_text(PROGRAM)
    gmprof("nvcc", "t.cu", "-o", "app", cwd=d)
    return d / "app"


def _env(**variables) -> dict:
    e = {k: v for k, v in env().items() if k not in VARIABLES}
    e.update(variables)
    return e


def _run(app, cwd, *args, **variables) -> subprocess.CompletedProcess:
    return subprocess.run([str(app), *args], cwd=cwd, env=_env(**variables),
                          capture_output=True, text=True)


def _line(name, value, expected) -> str:
    return f"gmprof: error: {name}={value}: {expected}"


@pytest.mark.parametrize("name,value,expected", BAD)
def test_a_bad_value_stops_the_program_before_any_kernel(app, tmp_path, name, value, expected):
    p = _run(app, tmp_path, GMPROF_OUTPUT=str(tmp_path / "r.json"), **{name: value})
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""  # main never ran (checked at start-up)
    assert p.stderr == _line(name, value, expected) + "\n"
    assert list(tmp_path.iterdir()) == []  # no report, no counts file


@pytest.mark.parametrize("name,value,expected", BAD)
def test_gmprof_profile_gives_the_same_verdict(name, value, expected):
    with pytest.raises(OptionError) as err:
        cpu_env.check_environ({name: value})
    assert err.value.message == f"{name}={value}: {expected}"


def test_a_bad_value_the_program_sets_itself_stops_it_at_its_launch(app, tmp_path):
    p = _run(app, tmp_path, "GMPROF_CPU_TIMEOUT_S", "12x", GMPROF_OUTPUT=str(tmp_path / "r.json"))
    assert (p.returncode, p.stdout) == (2, "set\n")  # what it printed before is kept
    assert p.stderr == _line("GMPROF_CPU_TIMEOUT_S", "12x", TIMEOUT) + "\n"
    assert list(tmp_path.iterdir()) == []


GOOD = [
    {},
    {"GMPROF_CPU_STACK_KB": "16", "GMPROF_CPU_TIMEOUT_S": "0", "GMPROF_CPU_LIVELOCK_S": ".5"},
    {"GMPROF_CPU_STACK_KB": "1048576", "GMPROF_CPU_TIMEOUT_S": "30.",
     "GMPROF_CPU_LIVELOCK_S": "2"},
    {"GMPROF_CPU_STACK_KB": "0064", "GMPROF_CPU_GRAPH_DUMP": "0"},  # 64: decimal, not octal
    {"GMPROF_CPU_GRAPH_DUMP": ""},  # empty: unset
    {"GMPROF_CPU_GRAPH_DUMP": "1"},  # (the program makes no graph: nothing printed)
]


@pytest.mark.parametrize("variables", GOOD)
def test_good_values_run_as_before(app, tmp_path, variables):
    p = _run(app, tmp_path, GMPROF_OUTPUT=str(tmp_path / "r.json"), GMPROF_QUIET="1",
             **variables)
    assert (p.returncode, p.stdout, p.stderr) == (0, OUT, "")
    assert (tmp_path / "r.json").is_file()
    cpu_env.check_environ(variables)  # gmprof profile lets them through


def _profile_cmd() -> list[str]:
    return [sys.executable, "-m", "gmprof.cli", "profile", "k.cu", "--backend", "cpu", "-k",
            "add1", "--grid", "1", "--block", "4", "--arg", "a=int32[4]:zeros", "-o", "r.json"]


@pytest.mark.parametrize("name,value,expected", [
    ("GMPROF_CPU_STACK_KB", "12x", STACK),
    ("GMPROF_CPU_TIMEOUT_S", "-3", TIMEOUT),
    ("GMPROF_CPU_LIVELOCK_S", "abc", LIVELOCK),
    ("GMPROF_CPU_GRAPH_DUMP", "yes", SWITCH),
])
def test_gmprof_profile_refuses_them(tmp_path, need_gxx, name, value, expected):
    (tmp_path / "k.cu").write_text(KERNEL)
    p = subprocess.run(_profile_cmd(), cwd=tmp_path,
                       env=_env(**{name: value}), capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert p.stderr == _line(name, value, expected) + "\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["k.cu"]  # no report


def test_gmprof_profile_good_values(tmp_path, need_gxx):
    """GMPROF_CPU_TIMEOUT_S is gmprof profile's limit when --timeout is not given."""
    (tmp_path / "k.cu").write_text(KERNEL)
    p = subprocess.run(_profile_cmd(), cwd=tmp_path, capture_output=True, text=True,
                       env=_env(GMPROF_CPU_STACK_KB="64", GMPROF_CPU_TIMEOUT_S="30",
                                GMPROF_CPU_LIVELOCK_S="0.5", GMPROF_CPU_GRAPH_DUMP="0"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.json").is_file()


def test_gmprof_run_refuses_them_before_building(tmp_path, need_gxx):
    (tmp_path / "t.cu").write_text(PROGRAM)
    p = gmprof("run", "--backend", "cpu", "t.cu", cwd=tmp_path, check=False,
               GMPROF_CPU_STACK_KB="abc")
    assert (p.returncode, p.stderr) == (2, _line("GMPROF_CPU_STACK_KB", "abc", STACK) + "\n")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["t.cu"]
