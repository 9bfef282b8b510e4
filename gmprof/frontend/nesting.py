"""How deep a function's tree may be, and the recursion that walking it takes.

Stage: frontend (checked once a function is parsed), used by every later stage. The passes,
the rewriter and pycparser's C generator walk the c_ast recursively, about five Python frames
for each level of nesting (measured: `gmprof instrument` on a sum of 2,000 terms, a tree 2,004
deep, needs a recursion limit of 10,200). Python's default limit of 1,000 stops at a sum of
about 200 terms; generated code has sums of thousands.

So a function whose tree is deeper than MAX_NESTING is not read (`too_deep` gives the located
reason: the frontend leaves it untouched with a warning, as any function it cannot read), and
the stages run under `deep_recursion()`, a recursion limit that covers MAX_NESTING levels.
MAX_NESTING is bounded by the C stack, not by Python: a sum of 5,000 terms walks within the
main thread's 8 MiB stack, a sum of 20,000 overflows it (a crash, not an exception).
"""
from __future__ import annotations

import contextlib
import sys

from ..errors import GmprofError

MAX_NESTING = 2500
FRAMES_PER_LEVEL = 10   # twice what the deepest walk was measured to take
RECURSION_LIMIT = MAX_NESTING * FRAMES_PER_LEVEL + 5000


def too_deep(node) -> GmprofError | None:
    """A located error for the first node deeper than MAX_NESTING below `node` (a function's
    definition), or None. Iterative: it must not need the recursion it guards."""
    from .cxx_ast import span

    stack = [(node, 1, None)]
    while stack:
        current, depth, placed = stack.pop()
        placed = span(current) or placed
        if depth > MAX_NESTING:
            return GmprofError(
                f"expression too deeply nested (more than {MAX_NESTING:,} levels: gmprof "
                "reads up to that; split it with temporaries)",
                placed.location() if placed is not None else None, kind="syntax")
        stack.extend((child, depth + 1, placed) for _, child in current.children())
    return None


@contextlib.contextmanager
def deep_recursion():
    """Run with a recursion limit that covers MAX_NESTING levels (restored afterwards)."""
    old = sys.getrecursionlimit()
    if old >= RECURSION_LIMIT:
        yield
        return
    sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


__all__ = ["MAX_NESTING", "too_deep", "deep_recursion"]
