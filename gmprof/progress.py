"""Progress for the command line: a bar with an estimate once a run takes more than a few
seconds, and a warning before a CPU-backend run that will take minutes.

Stage: command-line support (the library prints nothing). Takes the launches a command will
make (a sample's driver lists them before any runs); the work of each launch is its thread
count, twice for a profiled launch (native and instrumented run), so the estimate follows the
launches' sizes rather than their number. The bar goes to standard error, only when that is a
terminal, and disappears when the run ends; it appears only after SHOW_AFTER seconds, so quick
runs print nothing.

    with RunProgress(launches, backend="cpu") as progress:
        run_sample(..., on_launch=progress.on_launch)
"""
from __future__ import annotations

import sys
import threading
import time

SHOW_AFTER = 2.0  # seconds before the bar appears
MINUTES = 60.0  # a CPU run expected to take longer than this is announced
# The CPU backend's speed, measured over the samples at their small size on the development
# machine: 0.7 to 11 microseconds a thread and run (work per thread grows with the problem
# size). The warning takes the fastest of those, so it says "at least".
CPU_SECONDS_PER_THREAD = 0.7e-6


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


class RunProgress:
    """A transient rich progress bar over a run's launches (see the module docstring)."""

    def __init__(self, launches, *, enabled: bool | None = None, label: str = "profiling"):
        self.launches = list(launches)
        self.total = max(1, sum(launch_work(x) for x in self.launches))
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.label = label
        self._progress = None
        self._task = None
        self._timer = None
        self._lock = threading.Lock()
        self._done = 0

    def __enter__(self):
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[step]}"),
            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True)
        self._task = self._progress.add_task(self.label, total=self.total, step="")
        self._started = time.monotonic()
        self._timer = threading.Timer(SHOW_AFTER, self._show)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _show(self) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.start()

    def phase(self, text: str) -> None:
        """Say what is running (parsing, compiling) before the launches start."""
        if self._progress is not None:
            self._progress.update(self._task, step=text)

    def on_launch(self, index: int, launch, done: bool) -> None:
        if self._progress is None:
            return
        if done:
            self._done += launch_work(launch)
            self._progress.update(self._task, completed=self._done)
        else:
            self._progress.update(self._task, step=f"launch {index + 1}/{len(self.launches)} "
                                                   f"{launch.kernel}")

    def __exit__(self, *exc):
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._progress is not None:
                self._progress.stop()
                self._progress = None
        return False
