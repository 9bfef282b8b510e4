"""Where a run's own seconds go, by phase: what bench/time_to_answer.py reports.

Stage: any (it imports nothing from gmprof). A phase is a `with timing.phase("decode"):` block;
phases nest, and a phase's seconds are its own, less its inner phases' (decode inside a launch
is not counted twice), so the phases of a run add up to its total. Off unless GMPROF_TIMING
names a file: then the process writes {"phases": {name: seconds}, "total_s": ...} there as JSON
when it exits (GMPROF_TIMING=1: on standard error, as whole programs' host runtime does).
Costs two perf_counter calls a phase when on, one dict look-up when off.

A phase may say what it does in words (`detail`: "compiling saxpy (CPU backend)"); whoever
watches the phases (`with timing.watch(fn):`, the command line's progress display,
gmprof/progress.py) is told fn(detail, part, entering) as such a phase starts and ends, so long
work shows what it is doing without the library printing anything. `part` names a kernel run
("native", "instrumented") for the display's estimate.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import time

_START = time.perf_counter()
_SECONDS: dict = {}
_STACK: list = []  # [name, start, seconds of inner phases]
_ON = bool(os.environ.get("GMPROF_TIMING"))
_WATCHERS: list = []


@contextlib.contextmanager
def watch(fn):
    """Tell fn(detail, part, entering) about every phase with a detail while the block runs."""
    _WATCHERS.append(fn)
    try:
        yield
    finally:
        _WATCHERS.remove(fn)


@contextlib.contextmanager
def phase(name: str, detail: str | None = None, part: str | None = None):
    if _WATCHERS and detail:
        with _watched(detail, part), phase(name):
            yield
        return
    if not _ON:
        yield
        return
    entry = [name, time.perf_counter(), 0.0]
    _STACK.append(entry)
    try:
        yield
    finally:
        _STACK.pop()
        spent = time.perf_counter() - entry[1]
        _SECONDS[name] = _SECONDS.get(name, 0.0) + spent - entry[2]
        if _STACK:
            _STACK[-1][2] += spent


@contextlib.contextmanager
def _watched(detail: str, part):
    for fn in list(_WATCHERS):
        fn(detail, part, True)
    try:
        yield
    finally:
        for fn in list(_WATCHERS):
            fn(detail, part, False)


def mark_startup() -> None:
    """The seconds from gmprof's first import to now (the command line's start) as a phase."""
    if _ON and "start-up" not in _SECONDS:
        _SECONDS["start-up"] = time.perf_counter() - _START


def reset() -> None:
    """Start again from zero (a bench that runs several commands in one process)."""
    global _START
    _SECONDS.clear()
    _START = time.perf_counter()


def seconds() -> dict:
    """{phase: seconds} so far, and 'other' (the process's time outside every phase, Python's
    start-up and imports after gmprof's first included)."""
    out = {k: round(v, 3) for k, v in _SECONDS.items()}
    out["other"] = round(time.perf_counter() - _START - sum(_SECONDS.values()), 3)
    return out


def _write() -> None:
    path = os.environ.get("GMPROF_TIMING")
    if not path or path == "0":
        return
    if path == "1":
        # GMPROF_TIMING=1 is also what a whole program's host runtime reads (its phases on
        # standard error, runtime_cu/host/gmprof_host.cpp): gmprof's own go there too, not to a
        # file named "1"
        import sys

        print("gmprof timing: " + json.dumps({"phases": seconds(), "total_s": round(
            time.perf_counter() - _START, 3), "pid": os.getpid()}), file=sys.stderr)
        return
    with contextlib.suppress(OSError):
        with open(path, "w") as f:
            json.dump({"phases": seconds(), "total_s": round(time.perf_counter() - _START, 3),
                       "pid": os.getpid()}, f, indent=1)


if _ON:
    atexit.register(_write)

__all__ = ["phase", "watch", "seconds", "mark_startup", "reset"]
