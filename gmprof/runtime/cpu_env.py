"""The CPU backend's GMPROF_CPU_* variables, checked with the rules a whole program applies.

Stage: runtime, CPU backend. A program built with `gmprof nvcc` for the CPU backend reads them
in runtime_cu/cpu/gmprof_cpu_env.h and stops at a bad value with `gmprof: error: NAME=VALUE:
expected ...`, status 2, before any kernel runs; gmprof profile refuses the same values with the
same words (an OptionError before its launch), and gmprof run on the CPU backend before it
builds. Keep the two in step (tests/program/test_cpu_env.py runs both on the same values).

    GMPROF_CPU_STACK_KB    decimal digits, 16 to 1048576 (KiB a thread; default 256)
    GMPROF_CPU_TIMEOUT_S   seconds >= 0, 0: no limit (default: none in a whole program; gmprof
                           profile's --timeout / timeout= win over it, else 120)
    GMPROF_CPU_LIVELOCK_S  seconds > 0 (default 2)
    GMPROF_CPU_GRAPH_DUMP  0 or 1, empty: unset (whole programs' graphs only)

Seconds are decimal digits with at most one '.', no sign, space, exponent, inf or nan. Empty is
a value (refused) for the numbers, as for the host runtime's integers.
"""
from __future__ import annotations

import math
import os
import re
from typing import Mapping

from gmprof import options as O

STACK_KB_MIN, STACK_KB_MAX, STACK_KB_DEFAULT = 16, 1048576, 256
LIVELOCK_DEFAULT = 2.0
STACK_KB = "expected a stack size in KiB, from 16 to 1048576"
TIMEOUT = "expected seconds >= 0 (0: no limit)"
LIVELOCK = "expected seconds > 0"
SWITCH = O.SWITCH
_refuse = O.refuse


def _decimal(text: str) -> float | None:
    if not re.fullmatch(r"[0-9]*\.?[0-9]*", text, re.ASCII) or not re.search("[0-9]", text):
        return None
    x = float(text)
    return x if math.isfinite(x) else None


def stack_kb(environ: Mapping[str, str] = os.environ) -> int:
    text = environ.get("GMPROF_CPU_STACK_KB")
    if text is None:
        return STACK_KB_DEFAULT
    if not re.fullmatch(r"[0-9]+", text, re.ASCII) or \
            not STACK_KB_MIN <= int(text, 10) <= STACK_KB_MAX:
        _refuse("GMPROF_CPU_STACK_KB", text, STACK_KB)
    return int(text, 10)


def timeout_s(environ: Mapping[str, str] = os.environ) -> float | None:
    """None where unset (the caller's default)."""
    text = environ.get("GMPROF_CPU_TIMEOUT_S")
    if text is None:
        return None
    x = _decimal(text)
    if x is None:
        _refuse("GMPROF_CPU_TIMEOUT_S", text, TIMEOUT)
    return x


def livelock_s(environ: Mapping[str, str] = os.environ) -> float:
    text = environ.get("GMPROF_CPU_LIVELOCK_S")
    if text is None:
        return LIVELOCK_DEFAULT
    x = _decimal(text)
    if x is None or not x > 0:
        _refuse("GMPROF_CPU_LIVELOCK_S", text, LIVELOCK)
    return x


def graph_dump(environ: Mapping[str, str] = os.environ) -> bool:
    return O.switch(environ.get("GMPROF_CPU_GRAPH_DUMP", ""), "GMPROF_CPU_GRAPH_DUMP") is True


def check_environ(environ: Mapping[str, str] = os.environ) -> None:
    """Refuse the first bad value, in the order a whole program checks them."""
    stack_kb(environ)
    timeout_s(environ)
    livelock_s(environ)
    graph_dump(environ)


__all__ = ["stack_kb", "timeout_s", "livelock_s", "graph_dump", "check_environ"]
