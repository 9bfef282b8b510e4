"""The pipeline is one list, run in order by one runner: stages named, dumps after a named stage,
unknown names refused with the list, internal errors naming their stage, and no caller that
plans, instruments or emits around it."""
from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

from gmprof.cli import main
from gmprof.errors import OptionError
from gmprof.mode import Mode
from gmprof.passes import pipeline as P
from gmprof.passes.targets import CPU, NVCC

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "tests" / "passes" / "kernels" / "paper.cu"


def test_the_stages_in_order():
    assert P.STAGES == ("load", "names", "objects", "accesses", "loops", "dataflow", "guards",
                        "values", "classify", "liveranges", "plan", "instrument", "emit")
    assert P.ANALYSIS_STAGES == P.STAGES[:10]


def test_analyze_stops_after_the_named_pass():
    pipeline = P.Pipeline()
    tu = pipeline.load(PAPER)
    program = pipeline.analyze(tu, upto="accesses")
    assert program.sites and all(f.loops is None for f in program.functions)
    assert program.kernels is None
    program = pipeline.analyze(tu)
    assert set(program.kernels) == {"transpose", "coclustering", "matmul_tiled", "jacobi_tile"}
    assert all(f.guards is not None for f in program.functions)
    assert program.values is not None


@pytest.mark.parametrize("stage", P.STAGES)
def test_dump_after_each_stage(stage):
    out = io.StringIO()
    pipeline = P.Pipeline(dump_after=stage, out=out)
    program = pipeline.analyze(pipeline.load(PAPER))
    plan = pipeline.plan(program, Mode())
    text, _ = pipeline.instrumented_source(program, plan, NVCC)
    dumped = out.getvalue()
    assert dumped.startswith(f"=== after {stage} ===\n")
    assert dumped.count("=== after") == 1
    body = dumped.split("\n", 1)[1]
    if stage == "emit":
        assert body.rstrip("\n") == text.rstrip("\n")
    elif stage == "loops":
        # paper.cu's RClusterCnt has three loops over r, rc and c
        loops = [line for line in body.splitlines() if line.startswith("RClusterCnt")]
        assert [line.split("loop ")[1].split(" at")[0] for line in loops] == \
            ["'for r'", "'for rc'", "'for c'"]
    else:
        assert body.strip()


def test_unknown_stage_is_refused_with_the_names():
    with pytest.raises(OptionError) as e:
        P.Pipeline(dump_after="bogus")
    assert e.value.kind == "bad-option"
    assert all(name in e.value.message for name in P.STAGES)


def test_cli_dump_after(capsys):
    assert main(["analyze", str(PAPER), "--json", "--dump-after", "classify"]) == 0
    out, err = capsys.readouterr()
    json.loads(out)  # the command's own output is untouched
    assert err.startswith("=== after classify ===\n")
    assert "transpose  site 0 shared_data[threadIdx.y][threadIdx.x]  static" in err


def test_cli_unknown_dump_after_is_a_usage_error(capsys, tmp_path):
    out_file = tmp_path / "x.cu"
    assert main(["instrument", str(PAPER), "-o", str(out_file), "--dump-after", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--dump-after" in err and "emit" in err and "liveranges" in err
    assert not out_file.exists()
    # analyze has no plan, instrument or emit stage to dump after
    assert main(["analyze", str(PAPER), "--dump-after", "plan"]) == 2


def test_an_internal_error_names_its_pass(monkeypatch):
    def broken(program):
        raise KeyError("boom")

    monkeypatch.setattr(P, "ANALYSES", P.ANALYSES[:3] + (P.Pass("loops", broken),))
    pipeline = P.Pipeline()
    with pytest.raises(P.PassError, match="internal error in pass 'loops': KeyError"):
        pipeline.analyze(pipeline.load(PAPER))


def test_cpu_target_rewrites_extern_shared_only_on_the_cpu(tmp_path):
    src = tmp_path / "dyn.cu"
    src.write_text("__global__ void k(float *a) {\n  extern __shared__ float s[];\n"
                   "  s[threadIdx.x] = a[threadIdx.x];\n  __syncthreads();\n"
                   "  a[threadIdx.x] = s[0];\n}\n")
    pipeline = P.Pipeline()
    program = pipeline.analyze(pipeline.load(src))
    native_gpu = pipeline.emit(program, None, NVCC, header=False)
    native_cpu = pipeline.emit(program, None, CPU, header=False)
    assert native_gpu == src.read_text()
    assert "GMPROF_DYNAMIC_SHARED(float, s);" in native_cpu
    assert native_cpu.count("\n") == native_gpu.count("\n")


def _calls_outside_pipeline(name: str) -> list[str]:
    """Modules other than the pipeline that import `name` from the planner or rewriter."""
    found = []
    for path in list((ROOT / "gmprof").rglob("*.py")) + list((ROOT / "passes").rglob("*.py")) \
            + list((ROOT / "tests").rglob("*.py")) + list((ROOT / "bench").rglob("*.py")):
        if path.name == "pipeline.py" or path.relative_to(ROOT).parts[:2] == ("gmprof", "passes"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(
                    ("plan", "rewrite")) and any(a.name == name for a in node.names):
                found.append(str(path.relative_to(ROOT)))
    return found


@pytest.mark.parametrize("name", ["plan_counters", "instrument", "emit"])
def test_no_one_plans_instruments_or_emits_around_the_pipeline(name):
    assert _calls_outside_pipeline(name) == []
