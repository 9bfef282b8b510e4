"""Dual bodies: with --access-stats on a sample of blocks, a kernel's body emitted twice.

    { ::gmprof::enter<false, FLAGS>(); <the body's __shared__ declarations>
      if (::gmprof::block_hashed_in()) { ::gmprof::enter_measured(); <body: counts and
                                         statistics> ::gmprof::leave_all(); }
      else { <body: counts only, as default mode> ::gmprof_u::leave_all(); } }

With --access-stats a large grid measures its requests in 1 block of 2^s (block_sample.py),
but one body for all blocks made every block pay for the statistics it might measure: each
hook's test of block_measured() and its rejoin, the walks' lanes at each loop's entry and
their test after it, and the registers the walks need (ptxas caps them at the native kernel's
occupancy and spills what lives across the walks, in every block). On an H100 spmv ran 0.83x
over native with the statistics against 0.54x without (Nsight Compute: +42 instructions a
warp in every block, and a replay kernel of 0.13 ms for the deferred walks, defer.py). With
two bodies an unmeasured block runs default mode's instructions and a few more (0.59x against
0.55x): the measured blocks run the statistics' body, walks in place (no deferral, no replay
kernel), their spills on their own path. The blocks start unmeasured (`enter<false>`: no hash
before the entry's barrier, where thread 0's held every warp of every block); each warp tests
the hash after it (3 uniform instructions), and a measured block takes its rank in
enter_measured, behind a barrier of its own. FLAGS: the block's flags are set unmeasured at
the entry where the kernel calls device functions, whose (first-pass) hooks read them.

The second body's hooks are the header's second pass (gmprof.cuh GMPROF_UNMEASURED_PASS,
namespace gmprof_u: GMPROF_WARPS 0, the same launch description, area and registered
shared bases): the same counters, no statistics code at all; its calls are the same plan's
rewritten with the statistics off (rewrite.py _dual), written `::gmprof_u::` (two_bodies).
Both bodies count alike, so the counts are the same whichever a block runs; the block's
`__shared__` declarations are hoisted before the branch so that both bodies use one
allocation (two would double the block's static shared memory).

A kernel gets two bodies when
  - the plan is made for one launch (the Python runtime) whose grid measures a sample of its
    blocks with --access-stats (where every block is measured, one body serves: co's 528
    blocks ran 0.11x over native with two against 0.04x with one, on an H100), without the
    trace, sampling, live ranges (--enhanced) or --sharing;
  - it is a kernel read as written (not re-read with its macros expanded), counting on the
    device;
  - its body has no `goto`, label or `asm` (a label or an asm's own labels must be unique in
    the function), no `static` local, and every `__shared__` declaration is a statement of
    the body itself, not of a nested block, whose dimensions name none of the body's locals.
"""
from __future__ import annotations

import dataclasses

from pycparser import c_ast

from gmprof.frontend import cxx_ast as X

from .patches import REPLACE, SUFFIX, Patch, apply_patches

#: the header's second pass (gmprof.cuh), whose hooks measure nothing
UNMEASURED_NS = "::gmprof_u::"


def applies(plan, facts) -> bool:
    """Whether the kernel of `facts` is emitted with two bodies (above)."""
    m = plan.mode
    if not (plan.samples_blocks and m.warps and m.warps_blocks) or m.trace or \
            m.sampling is not None or m.enhanced or m.tallies:
        return False
    fn = facts.function
    if not fn.is_kernel or fn.funcdef is None or getattr(fn, "expanded", None) is not None:
        return False
    if not plan.counts_on_device(facts.name):
        return False
    return shared_declarations(facts) is not None


