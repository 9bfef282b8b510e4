"""The post-lexer: C's "lexer hack" plus template angle brackets, between lark's lexer and parser.

Takes lark's token stream for one function (or declaration) and rewrites:
  IDENTIFIER -> TYPE_NAME            when the oracle (or a local typedef, template parameter,
                                     `struct X`) says it names a type, or when the tokens around it
                                     can only be a declaration (`DATA_TYPE x`, `T *p = ...`)
  IDENTIFIER -> FUNC_TEMPLATE_NAME / TYPE_TEMPLATE_NAME
                                     when template arguments follow (`f<32>(a)`, `Vec<float> v`)
  '<' '>' '>>' -> TLT TGT            for those template arguments (`>>` is split in two)
  '::name' after TGT -> SCOPE_MEMBER (std::numeric_limits<float>::max)
  IDENTIFIER -> SCOPE_NAME           for the class template of a member function defined outside
                                     its class (`interval<T>::lower() {`), before the body
  '>>>' -> TGT TGT TGT               when it closes template arguments (else it ends a kernel
                                     launch's `<<<...>>>`)
and drops `__attribute__((...))` groups and `[[...]]` attributes, which never matter to gmprof.
"""
from __future__ import annotations

from lark import Token

from .oracle import TypeOracle

_DECL_KEYWORDS = {
    "const", "volatile", "static", "extern", "register", "__shared__", "__device__",
    "__constant__", "__restrict__", "__restrict", "constexpr", "inline", "__forceinline__",
    "__host__", "__global__", "typedef", "__managed__",
}
_STOP_TEMPLATE_SCAN = {";", "{", "}", "&&", "||", "?", "=", "==", "!=", "<=", ">=", "+=", "-=",
                       "return", "if", "while", "for", "|", "^", "%"}
_TEMPLATE_ARG_OK_OPS = {",", "*", "&", "(", ")", "+", "-", "/", "<", ">", ">>", "[", "]", "::",
                        ".", "~", "!"}
_DECLARATOR_BEFORE = {"TYPE_NAME", "VOID", "CHAR", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE",
                      "SIGNED", "UNSIGNED", "BOOL", "AUTO", "RESTRICT", "CONST", "TGT"}
_LITERAL_TYPES = {"INTEGER", "FLOATING", "CHARACTER", "STRING", "TRUE", "FALSE"}
# Tokens that end an operand: a '[' after them is a subscript.
# (`new float[n]()`, `operator[](int i)`: array bounds and operator names, not lambdas)
_OPERAND_END_TYPES = {"IDENTIFIER", "INTEGER", "FLOATING", "CHARACTER", "STRING", "TRUE",
                      "FALSE", "NULLPTR", "THIS", "TGT", "TYPE_NAME", "FUNC_TEMPLATE_NAME",
                      "OPERATOR", "DELETE", "VOID", "CHAR", "SHORT", "INT", "LONG", "FLOAT",
                      "DOUBLE", "SIGNED", "UNSIGNED", "BOOL", "AUTO"}
# Tokens that end a type specifier: a declarator may follow them.
_TYPE_SPECIFIER_TYPES = {"TYPE_NAME", "VOID", "CHAR", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE",
                         "SIGNED", "UNSIGNED", "BOOL", "AUTO", "INT128", "TGT"}
# Keywords that may open a declaration before its type.
_DECL_SPECIFIER_KEYWORD_TYPES = {"CONST", "VOLATILE", "STATIC", "EXTERN", "REGISTER", "SHARED",
                                 "CONSTANT", "DEVICE", "CONSTEXPR", "RESTRICT", "INLINE",
                                 "FORCEINLINE", "MANAGED", "THREAD_LOCAL", "MUTABLE"}
# Keywords followed by a parenthesised group that is neither a call nor a cast.
_GROUP_KEYWORD_TYPES = {"LAUNCH_BOUNDS", "MAXNREG", "CLUSTER_DIMS", "ALIGN", "ALIGNAS", "DECLTYPE", "ALIGNOF",
                        "STATIC_ASSERT", "SIZEOF"}
_TYPE_KEYWORD_TYPES = {"VOID", "CHAR", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "SIGNED",
                       "UNSIGNED", "BOOL", "AUTO", "CONST", "VOLATILE", "RESTRICT"}


