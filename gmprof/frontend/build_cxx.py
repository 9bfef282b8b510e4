"""The C++ half of the c_ast builder: templates, member functions defined outside their class,
operators, constructors, `new`/`delete`, device-side kernel launches, inline PTX.

Stage 5 of the frontend, with build.py: these are methods of the same lark Transformer (Builder
inherits CxxRules), kept apart so that each module holds one idea. They lean on Builder's helpers
(`_place`, `_span`, `_nodes`, `_declaration`, `type_name`, `abstract_declarator`). Method names
are the grammar's rule names and aliases (grammar/cuda.lark); the nodes c_ast lacks come from
cxx_ast.py.

    template <> __device__ float f<float>(float x)   -> TypeDecl 'f', specialisation args [float]
    Range<T>::Range(T a) : lo(a) {}                  -> 'Range::Range', member initialisers
    child<<<n / 32, 32>>>(p, n)                      -> KernelLaunch(child, [n / 32, 32], (p, n))
"""
from __future__ import annotations

from lark import Token
from pycparser import c_ast

from . import cxx_ast as X


class _Constructed:
    """A declarator with direct-initialisation arguments (`half2 v(0.f, 0.f)`). Only an
    init-declarator may hold one; anywhere else it is a syntax error."""

    __slots__ = ("chain", "args", "coord")

    def __init__(self, chain, args, coord):
        self.chain = chain
        self.args = args
        self.coord = coord


def _not_constructed(chain):
    if isinstance(chain, _Constructed):
        raise chain.coord.source.error("initialiser arguments where a declarator was expected",
                                       chain.args.coord.start)
    return chain


