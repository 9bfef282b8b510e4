"""The progress bar and the CPU-backend warning (no kernel runs: launches are descriptions)."""
from __future__ import annotations

import re

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


# -- long steps: plain lines in logs, the bar's text, an estimate measured from the run --------

import io  # noqa: E402

from gmprof import timing  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def lines_progress(launches, clock, **kw):
    out = io.StringIO()
    prog = P.RunProgress(launches, style="lines", stream=out, clock=clock, every=10.0, **kw)
    prog._run = lambda: None  # no ticker thread: the test calls tick() at chosen times
    return prog, out


def test_a_silent_compile_prints_a_line_every_ten_seconds_in_a_log():
    clock = FakeClock()
    launch = Launch("saxpy", 4, 256, ())
    prog, out = lines_progress([launch], clock)
    with prog:
        prog.on_launch(0, launch, False)
        with timing.phase("compile", "compiling saxpy (CPU backend)"):
            for t in (5, 9.9, 10, 15, 20, 29, 35):  # a 35 s first build
                clock.now = 1000 + t
                prog.tick()
        clock.now = 1036
        prog.tick()  # back to the launch, which started 36 s ago: three lines due, one printed
    assert out.getvalue().splitlines() == [
        "gmprof: compiling saxpy (CPU backend), 10 s",
        "gmprof: compiling saxpy (CPU backend), 20 s",
        "gmprof: compiling saxpy (CPU backend), 35 s",  # the line due at 30 s, at the next tick
        "gmprof: launch 1/1 saxpy, 36 s",
    ]


def test_a_long_launch_moves_and_estimates_the_time_left():
    clock = FakeClock()
    launch = Launch("k", 1000, 256, ())  # 256,000 threads, profiled: a native and an
    prog, out = lines_progress([launch], clock)  # instrumented run of 256,000 each
    with prog:
        prog.on_launch(0, launch, False)
        with timing.phase("launch", "running k (native run)", "native"):
            clock.now += 16
            prog.tick()
            assert prog.seconds_left() is None  # nothing measured yet: no guess
        # the native run took 16 s for 256,000 threads: the instrumented run's 256,000 more
        # take 16 s at that speed, less the 10 s it has run
        with timing.phase("launch", "running k (instrumented run)", "instrumented"):
            clock.now += 10
            prog.tick()
            assert prog.seconds_left() == 16 - 10
            assert prog._done == 256_000
            # the bar's position: half the work done, and 10/16 of the run under way
            assert prog._partial(clock.now) == 256_000 * 10 / 16
            clock.now += 10
            prog.tick()  # running 20 s: past the native run's time, the estimate says 0 s
        prog.on_launch(0, launch, True)
    assert out.getvalue().splitlines() == [
        "gmprof: running k (native run), 16 s",
        "gmprof: running k (instrumented run), 10 s; about 6 s left",
        "gmprof: running k (instrumented run), 20 s; about 0 s left",
    ]
    assert prog._done == prog.total == 2 * 256_000


def test_the_estimate_covers_the_launches_still_to_come():
    clock = FakeClock()
    launches = [Launch("k", 10, 100, ()) for _ in range(4)]  # 1,000 threads, twice, each
    prog, out = lines_progress(launches, clock)
    with prog:
        prog.on_launch(0, launches[0], False)
        for part in ("native", "instrumented"):
            with timing.phase("launch", f"running k ({part} run)", part):
                clock.now += 3  # 6 s for launch 1's 2,000 thread runs
        prog.on_launch(0, launches[0], True)
        # 3 launches left, 6,000 thread runs at 6 s / 2,000 = 18 s
        assert prog.seconds_left() == 18


def test_the_phases_tell_a_watcher_only_while_it_watches():
    seen = []
    with timing.watch(lambda *a: seen.append(a)):
        with timing.phase("compile", "compiling k (CPU backend)"):
            pass
        with timing.phase("decode"):  # no detail: not a step worth showing
            pass
    with timing.phase("compile", "compiling k (CPU backend)"):
        pass
    assert seen == [("compiling k (CPU backend)", None, True),
                    ("compiling k (CPU backend)", None, False)]


def test_the_bar_on_a_terminal_shows_the_step_and_the_estimate(monkeypatch):
    monkeypatch.setattr(P, "SHOW_AFTER", 0.0)
    clock = FakeClock()
    out = io.StringIO()
    launch = Launch("k", 4, 32, ())
    prog = P.RunProgress([launch], style="bar", stream=out, clock=clock)
    prog._run = lambda: None
    with prog:
        prog.on_launch(0, launch, False)
        with timing.phase("compile", "compiling k (CPU backend)"):
            clock.now += 3
            prog.tick()
            task = prog._progress.tasks[0]
            assert task.fields["step"] == "compiling k (CPU backend)"
            assert task.fields["left"] == ""


def test_logs_get_lines_terminals_a_bar_and_the_variable_turns_them_off(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("GMPROF_PROGRESS", raising=False)
    assert P.display_style(io.StringIO()) == "lines"
    assert P.display_style(Tty()) == "bar"
    assert P.display_style(Tty(), enabled=False) is None
    monkeypatch.setenv("GMPROF_PROGRESS", "0")
    assert P.display_style(Tty()) is None
    monkeypatch.setenv("GMPROF_PROGRESS", "lines")
    assert P.display_style(Tty()) == "lines"


def test_durations_read_as_people_say_them():
    assert [P.duration(s) for s in (0.4, 20, 119.6, 125, 7300)] == [
        "0 s", "20 s", "2 min 00 s", "2 min 05 s", "2 h 01 min"]


def test_a_profile_in_a_log_names_its_steps(monkeypatch, capsys, tmp_path):
    # a slow clock instead of a slow run: 20 s pass at each look, so every step of a real
    # (quick) run is one that has run long enough for its line
    from pathlib import Path

    from gmprof.cli import main

    clock = FakeClock()

    def slow():
        clock.now += 20
        return clock.now

    monkeypatch.setattr(P, "CLOCK", slow)
    monkeypatch.delenv("GMPROF_PROGRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    sample = Path(__file__).resolve().parents[2] / "samples" / "jcb_v1"
    assert main(["profile", str(sample), "-c", "1", "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [x for x in err if x.startswith("gmprof: ") and "warning" not in x]
    assert any(x.startswith("gmprof: running jacobi_v1 (native run), ") for x in lines), err
    assert any(x.startswith("gmprof: running jacobi_v1 (instrumented run), ") for x in lines)
    # a first build says what it compiles (here from the cache: the step is there all the same)
    assert any(x.startswith("gmprof: compiling jacobi_v1 (CPU backend), ") for x in lines)
    assert any(x.startswith("gmprof: compiling jacobi_v1, instrumented (CPU backend), ")
               for x in lines)
    # once the native run is timed, an estimate follows
    assert any(re.fullmatch(r"gmprof: running jacobi_v1 \(instrumented run\), [\w ]+; "
                            r"about [\w ]+ left", x) for x in lines), lines