class PostLexer:
    """lark postlex object: `process(stream)` yields rewritten tokens."""

    always_accept = ()

    def __init__(self, terminal_for: dict[str, str]):
        # terminal_for maps a punctuation string ('>') to lark's terminal name for it.
        self.terminal_for = terminal_for
        self.keyword_for: dict[str, str] = {}
        self.oracle = TypeOracle()

    def process(self, stream):
        keyword_for = self.keyword_for
        macro_words = self.oracle.keyword_macros
        toks = []
        for t in stream:
            if t.type == "IDENTIFIER":
                if t.value in keyword_for:
                    t = Token.new_borrow_pos(keyword_for[t.value], t.value, t)
                elif t.value in macro_words:
                    # `real *RESTRICT p`: the macro read as its keyword (the token keeps the
                    # macro's position, so spans and the user's text are unchanged)
                    word = macro_words[t.value]
                    kind = keyword_for.get(word) or self.terminal_for.get(word)
                    if kind is not None:
                        t = Token.new_borrow_pos(kind, word, t)
            toks.append(t)
        return _Rewriter(self, toks).run()


class _Frame:
    __slots__ = ("depth", "is_head", "is_cast")

    def __init__(self, is_head: bool, is_cast: bool):
        self.depth = 0
        self.is_head = is_head
        self.is_cast = is_cast


