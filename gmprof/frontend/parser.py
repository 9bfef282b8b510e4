"""The LALR parser: lark + the post-lexer + the c_ast builder, built once per process.

Stage 4-5 of the frontend, and the only module that touches lark. Takes the parse view of one
function (or file-scope declaration, or macro body), returns c_ast with spans; a lark error
becomes a GmprofError located in the user's file, carrying the token lark choked on.
"""
from __future__ import annotations

import functools
import re

import lark
from lark import Lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from .. import host_cache
from .._paths import grammar_file
from ..errors import GmprofError
from .build import Builder, ParsedFunction
from .oracle import TypeOracle
from .postlex import PostLexer
from .source import SourceFile

ENTRY_POINTS = ("function_definition", "file_declaration", "expression_entry")


class CudaParser:
    def __init__(self):
        self.builder = Builder()
        grammar = grammar_file().read_text()
        self._lark = _cached_lark(
            grammar,
            parser="lalr",
            lexer="basic",
            start=list(ENTRY_POINTS),
            keep_all_tokens=True,
            maybe_placeholders=False,
            transformer=self.builder,
            postlex=PostLexer({}),
        )
        terminal_for = {t.pattern.value: t.name for t in self._lark.terminals
                        if t.pattern.type == "str"}
        # Keywords with several spellings (`__restrict__ | __restrict | restrict`) are regex
        # terminals, which lose to IDENTIFIER in lark's lexer; the post-lexer retypes them.
        keyword_for = {}
        for t in self._lark.terminals:
            m = re.fullmatch(r"\(\?:([A-Za-z_|]+)\)", t.pattern.value) if t.pattern.type == "re" \
                else None
            if m:
                for word in m.group(1).split("|"):
                    keyword_for[word] = t.name
        # lark keeps the postlex object we gave it; configure that same instance
        self._postlex = self._lark.options.postlex
        self._postlex.terminal_for = terminal_for
        self._postlex.keyword_for = keyword_for

    def parse(self, text: str, start: str, source: SourceFile, base: int, oracle: TypeOracle):
        """Parse `text`, which sits at offset `base` of `source`."""
        self.builder.source = source
        self.builder.base = base
        self.builder.statement_spans = {}
        self.builder.paren_extent = {}
        self.builder.lambdas = []
        self._postlex.oracle = oracle
        try:
            return self._lark.parse(text, start=start)
        except UnexpectedCharacters as exc:
            raise source.error(f"unexpected character {text[exc.pos_in_stream]!r}",
                               base + exc.pos_in_stream) from None
        except UnexpectedToken as exc:
            tok = exc.token
            if tok.type == "$END":
                raise source.error("unexpected end of input", base + len(text.rstrip())) from None
            what = _describe(tok)
            raise source.error(f"syntax error at {what}", base + tok.start_pos) from None
        except UnexpectedEOF:
            raise source.error("unexpected end of input", base + len(text.rstrip())) from None
        except LarkError as exc:  # a builder failure on odd input, reported where we were
            raise source.error(f"cannot parse: {exc.__class__.__name__}", base) from None

    def parse_function(self, text, source, base, oracle) -> ParsedFunction:
        return self.parse(text, "function_definition", source, base, oracle)


def _cached_lark(grammar: str, **options) -> Lark:
    """Lark with its LALR tables from gmprof's host cache (building them takes a second of CPU,
    4 s on the H100's host, in every process). Lark checks the file's grammar and options
    digest itself (the path is part of that digest, so the file cannot be written elsewhere
    and renamed), and a file it cannot read (one half written by a concurrent process) is
    rebuilt, not an error."""
    d = host_cache.directory()
    if d is None:
        return Lark(grammar, **options)
    path = d / f"lark-{host_cache.key(grammar, lark.__version__)}.tables"
    return Lark(grammar, cache=str(path), **options)


def _describe(tok) -> str:
    names = {"TYPE_NAME": "type name", "FUNC_TEMPLATE_NAME": "template name",
             "TYPE_TEMPLATE_NAME": "template name", "IDENTIFIER": "identifier",
             "TLT": "'<'", "TGT": "'>'"}
    if tok.type in names:
        return f"{names[tok.type]} {tok.value!r}" if tok.type not in ("TLT", "TGT") else \
            names[tok.type]
    return repr(tok.value)


@functools.lru_cache(maxsize=1)
def get_parser() -> CudaParser:
    return CudaParser()
