"""The progress bar and the CPU-backend warning (no kernel runs: launches are descriptions)."""
from __future__ import annotations

from gmprof import progress as P
from gmprof.driver import Launch


def test_a_run_of_minutes_on_the_cpu_is_announced():
    # 10,000 blocks of 1,024 threads, profiled: 2 x 10,240,000 thread runs a launch; 5 launches
    big = [Launch("k", 10_000, 1024, ()) for _ in range(5)]
    seconds = 5 * 2 * 10_240_000 * P.CPU_SECONDS_PER_THREAD
    assert seconds > P.MINUTES
    text = P.cpu_warning(big, "cpu", "sample x (large)")
    assert text.startswith("gmprof: warning: sample x (large) runs 51,200,000 GPU threads in 5 "
                           "launches on the CPU backend")
    assert f"at least {seconds / 60:.0f} minutes" in text
    assert P.cpu_warning(big, "gpu", "x") is None


def test_small_runs_are_not_announced():
    assert P.cpu_warning([Launch("k", 4, (16, 16), ())], "cpu", "x") is None


def test_native_launches_count_once():
    assert P.launch_work(Launch("k", 2, 32, (), profile=False)) == 64
    assert P.launch_work(Launch("k", 2, 32, ())) == 128


def test_progress_follows_the_launches(monkeypatch):
    monkeypatch.setattr(P, "SHOW_AFTER", 0.0)
    launches = [Launch("a", 1, 32, ()), Launch("b", 3, 32, ())]
    with P.RunProgress(launches, enabled=True) as prog:
        prog.phase("reading the source")
        for i, launch in enumerate(launches):
            prog.on_launch(i, launch, False)
            prog.on_launch(i, launch, True)
        assert prog._done == prog.total == 2 * 32 + 2 * 96
    with P.RunProgress(launches, enabled=False) as prog:  # not a terminal: nothing at all
        prog.on_launch(0, launches[0], True)
        assert prog._progress is None
