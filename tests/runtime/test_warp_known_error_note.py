"""The known GPU-only error of measured warp requests (issue 27, docs/results/access_stats.md)
is said in the report: a run on the GPU with measured warp statistics gets the note; the CPU
backend and static-only runs do not (the decoder's notes, on made-up reports)."""
from __future__ import annotations

from types import SimpleNamespace

from gmprof.mode import Mode
from gmprof.passes.tallies import WarpStats
from gmprof.report.model import SiteStats
from gmprof.runtime.decode import _notes


def _notes_for(backend: str, how: str) -> list[str]:
    site = SiteStats(0, "k.cu:1:1", "a[i]", "k", "a", "read", 32, "measured")
    site.warps = WarpStats("device", 1, 4, 4, 1, [0] * 3 + [1] + [0] * 28, how)
    report = SimpleNamespace(notes=[], sites=[site])
    info = SimpleNamespace(backend=backend, outputs_identical=True)
    _notes(report, {"unknown_oor": 0}, Mode.parse("default", warps=True), [], info)
    return report.notes


def test_measured_on_the_gpu_is_said():
    assert any("known error" in n for n in _notes_for("gpu", "measured"))


def test_cpu_backend_and_static_sites_are_not_flagged():
    assert not any("known error" in n for n in _notes_for("cpu", "measured"))
    assert not any("known error" in n for n in _notes_for("gpu", "static"))