class _Rewriter:
    def __init__(self, owner: PostLexer, toks: list[Token]):
        self.owner = owner
        self.oracle = owner.oracle
        self.toks = toks
        self.types = set()  # names declared in this function (typedefs, template params, tags)
        self.variables = set()  # names declared as variables or parameters in this function
        # C++ name lookup: a variable declared with a type's name (`LatLong *latLong` where
        # `latLong` is a struct tag, a local `int thread_block`) hides the type in its block;
        # one set per open brace, the first for the parameters
        self.scopes: list[set] = [set()]
        self.out: list[Token] = []
        self.frames: list[_Frame] = []
        self.tlt_at: set[int] = set()  # indices of '<' tokens that open template arguments
        self.in_header = True  # before the function body's '{'
        self.typedef_pending = False
        self.typedef_last: str | None = None
        self.brace_depth = 0
        self.bracket_depth = 0

    # -- helpers -------------------------------------------------------------------------
    def is_type(self, name: str) -> bool:
        return name in self.types or self.oracle.is_type(name)

    def tok(self, i: int) -> Token | None:
        return self.toks[i] if 0 <= i < len(self.toks) else None

    def val(self, i: int) -> str:
        t = self.tok(i)
        return t.value if t is not None else ""

    def typ(self, i: int) -> str:
        t = self.tok(i)
        return t.type if t is not None else ""

    def emit(self, tok: Token, type_: str | None = None) -> None:
        if type_ is not None and type_ != tok.type:
            tok = Token.new_borrow_pos(type_, tok.value, tok)
        self.out.append(tok)

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> list[Token]:
        toks = self.toks
        i = 0
        n = len(toks)
        while i < n:
            t = toks[i]
            v = t.value
            ty = t.type
            if ty == "IDENTIFIER":
                if v in ("__attribute__", "__declspec"):
                    i = self.skip_group(i + 1)
                    continue
                self.identifier(i)
            elif v == "[" and self.val(i + 1) == "[":
                i = self.skip_attribute(i)  # [[likely]], [[maybe_unused]]: C++11 attributes
                continue
            elif v == "[" and self.opens_lambda(i):
                self.punctuation(t, "LAMBDA_OPEN")
            elif v == "<" and i in self.tlt_at:
                self.frames.append(_Frame(is_head=self.val(i - 1) == "template",
                                          is_cast=self.typ(i - 1) == "CXX_CAST"))
                self.emit(t, "TLT")
            elif ty in ("TEMPLATE", "CXX_CAST") and self.val(i + 1) == "<":
                self.tlt_at.add(i + 1)
                self.emit(t)
            elif self.frames and v in (">", ">>", ">>>") and self.frames[-1].depth == 0:
                self.close_angle(t)
            else:
                self.punctuation(t)
            i += 1
        return self.out

    def skip_group(self, i: int) -> int:
        """Skip `( ... )` starting at toks[i]; return the index after it."""
        return self._skip_balanced(i, "(", ")") if self.val(i) == "(" else i

    def skip_attribute(self, i: int) -> int:
        """Skip `[[ ... ]]` starting at toks[i]; return the index after it."""
        return self._skip_balanced(i, "[", "]")

    def _skip_balanced(self, i: int, open_: str, close: str) -> int:
        """The index after the `close` that balances the tokens from toks[i] (the end of the
        tokens when none does)."""
        depth = 0
        while i < len(self.toks):
            if self.val(i) == open_:
                depth += 1
            elif self.val(i) == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def opens_lambda(self, i: int) -> bool:
        """Whether the '[' at toks[i] opens a lambda: it cannot follow an operand (a subscript
        does), and what follows its ']' is a lambda's parameters, qualifiers or body (a
        designator's ']' is followed by '=')."""
        prev = self.out[-1] if self.out else None
        if prev is not None and (prev.value in (")", "]") or prev.type in _OPERAND_END_TYPES):
            return False
        depth = 0
        for j in range(i, len(self.toks)):
            v = self.val(j)
            if v == "[":
                depth += 1
            elif v == "]":
                depth -= 1
                if depth == 0:
                    return self.val(j + 1) in ("(", "{", "->", "mutable", "__device__",
                                               "__host__", "constexpr", "noexcept")
            elif v in (";", "{", "}"):
                return False
        return False

    def punctuation(self, t: Token, type_: str | None = None) -> None:
        v = t.value
        frame = self.frames[-1] if self.frames else None
        if v in ("(", "[", "{"):
            if frame:
                frame.depth += 1
            if v == "{":
                self.brace_depth += 1
                self.in_header = False
                self.scopes.append(set())
            elif v == "[":
                self.bracket_depth += 1
        elif v in (")", "]", "}"):
            if frame:
                frame.depth -= 1
            if v == "}":
                self.brace_depth -= 1
                if len(self.scopes) > 1:
                    self.scopes.pop()
            elif v == "]":
                self.bracket_depth -= 1
        elif v == ";" and self.typedef_pending:
            if self.typedef_last:
                self.types.add(self.typedef_last)
            self.typedef_pending = False
            self.typedef_last = None
        elif t.type == "TYPEDEF":
            self.typedef_pending = True
            self.typedef_last = None
        self.emit(t, type_)

    def close_angle(self, t: Token) -> None:
        self.frames.pop()
        if t.value == ">":
            self.emit(t, "TGT")
            return
        # '>>' or '>>>' closing two or three template argument lists; whatever '>'s are left
        # once the lists are closed stay one operator token ('>' or '>>').
        k = 1
        while k < len(t.value) and self.frames and self.frames[-1].depth == 0:
            self.frames.pop()
            k += 1
        for m in range(k):
            self.out.append(Token("TGT", ">", t.start_pos + m, t.line, t.column + m, t.line,
                                  t.column + m + 1, t.start_pos + m + 1))
        rest = t.value[k:]
        if rest:
            self.out.append(Token(self.owner.terminal_for[rest], rest, t.start_pos + k, t.line,
                                  t.column + k, t.end_line, t.end_column, t.end_pos))

    # -- identifiers ---------------------------------------------------------------------
    def identifier(self, i: int) -> None:
        t = self.toks[i]
        v = t.value
        prev = self.out[-1] if self.out else None
        prev_v = prev.value if prev is not None else ""
        prev_t = prev.type if prev is not None else ""

        if self.typedef_pending and self.bracket_depth == 0:
            self.typedef_last = v

        if prev_t == "TGT" and v.startswith("::"):
            self.emit(t, "SCOPE_MEMBER")
            return
        if prev_v in (".", "->"):
            if self.val(i + 1) == "<" and (v in self.oracle.func_templates
                                           or self.template_ahead(i) == "func"):
                self.tlt_at.add(i + 1)
                self.emit(t, "FUNC_TEMPLATE_NAME")
            else:
                self.emit(t)
            return
        if prev_t in ("TYPENAME", "CLASS") and self.frames and self.frames[-1].is_head \
                and self.frames[-1].depth == 0:
            self.types.add(v)  # a template type parameter being declared
            self.emit(t)
            return
        if prev_t == "TYPENAME" and self.val(i + 1) == "<":
            self.tlt_at.add(i + 1)  # typename vec4<T>::Type
            self.emit(t, "TYPE_TEMPLATE_NAME")
            return
        if prev_t == "TYPENAME":
            self.emit(t, "TYPE_NAME")  # typename T::value_type
            return
        if prev_t in ("STRUCT", "UNION", "CLASS", "ENUM"):
            self.types.add(v)
            self.emit(t, "TYPE_NAME" if self.oracle.is_type(v) else None)
            return
        if prev_t == "USING" and self.val(i + 1) == "=":
            self.types.add(v)
            self.emit(t)
            return
        if self.val(i + 1) == "<":
            kind = self.template_kind(i)
            if kind is not None:
                self.tlt_at.add(i + 1)
                if kind == "type" and self.in_header and self.is_member_declarator(i):
                    self.emit(t, "SCOPE_NAME")
                else:
                    self.emit(t, "FUNC_TEMPLATE_NAME" if kind == "func" else "TYPE_TEMPLATE_NAME")
                return
        if self.in_header and v == self.oracle.class_name and self.val(i + 1) == "(" and \
                prev_v != "~":
            self.emit(t)  # a constructor defined in its class's body: S(int a) : x(a) {}
            return
        if self.in_header and "::" in v and self.val(i + 1) == "(" and \
                v.rsplit("::", 2)[-2].lstrip(":") == v.rsplit("::", 1)[-1]:
            self.emit(t)  # a constructor defined outside its class: Vec::Vec(...)
            return
        if any(v in scope for scope in self.scopes):
            self.emit(t)  # a variable hiding a type of the same name
            return
        if self.is_type(v):
            if self.declares_variable(i):
                self.scopes[-1].add(v)
                self.variables.add(v)
                self.emit(t)
                return
            # a member of a struct named like a type can only follow '.' or '->', handled above
            self.emit(t, "TYPE_NAME")
            return
        if self.looks_like_type(i, prev_v, prev_t):
            self.emit(t, "TYPE_NAME")
            return
        in_template_head = bool(self.frames) and self.frames[-1].is_head
        if (prev_t in _DECLARATOR_BEFORE or prev_v in ("*", "&")) and \
                (self.val(i + 1) in ("=", ";", ",", "[", ")") or
                 (in_template_head and self.val(i + 1) in (">", ">>"))):
            # a declarator: a variable, a parameter or a template's value parameter
            self.variables.add(v)
        self.emit(t)

    def declares_variable(self, i: int) -> bool:
        """Whether toks[i], a name the oracle calls a type, is a declarator here: it follows a
        type (and `*`/`&`), or a ',' of a declaration statement, and ends a declarator."""
        if self.typedef_pending or self.val(i + 1) not in ("=", ";", ",", "[", ")"):
            return False
        out = self.out
        k = len(out) - 1
        while k >= 0 and (out[k].value in ("*", "&", "&&") or
                          out[k].type in ("CONST", "VOLATILE", "RESTRICT")):
            k -= 1
        if k < 0:
            return False
        if out[k].type in _TYPE_SPECIFIER_TYPES:
            # `T x` in a cast or a parameter list without a name (`(float2)`) has nothing after
            # the type: only a name after the type (or its '*') is a declarator
            return not (self.in_header and out[k].value == "(")
        return out[k].value == "," and not self.in_header and self.in_declaration(k)

    def in_declaration(self, k: int) -> bool:
        """Whether the ',' at self.out[k] separates the declarators of a declaration statement
        (or of a for statement's first clause)."""
        out = self.out
        depth = 0
        j = k - 1
        while j >= 0:
            v = out[j].value
            if v in (")", "]"):
                depth += 1
            elif v in ("(", "["):
                if depth == 0:
                    if v == "(" and j > 0 and out[j - 1].type == "FOR":
                        break
                    return False  # a ',' between arguments
                depth -= 1
            elif depth == 0 and v in (";", "{", "}"):
                break
            j -= 1
        j += 1
        while j < k and out[j].type in _DECL_SPECIFIER_KEYWORD_TYPES:
            j += 1
        return j < k and out[j].type in _TYPE_SPECIFIER_TYPES

    def template_kind(self, i: int) -> str | None:
        v = self.val(i)
        if v in self.oracle.type_templates:
            return "type"
        if v in self.oracle.func_templates:
            return "func"
        if v in self.variables:
            return None  # a variable: `a < b > (c)` is a comparison
        return self.template_ahead(i)

    def is_member_declarator(self, i: int) -> bool:
        """Whether toks[i] '<' ... '>' '::name' '(' names a member function being defined."""
        j = self.closing_angle(i)
        return j is not None and self.val(j + 1).startswith("::") and \
            self.typ(j + 1) == "IDENTIFIER" and self.val(j + 2) == "(" and \
            self.val(i - 1) not in ("=", "(", ",", "return")

    def closing_angle(self, i: int) -> int | None:
        """Index of the '>' closing the '<' at toks[i + 1] (brackets nested), or None."""
        depth = 0
        for j in range(i + 1, min(len(self.toks), i + 60)):
            v = self.val(j)
            if v == "<":
                depth += 1
            elif v in (">", ">>", ">>>"):
                depth -= len(v)
                if depth <= 0:
                    return j
            elif v in (";", "{", "}"):
                return None
        return None

    def template_ahead(self, i: int) -> str | None:
        """Guess from the tokens whether toks[i] '<' ... '>' is a template-id, and which kind."""
        toks = self.toks
        j = i + 2
        depth = 1
        paren = 0
        limit = min(len(toks), i + 60)
        while j < limit:
            t = toks[j]
            v = t.value
            if v in _STOP_TEMPLATE_SCAN and paren == 0:
                return None
            if v == "(":
                paren += 1
            elif v == ")":
                paren -= 1
                if paren < 0:
                    return None
            elif paren == 0 and v == "<":
                depth += 1
            elif paren == 0 and v in (">", ">>", ">>>"):
                depth -= len(v)
                if depth <= 0:
                    break
            elif t.type not in ("IDENTIFIER",) and t.type not in _LITERAL_TYPES \
                    and t.type not in _TYPE_KEYWORD_TYPES and v not in _TEMPLATE_ARG_OK_OPS \
                    and t.type not in ("TYPENAME", "STRUCT", "CXX_CAST", "SIZEOF", "ALIGNOF"):
                return None
            j += 1
        else:
            return None
        after = self.val(j + 1)
        after_t = self.typ(j + 1)
        if after == "(":
            return "type" if self.is_type(self.val(i)) else "func"
        if after == "<<<":
            return "func"  # a templated kernel launched from device code
        if after == "{":
            return "type"  # cuda::aligned_size_t<16>{n}: a braced functional cast
        if after_t == "OPERATOR":
            return "type"  # thrust::tuple<float, float> operator()()
        if after.startswith("::") and after_t == "IDENTIFIER":
            return "type"
        if after_t == "IDENTIFIER":
            return "type"
        if after in ("*", "&") and self.typ(j + 2) == "IDENTIFIER":
            return "type"
        return None

    def looks_like_type(self, i: int, prev_v: str, prev_t: str) -> bool:
        """An unknown identifier that can only be a type where it stands."""
        nxt = self.tok(i + 1)
        if nxt is None:
            return False
        nv, nt = nxt.value, nxt.type
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.is_cast and frame.depth == 0:
            return True  # static_cast<DATA_TYPE *>(...)
        if nt == "IDENTIFIER" and not nv.startswith("::"):
            return True  # DATA_TYPE x / cg::thread_block b
        statement_start = prev_v in (";", "{", "}") or prev_t in ("CONST", "VOLATILE", "STATIC",
                                                                   "EXTERN", "SHARED", "REGISTER",
                                                                   "CONSTEXPR", "DEVICE",
                                                                   "CONSTANT", "RESTRICT")
        in_params = self.in_header and prev_v in ("(", ",")
        if (statement_start or in_params) and nv in ("*", "&", "&&"):
            # T *p = ...; / T &r = ...; / f(T *a, ...) — an expression statement `a * b;` would
            # compute nothing.
            k = i + 1
            while self.val(k) in ("*", "&", "&&") or self.typ(k) in ("CONST", "RESTRICT",
                                                                      "VOLATILE"):
                k += 1
            return self.typ(k) == "IDENTIFIER" and self.val(k + 1) in ("=", ";", ",", "[", ")")
        if prev_t in ("CONST", "STATIC", "SHARED", "EXTERN", "CONSTEXPR") and nv in ("*", "&"):
            return True  # const DATA_TYPE *p
        if prev_v == "(" and nv in ("*", "&") and self.val(i + 2) == ")":
            return True  # (T *) x
        if prev_v == "(" and nv == ")" and self.tok(i).value not in self.variables:
            after = self.tok(i + 2)
            if after is not None and (after.type in ("IDENTIFIER",) or after.type in _LITERAL_TYPES):
                k = i - 2
                callee = self.val(k)
                # `(x) y` is a cast unless '(' belongs to a call or to a statement keyword:
                # `if (inside) s[i] = ...` must stay a condition. After `return` it is a cast
                # (`return (cufftComplex)f(x);`): `return (x) y;` means nothing else.
                # `new (buf) T(...)` places an object: `(buf)` is an address.
                # `__launch_bounds__(BLOCK) k(...)`: the group of a keyword that takes one.
                if self.typ(k) != "IDENTIFIER" and callee not in (
                        ")", "]", "sizeof", "if", "while", "switch", "for", "case", "new") and \
                        self.typ(k) not in _GROUP_KEYWORD_TYPES:
                    return True
        return False
