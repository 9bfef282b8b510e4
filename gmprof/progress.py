"""Progress for the command line: what a run is doing while it takes long (a first compile, a
launch of minutes), with an estimate of the time left measured from the run itself, and a
warning before a CPU-backend run that will take minutes.

Stage: command-line support (the library prints nothing: it names its long steps with
timing.phase(name, detail), and RunProgress watches them). Takes the launches a command will
make (a sample's driver lists them before any runs); the work of each launch is its thread
count, twice for a profiled launch (native and instrumented run), so the estimate follows the
launches' sizes rather than their number. The time left is the work left at the speed measured
over the kernel runs finished so far (the first one, a native run, is enough: a single long
launch gets its estimate half-way).

On a terminal a bar on standard error, after SHOW_AFTER seconds, gone when the run ends. Not on
a terminal (logs, CI), plain lines, one every LOG_EVERY seconds of one step:

    gmprof: compiling saxpy (CPU backend), 20 s
    gmprof: running saxpy (instrumented run), 30 s; about 25 s left

GMPROF_PROGRESS=0 turns both off (=lines or =bar chooses one).

    with RunProgress(launches, backend="cpu") as progress:
        run_sample(..., on_launch=progress.on_launch)
"""
from __future__ import annotations

import os
import sys
import threading
import time

from . import timing

SHOW_AFTER = 2.0  # seconds before the bar appears
LOG_EVERY = 10.0  # seconds of one step between plain lines
TICK = 0.5  # how often the display looks at the clock
MINUTES = 60.0  # a CPU run expected to take longer than this is announced
# The CPU backend's speed, measured over the samples at their small size on the development
# machine: 0.7 to 11 microseconds a thread and run (work per thread grows with the problem
# size). The warning takes the fastest of those, so it says "at least".
CPU_SECONDS_PER_THREAD = 0.7e-6
CLOCK = time.monotonic  # (tests put a fake clock here)


def launch_threads(launch) -> int:
    g, b = launch.grid3, launch.block3
    return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


def launch_work(launch) -> int:
    """Threads run for a launch: twice for a profiled launch (native and instrumented)."""
    return launch_threads(launch) * (2 if launch.profile else 1)


def cpu_estimate(launches) -> float:
    """A lower bound, in seconds, for the CPU backend's kernel time over these launches."""
    return sum(launch_work(x) for x in launches) * CPU_SECONDS_PER_THREAD


def cpu_warning(launches, backend: str, what: str) -> str | None:
    """The warning to print before a CPU-backend run expected to take minutes, or None."""
    if backend != "cpu":
        return None
    launches = list(launches)
    seconds = cpu_estimate(launches)
    if seconds < MINUTES:
        return None
    threads = sum(launch_threads(x) for x in launches)
    return (f"gmprof: warning: {what} runs {threads:,} GPU threads in {len(launches)} "
            f"launch{'es' if len(launches) != 1 else ''} on the CPU backend: expect at least "
            f"{seconds / 60:.0f} minutes (a GPU with CuPy, or a smaller size such as "
            "`--size small`, answers in seconds)")


def duration(seconds: float) -> str:
    """20 s, 2 min 05 s, 1 h 02 min."""
    s = int(round(seconds))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def display_style(stream, enabled: bool | None = None) -> str | None:
    """'bar' (a terminal), 'lines' (a log) or None (off): GMPROF_PROGRESS, else the stream."""
    if enabled is False:
        return None
    choice = os.environ.get("GMPROF_PROGRESS", "").strip().lower()
    if choice in ("0", "off", "no", "none") and enabled is None:
        return None
    if choice in ("lines", "bar"):
        return choice
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return "bar" if tty else "lines"