class CxxRules:
    """Transformer methods for the C++ rules; mixed into build.Builder."""

    # -- templates and C++ names ---------------------------------------------------------
    def template_head(self, c):
        params = next((x for x in c if isinstance(x, list)), [])
        return ("template_head", params)

    def template_parameter_list(self, c):
        return self._nodes(c)

    def template_type_parameter(self, c):
        name = None
        default = None
        for x in c:
            if isinstance(x, Token) and x.type == "IDENTIFIER":
                name = x.value
            elif not isinstance(x, Token):
                default = x
        return self._place(X.TemplateParam("type", name, None, default), c)

    def template_value_parameter(self, c):
        specs = c[0]
        chain = c[1] if len(c) > 1 and not isinstance(c[1], Token) else None
        default = c[-1] if len(c) > 2 and isinstance(c[-2], Token) and c[-2].value == "=" else None
        if chain is None:
            chain = c_ast.TypeDecl(None, [], None, None)
        decl = self._declaration(specs, chain, None, whole=c[:2])
        return self._place(X.TemplateParam("value", decl.name, decl, default), c)

    def func_template_id(self, c):
        args = next((x for x in c if isinstance(x, list)), [])
        return self._place(X.TemplateId(c[0].value, args), c)

    type_template_id = func_template_id

    def template_argument_list(self, c):
        return self._nodes(c)

    def scoped_member(self, c):
        scope = c[0]
        if isinstance(scope, Token):
            scope = self._place(c_ast.ID(scope.value), [scope])
        return self._place(X.ScopedMember(scope, c[1].value), c)

    def typename_specifier(self, c):
        if isinstance(c[1], Token):
            return ("types", c[1].value, c)
        # typename vec4<T>::Type: the name as written, blanks dropped
        return ("types", "".join(self._span(c[1:]).text.split()), c)

    def decltype_specifier(self, c):
        node = self._place(c_ast.IdentifierType(["decltype(...)"]), c)
        return ("types", node, c)

    def cxx_cast(self, c):
        return self._place(X.CxxCast(c[0].value, c[2], c[5]), c)

    # -- specialisations, members, operators, constructors -------------------------------
    def declarator_specialization(self, c):
        node = self._place(c_ast.TypeDecl(c[0].name, [], None, None), c)
        self.specialized[node] = c[0].args
        return node

    def declarator_qualified(self, c):
        # interval<T>::lower -> 'interval::lower' (the segmenter names it the same way)
        return self._place(c_ast.TypeDecl(c[0].value + c[-1].value, [], None, None), c)

    def declarator_destructor(self, c):
        return self._place(c_ast.TypeDecl("~" + c[1].value, [], None, None), c)

    def declarator_operator(self, c):
        return self._place(c_ast.TypeDecl("operator" + c[1][1], [], None, None), c)

    def operator_symbol(self, c):
        return ("operator_symbol", "".join(t.value for t in c), c)

    def conversion_operator(self, c):
        return ("operator_symbol", " " + " ".join(self._span(c).text.split()), c)

    def trailing_return(self, c):
        return ("trailing_return", c[1], c)

    def ctor_initializer(self, c):
        return ("ctor_initializer", self._nodes(c), c)

    def mem_initializer(self, c):
        head = c[0]
        name = self._place(c_ast.ID(head.value if isinstance(head, Token) else head.name), [head])
        args = next((x for x in c[1:] if isinstance(x, (c_ast.ExprList, c_ast.InitList))), None)
        return self._place(c_ast.FuncCall(name, args), c)

    # -- declarations --------------------------------------------------------------------
    def pointer_ref(self, c):
        return self._place(X.RefDecl([], False, None), c)

    def pointer_rref(self, c):
        return self._place(X.RefDecl([], True, None), c)

    def declarator_constructed(self, c):
        return _Constructed(c[0], c[2], self._span(c))

    def using_directive(self, c):
        return []  # `using namespace cg;` / `using std::min;` name nothing gmprof tracks

    def using_alias(self, c):
        return [self._place(X.UsingAlias(c[1].value, c[3]), c)]

    def static_assert(self, c):
        message = next((x.value for x in c if isinstance(x, c_ast.Constant)
                        and x.type == "string"), None)
        return [self._place(X.StaticAssert(c[2], message), c)]

    # -- expressions ---------------------------------------------------------------------
    def new_expression(self, c):
        placement = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "placement"), [])
        to_type, dims = next(x[1:3] for x in c if isinstance(x, tuple) and x[0] == "new_type")
        init = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "new_init"), None)
        return self._place(X.New(placement, to_type, dims, init), c)

    def new_placement(self, c):
        return ("placement", list(c[1].exprs), c)

    def new_type(self, c):
        specs = c[0]
        pointer = next((x for x in c[1:] if isinstance(x, list)), None)
        dims = [x[1] for x in c[1:] if isinstance(x, tuple) and x[0] == "new_array_bound"]
        parts = [specs, self.abstract_declarator([pointer])] if pointer else [specs]
        return ("new_type", self.type_name(parts), dims, c)

    def new_array_bound(self, c):
        return ("new_array_bound", c[1], c)

    def new_initializer(self, c):
        # the parentheses are kept in the tuple so that the New node's span reaches ')'
        if len(c) == 1:
            return ("new_init", c[0], c)  # a braced list
        if len(c) == 3:
            return ("new_init", c[1], c)
        return ("new_init", self._place(c_ast.ExprList([]), c), c)

    def delete_expression(self, c):
        return self._place(X.Delete(False, c[1]), c)

    def delete_array_expression(self, c):
        return self._place(X.Delete(True, c[3]), c)

    def kernel_launch(self, c):
        # kernel<<<grid, block[, shared, stream]>>>(args), launched from device code
        config = c[1][1]
        args = c[3] if len(c) > 4 else None
        return self._place(X.KernelLaunch(c[0], config, args), c)

    def launch_config(self, c):
        return ("launch_config", list(c[1].exprs), c)

    # -- lambdas -------------------------------------------------------------------------
    def lambda_expression(self, c):
        captures = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "captures"), [])
        params, returns = next(((x[1], x[2]) for x in c if isinstance(x, tuple)
                                and x[0] == "lambda_declarator"), (None, None))
        body = c[-1]
        span = self._span(c)
        name = "<lambda %d:%d>" % span.source.line_col(span.start)
        if returns is not None:
            chain = returns.type
            _lambda_bottom(chain).declname = name
        else:
            ident = c_ast.IdentifierType(["auto"])
            ident.coord = span
            chain = c_ast.TypeDecl(name, [], None, ident)
            chain.coord = span
        ftype = self._place(c_ast.FuncDecl(params, chain), c[:-1])
        decl = self._place(c_ast.Decl(name, [], [], [], ["__device__"], ftype, None, None), c)
        funcdef = self._place(c_ast.FuncDef(decl, None, body), c)
        uses = []
        for var in _assigned_through_reference(captures, params, body):
            ident = c_ast.ID(var, coord=span)
            uses.append(c_ast.UnaryOp("&", ident, coord=span))
        node = self._place(X.Lambda(name, captures, uses, funcdef), c)
        self.lambdas.append(node)
        return node

    def lambda_capture_list(self, c):
        return ("captures", [x for x in c if isinstance(x, tuple)])

    def capture_default_ref(self, c):
        return ("&", None)

    def capture_default_copy(self, c):
        return ("=", None)

    def capture_ref(self, c):
        return ("&", c[1].value)

    def capture_copy(self, c):
        return ("=", c[0].value)

    def capture_this(self, c):
        return ("this", None)

    def lambda_qualifier(self, c):
        return ("lambda_qualifier", c[0].value)

    def lambda_declarator(self, c):
        params = next((x for x in c if isinstance(x, c_ast.ParamList)), None)
        returns = next((x for x in c if isinstance(x, c_ast.Typename)), None)
        return ("lambda_declarator", params, returns)

    # -- inline PTX ----------------------------------------------------------------------
    def asm_statement(self, c):
        qualifiers = [x[1] for x in c if isinstance(x, tuple) and x[0] == "asm_qualifier"]
        template = next(x for x in c if isinstance(x, c_ast.Constant))
        sections = [x for x in c if isinstance(x, list)]
        outputs = sections[0] if len(sections) > 0 else []
        inputs = sections[1] if len(sections) > 1 else []
        clobbers = [x.value for x in sections[2]] if len(sections) > 2 else []
        return self._place(X.Asm(template.value, qualifiers, outputs, inputs, clobbers), c)

    def asm_qualifier(self, c):
        return ("asm_qualifier", c[0].value)

    def asm_section(self, c):
        return self._nodes(c)

    def asm_operand(self, c):
        symbolic = None
        nodes = self._nodes(c)
        for k, x in enumerate(c):
            if isinstance(x, Token) and x.value == "[":
                symbolic = c[k + 1].value
        constraint, expr = nodes[0], nodes[1]
        return self._place(X.AsmOperand(symbolic, constraint.value, expr), c)

    def asm_clobber(self, c):
        return c[0]


def _lambda_bottom(chain):
    while not isinstance(chain, c_ast.TypeDecl):
        chain = chain.type
    return chain


def _assigned_through_reference(captures, params, body) -> list[str]:
    """Names the lambda's body assigns (`x = ...`, `x += ...`, `++x`) that it reaches through a
    by-reference capture: `[&]` (any name not declared in the body or a parameter) or `[&x]`."""
    default_ref = ("&", None) in captures
    by_ref = {name for kind, name in captures if kind == "&" and name}
    local = {p.name for p in (params.params if params is not None else [])
             if isinstance(p, c_ast.Decl)}
    assigned = []
    for node in X.walk(body):
        if isinstance(node, c_ast.Decl):
            local.add(node.name)
        target = None
        if isinstance(node, c_ast.Assignment):
            target = node.lvalue
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            target = node.expr
        if isinstance(target, c_ast.ID) and target.name not in assigned:
            assigned.append(target.name)
    return [n for n in assigned if n not in local and (n in by_ref or default_ref)]
