"""Errors are matched by kind, not text (docs/errors.md): one case per kind that the loader, the
options, the sample runner and the launch make, through the API and the command line. Each
case is bad input written by hand; the kind is the one docs/errors.md gives for it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gmprof.driver import load_sample
from gmprof.errors import EXIT_USAGE, GmprofError
from gmprof.frontend.program import load
from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.runtime.launchenv import split_name_expression
from gmprof.runtime.samples import run_sample
from gmprof.runtime.session import Profiler

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "__global__ void k(int *a) { a[threadIdx.x] = 1; }\n"


def kind_of(call) -> str:
    with pytest.raises(GmprofError) as info:
        call()
    return info.value.kind


@pytest.mark.parametrize("text,kind", [
    ("#error stop\n" + KERNEL, "preprocess"),
    ("#else\n#endif\n" + KERNEL, "preprocess"),
    ("#if 1\n" + KERNEL, "preprocess"),
    ("#if N(\n#endif\n" + KERNEL, "preprocess"),
    (KERNEL + "/* never closed\n", "syntax"),
])
def test_source_errors(text, kind):
    assert kind_of(lambda: load(text=text, name="t.cu")) == kind


def test_a_function_that_does_not_parse_keeps_a_syntax_error():
    tu = load(text="__global__ void k(int *a) { a[0] = = 1; }\n", name="t.cu")
    (w,) = tu.warnings
    assert w.kind == "unparsed-function"
    assert tu.kernels[0].error.kind == "syntax"


def test_files_and_options_of_the_loader(tmp_path):
    assert kind_of(lambda: load(tmp_path / "missing.cu")) == "input"
    assert kind_of(lambda: load(tmp_path)) == "input"
    assert kind_of(lambda: load(text=KERNEL, name="t.cu", include_dirs=[tmp_path / "no"])) \
        == "bad-option"
    assert kind_of(lambda: load(text=KERNEL, name="t.cu", arch="sm_9")) == "bad-option"
    assert kind_of(lambda: load(text=KERNEL, name="t.cu", defines={"1X": "2"})) == "bad-option"


@pytest.mark.parametrize("text,options", [
    ("bogus", {}), ("default", {"counter_bits": 12}), ("default", {"sampling": 0.0}),
    ("TH", {"threshold": 0}), ("default", {"counter_bits": 8}),
])
def test_modes(text, options):
    assert kind_of(lambda: Mode.parse(text, **options)) == "bad-option"


def test_kernel_name_expressions():
    assert kind_of(lambda: split_name_expression("k<int")) == "bad-kernel-name"
    prof = Profiler(text="template <int N> __global__ void k(int *a) { a[threadIdx.x] = N; }\n",
                    name="t.cu", backend="cpu")
    a = np.zeros(4, np.int32)
    assert kind_of(lambda: prof.launch("k", 1, 4, [a])) == "bad-kernel-name"
    assert kind_of(lambda: prof.launch("k<1, 2>", 1, 4, [a])) == "bad-kernel-name"
    assert kind_of(lambda: prof.launch("nope", 1, 4, [a])) == "no-kernel"


def test_too_many_objects():
    params = ", ".join(f"int *a{i}" for i in range(65))
    body = " ".join(f"a{i}[threadIdx.x] = {i};" for i in range(65))
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(text=f"__global__ void k({params}) {{ {body} }}\n",
                                             name="t.cu"))
    assert kind_of(lambda: pipeline.plan(program, Mode.parse("basic"))) == "too-many-objects"


def test_samples(tmp_path):
    assert kind_of(lambda: load_sample(tmp_path)) == "input"
    (tmp_path / "driver.py").write_text("X = 1\n")
    assert kind_of(lambda: load_sample(tmp_path)) == "input"
    assert kind_of(lambda: run_sample(str(ROOT / "samples" / "matmul_tiled"), "enormous",
                                      backend="cpu")) == "bad-option"


def test_the_command_line_exits_2_with_one_located_line(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("#error stop here\n" + KERNEL)
    run = subprocess.run([sys.executable, "-m", "gmprof.cli", "analyze", str(bad)],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == EXIT_USAGE
    assert run.stderr.startswith(f"{bad}:1:1: error: ")
    assert "Traceback" not in run.stderr