class RunProgress:
    """Progress over a run's launches and the steps the library names (module docstring).

    style: 'bar', 'lines' or None (display_style decides); stream: standard error unless
    given; clock: time.monotonic unless given (tests pass a fake one and call tick())."""

    def __init__(self, launches, *, enabled: bool | None = None, label: str = "profiling",
                 style: str | None = None, stream=None, clock=None, every: float | None = None):
        self.launches = list(launches)
        self.total = max(1, sum(launch_work(x) for x in self.launches))
        self.stream = stream if stream is not None else sys.stderr
        self.style = (style if enabled is not False else None) if style else \
            display_style(self.stream, enabled)
        self.enabled = self.style is not None
        self.label = label
        self.clock = clock or CLOCK
        self.every = LOG_EVERY if every is None else every
        self._progress = None
        self._task = None
        self._thread = None
        self._stop = threading.Event()
        self._lock = threading.RLock()
        self._done = 0  # work finished (thread runs)
        self._measured = [0.0, 0]  # seconds and work of the kernel runs timed so far
        self._steps: list = []  # [text, part, started, work, lines printed]
        self._base = None  # [text, started, lines printed]: phase() or the current launch
        self._watch = None
        self._started = None

    # -- the run tells us ----------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            return self
        self._started = self.clock()
        self._watch = timing.watch(self._on_phase)
        self._watch.__enter__()
        if self.style == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
            from rich.table import Column

            # the step's column keeps its width: the bar does not jump as the step changes
            step = Column(width=32, no_wrap=True, overflow="ellipsis")
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(bar_width=20),
                TextColumn("{task.fields[step]}", table_column=step),
                TimeElapsedColumn(), TextColumn("{task.fields[left]}"),
                console=Console(file=self.stream), transient=True, auto_refresh=False)
            self._task = self._progress.add_task(self.label, total=self.total, step="",
                                                 left="")
        self._thread = threading.Thread(target=self._run, name="gmprof-progress", daemon=True)
        self._thread.start()
        return self

    def phase(self, text: str) -> None:
        """Say what is running (parsing, compiling) before the launches start."""
        with self._lock:
            self._base = [text, self.clock(), 0]

    def on_launch(self, index: int, launch, done: bool) -> None:
        if not self.enabled:
            return
        with self._lock:
            if done:
                upto = sum(launch_work(x) for x in self.launches[:index + 1])
                self._done = min(self.total, max(self._done, upto))
            else:
                n = len(self.launches)
                where = f"launch {index + 1}/{n}" if index < n else f"launch {index + 1}"
                self._base = [f"{where} {launch.kernel}", self.clock(), 0]
                self._launch_threads = launch_threads(launch)

    def _on_phase(self, detail: str, part, entering: bool) -> None:
        with self._lock:
            now = self.clock()
            if entering:
                work = getattr(self, "_launch_threads", 0) if part else 0
                self._steps.append([detail, part, now, work, 0])
                self.tick()  # a step's start is a moment to look at the clock
                return
            for i in range(len(self._steps) - 1, -1, -1):
                if self._steps[i][0] == detail:
                    text, part, started, work, _ = self._steps.pop(i)
                    if part and work:
                        self._measured[0] += now - started
                        self._measured[1] += work
                        self._done = min(self.total, self._done + work)
                    break

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._watch is not None:
            self._watch.__exit__(None, None, None)
            self._watch = None
        with self._lock:
            if self._progress is not None:
                self._progress.stop()
                self._progress = None
        return False

    # -- what we say ---------------------------------------------------------------------

    def seconds_left(self) -> float | None:
        """The work left at the speed measured so far; None before a kernel run finished."""
        seconds, work = self._measured
        if not work:
            return None
        left = (self.total - self._done) * seconds / work
        step = self._steps[-1] if self._steps else None
        if step is not None and step[1]:
            left -= min(self.clock() - step[2], step[3] * seconds / work)
        return max(0.0, left)

    def _current(self):
        """[text, part, started, ..., printed] of the innermost named step, or the launch."""
        if self._steps:
            return self._steps[-1]
        return self._base

    def status(self) -> str | None:
        """What the run is doing and for how long: the plain line's text."""
        step = self._current()
        if step is None:
            return None
        text, started = step[0], step[1] if len(step) == 3 else step[2]
        out = f"{text}, {duration(self.clock() - started)}"
        left = self.seconds_left()
        if left is not None:
            out += f"; about {duration(left)} left"
        return out

    def tick(self) -> None:
        """Look at the clock: a plain line when a step has run another `every` seconds; the
        bar's text and position."""
        with self._lock:
            now = self.clock()
            if self.style == "lines":
                step = self._current()
                if step is None:
                    return
                started = step[1] if len(step) == 3 else step[2]
                due = int((now - started) // self.every) if self.every > 0 else 0
                if due > step[-1]:
                    step[-1] = due
                    print(f"gmprof: {self.status()}", file=self.stream, flush=True)
            elif self._progress is not None:
                if now - self._started < SHOW_AFTER:
                    return
                if not self._progress.live.is_started:
                    self._progress.start()
                step = self._current()
                left = self.seconds_left()
                self._progress.update(
                    self._task, completed=self._done + self._partial(now),
                    step=step[0] if step else "",
                    left="" if left is None else f"{duration(left)} left")
                self._progress.refresh()

    def _partial(self, now: float) -> float:
        """The work of the kernel run under way, in proportion to its expected time (at most
        most of it: the bar moves through a long launch, never past it)."""
        seconds, work = self._measured
        step = self._steps[-1] if self._steps else None
        if not work or step is None or not step[1] or not step[3]:
            return 0.0
        expected = step[3] * seconds / work
        return step[3] * min(0.95, (now - step[2]) / expected if expected > 0 else 0.0)

    def _run(self) -> None:
        while not self._stop.wait(min(TICK, self.every) if self.every > 0 else TICK):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - a display must never stop the run
                return
