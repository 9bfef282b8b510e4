"""Conditional compilation without macro expansion.

Stage 3 of the frontend. Real kernels hold `#if`/`#ifdef` blocks at file scope and inside
function bodies. gmprof resolves them with the user's -D flags and the file's own `#define`s
(expressions evaluated by pcpp, in-process) but never expands macros in the code it parses: a
macro stays an identifier (`BLOCK_SIZE`) or a call (`IDX(i, j)`), so positions and the user's
text survive.

Takes the directives in file order; answers which code is active, keeps a record of every macro
(for the type oracle and for the analyses, which may substitute a macro's body), and produces a
function's *parse view*: its text with directive lines and inactive branches blanked to spaces
(newlines kept), so every offset in the view is the same offset in the file. `#pragma` lines in
active code are kept: the grammar has a statement for them.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

import pcpp

from ..errors import Diagnostic, GmprofError, Location, OptionError
from .scan import Tok, directive_body, directive_name


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None  # None for an object-like macro
    body: str
    location: Location | None  # None for -D on the command line

    @property
    def function_like(self) -> bool:
        return self.params is not None


_DEFINE = re.compile(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)", re.S)


def parse_define(body: str, location: Location | None) -> Macro | None:
    m = _DEFINE.match(body)
    if not m:
        return None
    params = None
    if m.group(2) is not None:
        params = tuple(p.strip() for p in m.group(3).split(",") if p.strip())
    return Macro(m.group(1), params, m.group(4).strip(), location)


# What nvcc defines in every compilation, host and device passes alike (`#ifdef __CUDACC__`
# around `__host__ __device__` is common in shared headers), and the host platform's name, which
# samples test with `#if defined(__linux__) ... #else #error`. -D options override these.
# __CUDA_ARCH__ is added by `device_pass_defines`: gmprof reads a file as nvcc's device pass does.
PREDEFINED = {"__CUDACC__": "1", "__NVCC__": "1", "__cplusplus": "201703L"}
DEFAULT_ARCH = "sm_90"


def cuda_arch(arch: str | int | None) -> int:
    """`__CUDA_ARCH__` for an architecture: 'sm_90', 'sm_90a', 'compute_80', '86' or 860 ->
    900, 900, 800, 860, 860. None is DEFAULT_ARCH."""
    if arch is None:
        arch = DEFAULT_ARCH
    if isinstance(arch, int) and not isinstance(arch, bool):
        value = arch * 10 if arch < 100 else arch
    else:
        m = re.fullmatch(r"(?:sm_|compute_)?([1-9][0-9])[af]?", str(arch).strip())
        if m is None:
            raise OptionError(f"--arch {arch}: expected an architecture such as sm_90 or "
                              "compute_80")
        value = int(m.group(1)) * 10
    if not 100 <= value < 1000 or value % 10:
        raise OptionError(f"--arch {arch}: expected an architecture such as sm_90 or compute_80")
    return value


def device_pass_defines(arch: str | int | None) -> dict[str, str]:
    """What nvcc's device pass adds to PREDEFINED: `__CUDA_ARCH__` (host code, which gmprof
    never reads, sees it undefined in nvcc's host pass)."""
    return {"__CUDA_ARCH__": str(cuda_arch(arch))}
def _cudart_version() -> int:
    """CUDART_VERSION of the CUDA toolkit nvcc would use (cuda_runtime_api.h defines it, and
    nvcc always includes it: cuda-samples' threadFenceReduction includes its kernels only
    `#if CUDART_VERSION >= 2020`); 13000, the CPU backend's emulation, without one."""
    import os
    import shutil

    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    roots.append("/usr/local/cuda")
    for root in filter(None, roots):
        try:
            with open(os.path.join(root, "include", "cuda_runtime_api.h"), errors="replace") as f:
                m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", f.read())
        except OSError:
            continue
        if m:
            return int(m.group(1))
    return 13000


_CUDART = _cudart_version()
# (nvcc's own version: the toolkit's)
PREDEFINED.update({"CUDART_VERSION": str(_CUDART), "__CUDACC_VER_MAJOR__": str(_CUDART // 1000),
                   "__CUDACC_VER_MINOR__": str(_CUDART % 1000 // 10)})
if sys.platform.startswith("linux"):
    PREDEFINED.update({"__linux__": "1", "__unix__": "1"})
elif sys.platform == "win32":
    PREDEFINED.update({"_WIN32": "1", "_WIN64": "1"})


class _Evaluator(pcpp.Preprocessor):
    """pcpp used only as an #if expression evaluator and define table; errors become ours."""

    def __init__(self):
        super().__init__()
        self.errors: list[str] = []

    def on_error(self, file, line, msg):  # noqa: D401 - pcpp hook
        self.errors.append(msg)

    def on_unknown_macro_in_expr(self, ident):
        return 0  # the C rule: an unknown identifier in #if is 0


@dataclass
class _Frame:
    parent_active: bool
    active: bool
    taken: bool
    location: Location | None
    #: undefined macros the conditions of this #if chain tested: a system header gmprof does
    #: not read (or an nvcc -D) may define them, so the branch taken here may not be nvcc's
    unknown: set = field(default_factory=set)


class Conditionals:
    """The state of conditional compilation as a translation unit is read in order."""

    def __init__(self, defines: dict[str, str | None] | None = None, predefined: bool = True):
        self._eval = _Evaluator()
        self.macros: dict[str, Macro] = {}
        self._stack: list[_Frame] = []
        self.warnings: list[Diagnostic] = []
        for name, value in {**(PREDEFINED if predefined else {}), **(defines or {})}.items():
            self.define_command_line(name, value)

    # -- state ---------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        return not self._stack or self._stack[-1].active

    @property
    def depth(self) -> int:
        return len(self._stack)

    def define_command_line(self, name: str, value: str | None) -> None:
        text = f"{name} {1 if value is None else value}"
        macro = parse_define(text, None)
        if macro is None:
            raise OptionError(f"bad -D definition: {name!r}")
        self._eval.define(text)
        self.macros[macro.name] = macro

    def is_defined(self, name: str) -> bool:
        return name in self._eval.macros

    def evaluate(self, expression: str, location: Location | None) -> bool:
        self._eval.errors.clear()
        tokens = self._eval.tokenize(expression)
        try:
            value, _ = self._eval.evalexpr(tokens)
        except Exception as exc:  # pcpp raises on malformed input in places
            raise GmprofError(f"cannot evaluate #if expression {expression!r}: {exc}", location,
                              kind="preprocess")
        if self._eval.errors:
            raise GmprofError(f"cannot evaluate #if expression {expression!r}: "
                              f"{self._eval.errors[0]}", location, kind="preprocess")
        return bool(value)

    # -- directives ------------------------------------------------------------------------
    def directive(self, text: str, location: Location | None) -> str:
        """Apply one directive line; return its name. `#include` is left to the caller."""
        name = directive_name(text)
        body = directive_body(text)
        if name in ("if", "ifdef", "ifndef"):
            parent = self.active
            unknown = set()
            if not parent:
                value = False  # not evaluated: inactive code may hold anything
            elif name == "if":
                value = self.evaluate(body, location)
                unknown = self._undefined_names(body)
            else:
                ident = body.split()[0] if body.split() else ""
                value = self.is_defined(ident) == (name == "ifdef")
                unknown = self._undefined_names(ident)
            self._stack.append(_Frame(parent, parent and value, value, location, unknown))
        elif name in ("elif", "elifdef", "elifndef"):
            frame = self._top(name, location)
            if frame.taken or not frame.parent_active:
                frame.active = False
            else:
                if name == "elif":
                    value = self.evaluate(body, location)
                    frame.unknown |= self._undefined_names(body)
                else:
                    ident = body.split()[0] if body.split() else ""
                    value = self.is_defined(ident) == (name == "elifdef")
                    frame.unknown |= self._undefined_names(ident)
                frame.active = value
                frame.taken = value
        elif name == "else":
            frame = self._top(name, location)
            frame.active = frame.parent_active and not frame.taken
            frame.taken = True
        elif name == "endif":
            self._top(name, location)
            self._stack.pop()
        elif name == "define" and self.active:
            macro = parse_define(body, location)
            if macro is not None:
                self._eval.define(body)
                self.macros[macro.name] = macro
        elif name == "undef" and self.active:
            ident = body.split()[0] if body.split() else ""
            if ident in self._eval.macros:
                self._eval.undef(self._eval.tokenize(ident))
            self.macros.pop(ident, None)
        elif name == "error" and self.active:
            # (an include guard's name is tested undefined, then defined: it does not count)
            unknown = sorted(n for n in set().union(*(f.unknown for f in self._stack))
                             if not self.is_defined(n))
            if not unknown:
                raise GmprofError(f"#error {body}", location, kind="preprocess")
            # `#if defined(_POSIX_VERSION) ... #else #error` with <unistd.h> unread: nvcc, which
            # reads the system headers, may well take the other branch
            names = ", ".join(unknown[:3])
            self.warnings.append(Diagnostic(
                "directive", f"#error {body}: not applied, since the branch it is in depends on "
                f"{names}, which gmprof does not know (a system header or an nvcc -D option may "
                f"define it; -D chooses the branch)", location))
        return name

    def _undefined_names(self, expression: str) -> set:
        """The identifiers an #if expression tests that are not defined macros."""
        return {w for w in re.findall(r"[A-Za-z_]\w*", expression)
                if w not in ("defined", "true", "false", "__has_include", "__has_include_next")
                and not self.is_defined(w)}

    def _top(self, name: str, location: Location | None) -> _Frame:
        if not self._stack:
            raise GmprofError(f"#{name} without #if", location, kind="preprocess")
        return self._stack[-1]

    def open_location(self) -> Location | None:
        return self._stack[-1].location if self._stack else None

    # -- function bodies -------------------------------------------------------------------
    def parse_view(self, text: str, base: int, tokens: list[Tok], locate) -> str:
        """The text of the span [base, base + len(text)) with directives and inactive code
        blanked. `tokens` are the scan tokens inside the span; `locate(offset)` -> Location."""
        depth = self.depth
        pieces: list[str] = []
        pos = 0  # offset into text
        for tok in tokens:
            start, end = tok.start - base, tok.end - base
            if tok.kind == "dir":
                active_before = self.active
                name = self.directive(tok.text, locate(tok.start))
                keep = name == "pragma" and active_before
                pieces.append(_blank_unless(text[pos:start], self_active=active_before))
                pieces.append(text[start:end] if keep else _blank(text[start:end]))
                pos = end
                continue
            if not self.active:
                pieces.append(_blank(text[pos:end]))
                pos = end
        pieces.append(text[pos:] if self.active else _blank(text[pos:]))
        # Fewer open conditionals than at the start is fine: the function's head closed one
        # opened before it (`#ifdef __CUDACC__ / __host__ __device__ / #endif / float f() {`).
        if self.depth > depth:
            where = self.open_location()
            # Restore the outer state so the rest of the file is read sensibly.
            del self._stack[depth:]
            raise GmprofError("#if without #endif inside this function", where, kind="preprocess")
        return "".join(pieces)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _blank_unless(text: str, self_active: bool) -> str:
    return text if self_active else _blank(text)
