"""The counter kinds' table (passes/hooks.py): every kind's device template exists in
gmprof.cuh, every kind says what it needs and how it is decoded, the calls are written in
hooks.py alone, and every site of a plan holds one kind."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gmprof._paths import runtime_cu_dir
from gmprof.mode import Mode
from gmprof.passes import hooks as H
from gmprof.passes.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = {k.template for k in H.KINDS if k.template} | {"dm_walk"}  # dm_walk: DmGather's


def _device_templates() -> set:
    text = (runtime_cu_dir() / "gmprof.cuh").read_text()
    return set(re.findall(r"__device__\s+__forceinline__\s+T\s*\*\s*(\w+)\s*\(", text))


def test_every_template_is_in_the_header():
    assert TEMPLATES - _device_templates() == set()


def test_every_kind_says_what_it_needs_and_how_it_is_decoded():
    for kind in H.KINDS:
        assert kind.strategy in ("static", "hook", "lr_start", "none"), kind
        assert kind.counters and kind.decoded, kind
        # a kind that emits a call names its template; one that emits none has none
        assert (kind.template is None) == (kind.call is H.Hook.call), kind


def _code_strings(path: Path) -> list:
    """The string constants of a module's code (not its docstrings, where examples live)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body and
            isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and
            isinstance(n.value, str) and id(n) not in docs]


def test_the_calls_are_written_in_hooks_py_alone():
    # a new kind is one entry in hooks.py: no other module writes a hook's call
    calls = re.compile(r"::gmprof::(" + "|".join(sorted(TEMPLATES)) + r")<")
    found = []
    for top in ("passes", "gmprof"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel.parts[0] == "gmprof" and (ROOT / "gmprof" / rel.parts[1]).is_symlink():
                continue
            if path.name != "hooks.py" and any(calls.search(s) for s in _code_strings(path)):
                found.append(str(rel))
    assert found == []


SOURCE = """
__global__ void k(const int *rows, const int *cols, const float *val, const float *x,
                  float *y, int n) {
    __shared__ float tile[64];
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = 0.0f;
    if (r < n) {
        float s = 0.0f;
        for (int j = rows[r]; j < rows[r + 1]; j++)
            s += val[j] * x[cols[j]];
        y[r] = s + tile[threadIdx.x];
    }
}
"""


@pytest.mark.parametrize("mode", ["default", "basic", "SA", "trace"])
def test_every_site_holds_one_kind(tmp_path, mode):
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    pipeline = Pipeline()
    plan = pipeline.plan(pipeline.analyze(pipeline.load(src)), Mode.parse(mode))
    assert plan.sites
    for sp in plan.sites.values():
        assert isinstance(sp.hook, H.KINDS), sp.site.text
        assert sp.strategy == sp.hook.strategy
        # a shared site counted per access uses sm, a device one dm
        if type(sp.hook) in (H.Dm, H.Sm) and sp.slot is not None:
            assert isinstance(sp.hook, H.Sm) == (sp.slot.kind == "shared")
    if mode == "basic":  # every access, per access (the paper's GMProf-basic)
        assert {type(sp.hook) for sp in plan.sites.values()} == {H.Dm, H.Sm}
