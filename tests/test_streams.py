"""A reader that closes the pipe early (`gmprof profile S -o run.json | head -1`) changes
nothing but what it reads: the files asked for are written, the exit status is the command's
own (0 here), and nothing is printed about the pipe (no traceback, no "Exception ignored").
Each command runs in a subprocess whose standard output (and, in one case, standard error) is
a pipe closed before gmprof writes to it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_closed(args, cwd, close_stderr=False):
    """Run `python -m gmprof ARGS` with stdout (and stderr) a pipe whose reader has gone."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r_out, w_out = os.pipe()
    os.close(r_out)  # the reader is gone before gmprof starts
    if close_stderr:
        stderr = w_out
    else:
        stderr = subprocess.PIPE
    proc = subprocess.Popen([sys.executable, "-m", "gmprof", *args], cwd=cwd, env=env,
                            stdout=w_out, stderr=stderr, stdin=subprocess.DEVNULL)
    os.close(w_out)
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait(timeout=120)
    return proc.returncode, err


def assert_quiet(err):
    for word in ("Traceback", "Exception ignored", "BrokenPipe", "Broken pipe", "bug in gmprof"):
        assert word not in err, err


def test_profile_writes_every_file_when_stdout_is_closed(tmp_path):
    status, err = run_closed(["profile", str(ROOT / "samples/matmul_tiled"), "-o", "run.json",
                              "--csv", "x.csv", "--out", "r.html"], tmp_path)
    assert status == 0, err
    assert_quiet(err)
    assert json.loads((tmp_path / "run.json").read_text())["schema"] == "gmprof.run/2"
    assert (tmp_path / "x.csv").read_text().startswith("kernel,array,")
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")


@pytest.fixture
def saved_run(tmp_path):
    from tests.report.test_report_cli import make
    from gmprof.report.document import document, dumps

    (tmp_path / "run.json").write_text(dumps(document([make()], command=["profile", "x"])))
    return tmp_path


@pytest.mark.parametrize("close_stderr", [False, True])
def test_report_writes_its_files_when_the_reader_has_gone(saved_run, close_stderr):
    status, err = run_closed(["report", "run.json", "--source", "--csv", "r.csv",
                              "--html", "r.html"], saved_run, close_stderr=close_stderr)
    assert status == 0
    assert_quiet(err)
    assert (saved_run / "r.csv").read_text().startswith("kernel,array,")
    assert (saved_run / "r.html").read_text().startswith("<!doctype html>")


def test_stdout_document_to_a_closed_pipe_still_writes_the_other_files(saved_run):
    status, err = run_closed(["report", "run.json", "--json", "--csv", "r.csv"], saved_run)
    assert (status, err) == (0, "")
    assert (saved_run / "r.csv").is_file()


def test_instrument_and_help_to_a_closed_pipe(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    status, err = run_closed(["instrument", str(src), "-o", "out.cu"], tmp_path,
                             close_stderr=True)
    assert status == 0
    assert (tmp_path / "out.cu").is_file() and (tmp_path / "out.cu.json").is_file()
    assert run_closed(["--help"], tmp_path) == (0, "")
    assert run_closed(["parse", str(src)], tmp_path) == (0, "")


PRINTING = """#include <cstdio>
__global__ void k(float *a) {
  printf("hello from thread %d\\n", (int)threadIdx.x);
  a[threadIdx.x] += 1.0f;
}
"""


@pytest.mark.parametrize("document", [["--json"], ["--csv", "-"], ["--out", "-"]])
def test_a_document_on_stdout_is_not_mixed_with_kernel_printf(document, tmp_path, capfd):
    from gmprof.cli import main

    src = tmp_path / "k.cu"
    src.write_text(PRINTING)
    capfd.readouterr()
    assert main(["profile", str(src), "--kernel", "k", "--grid", "1", "--block", "2",
                 "--arg", "a=float32[2]:zeros", "--backend", "cpu", *document]) == 0
    out, err = capfd.readouterr()
    assert "hello from thread 0\n" not in out  # (the source, in the document, has the format)
    # the kernel's lines, on standard error (at least once: the native run prints them too)
    assert "hello from thread 0\n" in err and "hello from thread 1\n" in err
    if document == ["--json"]:
        a = json.loads(out)["kernels"][0]["arrays"][0]
        assert (a["reads"], a["writes"]) == (2, 2)  # a[tid] += 1 in 2 threads
    elif document == ["--csv", "-"]:
        assert out.startswith("kernel,array,")
    else:
        assert out.startswith("<!doctype html>")


def test_without_a_document_kernel_printf_stays_on_stdout(tmp_path, capfd):
    from gmprof.cli import main

    src = tmp_path / "k.cu"
    src.write_text(PRINTING)
    capfd.readouterr()
    assert main(["profile", str(src), "--kernel", "k", "--grid", "1", "--block", "2",
                 "--arg", "a=float32[2]:zeros", "--backend", "cpu"]) == 0
    out, err = capfd.readouterr()
    assert "hello from thread 0\n" in out and "hello" not in err
