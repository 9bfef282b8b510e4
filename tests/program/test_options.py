"""gmprof nvcc and gmprof run read their options: gmprof's own with argparse, nvcc's with nvcc's
option table (gmprof/program/nvcc_table.py); one that neither knows is a usage error (status 2)
with the nearest spellings, never handed to the compiler to be dropped."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import env, gmprof

from gmprof.errors import OptionError
from gmprof.program import nvcc_table
from gmprof.program.nvcc_args import parse

KERNEL = "__global__ void k(int *a) { a[threadIdx.x] = 1; }\n"
PROGRAM = r"""#include <cstdio>
__global__ void k(int *a) { a[threadIdx.x] = 1; }
int main() {
  int *a; cudaMalloc(&a, 32 * sizeof(int));
  k<<<1, 32>>>(a);
  cudaDeviceSynchronize();
  printf("ok\n");
  return 0;
}
"""


def test_nvcc_refuses_unknown_options(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    for args, text in ((["--bogus-flag", "-c", "k.cu"], "unknown option --bogus-flag"),
                       (["--use-fast-math", "-c", "k.cu"],
                        "unknown option --use-fast-math (did you mean --use_fast_math"),
                       (["-Wall", "-c", "k.cu"], "unknown option -Wall"),
                       (["--gmprof-mod", "basic", "-c", "k.cu"],
                        "unknown option --gmprof-mod (did you mean --gmprof-mode?)"),
                       (["-c", "k.cu", "-o"], "-o needs a value")):
        p = gmprof("nvcc", *args, cwd=tmp_path, check=False)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.startswith("gmprof: error: " + text), (args, p.stderr)
        assert "Traceback" not in p.stderr
    assert not (tmp_path / "k.o").exists()


def test_nvcc_help_and_no_arguments(tmp_path):
    for args in (["--help"], ["-h"], ["-c", "k.cu", "--help"]):
        p = gmprof("nvcc", *args, cwd=tmp_path)
        assert p.stdout.startswith("usage: gmprof nvcc") and "--gmprof-mode" in p.stdout
    # gmprof-nvcc, the one-program form, is the same command
    p = subprocess.run([sys.executable, "-c", "import sys; from gmprof.cli import nvcc_main; "
                        "sys.argv = ['gmprof-nvcc', '--help']; sys.exit(nvcc_main())"],
                       env=env(), capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("usage: gmprof nvcc"), p.stderr
    p = gmprof("nvcc", cwd=tmp_path, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == "gmprof: error: no input files (gmprof nvcc --help shows the usage)"


def test_nvcc_options_read_as_nvcc_reads_them():
    c = parse(["-O3", "-Iinc", "-I", "more", "-DX=1", "-D", "Y", "-arch=sm_80", "-std=c++17",
               "-Xcompiler", "-fopenmp", "-MF", "deps.d", "-lm", "-o=app", "-gencode",
               "arch=compute_80,code=sm_80", "main.cu", "util.cpp", "lib.o"])
    assert c.include_dirs == ["inc", "more"] and c.defines == {"X": "1", "Y": None}
    assert c.output == "app" and not c.compile_only and not c.other_step
    assert [c.args[i] for i in c.sources] == ["main.cu"]
    assert [c.args[i] for i in c.host_sources] == ["util.cpp"]
    assert [c.args[i] for i in c.inputs] == ["main.cu", "util.cpp", "lib.o"]
    assert ("--optimize", "3") in [(o.name, o.value) for o in c.options]
    # nvcc glues a value to its one-letter options only (it refuses `-ok.o`, `-xcu`)
    for bad in ("-ok.o", "-xcu", "-archsm_80", "-fPIC", "-pthread"):
        with pytest.raises(OptionError, match="unknown option"):
            parse([bad, "k.cu"])


def test_forwarded_options():
    """With -forward-unknown-to-host-compiler (CMake passes it), nvcc hands the options it does
    not know to the host compiler instead of refusing them; so does the CPU backend (to g++)."""
    from gmprof.program.cpu_build import host_flags

    c = parse(["-forward-unknown-to-host-compiler", "-Wall", "-fPIC", "-c", "k.cu"])
    comp, link, _ = host_flags(c)
    assert comp[-2:] == ["-Wall", "-fPIC"] and link == []
    c = parse(["--forward-unknown-opts", "-fopenmp", "k.cu"])
    comp, link, _ = host_flags(c)
    assert comp[-1] == "-fopenmp" and link == ["-fopenmp"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_table_is_nvcc_help():
    text = subprocess.run(["nvcc", "--help"], capture_output=True, text=True).stdout
    rows = nvcc_table._rows_from_help(text)
    version = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    if "release 13.0" not in version:
        pytest.skip("the table is nvcc 13.0's")
    assert rows == list(nvcc_table.OPTIONS)


def test_fallback_warning_names_the_file(tmp_path):
    """A translation the real nvcc does not compile is compiled as it was, with a warning that
    names the file (not its index among the arguments). A stand-in nvcc fails on gmprof's
    translation and compiles the user's file."""
    (tmp_path / "k.cu").write_text(KERNEL)
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in */gmprof-nvcc-*) "
                    "echo 'x.cu(1): error: no' >&2; exit 1;; esac; done\n"
                    "for a in \"$@\"; do if [ \"$prev\" = -o ]; then : > \"$a\"; fi; prev=$a; "
                    "done\nexit 0\n")
    fake.chmod(0o755)
    p = gmprof("nvcc", "--gmprof-backend", "gpu", "-c", "k.cu", "-o", "k.o", cwd=tmp_path,
               GMPROF_NVCC=fake)
    assert "the instrumented build of k.cu does not compile" in p.stderr, p.stderr
    assert (tmp_path / "k.o").exists()


def test_run_refuses_unknown_options(tmp_path):
    (tmp_path / "p.cu").write_text(PROGRAM)
    for args, text in ((["--bogus", "p.cu"], "unknown option --bogus"),
                       (["--sorce", "p.cu"], "unknown option --sorce (did you mean --source"),
                       (["--error-exitcode", "x", "p.cu"], "--error-exitcode"),
                       (["--csv"], "expected one argument")):
        p = gmprof("run", *args, cwd=tmp_path, check=False)
        assert p.returncode == 2 and text in p.stderr and "Traceback" not in p.stderr, \
            (args, p.stderr)


def test_run_writes_what_it_is_asked_for(tmp_path, need_gxx):
    (tmp_path / "p.cu").write_text(PROGRAM)
    p = gmprof("run", "--csv", "t.csv", "--source", "-O2", "p.cu", "--", cwd=tmp_path)
    assert "ok" in p.stdout
    # --source: the kernel's line with its count (32 threads write a[threadIdx.x] once each)
    line = next(ln for ln in p.stdout.splitlines() if "__global__ void k(int" in ln)
    assert line.split()[:4] == ["2", "0", "32", "32"], line
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert rows[0].startswith("kernel,array") and rows[1].startswith("k,a,")
