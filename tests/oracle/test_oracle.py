"""The oracle in CI: fixed-seed random kernels whose counts come from their own Python models
(tests/oracle/gen.py), compared with gmprof on the CPU backend in default, SA, basic and trace
modes, every counter; the regressions the oracle found, shrunk; and, per known-wrong family of
issue 11, a strict xfail that turns into a failure when the family is fixed (then take it out of
harness.KNOWN_WRONG: its features join the generated suite).

GMPROF_ORACLE_COUNT overrides the number of generated kernels (bench/oracle.py runs more).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
import harness  # noqa: E402
import model  # noqa: E402

CI_SEED = 20261124
CI_COUNT = int(os.environ.get("GMPROF_ORACLE_COUNT", "192"))
FAMILY_SEED = 7_000_000
FAMILY_KERNELS = 12
JOBS = 2
REGRESSIONS = sorted((HERE / "regressions").glob("*.py"))


def _report(out) -> str:
    return "\n".join(str(m) for m in out.mismatches[:60])


def test_generator_is_deterministic():
    a, b = harness.generate(CI_SEED), harness.generate(CI_SEED)
    assert a.cuda() == b.cuda() and a.python() == b.python()


def test_generated_kernels_match_their_models():
    out = harness.run(range(CI_SEED, CI_SEED + CI_COUNT), jobs=JOBS)
    assert out.kernels == CI_COUNT and out.launches == CI_COUNT * len(harness.MODES)
    assert not out.mismatches, f"{len(out.mismatches)} mismatches (seeds " \
        f"{sorted(out.failed_seeds)}); shrink with bench/oracle.py --shrink:\n{_report(out)}"


RANGES_COUNT = 24


def test_generated_loop_walks_match_their_models():
    """--ranges kernels (reads that walk constant-bound loops: range, spread, loop-entry and
    first-iteration counting) in default mode, default/first and basic."""
    modes = ("default", "default/first", "basic")
    out = harness.run(range(CI_SEED, CI_SEED + RANGES_COUNT), modes=modes, jobs=JOBS,
                      ranges=True)
    assert out.kernels == RANGES_COUNT and out.launches == RANGES_COUNT * len(modes)
    assert not out.mismatches, f"{len(out.mismatches)} mismatches (seeds " \
        f"{sorted(out.failed_seeds)}); bench/oracle.py --ranges --shrink:\n{_report(out)}"


def _family_seeds(family: str) -> tuple:
    """FAMILY_KERNELS seeds whose kernels use the family's features, and none of the other
    known families'."""
    others = {f: v for f, v in harness.KNOWN_WRONG.items() if f != family}
    disabled = harness.disabled_features(others)
    seeds, s = [], FAMILY_SEED
    while len(seeds) < FAMILY_KERNELS and s < FAMILY_SEED + 2000:
        if harness.KNOWN_WRONG[family] & harness.generate(s, disabled).features:
            seeds.append(s)
        s += 1
    return seeds, disabled


@pytest.mark.parametrize("family", sorted(harness.KNOWN_WRONG))
@pytest.mark.xfail(strict=True, reason="a family of issue 11 that is wrong today")
def test_known_family_still_wrong(family):
    if family in harness.RARE_FAMILIES:
        assert (HERE / "regressions" / f"{family}.py").is_file()
        pytest.xfail(f"rare in generated kernels: regressions/{family}.py is its check")
    seeds, disabled = _family_seeds(family)
    assert len(seeds) == FAMILY_KERNELS
    out = harness.run(seeds, disabled=disabled, jobs=JOBS)
    assert not out.mismatches, _report(out)


@pytest.fixture(scope="module")
def regression_results():
    kernels = {}
    for path in REGRESSIONS:
        family, k = harness.load_regression(path)
        k.name = f"r_{path.stem}"
        k.alias = k.alias or f"k{k.seed}"
        kernels[path.stem] = (family, k)
    found = []
    for unit in harness.pack([k for _, k in kernels.values()]):
        found += harness.run_batch(unit)
    return kernels, found


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_regression(path, regression_results, request):
    kernels, found = regression_results
    family, k = kernels[path.stem]
    if family in harness.KNOWN_WRONG:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"known: {family}"))
    mine = [m for m in found if m.kernel == k.name]
    assert not mine, "\n".join(map(str, mine))


def test_every_regression_names_a_family_or_none():
    for path in REGRESSIONS:
        family, _ = harness.load_regression(path)
        assert family is None or family in harness.KNOWN_WRONG or \
            family.startswith("fixed:"), f"{path.name}: unknown family {family!r}"


@settings(derandomize=True, max_examples=200, deadline=None)
@given(gen.kernels())
def test_models_stay_in_range_and_print(k):
    """Every kernel the grammar can draw has a model that runs (no index out of range, no name
    used outside its scope) and CUDA text with as many opening as closing braces."""
    exp = model.run_model(k)
    text = k.cuda()
    assert text.count("{") == text.count("}") and text.count("(") == text.count(")")
    assert set(exp.counts) >= {"d", "out", "res", "hist"}
