"""The command line on bad input: a table of cases run through `gmprof.cli.main([...])`, a few
through a real process. Each case: no traceback, the exit status (2 usage, 1 failed check,
0 otherwise), a located `file:line:col: error:` where the error concerns the source, and no
file created, changed or deleted when the command fails (the directory is snapshot before and
after)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gmprof.cli import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
KERNELS = HERE / "kernels.cu"
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.M)

SAXPY = ["--kernel", "saxpy", "--grid", "4", "--block", "64", "--arg", "y=float32[256]:random",
         "--arg", "x=float32[256]:random", "--arg", "a=2", "--arg", "n=256", "--backend", "cpu"]


def marker_line(name: str, path: Path = KERNELS) -> int:
    for k, text in enumerate(path.read_text().splitlines(), 1):
        if f"// LINE: {name}" in text:
            return k
    raise AssertionError(name)


def snapshot(d: Path) -> dict:
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            st = p.lstat()
            out[str(p.relative_to(d))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
                                          p.read_bytes() if p.is_file() else None)
    return out


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory holding the kernels, an existing output, a directory and a header; the
    commands run in it."""
    shutil.copy(KERNELS, tmp_path / "k.cu")
    shutil.copy(HERE / "broken.cu", tmp_path / "broken.cu")
    (tmp_path / "loop.cu").write_text('#include "loop.cu"\n')  # includes itself
    (tmp_path / "out.cu").write_text("keep me\n")
    (tmp_path / "taken.cu.json").mkdir()
    (tmp_path / "taken.cu").write_text("keep me too\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "inc.cuh").write_text("#define N 4\n")
    (tmp_path / "uses.cu").write_text('#include "inc.cuh"\n__global__ void k(int *o) '
                                      "{ o[threadIdx.x] = N; }\n")
    (tmp_path / "binary.cu").write_bytes(bytes(range(256)) * 4)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out, err
    return rc, out, err


# (argv, exit status, located?) for commands that must fail and leave the directory alone
USAGE = [
    (["instrument", "k.cu", "-o", "k.cu"], False),
    (["instrument", "k.cu", "-o", ""], False),
    (["instrument", "k.cu", "-o", "adir"], False),
    (["instrument", "k.cu", "-o", "missing/x.cu"], False),
    (["instrument", "k.cu", "-o", "taken.cu"], False),  # its sidecar is a directory
    (["instrument", "k.cu", "-o", "/dev/full"], False),
    (["instrument", "k.cu", "-o", "/proc/gmprof.cu"], False),
    (["instrument", "k.cu", "-o", "/sys/gmprof.cu"], False),
    (["instrument", "uses.cu", "-o", "inc.cuh"], False),  # an included header is an input
    (["instrument", "loop.cu", "-o", "new.cu"], True),
    (["instrument", "broken.cu", "-o", "new.cu", "--kernel", "broken"], True),
    (["instrument", "k.cu", "-o", "new.cu", "--mode", "XX"], False),
    (["instrument", "k.cu", "-o", "new.cu", "--threshold", "0"], False),
    (["instrument", "k.cu", "-o", "new.cu", "--sampling", "2"], False),
    (["analyze", "loop.cu"], True),
    (["analyze", "broken.cu", "--kernel", "broken"], True),
    (["analyze", "k.cu", "--kernel", "nope"], False),
    (["parse", "missing.cu"], False),
    (["parse", "adir"], False),
    (["parse", "binary.cu"], True),
    (["instrument", "binary.cu", "-o", "new.cu"], True),
    (["parse", "k.cu", "-D", "1X"], False),
    (["parse", "k.cu", "-I", "nowhere"], False),
    (["profile", "k.cu"], False),
    (["profile", "broken.cu", "--kernel", "broken", "--grid", "1", "--block", "1", "--arg",
      "out=int32[1]", "--backend", "cpu"], True),
    (["profile", "k.cu", *SAXPY[:-4], "--kernel", "nope", "--backend", "cpu"], False),
    (["profile", "k.cu", *SAXPY, "--repeat", "-1"], False),
    (["profile", "k.cu", *SAXPY, "--seed", "-1"], False),
    (["profile", "k.cu", *SAXPY, "--grid", "0"], False),
    (["profile", "k.cu", *SAXPY, "--grid", "4294967296"], False),
    (["profile", "k.cu", *SAXPY, "--grid", "1,65536"], False),
    (["profile", "k.cu", *SAXPY, "--block", "2048"], False),
    (["profile", "k.cu", *SAXPY, "--block", "1,1,65"], False),
    (["profile", "k.cu", *SAXPY, "--shared-mem", "-1"], False),
    (["profile", "k.cu", *SAXPY, "--timeout", "-1"], False),
    (["profile", "k.cu", *SAXPY, "--timeout", "nan"], False),
    (["profile", "k.cu", *SAXPY, "--error-exitcode", "300"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "n=99999999999999999999"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "n=1.5"], False),
    (["profile", "k.cu", *SAXPY[:-6], "--arg", "n=256", "--backend", "cpu"], False),  # no a
    (["profile", "k.cu", *SAXPY, "--arg", "bogus"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "q=1"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=float32[100000000000]"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=object[4]"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=float32[]"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=missing.npy"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=float32[256]:fill=x"], False),
    (["profile", "k.cu", *SAXPY, "--arg", "y=float64[256]"], False),
    (["profile", "k.cu", *SAXPY, "--csv", "adir"], False),
    (["profile", "k.cu", *SAXPY, "--csv", "k.cu"], False),
    (["profile", "k.cu", *SAXPY, "--out", "missing/r.html"], False),
    (["profile", "k.cu", *SAXPY, "--csv", "/dev/full"], False),  # written in place: ENOSPC
    (["profile", "k.cu", *SAXPY, "--csv", "same.txt", "--out", "same.txt"], False),
    (["compare", "k.cu", *SAXPY, "--sampling", "a,b"], False),
    (["compare", "k.cu", *SAXPY, "--sampling", "0.1,,0.2"], False),
    (["compare", "k.cu", *SAXPY, "--sampling", "0"], False),
]


@pytest.mark.parametrize("argv,located", USAGE, ids=[" ".join(a[:4]) + f" #{i}" for i, (a, _)
                                                      in enumerate(USAGE)])
def test_usage_errors(work, capsys, argv, located):
    before = snapshot(work)
    rc, out, err = run(argv, capsys)
    assert rc == 2, err
    assert "error" in err
    if located:
        assert LOCATED.search(err), err
    assert snapshot(work) == before


def test_the_unparsed_kernel_is_named_as_unparsed(work, capsys):
    rc, _, err = run(["analyze", "broken.cu", "--kernel", "broken"], capsys)
    line = marker_line("broken", HERE / "broken.cu")
    assert rc == 2 and f"broken.cu:{line}:" in err and "did not parse" in err
    rc, _, err = run(["analyze", "broken.cu", "--kernel", "nope"], capsys)
    assert "did not parse: broken" in err and "kernels: " in err


# -- failed checks: status 1 (or --error-exitcode), located, the directory left alone --------

def test_out_of_range_writes_fail_the_check(work, capsys):
    before = snapshot(work)
    argv = ["profile", "k.cu", "--kernel", "overrun", "--grid", "2", "--block", "64", "--arg",
            "y=float32[100]", "--arg", "n=100", "--backend", "cpu"]
    rc, _, err = run(argv, capsys)
    assert rc == 1
    assert f"k.cu:{marker_line('overrun')}:" in err and "outside the array 'y'" in err
    assert "bytes 400 to 511" in err  # the native run's red zone
    assert snapshot(work) == before
    rc, _, _ = run(argv + ["--error-exitcode", "0"], capsys)
    assert rc == 0
    rc, _, _ = run(argv + ["--error-exitcode", "7"], capsys)
    assert rc == 7


def test_a_write_far_past_the_end_faults_at_its_line(work, capsys):
    rc, _, err = run(["profile", "k.cu", "--kernel", "overrun", "--grid", "64", "--block", "64",
                      "--arg", "y=float32[100]", "--arg", "n=100", "--backend", "cpu"], capsys)
    assert rc == 1 and f"k.cu:{marker_line('overrun')}:" in err
    assert "invalid memory access" in err


def test_a_kernel_that_never_ends_times_out(work, capsys):
    t0 = time.monotonic()
    rc, _, err = run(["profile", "k.cu", "--kernel", "spin", "--grid", "1", "--block", "32",
                      "--arg", "out=int32[32]", "--backend", "cpu", "--timeout", "0.5"], capsys)
    assert rc == 1 and "kernel `spin`" in err and "did not finish within 0.5 s" in err
    assert f"k.cu:{marker_line('spin')}:" in err
    assert time.monotonic() - t0 < 60


def test_a_stack_overflow_is_located_in_the_source(work, capsys):
    rc, _, err = run(["profile", "k.cu", "--kernel", "deep", "--grid", "1", "--block", "32",
                      "--arg", "out=int32[32]", "--arg", "n=100000", "--backend", "cpu"], capsys)
    assert rc == 1 and "stack overflow" in err
    m = LOCATED.search(err)
    assert m and m.group(0).startswith("k.cu:"), err  # the user's file, not a temporary


def test_divergent_barriers_are_shown(work, capsys):
    rc, _, err = run(["profile", "k.cu", "--kernel", "diverge", "--grid", "1", "--block", "32",
                      "--arg", "out=int32[32]", "--backend", "cpu"], capsys)
    assert rc == 0 and "warning:" in err and "different __syncthreads()" in err
    assert f"k.cu:{marker_line('diverge-a')}" in err and f"k.cu:{marker_line('diverge-b')}" in err


def test_outputs_that_differ_fail_the_check(work, capsys):
    rc, _, err = run(["profile", "k.cu", "--kernel", "stamp", "--grid", "1", "--block", "32",
                      "--arg", "out=int64[32]", "--backend", "cpu"], capsys)
    assert rc == 1 and "outputs differ" in err


# -- success: what is written, and how --------------------------------------------------------

def test_csv_dash_is_standard_output(work, capsys):
    before = snapshot(work)
    rc, out, _ = run(["profile", "k.cu", *SAXPY, "--csv", "-"], capsys)
    assert rc == 0 and "array,space,elem_type" in out
    assert snapshot(work) == before  # no file named '-'


def test_outputs_respect_the_umask(work, capsys):
    old = os.umask(0o027)
    try:
        rc, _, _ = run(["instrument", "k.cu", "-o", "inst.cu"], capsys)
    finally:
        os.umask(old)
    assert rc == 0
    for name in ("inst.cu", "inst.cu.json"):
        assert stat.S_IMODE((work / name).stat().st_mode) == 0o640


# -- real processes ---------------------------------------------------------------------------

def process_env(**extra) -> dict:
    """This checkout first on the path (the `gmprof` script may be another copy)."""
    return dict(os.environ, **extra,
                PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def gmprof(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "gmprof.cli", *args], capture_output=True,
                          text=True, env=env or process_env(), timeout=300, **kw)


@pytest.mark.parametrize("args,status", [
    (["instrument", "k.cu", "-o", "k.cu"], 2),
    (["profile", "k.cu", *SAXPY, "--repeat", "-1"], 2),
    (["profile", "k.cu", "--kernel", "overrun", "--grid", "2", "--block", "64", "--arg",
      "y=float32[100]", "--arg", "n=100", "--backend", "cpu"], 1),
    (["profile", "k.cu", *SAXPY], 0),
])
def test_exit_statuses_of_a_process(work, args, status):
    before = snapshot(work)
    p = gmprof(*args, cwd=work)
    assert p.returncode == status, p.stderr
    assert "Traceback" not in p.stderr
    assert snapshot(work) == before


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_background_job_stops_cleanly(work, tmp_path_factory, sig, status):
    """A kernel that never ends, with no time limit, in a process of its own: SIGTERM (or
    SIGINT) ends it with 128 + the signal, no traceback, and no temporary left behind."""
    cache = tmp_path_factory.mktemp("cache")
    env = process_env(GMPROF_CACHE_DIR=str(cache))
    args = ["profile", "k.cu", "--kernel", "spin", "--grid", "1", "--block", "32", "--arg",
            "out=int32[32]", "--backend", "cpu"]
    warm = gmprof(*args, "--timeout", "0.2", cwd=work, env=env)
    assert warm.returncode == 1  # compiled, and timed out
    p = subprocess.Popen([sys.executable, "-m", "gmprof.cli", *args, "--timeout", "0"],
                         cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(6)  # imports, parsing, a cached module, then the launch spins
    assert p.poll() is None
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == status, err
    assert "Traceback" not in err
    assert not [n for n in os.listdir(cache) if n.startswith("tmp-")]
