"""The statement and expression half of the c_ast builder.

Stage 5 of the frontend, with build.py and build_cxx.py: methods of the same lark Transformer
(Builder inherits StatementRules), kept apart so that each module holds one idea. They lean on
Builder's helpers (`_place`, `_span`, `_nodes`, `_declaration`). Method names are the grammar's
rule names and aliases (grammar/cuda.lark).

    for (int i = 0; i < n; i++) s += a[i];   -> For(DeclList, BinaryOp, UnaryOp, Assignment)
    (float2){x, y}                           -> CompoundLiteral(Typename, InitList)
"""
from __future__ import annotations

import ast

from lark import Token
from pycparser import c_ast
from pycparser.ast_transforms import fix_switch_cases

from .cxx_ast import make_node


class StatementRules:
    """Transformer methods for statements and expressions; mixed into build.Builder."""

    # -- statements ------------------------------------------------------------------------
    def compound_statement(self, c):
        items = []
        for x in c[1:-1]:
            if isinstance(x, list):
                items.extend(x)
            elif x is not None:
                items.append(x)
        return self._place(c_ast.Compound(items), c)

    def pragma_body(self, c):
        # `#pragma unroll` between `if (c)` and its loop: the statement is the loop (the
        # pragma stays in the text, directly before it: rewrite.py keeps it there)
        return c[-1]

    def label(self, c):
        return self._place(c_ast.Label(c[0].value, c[2]), c)

    def case(self, c):
        return self._place(c_ast.Case(c[1], [c[3]]), c)

    def default(self, c):
        return self._place(c_ast.Default([c[2]]), c)

    def expression_statement(self, c):
        if len(c) == 1:
            return self._place(c_ast.EmptyStatement(), c)
        # c_ast has no expression-statement node: remember the extent with its ';' (and let
        # enclosing statements' spans include it)
        span = self._span(c)
        self.statement_spans[c[0]] = span
        self.paren_extent[c[0]] = (span.start, span.end)
        return c[0]

    def if_statement(self, c):
        if isinstance(c[1], Token) and c[1].type == "CONSTEXPR":
            c = [c[0], *c[2:]]  # `if constexpr`: the branch not taken still parses
        cond, iftrue = c[2], self._stmt(c[4])
        iffalse = self._stmt(c[6]) if len(c) > 6 else None
        return self._place(c_ast.If(cond, iftrue, iffalse), c)

    def switch_statement(self, c):
        node = self._place(c_ast.Switch(c[2], self._stmt(c[4])), c)
        if isinstance(node.stmt, c_ast.Compound):
            fix_switch_cases(node)
        return node

    def while_statement(self, c):
        return self._place(c_ast.While(c[2], self._stmt(c[4])), c)

    def do_statement(self, c):
        return self._place(c_ast.DoWhile(c[4], self._stmt(c[1])), c)

    def for_statement(self, c):
        init = c[2]
        if isinstance(init, list):
            init = self._place(c_ast.DeclList(init), init)
        elif isinstance(init, c_ast.EmptyStatement):
            init = None
        rest = c[3:]
        cond = nxt = None
        # rest: [cond?] ';' [next?] ')' stmt
        k = 0
        if not isinstance(rest[k], Token):
            cond = rest[k]
            k += 1
        k += 1  # ';'
        if not isinstance(rest[k], Token):
            nxt = rest[k]
            k += 1
        k += 1  # ')'
        return self._place(c_ast.For(init, cond, nxt, self._stmt(rest[k])), c)

    def range_for_statement(self, c):
        # for (T x : range) body -> For(DeclList[x], range, None, body): a loop whose trip
        # count the analyses do not know, with x unknown in it (its accesses are measured)
        decl = self._declaration(c[2], c[3], None, whole=c[2:4])
        init = self._place(c_ast.DeclList([decl]), c[2:4])
        return self._place(c_ast.For(init, c[5], None, self._stmt(c[7])), c)

    def _stmt(self, x):
        """A declaration used as a statement body (`if (c) int x = 1;`) becomes a Compound."""
        if isinstance(x, list):
            node = c_ast.Compound(x)
            node.coord = self._span(x)
            return node
        return x

    def condition_declaration(self, c):
        return self._declaration(c[0], c[1], c[3], whole=c)

    def goto(self, c):
        return self._place(c_ast.Goto(c[1].value), c)

    def __default_token__(self, token):  # pragma: no cover - tokens are not visited
        return token

    def _jump(self, cls, c):
        return self._place(cls(), c)

    def continue_(self, c):
        return self._jump(c_ast.Continue, c)

    def break_(self, c):
        return self._jump(c_ast.Break, c)

    def return_(self, c):
        expr = c[1] if len(c) > 2 else None
        return self._place(c_ast.Return(expr), c)

    def pragma(self, c):
        text = c[0].value.strip()
        if text.startswith("_Pragma"):  # _Pragma("unroll 4"): the string's text, unescaped
            literal = text[text.index('"'):text.rindex('"') + 1]
            body = ast.literal_eval(literal).strip()
        else:
            body = text[1:].strip()[len("pragma"):].strip()
        return self._place(c_ast.Pragma(body), c)

    # -- expressions ---------------------------------------------------------------------
    def comma(self, c):
        left, right = c[0], c[2]
        # left-recursive: `a, b, c` arrives as ((a, b), c); flatten it (comma is associative)
        exprs = list(left.exprs) if isinstance(left, c_ast.ExprList) else [left]
        exprs.append(right)
        return self._place(c_ast.ExprList(exprs), c)

    def assignment(self, c):
        return self._place(c_ast.Assignment(str(c[1]), c[0], c[2]), c)

    def _op(self, c):
        # the Token itself (a str): it keeps its position for the enclosing node's span
        return c[0]

    assign_op = or_op = and_op = bitor_op = xor_op = bitand_op = eq_op = rel_op = shift_op = \
        add_op = mul_op = unary_op = _op

    def ternary(self, c):
        return self._place(c_ast.TernaryOp(c[0], c[2], c[4]), c)

    def binary(self, c):
        return self._place(c_ast.BinaryOp(str(c[1]), c[0], c[2]), c)

    def cast(self, c):
        return self._place(c_ast.Cast(c[1], c[3]), c)

    def pre_increment(self, c):
        return self._place(c_ast.UnaryOp("++", c[1]), c)

    def pre_decrement(self, c):
        return self._place(c_ast.UnaryOp("--", c[1]), c)

    def unary(self, c):
        return self._place(c_ast.UnaryOp(str(c[0]), c[1]), c)

    def sizeof_expression(self, c):
        return self._place(c_ast.UnaryOp("sizeof", c[1]), c)

    def sizeof_type(self, c):
        return self._place(c_ast.UnaryOp("sizeof", c[2]), c)

    def sizeof_pack(self, c):
        return self._place(c_ast.UnaryOp("sizeof...", c_ast.ID(c[3].value)), c)

    def alignof_type(self, c):
        return self._place(c_ast.UnaryOp("_Alignof", c[2]), c)

    def array_ref(self, c):
        return self._place(c_ast.ArrayRef(c[0], c[2]), c)

    def call(self, c):
        args = c[2] if len(c) > 3 else None
        return self._place(c_ast.FuncCall(c[0], args), c)

    def member(self, c):
        return self._place(c_ast.StructRef(c[0], ".", self._member_name(c[2])), c)

    def pointer_member(self, c):
        return self._place(c_ast.StructRef(c[0], "->", self._member_name(c[2])), c)

    def _member_name(self, x):
        if isinstance(x, Token):
            return self._place(c_ast.ID(x.value), [x])
        return x

    def member_name(self, c):
        return c[-1]

    def post_increment(self, c):
        return self._place(c_ast.UnaryOp("p++", c[0]), c)

    def post_decrement(self, c):
        return self._place(c_ast.UnaryOp("p--", c[0]), c)

    def compound_literal(self, c):
        return self._place(make_node(c_ast.CompoundLiteral, type=c[1], init=c[3]), c)

    def functional_cast(self, c):
        head = c[0]
        if isinstance(head, Token):
            ident = c_ast.IdentifierType([head.value])
            ident.coord = self._span([head])
            tdecl = c_ast.TypeDecl(None, [], None, ident)
            tdecl.coord = ident.coord
            typename = c_ast.Typename(None, [], None, tdecl)
            typename.coord = ident.coord
            name_node = self._place(c_ast.ID(head.value), [head])
        else:
            typename = head
            name_node = head
        args = next((x for x in c[1:] if isinstance(x, (c_ast.ExprList, c_ast.InitList))), None)
        exprs = list(args.exprs) if args is not None else []
        if len(exprs) == 1 and isinstance(args, c_ast.ExprList):
            return self._place(c_ast.Cast(typename, exprs[0]), c)
        return self._place(c_ast.FuncCall(name_node, args), c)

    def argument_expression_list(self, c):
        return self._place(c_ast.ExprList(self._nodes(c)), c)

    def identifier(self, c):
        return self._place(c_ast.ID(c[0].value), c)

    def integer(self, c):
        value = c[0].value
        lower = value.lower()
        if "u" in lower.lstrip("0x") and "ll" in lower:
            kind = "unsigned long long int"
        elif "ll" in lower:
            kind = "long long int"
        elif "u" in lower.replace("0x", "") and not lower.startswith("0x") or \
                (lower.startswith("0x") and lower.endswith("u")) or lower.endswith("ul") or \
                lower.endswith("lu"):
            kind = "unsigned int"
        elif lower.endswith("l"):
            kind = "long int"
        else:
            kind = "int"
        return self._place(c_ast.Constant(kind, value), c)

    def floating(self, c):
        value = c[0].value
        kind = "float" if value[-1] in "fF" else "double"
        return self._place(c_ast.Constant(kind, value), c)

    def character(self, c):
        return self._place(c_ast.Constant("char", c[0].value), c)

    def string_literal(self, c):
        value = " ".join(t.value for t in c)
        return self._place(c_ast.Constant("string", value), c)

    def boolean(self, c):
        return self._place(c_ast.Constant("bool", c[0].value), c)

    def null_pointer(self, c):
        return self._place(c_ast.Constant("nullptr", "nullptr"), c)

    def primary_expression(self, c):
        # "(" expression ")": keep the inner node (pycparser drops parentheses too), but
        # remember the parentheses for the span of whatever encloses it
        inner = c[1]
        self.paren_extent[inner] = (c[0].start_pos + self.base, c[-1].end_pos + self.base)
        return inner


# Rule aliases that clash with Python keywords.
setattr(StatementRules, "continue", StatementRules.continue_)
setattr(StatementRules, "break", StatementRules.break_)
setattr(StatementRules, "return", StatementRules.return_)
