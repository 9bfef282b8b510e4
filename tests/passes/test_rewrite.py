"""The rewriter: instrumented code compiles with nvcc for every sample and test kernel in every
mode the CLI accepts; untouched code comes out byte for byte; golden files for small kernels
(regenerate on purpose with GMPROF_REGEN_GOLDEN=1)."""
from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gmprof.driver import load_sample
from gmprof.mode import Mode
from gmprof.passes.pipeline import Pipeline
from gmprof.passes.targets import NVCC

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"

VARIANTS = {
    "default": dict(mode="default"),
    "basic": dict(mode="basic"),
    "SA-NA-SM-TH-8bit": dict(mode="SA-NA-SM-TH", threshold=255, counter_bits=8),
    "trace": dict(mode="trace"),
    "enhanced-16bit": dict(mode="SA-SM-TH", threshold=4000, counter_bits=16, enhanced=True),
    "sampling-paper-NA": dict(mode="NA-SM", sampling=0.01, sampler="paper"),
    "dm-basic-NA": dict(mode="NA", profile="dm"),
    "shm-SA": dict(mode="SA", profile="shm"),
}


def cuda_sources():
    out = []
    for d in sorted((ROOT / "samples").iterdir()):
        if (d / "driver.py").is_file():
            s = load_sample(d)
            defines = {k: (None if v is None else str(v)) for k, v in s.driver.defines.items()}
            out.append((f"samples/{d.name}", s.source_path, defines, [d]))
    for f in sorted((ROOT / "tests" / "passes" / "kernels").glob("*.cu")) + \
            sorted((ROOT / "tests" / "frontend" / "zoo").glob("*.cu")):
        if f.name == "conditional.cu":
            continue  # has a deliberately broken #else branch
        out.append((str(f.relative_to(ROOT)), f, {}, [f.parent]))
    return out


def instrumented(path, defines, includes, variant, header=True):
    kw = dict(VARIANTS[variant])
    mode = Mode.parse(kw.pop("mode"), **kw)
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(path, defines=defines, include_dirs=includes))
    plan = pipeline.plan(program, mode)
    done = pipeline.instrument(plan)
    return pipeline.emit(program, done, NVCC, header=header), program


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("name,path,defines,includes", cuda_sources(),
                         ids=[s[0] for s in cuda_sources()])
def test_instrumented_code_compiles_with_nvcc(name, path, defines, includes, variant, tmp_path):
    text, _ = instrumented(path, defines, includes, variant)
    src = tmp_path / "inst.cu"
    src.write_text(text)
    cmd = ["nvcc", "-cubin", "-arch=sm_90", "-std=c++17", "-o", str(tmp_path / "inst.cubin"),
           str(src)] + [f"-I{d}" for d in includes] + \
        [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in defines.items()]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{name} [{variant}] does not compile:\n{r.stderr[:3000]}"


def test_unpatched_code_is_reproduced_byte_for_byte():
    path = ROOT / "tests" / "passes" / "kernels" / "paper.cu"
    pipeline = Pipeline()
    program = pipeline.analyze(pipeline.load(path))
    text = pipeline.emit(program, None, NVCC, header=False)
    assert text == path.read_text()


def test_line_numbers_survive_instrumentation():
    path = ROOT / "tests" / "passes" / "kernels" / "paper.cu"
    text, _ = instrumented(path, {}, [path.parent], "basic", header=False)
    original = path.read_text().splitlines()
    lines = text.splitlines()
    assert len(lines) == len(original)
    for old, new in zip(original, lines):
        # gmprof only inserts: every original line survives, in order, in its new line
        it = iter(new)
        assert all(ch in it for ch in old), (old, new)


def golden_cases():
    return sorted(p for p in GOLDEN.iterdir() if (p / "input.cu").is_file())


@pytest.mark.parametrize("case", golden_cases(), ids=lambda p: p.name)
def test_golden(case):
    variant = (case / "variant.txt").read_text().strip() if (case / "variant.txt").exists() \
        else "default"
    text, _ = instrumented(case / "input.cu", {}, [case], variant, header=False)
    expected_path = case / "expected.cu"
    # golden files are made on purpose (GMPROF_REGEN_GOLDEN=1), never because one is missing
    if os.environ.get("GMPROF_REGEN_GOLDEN"):
        expected_path.write_text(text)
    if not expected_path.exists():
        pytest.fail(f"{expected_path} is missing: write it on purpose with "
                    "GMPROF_REGEN_GOLDEN=1 and check it by hand")
    expected = expected_path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            "expected.cu", "got.cu"))
        pytest.fail(f"golden mismatch for {case.name}:\n{diff}")
