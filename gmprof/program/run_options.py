"""The values a whole program's host runtime accepts in its GMPROF_* variables, checked in Python.

Stage: whole programs, front door. A program built with `gmprof nvcc` reads GMPROF_KERNEL,
GMPROF_LAUNCH_SKIP, ... when it starts (runtime_cu/host/gmprof_host_options.h) and stops at a bad
value with `gmprof: error: NAME=VALUE: expected ...`, status 2. The same rules here let
`gmprof run` refuse its options (-s, -c, -k, -o, --access-stats-blocks: argparse's usage error)
and the variables it passes on, and `gmprof nvcc` the selection it builds in, before a build
rather than when the program starts. Keep the two in step (tests/program/test_run_options.py
runs both on the same values).

    integer("12x", "GMPROF_LAUNCH_SKIP")     # OptionError: GMPROF_LAUNCH_SKIP=12x: expected ...
    check_environ(os.environ, skip={"GMPROF_OUTPUT"})
"""
from __future__ import annotations

import re
from typing import Callable, Mapping

from gmprof.options import refuse, switch

MAX = 2 ** 63 - 1  # the host runtime keeps them in a long long
NON_NEGATIVE = "expected a non-negative integer"
COUNT_ALL = "expected a non-negative integer, or -1 for all"
PATTERN = "expected a file name pattern (%p, %h, %q{ENV}, %%)"




def integer(text: str, option: str, minimum: int = 0) -> int:
    """Decimal digits, a '-' before them only where `minimum` is below 0 (GMPROF_LAUNCH_COUNT's
    -1: all); no '+', space, 0x or suffix (the runtime reads them with strtoll, base 10)."""
    expected = COUNT_ALL if minimum < 0 else NON_NEGATIVE
    if not re.fullmatch(r"-?[0-9]+" if minimum < 0 else r"[0-9]+", text, re.ASCII):
        refuse(option, text, expected)
    n = int(text, 10)
    if n > MAX:
        refuse(option, text, f"{expected}, at most {MAX}")
    if n < minimum:
        refuse(option, text, expected)
    return n


def count(text: str, option: str) -> int:
    return integer(text, option, minimum=-1)




def kernel(text: str, option: str) -> str:
    """"" (every kernel), a name, or regex:RE. The runtime compiles RE as std::regex
    (ECMAScript), here Python's re: they agree on the common mistakes (an unclosed group or
    class, a quantifier with nothing to repeat), not on every extension."""
    if text.startswith("regex:"):
        try:
            re.compile(text[len("regex:"):])
        except re.error as exc:
            refuse(option, text, "expected a kernel name, or regex:RE with RE a regular "
                                  f"expression ({exc})")
    return text


def output(text: str, option: str) -> str:
    """The report file's name: not empty, each %q{ closed."""
    ok = text != ""
    i = 0
    while ok and i + 1 < len(text):
        if text[i] == "%":
            if text.startswith("%q{", i):
                ok = text.find("}", i + 3) != -1
            i += 1  # %% is one %
        i += 1
    if not ok:
        refuse(option, text, PATTERN)
    return text


# the variables the host runtime reads at start-up, in its order (GMPROF_TIMING is not checked:
# gmprof's Python side takes a file name there, the runtime any value but 0 for "on")
VARIABLES: dict[str, Callable[[str, str], object]] = {
    "GMPROF_KERNEL": kernel,
    "GMPROF_LAUNCH_SKIP": integer,
    "GMPROF_LAUNCH_COUNT": count,
    "GMPROF_ACCESS_STATS_BLOCKS": integer,
    "GMPROF_OUTPUT": output,
    "GMPROF_QUIET": switch,
    "GMPROF_SYNC": switch,
    "GMPROF_GRAPHS": switch,
}


def check_environ(environ: Mapping[str, str], skip=()) -> None:
    """Refuse the first bad value among the runtime's variables, as the program would (those in
    `skip` are set by the caller)."""
    for name, check in VARIABLES.items():
        if name in environ and name not in skip:
            check(environ[name], name)


__all__ = ["integer", "count", "switch", "kernel", "output", "check_environ", "VARIABLES",
           "MAX"]