def shared_declarations(facts):
    """The statements of the kernel's body that declare its `__shared__` variables, in order,
    (their Decl nodes, span) each; None where the body cannot have two copies (above)."""
    body = facts.function.funcdef.body
    spans = facts.function.parsed.statement_spans
    top = set(id(item) for item in (body.block_items or []))
    locals_ = set()
    out, seen = [], set()
    for node in X.walk(body):
        if isinstance(node, (c_ast.Goto, c_ast.Label, X.Asm)):
            return None
        if not isinstance(node, c_ast.Decl):
            continue
        storage = node.storage or []
        if "static" in storage:
            return None
        if "__shared__" not in storage:
            if node.name:
                locals_.add(node.name)
            continue
        if id(node) not in top:
            return None
        span = spans.get(node, X.span(node))
        used = {n.name for n in X.walk(node.type) if isinstance(n, c_ast.ID)}
        if used & locals_:
            return None
        if (span.start, span.end) not in seen:
            seen.add((span.start, span.end))
            out.append((node, span))
    return out


def two_bodies(facts, ours: list, ends, theirs: list, their_ends, calls: bool) -> list:
    """The kernel's patches (ours: the file's, with its prologue and epilogue `ends`) with the
    inside of its braces replaced by the prologue, the hoisted `__shared__` declarations and
    `if (measured) { this body } else { the other }`; theirs: the file's patches from the
    same plan with the statistics off (their_ends: that rewrite's prologue and epilogue);
    calls: the kernel calls device functions (whose hooks read the block's flags). Each body
    starts with a `#line` of the body's first line, so the lines stay the user's."""
    sp = X.span(facts.function.funcdef.body)
    source, text = sp.source, sp.source.text
    start, end = sp.start + 1, sp.end - 1
    name = source.name
    prologue, epilogue = ends
    inside = [p for p in ours if start <= p.offset <= end and
              p is not prologue and p is not epilogue]
    gone = {id(p) for p in inside} | {id(prologue), id(epilogue)}
    others = [p for p in theirs if start <= p.offset <= end and
              not any(p is q for q in their_ends)]
    hoisted, blanks, taken = [], [], set()
    for _node, dsp in shared_declarations(facts):
        # (a registration of the array's address follows its declaration: hoisted with it)
        after = [p for p in inside if p.offset == dsp.end and p.kind == SUFFIX]
        taken.update(id(p) for p in after)
        line = source.line_col(dsp.start)[0]
        hoisted.append(f'\n#line {line} "{name}"\n' +
                       apply_patches(text, after, dsp.start, dsp.end))
        blank = "".join(c if c == "\n" else " " for c in text[dsp.start:dsp.end])
        blanks.append(Patch(dsp.start, REPLACE, blank, dsp.end - dsp.start, dsp.end))

    def body(patches, rename: bool) -> str:
        keep = [p for p in patches if id(p) not in taken and
                not any(b.offset <= p.offset < b.end for b in blanks)]
        if rename:
            keep = [dataclasses.replace(p, text=p.text.replace("::gmprof::", UNMEASURED_NS))
                    for p in keep]
        return apply_patches(text, keep + blanks, start, end)

    first, last = source.line_col(start)[0], source.line_col(end)[0]
    again = f'\n#line {first} "{name}"\n'
    # the blocks start unmeasured (enter<false>: no hash before the entry's barrier); each
    # warp asks the hash after it, a measured block takes its rank then
    assert prologue.text.startswith(" ::gmprof::enter();")
    enter = prologue.text.replace("::gmprof::enter();",
                                  f"::gmprof::enter<false, {str(calls).lower()}>();", 1)
    replacement = (enter + "".join(hoisted) + again +
                   "if (::gmprof::block_hashed_in()) { ::gmprof::enter_measured();" +
                   body(inside, False) + epilogue.text + "} else {" + again +
                   body(others, True) + epilogue.text.replace("::gmprof::", UNMEASURED_NS) +
                   "}" + f'\n#line {last} "{name}"\n')
    return [p for p in ours if id(p) not in gone] + [
        Patch(start, REPLACE, replacement, end - start, end)]


__all__ = ["applies", "shared_declarations", "two_bodies", "UNMEASURED_NS"]
