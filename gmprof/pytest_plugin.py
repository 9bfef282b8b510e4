"""pytest plugin: gmprof's counts as assertions in a test suite (entry point pytest11 `gmprof`).

Two fixtures. `gmprof_profile` profiles one launch (gmprof.profile's arguments; the CPU backend
where there is no GPU) and returns a ProfiledRun whose `expect` methods assert bounds in the
language of `gmprof check` (docs/workflows/assertions.md); `gmprof_check` runs an expectations
file. A failed bound raises AssertionError with the check command's message:

    def test_each_input_read_once_per_block(gmprof_profile):
        run = gmprof_profile("k.cu", "spread", grid=4, block=32, args=[out, inp],
                             access_stats=True)
        run.expect("in", reads_per_element="== gridDim.x", untouched=0)
        run.expect_site("6:5", bank_conflict_degree=1)
    # AssertionError: kernel spread, site 6:5 s[t * 32]: bank_conflict_degree is 32, expected == 1

    def test_expectations(gmprof_check):
        gmprof_check("tests/expect/spread.toml")

pytest loads this module in every run of every suite once gmprof is installed, so it imports
nothing but pytest at the top: gmprof's stages load when a fixture is first used.
`pytest -p no:gmprof` turns it off.
"""
from __future__ import annotations

import pytest


class ProfiledRun:
    """One profiled kernel: its Report (`report`), the kernel's part of the run document
    (`document`) and assertions on it. `names`: the launch's scalar arguments by parameter name,
    for bounds such as "== n * n" (gridDim.x and blockDim.x are there too)."""

    def __init__(self, report, names: dict | None = None):
        from .report.document import document

        self.report = report
        self.document = document([report], include_counts=False)
        self.names = dict(names or {})

    def expect(self, array: str, **bounds) -> "ProfiledRun":
        """Bounds on an array's metrics: `reads=128`, `reads_per_element="<= 2"`."""
        __tracebackhide__ = True
        return self._expect("array", array, bounds)

    def expect_site(self, site: str, **bounds) -> "ProfiledRun":
        """Bounds on a site's metrics; `site` is its "LINE:COL" or its text ("A[i]")."""
        __tracebackhide__ = True
        return self._expect("site", site, bounds)

    def expect_kernel(self, **bounds) -> "ProfiledRun":
        """Bounds on the kernel's metrics (launches; reads, writes, accesses summed over its
        arrays)."""
        __tracebackhide__ = True
        return self._expect("kernel", None, bounds)

    def _expect(self, kind, name, bounds) -> "ProfiledRun":
        __tracebackhide__ = True
        from .report.expect import Bound, Expectation, Target, evaluate, metric

        if not bounds:
            raise TypeError("expect: give at least one metric=bound (reads_per_element=\"<= 2\")")
        expectations = []
        for key, value in bounds.items():
            metric(key, kind)  # an unknown metric: ExpectError (a usage error), not a failure
            expectations.append(Expectation(Target(kind, name), key, Bound.parse(value)))
        failed = [o.message for o in evaluate(self.document, expectations, self.names)
                  if not o.passed]
        if failed:
            raise AssertionError("\n".join(failed))
        return self


def profile_run(source, kernel, grid, block, args, *, access_stats=False, mode="default",
                **options) -> ProfiledRun:
    """gmprof.profile(...) as a ProfiledRun; `access_stats=True` adds the warp statistics
    (bank_conflict_degree, sectors_per_request, ...); `options`: gmprof.profile's keywords."""
    import dataclasses

    import numpy as np

    from . import api

    if access_stats:
        keys = ("profile", "threshold", "counter_bits", "enhanced", "sampling", "sampler")
        mode = dataclasses.replace(api.make_mode(mode, **{k: options.pop(k) for k in keys
                                                          if k in options}), warps=True)
    report = api.profile(source, kernel, grid, block, args, mode=mode, **options)
    # the scalar arguments by parameter name, for bounds such as "== n * n"
    prof = api.profiler(source, options.get("defines"), options.get("include_dirs"),
                        api.device_choice(options.get("device"), options.get("backend", "auto")),
                        options.get("arch"))
    params = [getattr(p, "name", None) for p in prof.kernel_facts(kernel).function.params]
    names = {p: v.item() if isinstance(v, np.generic) else v for p, v in zip(params, args)
             if p and isinstance(v, (int, float, np.number)) and not isinstance(v, bool)}
    return ProfiledRun(report, names)


def check_file(path, backend: str | None = None) -> list:
    """Run an expectations file as `gmprof check` does; AssertionError (with its located
    messages) if an expectation or one of the run's checks fails. The outcomes."""
    __tracebackhide__ = True
    from .cli_check import run_profile
    from .errors import CheckFailed
    from .report import expect_file
    from .report.expect import evaluate

    f = expect_file.read(path)
    if backend:
        f.profile["backend"] = backend
    doc, scalars, _ = run_profile(f)
    outcomes = evaluate(doc, f.expectations, scalars)
    failed = [CheckFailed(o.message, o.expectation.location).render()
              for o in outcomes if not o.passed] + list(doc.get("failed_checks", []))
    if failed:
        raise AssertionError("\n".join(failed))
    return outcomes


@pytest.fixture
def gmprof_profile():
    """profile(source, kernel, grid, block, args, access_stats=False, **gmprof.profile's
    keywords) -> a ProfiledRun with expect(array, **bounds), expect_site, expect_kernel."""
    return profile_run


@pytest.fixture
def gmprof_check():
    """check(path, backend=None): run an expectations file (gmprof check); AssertionError
    with its located messages when one fails."""
    return check_file
