"""A whole program's GMPROF_* variables: a bad value stops the program before it runs any kernel
with one line naming the variable and the value, status 2, no report (the host runtime,
runtime_cu/host/gmprof_host_options.h); good values run it as before. `gmprof run` and
`gmprof nvcc` give the same verdict on the same values (gmprof/program/run_options.py): their
options with argparse's usage error, the variables `gmprof run` passes on before it builds.

One program, built once on the CPU backend; each case is one run of it (milliseconds)."""
from __future__ import annotations

import subprocess

import pytest

from conftest import env, gmprof

from gmprof.errors import OptionError
from gmprof.program import run_options

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
__global__ void add1(int *a) { a[threadIdx.x] += 1; }
int main(int argc, char **argv) {
  if (argc >= 3) {  // `app NAME VALUE`: the program sets a variable itself, before its launch
    printf("set\n");
    setenv(argv[1], argv[2], 1);
    if (argc == 4) return 0;  // `app NAME VALUE exit`: ... and launches nothing
  }
  int h[4] = {1, 2, 3, 4};
  int *d;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  add1<<<1, 4>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
  return 0;
}
"""
OUT = "2 3 4 5\n"  # {1, 2, 3, 4} + 1, by hand

NON_NEGATIVE = "expected a non-negative integer"
COUNT_ALL = "expected a non-negative integer, or -1 for all"
SWITCH = "expected 0 or 1"
PATTERN = "expected a file name pattern (%p, %h, %q{ENV}, %%)"
REGEX = "expected a kernel name, or regex:RE with RE a regular expression ("

# (variable, value, what the line says after "NAME=VALUE: "; for a regex, how it starts: the
# compilers' own words follow, std::regex's in the program, Python's re in gmprof run)
BAD = [
    ("GMPROF_LAUNCH_SKIP", "abc", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", "-3", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", "12x", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", "", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", "+3", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", " 3", NON_NEGATIVE),
    ("GMPROF_LAUNCH_SKIP", "9223372036854775808",  # 2^63: past long long
     NON_NEGATIVE + ", at most 9223372036854775807"),
    ("GMPROF_LAUNCH_COUNT", "abc", COUNT_ALL),
    ("GMPROF_LAUNCH_COUNT", "-3", COUNT_ALL),
    ("GMPROF_LAUNCH_COUNT", "0x10", COUNT_ALL),
    ("GMPROF_LAUNCH_COUNT", "-", COUNT_ALL),
    ("GMPROF_LAUNCH_COUNT", "", COUNT_ALL),
    ("GMPROF_ACCESS_STATS_BLOCKS", "abc", NON_NEGATIVE),
    ("GMPROF_ACCESS_STATS_BLOCKS", "-1", NON_NEGATIVE),
    ("GMPROF_ACCESS_STATS_BLOCKS", "", NON_NEGATIVE),
    ("GMPROF_ACCESS_STATS_BLOCKS", "99999999999999999999",
     NON_NEGATIVE + ", at most 9223372036854775807"),
    ("GMPROF_SYNC", "yes", SWITCH),
    ("GMPROF_GRAPHS", "off", SWITCH),
    ("GMPROF_QUIET", "true", SWITCH),
    ("GMPROF_KERNEL", "regex:(", REGEX),
    ("GMPROF_KERNEL", "regex:[a", REGEX),
    ("GMPROF_OUTPUT", "", PATTERN),
    ("GMPROF_OUTPUT", "r-%q{RANK.json", PATTERN),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory, need_gxx):
    d = tmp_path_factory.mktemp("run_options")
    (d / "t.cu").write_text(PROGRAM)
    gmprof("nvcc", "t.cu", "-o", "app", cwd=d)
    return d / "app"


def _run(app, cwd, *args, **variables) -> subprocess.CompletedProcess:
    e = {k: v for k, v in env().items() if k not in run_options.VARIABLES}
    e.update(variables)
    return subprocess.run([str(app), *args], cwd=cwd, env=e, capture_output=True, text=True)


def _line(name, value, expected) -> str:
    return f"gmprof: error: {name}={value}: {expected}"


@pytest.mark.parametrize("name,value,expected", BAD)
def test_a_bad_value_stops_the_program_before_any_kernel(app, tmp_path, name, value, expected):
    variables = {name: value}
    if name != "GMPROF_OUTPUT":
        variables["GMPROF_OUTPUT"] = str(tmp_path / "r.json")
    p = _run(app, tmp_path, **variables)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""  # main never ran (the check is at start-up)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    if expected == REGEX:
        assert lines[0].startswith(_line(name, value, expected)) and lines[0].endswith(")")
    else:
        assert lines[0] == _line(name, value, expected)
    assert list(tmp_path.iterdir()) == []  # no report, no counts file


@pytest.mark.parametrize("name,value,expected", BAD)
def test_gmprof_run_gives_the_same_verdict(name, value, expected):
    """run_options (what gmprof run and gmprof nvcc check) refuses the same values with the
    same words."""
    with pytest.raises(OptionError) as err:
        run_options.check_environ({name: value})
    if expected == REGEX:
        assert err.value.message.startswith(f"{name}={value}: {expected}")
    else:
        assert err.value.message == f"{name}={value}: {expected}"


def test_a_bad_value_the_program_sets_itself_stops_it_at_its_first_launch(app, tmp_path):
    """(read again at the first launch: a program may set them in main)"""
    p = _run(app, tmp_path, "GMPROF_LAUNCH_COUNT", "12x", GMPROF_OUTPUT=str(tmp_path / "r.json"))
    assert p.returncode == 2
    assert p.stdout == "set\n"  # what it printed before is kept
    assert p.stderr == _line("GMPROF_LAUNCH_COUNT", "12x", COUNT_ALL) + "\n"
    assert list(tmp_path.iterdir()) == []
    # launching nothing, it is read at exit (no report either)
    p = _run(app, tmp_path, "GMPROF_SYNC", "yes", "exit")
    assert (p.returncode, p.stdout) == (2, "set\n")
    assert p.stderr == _line("GMPROF_SYNC", "yes", SWITCH) + "\n"
    assert list(tmp_path.iterdir()) == []


# (variables, launches profiled: the program launches add1 once, by hand)
GOOD = [
    ({}, 1),
    ({"GMPROF_LAUNCH_SKIP": "0"}, 1),
    ({"GMPROF_LAUNCH_SKIP": "1"}, 0),  # the one launch skipped
    ({"GMPROF_LAUNCH_SKIP": "007"}, 0),  # 7: leading zeros are decimal, not octal
    ({"GMPROF_LAUNCH_COUNT": "-1"}, 1),  # all (what gmprof run passes by default)
    ({"GMPROF_LAUNCH_COUNT": "0"}, 0),
    ({"GMPROF_LAUNCH_COUNT": "9223372036854775807"}, 1),
    ({"GMPROF_ACCESS_STATS_BLOCKS": "0"}, 1),
    ({"GMPROF_KERNEL": ""}, 1),  # every kernel (gmprof run passes "" without -k)
    ({"GMPROF_KERNEL": "add1"}, 1),
    ({"GMPROF_KERNEL": "regex:^ad"}, 1),
    ({"GMPROF_KERNEL": "other"}, 0),
    ({"GMPROF_SYNC": "1", "GMPROF_GRAPHS": "0"}, 1),
    ({"GMPROF_SYNC": "0", "GMPROF_GRAPHS": "1", "GMPROF_QUIET": "0"}, 1),
    ({"GMPROF_SYNC": "", "GMPROF_GRAPHS": ""}, 1),  # empty: unset, the default
]


@pytest.mark.parametrize("variables,profiled", GOOD)
def test_good_values_run_as_before(app, tmp_path, variables, profiled):
    out = tmp_path / "r-%p.json"
    p = _run(app, tmp_path, GMPROF_OUTPUT=str(out), **variables)
    assert p.returncode == 0, p.stderr
    assert p.stdout == OUT
    assert f"gmprof: {profiled} launch(es) profiled; report written to" in p.stderr
    assert len(list(tmp_path.glob("r-*.json"))) == 1
    run_options.check_environ(variables)  # gmprof run lets them through


def test_quiet(app, tmp_path):
    p = _run(app, tmp_path, GMPROF_OUTPUT=str(tmp_path / "r.json"), GMPROF_QUIET="1")
    assert (p.returncode, p.stdout, p.stderr) == (0, OUT, "")
    assert (tmp_path / "r.json").is_file()


def test_a_pattern_with_escapes(app, tmp_path):
    """%q{ENV} and %% as before: r-7-%.json."""
    p = _run(app, tmp_path, GMPROF_OUTPUT="r-%q{RANK}-%%.json", RANK="7", GMPROF_QUIET="1")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r-7-%.json").is_file()


@pytest.mark.parametrize("args,line", [
    (["-s", "abc"], "argument -s/--launch-skip: abc: " + NON_NEGATIVE),
    (["-c", "-3"], "argument -c/--launch-count: -3: " + COUNT_ALL),
    (["--access-stats-blocks", "12x"], "argument --access-stats-blocks: 12x: " + NON_NEGATIVE),
    (["-k", "regex:("], "argument -k/--kernel-name: regex:(: " + REGEX),
    (["-o", ""], "argument -o/--output: : " + PATTERN),
])
def test_gmprof_run_options_are_usage_errors(tmp_path, args, line):
    (tmp_path / "t.cu").write_text(PROGRAM)
    p = gmprof("run", *args, "t.cu", cwd=tmp_path, check=False)
    assert p.returncode == 2
    assert p.stderr.startswith("gmprof: error: " + line), p.stderr
    assert "Traceback" not in p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["t.cu"]


def test_gmprof_run_refuses_a_variable_it_passes_on_before_building(tmp_path):
    (tmp_path / "t.cu").write_text(PROGRAM)
    p = gmprof("run", "t.cu", cwd=tmp_path, check=False, GMPROF_GRAPHS="off")
    assert (p.returncode, p.stderr) == (2, _line("GMPROF_GRAPHS", "off", SWITCH) + "\n")
    # ... not one it sets itself (its -s wins over the variable)
    assert run_options.check_environ({"GMPROF_LAUNCH_SKIP": "abc"},
                                     skip={"GMPROF_LAUNCH_SKIP"}) is None


@pytest.mark.parametrize("option,value,expected", [
    ("--gmprof-launch-skip", "12x", NON_NEGATIVE),
    ("--gmprof-launch-count", "-3", COUNT_ALL),
    ("--gmprof-kernel", "regex:(", REGEX),
    ("--gmprof-output", "", PATTERN),
])
def test_gmprof_nvcc_refuses_a_bad_selection_to_build_in(tmp_path, option, value, expected):
    (tmp_path / "t.cu").write_text(PROGRAM)
    p = gmprof("nvcc", f"{option}={value}", "t.cu", "-o", "app", cwd=tmp_path, check=False)
    assert p.returncode == 2
    assert p.stderr.startswith(_line(option, value, expected)), p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["t.cu"]


@pytest.mark.parametrize("name,value,line", [
    ("GMPROF_THRESHOLD", "abc", "GMPROF_THRESHOLD=abc: expected an integer"),
    ("GMPROF_SAMPLING", "x", "GMPROF_SAMPLING=x: expected a number"),
])
def test_gmprof_nvcc_names_a_bad_build_variable(tmp_path, name, value, line):
    """(it said `a GMPROF_* variable has a bad value: invalid literal for int()...`)"""
    (tmp_path / "t.cu").write_text(PROGRAM)
    p = gmprof("nvcc", "t.cu", "-o", "app", cwd=tmp_path, check=False, **{name: value})
    assert (p.returncode, p.stderr) == (2, f"gmprof: error: {line}\n")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["t.cu"]
