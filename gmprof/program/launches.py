"""Find kernel launches in host code and rewrite them into calls to gmprof's host runtime.

Stage: whole programs, before compilation. Takes the text of a host stretch (a host function, a
class body, a `#define`) and returns text patches (gmprof.passes.rewrite.Patch) that rewrite,
without adding a line,

    k<<<grid, block, shmem, stream>>>(a, b)   ->  ::gmprof_host::launch(k, grid, block, shmem, stream)(a, b)
    cudaLaunchKernel(f, g, b, args, s, st)    ->  ::gmprof_host::launch_kernel(f, g, b, args, s, st)
    cudaLaunchKernelEx(&cfg, k, a, b)         ->  ::gmprof_host::launch_kernel_ex(&cfg, k, a, b)
    cudaLaunchKernelExC(&cfg, f, args)        ->  ::gmprof_host::launch_kernel_ex_c(&cfg, f, args)
    cudaLaunchCooperativeKernel(f, g, b, args, s, st)
                                              ->  ::gmprof_host::launch_cooperative_kernel(...)
    cudaGraphLaunch, cudaGraphAddKernelNode, cudaGraphInstantiate, cudaGraphExecUpdate and the
    other graph calls that name a node of an executable graph, cudaDeviceReset, cudaThreadExit
                                              ->  ::gmprof_host::graph_launch, ... (same arguments)

Every launch goes through the runtime, which looks the kernel up by its address: a kernel that
gmprof instrumented (in any translation unit) may run its instrumented copy, anything else
(a kernel gmprof could not read, one from a library) runs as it was. The user's text around a
launch is untouched, so line and column numbers stay what they were.

The kernel in `E<<<...>>>` is the expression just before `<<<`: a name, possibly qualified and
with template arguments (`ns::k<float, 16>`), or a parenthesised expression (`(*table[i])`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gmprof.frontend import segment as S
from gmprof.frontend.scan import Tok, scan

LAUNCH = "::gmprof_host::launch"
API_RENAMES = {
    "cudaLaunchKernel": "::gmprof_host::launch_kernel",
    "cudaLaunchKernelEx": "::gmprof_host::launch_kernel_ex",
    "cudaLaunchKernelExC": "::gmprof_host::launch_kernel_ex_c",
    "cudaLaunchCooperativeKernel": "::gmprof_host::launch_cooperative_kernel",
    # graphs replay profiled launches, and gmprof's counters live on the device until exit
    "cudaGraphLaunch": "::gmprof_host::graph_launch",
    "cudaGraphAddKernelNode": "::gmprof_host::graph_add_kernel_node",
    # (kernel nodes are marked as cudaGraphAddKernelNode's; conditional nodes' bodies are learnt)
    "cudaGraphAddNode": "::gmprof_host::graph_add_node",
    # the program's graphs keep its nodes; gmprof instantiates its own copies of them
    # (runtime_cu/host/gmprof_host_graphs.h) and translates the executables' node operations
    "cudaGraphInstantiate": "::gmprof_host::graph_instantiate",
    "cudaGraphInstantiateWithFlags": "::gmprof_host::graph_instantiate_with_flags",
    "cudaGraphExecKernelNodeSetParams": "::gmprof_host::graph_exec_kernel_node_set_params",
    "cudaGraphExecChildGraphNodeSetParams": "::gmprof_host::graph_exec_child_graph_node_set_params",
    "cudaGraphExecUpdate": "::gmprof_host::graph_exec_update",
    "cudaGraphExecDestroy": "::gmprof_host::graph_exec_destroy",
    "cudaGraphClone": "::gmprof_host::graph_clone",
    "cudaGraphDestroy": "::gmprof_host::graph_destroy",
    "cudaGraphDestroyNode": "::gmprof_host::graph_destroy_node",
    "cudaDeviceReset": "::gmprof_host::device_reset",
    "cudaThreadExit": "::gmprof_host::thread_exit",
}
# (APIs the CPU backend does not emulate)
GPU_RENAMES: dict = {
    "cudaGraphAddNode_v2": "::gmprof_host::graph_add_node",
    "cudaGraphInstantiateWithParams": "::gmprof_host::graph_instantiate_with_params",
    "cudaGraphExecMemcpyNodeSetParams": "::gmprof_host::graph_exec_memcpy_node_set_params",
    "cudaGraphExecMemcpyNodeSetParams1D": "::gmprof_host::graph_exec_memcpy_node_set_params_1d",
    "cudaGraphExecMemsetNodeSetParams": "::gmprof_host::graph_exec_memset_node_set_params",
    "cudaGraphExecHostNodeSetParams": "::gmprof_host::graph_exec_host_node_set_params",
    "cudaGraphExecEventRecordNodeSetEvent": "::gmprof_host::graph_exec_event_record_node_set_event",
    "cudaGraphExecEventWaitNodeSetEvent": "::gmprof_host::graph_exec_event_wait_node_set_event",
    "cudaGraphNodeSetEnabled": "::gmprof_host::graph_node_set_enabled",
    "cudaGraphNodeGetEnabled": "::gmprof_host::graph_node_get_enabled",
}


@dataclass
class Launch:
    """One `<<<...>>>` launch: offsets into the scanned text."""

    kernel_start: int   # the kernel expression's first character
    open_start: int     # '<<<' (its '<<': nvcc also takes `<< <`)
    close_end: int      # just after '>>>'
    kernel_text: str
    line: int = 0
    args_end: int | None = None  # just after the call's closing parenthesis
    open_end: int = 0   # just after '<<<'


@dataclass
class Edit:
    start: int
    end: int
    text: str


def _prev_index(toks: list[Tok], i: int) -> int:
    j = i - 1
    while j >= 0 and toks[j].kind == "comment":
        j -= 1
    return j


def _kernel_start(toks: list[Tok], i: int) -> int | None:
    """Index of the first token of the kernel expression ending just before toks[i]."""
    j = _prev_index(toks, i)
    if j < 0:
        return None
    t = toks[j]
    if t.kind == "op" and t.text in (">", ">>"):
        # template arguments: walk back to the matching '<'
        depth = 0
        while j >= 0:
            tx = toks[j].text if toks[j].kind == "op" else ""
            if tx == ">":
                depth += 1
            elif tx == ">>":
                depth += 2
            elif tx == "<":
                depth -= 1
            elif tx == "<<":
                depth -= 2
            elif tx in (";", "{", "}"):
                return None
            if depth <= 0:
                break
            j -= 1
        if j <= 0 or depth != 0:
            return None
        j = _prev_index(toks, j)
        if j < 0 or toks[j].kind != "id":
            return None
        return _qualified_start(toks, j)
    if t.kind == "op" and t.text == ")":
        depth = 0
        while j >= 0:
            tx = toks[j].text if toks[j].kind == "op" else ""
            if tx == ")":
                depth += 1
            elif tx == "(":
                depth -= 1
                if depth == 0:
                    return j
            elif tx in (";", "{", "}"):
                return None
            j -= 1
        return None
    if t.kind == "id":
        return _qualified_start(toks, j)
    return None


def _qualified_start(toks: list[Tok], j: int) -> int:
    # the scanner joins `a::b` into one id token; a template-qualified scope (`A<T>::k`) is
    # rare before a launch and left as it is
    return j


def _match_close(toks: list[Tok], i: int) -> int | None:
    """Index of the '>>' of the '>>>' closing the configuration opened at toks[i] ('<<')."""
    depth = 0
    k = i + 2
    while k < len(toks):
        t = toks[k]
        if t.kind == "op":
            if t.text in "([{":
                depth += 1
            elif t.text in ")]}":
                depth -= 1
                if depth < 0:
                    return None
            elif t.text == ">>" and depth == 0 and k + 1 < len(toks) and \
                    toks[k + 1].text == ">":
                return k  # `>>>`, or `>> >` with spaces or comments between (nvcc takes both)
            elif t.text == ";":
                return None
        k += 1
    return None


def _call_end(toks: list[Tok], k: int, base: int) -> int | None:
    """The offset just after the argument list that starts at toks[k] ('(')."""
    if k >= len(toks) or toks[k].text != "(":
        return None
    depth = 0
    for j in range(k, len(toks)):
        tx = toks[j].text if toks[j].kind == "op" else ""
        if tx in ("(", "[", "{"):
            depth += 1
        elif tx in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return base + toks[j].end
    return None


def deduced_edits(launch: Launch, call: str | None = None) -> list[Edit] | None:
    """For a template kernel launched with its template arguments deduced (`k<<<g, b>>>(p, n)`)
    on the CPU backend, where a kernel is a C++ function: let C++ deduce them as for a call,
    inside a lambda that the runtime launches (the arguments are evaluated once, as in a launch):

        k<<<g, b>>>(p, n)  ->  ::gmprof_host::launch_deduced(g, b)(p, n)([](auto... a) { k(a...); })

    Such a launch has no address gmprof knows, so it runs unprofiled. With `call` (`return
    ::__gmprof_deduce_k`, gmprof/program/instances.py) the lambda returns the specialisation
    instead, which the runtime launches by its address (profiled, on either backend)."""
    if launch.args_end is None:
        return None
    return [Edit(launch.kernel_start, launch.open_end, "::gmprof_host::launch_deduced("),
            Edit(launch.args_end, launch.args_end,
                 f"([](auto... __gmprof_a) {{ {call or launch.kernel_text}(__gmprof_a...); }})")]


def find_edits(text: str, base: int = 0, cpu: bool = False) -> tuple[list[Edit], list[Launch]]:
    """Edits (offsets into the full file: `base` + offset in `text`) for every launch in
    `text`, and the `<<<>>>` launches found."""
    renames = API_RENAMES if cpu else {**API_RENAMES, **GPU_RENAMES}
    toks = [t for t in scan(text) if t.kind != "comment"]
    edits: list[Edit] = []
    launches: list[Launch] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "id" and t.text.lstrip(":") in renames and i + 1 < len(toks) and \
                toks[i + 1].text in ("(", "<"):
            prev = toks[i - 1].text if i else ""
            if prev not in (".", "->"):
                edits.append(Edit(base + t.start, base + t.end, renames[t.text.lstrip(":")]))
            i += 1
            continue
        # `<<<`, or `<<` and `<` apart (`k << < g, b >> > (x)`: nvcc takes any spaces or
        # comments between; `<` cannot begin an operand, so `<< <` is a launch in C++ too)
        if t.kind == "op" and t.text == "<<" and i + 1 < len(toks) and \
                toks[i + 1].text == "<":
            close = _match_close(toks, i)
            ks = _kernel_start(toks, i)
            if close is None or ks is None:
                i += 1
                continue
            kernel_text = text[toks[ks].start:toks[_prev_index(toks, i)].end]
            edits.append(Edit(base + toks[ks].start, base + toks[ks].start, LAUNCH + "("))
            edits.append(_keeping_lines(text, base, t.start, toks[i + 1].end, ", "))
            edits.append(_keeping_lines(text, base, toks[close].start, toks[close + 1].end, ")"))
            launches.append(Launch(base + toks[ks].start, base + t.start,
                                   base + toks[close + 1].end, kernel_text,
                                   text.count("\n", 0, t.start) + 1,
                                   _call_end(toks, close + 2, base), base + toks[i + 1].end))
            i = close + 2
            continue
        i += 1
    return edits, launches


def _keeping_lines(text: str, base: int, start: int, end: int, new: str) -> Edit:
    """An edit replacing text[start:end] by `new` and the line breaks it held (`<<` and `<` of
    a launch may stand on two lines), so that the lines after it keep their numbers."""
    return Edit(base + start, base + end, new + "\n" * text.count("\n", start, end))


def _split_top(toks: list[Tok]) -> list[list[Tok]]:
    """Tokens split at commas outside brackets (template angle brackets included)."""
    parts: list = [[]]
    depth = 0
    for t in toks:
        tx = t.text if t.kind == "op" else ""
        if tx in ("(", "[", "{", "<"):
            depth += 1
        elif tx in (")", "]", "}", ">"):
            depth -= 1
        elif tx == ">>":
            depth -= 2
        elif tx == "," and depth == 0:
            parts.append([])
            continue
        parts[-1].append(t)
    return parts if parts != [[]] else []


def parameter_defaults(text: str, name: str) -> list | None:
    """The default argument of each parameter of the function `name` declared in `text` (its
    text, None where there is none), or None if its parameter list is not found."""
    params = parameter_list(text, name)
    return None if params is None else [d for _, d in params]


def parameter_list(text: str, name: str) -> list | None:
    """(its declaration, its default argument or None) of each parameter of the function `name`
    declared in `text`, as written; None if its parameter list is not found."""
    toks = [t for t in scan(text) if t.kind != "comment"]
    for i, t in enumerate(toks[:-1]):
        if t.kind == "id" and t.text.split("::")[-1] == name and toks[i + 1].text == "(":
            depth, j = 0, i + 1
            while j < len(toks):
                if toks[j].text == "(":
                    depth += 1
                elif toks[j].text == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            out = []
            for part in _split_top(toks[i + 2:j]):
                eq = next((k for k, p in enumerate(part) if p.kind == "op" and p.text == "="), None)
                decl = part[:eq] if eq is not None else part
                out.append((text[decl[0].start:decl[-1].end] if decl else "",
                            text[part[eq + 1].start:part[-1].end] if eq is not None and
                            eq + 1 < len(part) else None))
            return out
    return None


def argument_count(text: str, launch: Launch) -> int | None:
    """How many arguments the launch passes (None when its argument list is not found)."""
    if launch.args_end is None:
        return None
    inner = text[launch.close_end:launch.args_end].strip()
    if not inner.startswith("(") or not inner.endswith(")"):
        return None
    return len(_split_top([t for t in scan(inner[1:-1]) if t.kind != "comment"]))


def rewrite_text(text: str) -> str:
    """`text` with every launch rewritten (for a whole file of host code, and the tests)."""
    edits, _ = find_edits(text)
    out, pos = [], 0
    for e in sorted(edits, key=lambda e: e.start):
        out.append(text[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


def kernel_name_of(expr: str) -> tuple[str, str]:
    """'ns::k<float, 16>' -> ('ns::k', 'float, 16'); '(k)' -> ('', '')."""
    expr = expr.strip()
    if expr.startswith("("):
        return "", ""
    name, lt, rest = expr.partition("<")
    if lt and rest.endswith(">"):
        return "".join(name.split()), rest[:-1].strip()
    return "".join(name.split()), ""


def kernel_declarations(tu) -> dict:
    """Kernel name -> the default argument of each parameter (text, or None), one list per
    definition or declaration of that name (None: its parameter list was not found)."""
    found: dict = {}
    for src, segs in tu.segments.items():
        for seg in segs:
            if seg.kind in (S.FUNCTION, S.PROTOTYPE) and seg.space == "global" and seg.name and \
                    tu.active.get(seg, True):
                text = seg.text(src)
                head = text[:text.find("{")] if seg.kind == S.FUNCTION else text
                found.setdefault(seg.name, []).append(parameter_defaults(head, seg.name))
    return found


def overloaded(declarations: dict) -> set:
    """Kernel names declared with different numbers of parameters: `&k` names no one function
    (cuda-samples' cdpAdvancedQuicksort declares qsort_warp with 7 parameters in a header and
    defines it with 8); overloads.py names the one meant."""
    return {name for name, lists in declarations.items()
            if len({len(x) if x is not None else -1 for x in lists}) > 1}


def kernel_defaults(declarations: dict) -> dict:
    """Kernel name -> the default argument of each parameter (text, or None), for kernels with
    any (from their definition or a declaration; an overloaded name has none here)."""
    out = {}
    for name, lists in declarations.items():
        if any(x is None for x in lists) or len({len(x) for x in lists}) != 1:
            continue
        merged = [next((x[k] for x in lists if x[k] is not None), None)
                  for k in range(len(lists[0]))]
        if any(d is not None for d in merged):
            out[name] = merged
    return out


def add_defaults(patches, src, launch, defaults) -> None:
    """`k<<<g, b>>>(p)` with `__global__ void k(int *p, int n = 32)` passes n's default
    explicitly: the runtime's launcher takes the kernel's address, which has no defaults."""
    from gmprof.passes.patches import REPLACE as _REPLACE
    from gmprof.passes.patches import Patch

    if not defaults:
        return
    n = argument_count(src.text, launch)
    if n is None or n >= len(defaults) or any(d is None for d in defaults[n:]):
        return
    text = (", " if n else "") + ", ".join(defaults[n:])
    at = launch.args_end - 1
    patches.setdefault(src, []).append(Patch(at, _REPLACE, text, 0, end=at))


def local_constants(text: str) -> dict:
    """Names a host function declares `const`/`constexpr` -> their value where it is an integer
    literal (else None): template arguments written with them name no specialisation at file
    scope, unless replaced by their value."""
    out: dict = {}
    for m in re.finditer(r"\b(?:const|constexpr)\s+(?:(?:unsigned|signed|int|long|short|"
                         r"size_t|char|bool|auto|static)\s+)+(\w+)\s*(?:=\s*([^;,]+?)\s*)?[;,]",
                         text):
        value = m.group(2)
        out[m.group(1)] = value if value and re.fullmatch(r"\d+[uUlL]*", value) else None
    return out
