"""The code's shape, checked: no module in gmprof/ or passes/ over 600 lines, no import cycle
among them, and no import from a later stage (by folder, STAGES below), counting imports inside
functions too (an import under `if TYPE_CHECKING:` is for annotations only and does not
count)."""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Module name -> file, for gmprof/ (not through its links to the top-level stages) and
    passes/ (imported as gmprof.passes)."""
    out = {}
    for top, package in (("gmprof", "gmprof"), ("passes", "gmprof.passes")):
        base = ROOT / top
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if top == "gmprof" and any((base / part).is_symlink() for part in rel.parts[:1]):
                continue
            parts = [package] + list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _type_checking_only(tree) -> set:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                skip.update(ast.walk(sub))
    return skip


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = _type_checking_only(tree)
    found = set()
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


# The stages, in order: a module imports only from its own stage and earlier ones. A module is
# in the stage of its folder; gmprof/'s own modules are CLI (argument parsing, output, the
# public API) except BASE, which every stage uses (errors, modes, options, paths, timing).
STAGES = ("base", "frontend", "passes", "report", "runtime", "program", "cli")
BASE = {"gmprof._paths", "gmprof.errors", "gmprof.mode", "gmprof.options", "gmprof.version",
        "gmprof.timing", "gmprof.host_cache", "gmprof.driver", "gmprof.cache_dirs"}
# modules of a stage's folder that are CLI: argument handling and output of its commands
CLI_IN_FOLDERS = {"gmprof.program.cli"}


def stage_of(name: str) -> str:
    if name in BASE:
        return "base"
    if name in CLI_IN_FOLDERS:
        return "cli"
    parts = name.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in STAGES else "cli"


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in _modules().values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_import_cycles():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles = []
    index, low, stack, on_stack = {}, {}, [], set()

    def connect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    assert cycles == []


def test_imports_only_from_earlier_stages():
    modules = _modules()
    rank = {s: k for k, s in enumerate(STAGES)}
    later = sorted(f"{name} ({stage_of(name)}) imports {target} ({stage_of(target)})"
                   for name, path in modules.items()
                   for target in _imports(name, path, modules)
                   if rank[stage_of(target)] > rank[stage_of(name)])
    assert later == []


def test_every_folder_is_a_stage():
    # a new folder under gmprof/ must be given its place in STAGES (else it would count as CLI)
    folders = {name.split(".")[1] for name in _modules() if name.count(".") >= 2}
    assert folders <= set(STAGES)


@pytest.mark.skipif(shutil.which("duplicates") is None,
                    reason="the duplicates tool is not installed")
def test_no_repeated_library_code():
    """No run of more than 10 lines (alike, or alike in shape) repeated in library code:
    `duplicates --min-lines 11` lists no pair with a side in gmprof/ or passes/."""
    out = subprocess.run(["duplicates", "--min-lines", "11", "--most", "200", "--seconds", "120"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    assert "incomplete:" not in out
    pairs = [line for line in out.splitlines() if re.match(r"D\d+ ", line)]
    library = [line for line in pairs if re.search(r"(^D\d+ | ~ )(gmprof|passes)/", line)]
    assert library == []


def test_the_checks_see_every_stage():
    modules = _modules()
    for name in ("gmprof.cli", "gmprof.passes.pipeline", "gmprof.runtime.session",
                 "gmprof.runtime.decode", "gmprof.frontend.program"):
        assert name in modules
    # a cycle hidden in a function-level import is found
    graph = _imports("gmprof.cli_report", modules["gmprof.cli_report"], modules)
    assert "gmprof.cli_commands" in graph
    assert {stage_of(n) for n in modules} == set(STAGES)


def test_every_error_made_has_a_kind():
    """A GmprofError made directly names its kind (a subclass carries its own), so tests and
    tools match kinds, not text (docs/errors.md lists them)."""
    bare = []
    for path in _modules().values():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "GmprofError" and \
                    not any(k.arg == "kind" for k in node.keywords):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []
