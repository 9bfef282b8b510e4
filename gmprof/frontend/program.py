"""Load a translation unit: files, segments, macros, types, and the AST of every device function.

The frontend's driver. Takes a .cu path (or text) with -D/-I options; returns a TranslationUnit:
the main file and the local headers it includes (`#include "x.cuh"`, followed relative to the
including file, then the -I directories), each cut into segments; the macros in effect; the type
oracle; every active `__global__`/`__device__` function with its c_ast (or the reason it could
not be parsed, as a warning); and file-scope CUDA variables.

Only device code is parsed. Host code is segmented and kept verbatim.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pycparser import c_ast

from ..errors import Diagnostic, GmprofError, Location, OptionError
from . import segment as S
from .build import ParsedFunction
from .oracle import TypeOracle
from .parser import get_parser
from .preprocess import Conditionals, Macro, device_pass_defines
from .expand import ExpandedSource, expand_function, expand_text
from .head import read_head, unknown_head_call
from .members import class_members
from .nesting import too_deep
from .scan import Tok, blank, directive_body, scan
from .source import SourceFile, read_source

_MAX_INCLUDE_DEPTH = 40
_DEVICE_WORDS = ("__global__", "__device__")


@dataclass
class Function:
    """A device function (`__global__`, `__device__` or `__host__ __device__`)."""

    name: str
    space: str  # 'global', 'device', 'host_device'
    source: SourceFile
    segment: S.Segment
    view: str  # the parse view (directives and inactive code blanked)
    parsed: ParsedFunction | None = None
    error: GmprofError | None = None
    #: for a member function defined in its class's body: the class's name, and the type
    #: parameters of the enclosing class templates (types while it is parsed)
    owner: str | None = None
    scope_types: tuple = ()
    #: when it parsed only with its macros expanded: that text (spans are on it)
    expanded: ExpandedSource | None = None

    @property
    def is_kernel(self) -> bool:
        return self.space == "global"

    @property
    def funcdef(self) -> c_ast.FuncDef | None:
        return self.parsed.funcdef if self.parsed else None

    @property
    def template_params(self) -> list:
        return self.parsed.template_params if self.parsed else []

    @property
    def params(self) -> list:
        if not self.parsed:
            return []
        plist = self.parsed.funcdef.decl.type.args
        if plist is None:
            return []
        return [p for p in plist.params if isinstance(p, (c_ast.Decl, c_ast.Typename))
                and not _is_void_param(p)]

    @property
    def location(self) -> Location:
        return self.source.location(self.segment.start)

    def __repr__(self) -> str:
        return f"Function({self.name!r}, {self.space}, parsed={self.parsed is not None})"


def _is_void_param(p) -> bool:
    t = p.type
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and t.type.names == ["void"] and p.name is None)


@dataclass
class FileVariable:
    """A file-scope `__device__` / `__constant__` / `__managed__` / `extern __shared__` variable."""

    name: str | None
    space: str
    source: SourceFile
    segment: S.Segment
    decl: c_ast.Decl | None = None


@dataclass
class Include:
    directive: S.Segment
    source: SourceFile  # the including file
    target: SourceFile | None  # None when it could not be found (system or host header)
    name: str
    #: a header already read whose `#pragma once` skips it here: the output leaves it out too
    once: bool = False


@dataclass
class TranslationUnit:
    main: SourceFile
    files: list[SourceFile] = field(default_factory=list)
    segments: dict = field(default_factory=dict)  # SourceFile -> list[Segment]
    active: dict = field(default_factory=dict)  # Segment -> bool (is it in active code)
    functions: list[Function] = field(default_factory=list)
    variables: list[FileVariable] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    macros: dict[str, Macro] = field(default_factory=dict)
    oracle: TypeOracle = field(default_factory=TypeOracle)
    warnings: list[Diagnostic] = field(default_factory=list)
    defines: dict = field(default_factory=dict)
    include_dirs: list = field(default_factory=list)
    #: the `__CUDA_ARCH__` the file was read with (nvcc's device pass for --arch)
    cuda_arch: int = 900
    #: function segment -> its macro-expanded text, for functions read expanded (expand.py);
    #: the rewriter emits that text in the segment's place
    expansions: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # caches of the frontend's own

    def function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name and f.parsed is not None:
                return f
        for f in self.functions:
            if f.name == name:
                return f
        return None

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]


def parse_define_option(text: str) -> tuple[str, str | None]:
    """'-D' argument 'NAME' or 'NAME=VALUE' -> (name, value)."""
    name, eq, value = text.partition("=")
    if not name or not (name[0].isalpha() or name[0] == "_") or \
            not all(ch.isalnum() or ch == "_" for ch in name):
        raise OptionError(f"bad -D option {text!r}: expected NAME or NAME=VALUE")
    return name, (value if eq else None)


def load(path: str | Path | None = None, *, text: str | None = None, name: str | None = None,
         defines: dict[str, str | None] | None = None,
         include_dirs: list[str | Path] | None = None,
         arch: str | int | None = None) -> TranslationUnit:
    """Read and parse a translation unit from a path, or from `text` (named `name`), as nvcc's
    device pass for `arch` (default sm_90) reads it: `__CUDA_ARCH__` is defined."""
    include_dirs = [Path(d) for d in (include_dirs or [])]
    device_pass = device_pass_defines(arch)
    for d in include_dirs:
        if not d.is_dir():
            raise OptionError(f"-I {d}: no such directory")
    if text is not None:
        main = SourceFile(name or "<string>", text, Path(name) if name else None)
    else:
        main = read_source(path)
    user_arch = str((defines or {}).get("__CUDA_ARCH__") or "")
    tu = TranslationUnit(main, defines=dict(defines or {}), include_dirs=include_dirs,
                         cuda_arch=int(user_arch) if user_arch.isdigit() else
                         int(device_pass["__CUDA_ARCH__"]))
    loader = _Loader(tu, {**device_pass, **tu.defines})
    loader.walk_file(main, depth=0)
    tu.macros = dict(loader.cond.macros)
    tu.warnings.extend(loader.cond.warnings)
    tu.oracle.add_macros(tu.macros)
    parser = get_parser()
    functions = []
    for fn in tu.functions:
        _parse_function(tu, parser, fn)
        _refuse_too_deep(tu, fn)
        functions.append(fn)
        functions.extend(_lambda_functions(fn))
    tu.functions = functions
    for var in tu.variables:
        _parse_variable(tu, parser, var)
    return tu


class _Loader:
    def __init__(self, tu: TranslationUnit, defines: dict):
        self.tu = tu
        self.cond = Conditionals(defines)
        self.once: set[str] = set()
        self.tokens: dict[SourceFile, list[Tok]] = {}

    def walk_file(self, source: SourceFile, depth: int) -> None:
        tu = self.tu
        tu.files.append(source)
        toks = scan(source.text)
        self.tokens[source] = toks
        for tok in toks:
            # as nvcc: a block comment that never closes is an error, not a file that ends early
            if tok.kind == "comment" and tok.text.startswith("/*") and \
                    (len(tok.text) < 4 or not tok.text.endswith("*/")):
                raise GmprofError("unterminated comment", source.location(tok.start), kind="syntax")
        self._check_encoding(source, toks)
        tu.oracle.scan_tokens(toks)
        segs = S.segment(source, toks)
        tu.segments[source] = segs
        depth_at_start = self.cond.depth
        tok_index = 0
        for seg in segs:
            active = self.cond.active
            tu.active[seg] = active
            if seg.kind == S.DIRECTIVE:
                text = seg.text(source)
                name = self.cond.directive(text, source.location(seg.start))
                if name == "include" and active:
                    self.include(source, seg, text, depth)
                elif name == "pragma" and "once" in text.split() and source.path is not None:
                    self.once.add(str(source.path.resolve()))
                continue
            # the tokens of this segment (for conditionals inside it)
            while tok_index < len(toks) and toks[tok_index].start < seg.start:
                tok_index += 1
            k = tok_index
            while k < len(toks) and toks[k].end <= seg.end:
                k += 1
            seg_tokens = toks[tok_index:k]
            head_blanks = []
            if active and seg.kind == S.FUNCTION and seg.keywords & self.cond.macros.keys():
                head_blanks = self.expand_head(seg, seg_tokens)
            members = class_members(seg_tokens) if active and seg.kind == S.TYPE and \
                "__device__" in seg.keywords else []
            if not (active and seg.kind == S.FUNCTION and seg.is_device_function):
                # Directives inside a segment that is not parsed (host code, inactive code, a
                # declaration split by `#ifdef __CUDACC__ ... #endif`) still open and close
                # conditionals; skipping them would leave the rest of the file misread.
                # A member function's are applied as its parse view is made.
                k = 0
                for member in members:
                    while k < len(seg_tokens) and seg_tokens[k].start < member.segment.start:
                        self.apply_directive(source, seg_tokens[k])
                        k += 1
                    inside = []
                    while k < len(seg_tokens) and seg_tokens[k].start < member.segment.end:
                        inside.append(seg_tokens[k])
                        k += 1
                    self.add_member(source, member, inside)
                for tok in seg_tokens[k:]:
                    self.apply_directive(source, tok)
            if not active:
                continue
            if seg.kind == S.OTHER:
                self.check_cut_declaration(source, seg_tokens)
            if seg.kind == S.FUNCTION and seg.is_device_function:
                body_tokens = seg_tokens
                text = seg.text(source)
                fn = Function(seg.name or "<anonymous>", seg.space, source, seg, text)
                try:
                    fn.view = self.cond.parse_view(text, seg.start, body_tokens, source.location)
                    for start, end in head_blanks:
                        fn.view = fn.view[:start - seg.start] + \
                            blank(fn.view[start - seg.start:end - seg.start]) + \
                            fn.view[end - seg.start:]
                except GmprofError as exc:
                    fn.error = exc
                tu.functions.append(fn)
            elif seg.kind == S.VARIABLE and seg.space != "host":
                tu.variables.append(FileVariable(seg.name, seg.space, source, seg))
        if self.cond.depth != depth_at_start and depth == 0:
            # as nvcc: the file the user named must close every conditional it opens
            raise GmprofError("unterminated #if", self.cond.open_location(), kind="preprocess")
        if self.cond.depth != depth_at_start and depth > 0:
            # An included file may legitimately open a conditional that the includer closes
            # (rare); report it but carry on.
            tu.warnings.append(Diagnostic("unbalanced-conditional",
                                          f"{source.name} leaves an #if open",
                                          self.cond.open_location()))

    def apply_directive(self, source: SourceFile, tok: Tok) -> None:
        if tok.kind != "dir":
            return
        try:
            self.cond.directive(tok.text, source.location(tok.start))
        except GmprofError as exc:  # an #error in host code, say
            self.tu.warnings.append(Diagnostic("directive", exc.message, exc.location))

    def add_member(self, source: SourceFile, member, tokens: list[Tok]) -> None:
        """A device function defined inside a struct or class body (members.py)."""
        seg = member.segment
        if not self.cond.active:  # an #if inside the class body left it out
            for tok in tokens:
                self.apply_directive(source, tok)
            return
        text = seg.text(source)
        fn = Function(seg.name, seg.space, source, seg, text, owner=member.owner,
                      scope_types=member.type_params)
        try:
            fn.view = self.cond.parse_view(text, seg.start, tokens, source.location)
        except GmprofError as exc:
            fn.error = exc
        self.tu.functions.append(fn)

    def check_cut_declaration(self, source: SourceFile, tokens: list[Tok]) -> None:
        """A device function whose head never reaches a body or a ';' (a parameter list cut
        short or left open) is no segment the reader recognises: say so, where it goes wrong,
        rather than leave the kernel out in silence."""
        code = [t for t in tokens if t.kind not in ("comment", "dir")]
        first = next((t for t in code if t.kind == "id" and t.text in _DEVICE_WORDS), None)
        if first is None:
            return
        opened = []
        for t in code:
            if t.kind == "op" and t.text == "(":
                opened.append(t)
            elif t.kind == "op" and t.text == ")" and opened:
                opened.pop()
        head = [t for t in code if t.start >= first.start]
        name = S.function_name(head) or next(
            (t.text for k, t in enumerate(head[:-1]) if t.kind == "id" and head[k + 1].text == "("),
            "<anonymous>")
        if opened:
            what, where = "its parameter list is not closed", opened[0].start
        else:
            what, where = "it has no body and no ';'", code[-1].end
        self.tu.warnings.append(Diagnostic(
            "unparsed-function", f"{name}: cannot read this {first.text} function ({what}); "
            "it is left out", source.location(min(where, len(source.text)))))

    def expand_head(self, seg: S.Segment, seg_tokens: list[Tok]) -> list:
        """Qualifier macros in a function's head (`KERNEL void k()`, `void LB(256) k()`): the
        segment's space and name as their expansion says; the spans to blank in its view."""
        head_tokens = [t for t in seg_tokens if t.start < seg.body_start
                       and t.kind not in ("comment", "dir")]
        head = read_head(head_tokens, self.cond.macros, S.function_name)
        if head is None:
            return []
        seg.space = S.function_space(set(seg.keywords) | head.words)
        seg.name = head.name or seg.name
        return head.blanks

    def include(self, source: SourceFile, seg: S.Segment, text: str, depth: int) -> None:
        tu = self.tu
        body = directive_body(text)
        if body.startswith("<") and ">" in body:
            # `#include <polybench.h>` found in a -I directory is the user's own header (nvcc
            # searches -I for both forms); anything else is a system header, never read
            name = body[1:body.find(">")]
            target = next((d / name for d in tu.include_dirs if (d / name).is_file()
                           and not _system_dir(d)), None)
            if target is None:
                tu.includes.append(Include(seg, source, None, body))
                return
            try:
                self.read_include(source, seg, name, target, depth)
            except GmprofError as exc:  # a third-party header in Latin-1, say: not the user's
                tu.includes.append(Include(seg, source, None, body))
                tu.warnings.append(Diagnostic(
                    "include-not-read", f"#include {body} not read ({exc.message}); its "
                    "declarations are unknown to gmprof", source.location(seg.start)))
            return
        if not body.startswith('"'):
            tu.includes.append(Include(seg, source, None, body))
            return
        name = body[1:body.find('"', 1)] if '"' in body[1:] else body[1:]
        where = source.location(seg.start)
        candidates = []
        if source.path is not None:
            candidates.append(source.path.parent / name)
        candidates.extend(d / name for d in tu.include_dirs)
        target = next((c for c in candidates if c.is_file()), None)
        if target is None:
            tu.includes.append(Include(seg, source, None, name))
            tu.warnings.append(Diagnostic(
                "include-not-found",
                f"#include \"{name}\" not found (searched {', '.join(str(c.parent) for c in candidates) or 'nowhere'}); "
                "its declarations are unknown to gmprof", where))
            return
        self.read_include(source, seg, name, target, depth)

    def read_include(self, source: SourceFile, seg: S.Segment, name: str, target: Path,
                     depth: int) -> None:
        tu = self.tu
        where = source.location(seg.start)
        key = str(target.resolve())
        if key in self.once:
            tu.includes.append(Include(seg, source, None, name, once=True))
            return
        if depth >= _MAX_INCLUDE_DEPTH:
            raise GmprofError(f"#include nested more than {_MAX_INCLUDE_DEPTH} deep", where,
                              kind="preprocess")
        display = os.path.relpath(target) if not target.is_absolute() else str(target)
        included = read_source(target, display_name=display, included_from=where)
        tu.includes.append(Include(seg, source, included, name))
        self.walk_file(included, depth + 1)


    def _check_encoding(self, source: SourceFile, toks) -> None:
        """Bytes that are not UTF-8 are allowed in comments (nvcc ignores them there), kept as
        they are, with a warning; anywhere else the file is an error."""
        bad = source.not_utf8()
        if not bad:
            return
        comments = [(t.start, t.end) for t in toks if t.kind == "comment"]
        i = 0
        for offset in bad:
            while i < len(comments) and comments[i][1] <= offset:
                i += 1
            if not (i < len(comments) and comments[i][0] <= offset):
                raise source.not_utf8_error(offset)
        byte = ord(source.text[bad[0]]) - 0xDC00
        self.tu.warnings.append(Diagnostic(
            "encoding", f"{source.name} is not UTF-8 (byte 0x{byte:02x}, {len(bad)} such "
            "bytes, all in comments); they are kept as they are", source.location(bad[0])))


def _system_dir(directory: Path) -> bool:
    """A -I directory of the CUDA toolkit or the system, whose headers gmprof does not read."""
    d = str(directory.resolve())
    return d.startswith(("/usr/include", "/usr/local/include")) or \
        (directory / "cuda_runtime_api.h").is_file()


def _parse_function(tu: TranslationUnit, parser, fn: Function) -> None:
    if fn.error is not None:
        tu.warnings.append(_unparsed_warning(fn, fn.error))
        return
    oracle = tu.oracle.in_class(fn.owner, fn.scope_types) if fn.owner else tu.oracle
    try:
        fn.parsed = parser.parse_function(fn.view, fn.source, fn.segment.start, oracle)
        hidden = _macros_hiding_accesses(tu, fn)
        if hidden:
            # `v = LOAD(i)` with `#define LOAD(i) src[(i) + off]`: the access is in the macro's
            # body, which only the expansion shows
            _parse_expanded(tu, parser, fn, oracle, hidden)
    except GmprofError as exc:
        if _parse_expanded(tu, parser, fn, oracle):
            return
        fn.error = exc
        where = exc.location
        head = [t for t in scan(fn.source.text[fn.segment.start:fn.segment.body_start])
                if t.kind not in ("comment", "dir")]
        unknown = unknown_head_call(head, tu.macros)
        if unknown is not None and where is not None and \
                fn.source.lines.line_start(where.line) + where.col - 1 < \
                fn.segment.body_start:
            fn.error = GmprofError(f"{exc.message}; `{unknown}(...)` in its head is no macro "
                                   "gmprof knows (is the header defining it on the -I path?)",
                                   where, kind="syntax")
        tu.warnings.append(_unparsed_warning(fn, fn.error))
    except RecursionError:
        fn.error = GmprofError("function too deeply nested to parse", fn.location,
                               kind="syntax")
        tu.warnings.append(_unparsed_warning(fn, fn.error))
    except Exception as exc:  # a builder bug must not stop the rest of the file
        fn.error = GmprofError(f"internal error while building the AST: "
                               f"{exc.__class__.__name__}: {exc}", fn.location, kind="internal")
        tu.warnings.append(Diagnostic("internal", _unparsed_message(fn, fn.error),
                                      fn.error.location))


def _refuse_too_deep(tu: TranslationUnit, fn: Function) -> None:
    """A function nested deeper than the later stages can walk is left untouched, as one that
    does not parse (nesting.py)."""
    deep = too_deep(fn.parsed.funcdef) if fn.parsed is not None else None
    if deep is None:
        return
    if fn.expanded is not None:
        tu.expansions.pop(fn.segment, None)
    fn.parsed, fn.expanded, fn.error = None, None, deep
    tu.warnings.append(_unparsed_warning(fn, deep))


def _macros_hiding_accesses(tu: TranslationUnit, fn: Function) -> list[str]:
    """Macros used in fn's body whose expansion holds a memory access (`[` or `->`)."""
    cache = tu.extra.setdefault("access_macros", {})
    out = []
    body = fn.view[fn.segment.body_start - fn.segment.start:]
    for t in scan(body):
        if t.kind != "id" or t.text not in tu.macros or t.text in out:
            continue
        if t.text not in cache:
            macro = tu.macros[t.text]
            try:
                text = expand_text(macro, tu.macros)
            except (GmprofError, RecursionError):
                text = ""
            cache[t.text] = "[" in text or "->" in text
        if cache[t.text]:
            out.append(t.text)
    return out


def _parse_expanded(tu: TranslationUnit, parser, fn: Function, oracle, why=None) -> bool:
    """The retry: parse fn with its macros expanded (expand.py). On success fn is analysed as
    expanded, located on the user's lines, and emitted expanded; a warning says so."""
    try:
        expanded = expand_function(fn.source, fn.view, fn.segment.start, tu.macros)
        if expanded is None:
            return False
        parsed = parser.parse_function(expanded.text, expanded, 0, oracle)
    except (GmprofError, RecursionError):
        return False
    fn.parsed = parsed
    fn.expanded = expanded
    tu.expansions[fn.segment] = expanded
    names = ", ".join(expanded.macros_used[:4]) + (", ..." if len(expanded.macros_used) > 4
                                                   else "")
    reason = f"; {', '.join(why)} hold accesses" if why else ""
    tu.warnings.append(Diagnostic(
        "macro-expanded", f"{fn.name}: read with its macros expanded ({names}){reason}; its "
        "instrumented text is that expansion, on the same lines", fn.location))
    return True


def _lambda_functions(fn: Function) -> list[Function]:
    """A function for each lambda in fn's body (`k::<lambda 12:14>`), reached through the
    calls that run it; its sites are fn's text, patched where they are."""
    out = []
    for node in (fn.parsed.lambdas if fn.parsed is not None else []):
        node.name = f"{fn.name}::{node.name}"
        node.funcdef.decl.name = node.name
        span = node.coord
        body = node.funcdef.body.coord
        seg = S.Segment(S.FUNCTION, span.start, span.end, name=node.name,
                        space="device" if fn.space == "global" else fn.space,
                        body_start=body.start, keywords=fn.segment.keywords)
        parsed = ParsedFunction(node.funcdef, [], None, fn.parsed.specs,
                                fn.parsed.statement_spans)
        out.append(Function(node.name, seg.space, fn.source, seg, "", parsed=parsed,
                            owner=fn.owner, scope_types=fn.scope_types))
    return out


def _unparsed_message(fn: Function, exc: GmprofError) -> str:
    return f"{fn.name}: cannot parse this function ({exc.message}); it is left untouched"


def _unparsed_warning(fn: Function, exc: GmprofError) -> Diagnostic:
    return Diagnostic("unparsed-function", _unparsed_message(fn, exc), exc.location or fn.location)


def _parse_variable(tu: TranslationUnit, parser, var: FileVariable) -> None:
    text = var.segment.text(var.source)
    try:
        decls = parser.parse(text, "file_declaration", var.source, var.segment.start, tu.oracle)
    except GmprofError as exc:
        tu.warnings.append(Diagnostic("unparsed-variable",
                                      f"cannot parse the declaration of {var.name}: "
                                      f"{exc.message}", exc.location))
        return
    except Exception as exc:
        tu.warnings.append(Diagnostic("internal", f"cannot build the declaration of {var.name}: "
                                      f"{exc}", var.source.location(var.segment.start)))
        return
    for decl in decls:
        if isinstance(decl, c_ast.Decl) and decl.name == var.name:
            var.decl = decl
            return
    if decls and isinstance(decls[0], c_ast.Decl):
        var.decl = decls[0]
