"""The values known at launch: what the static formulas and array shapes are evaluated with.

Takes the analysed program, the kernel's name expression (`matmul<16>`), grid, block and the
scalar arguments; answers the launch symbols of passes/symbolic.py: ('param', n), ('dim',
'blockDim.x'), ('macro', NAME) (evaluated from its body, -D flags included), ('tparam', T),
('const', N) (file-scope constants), ('sizeof', type). Type sizes come from a table of CUDA's
built-in types, typedefs and macros that name types, template type arguments, and, for the
user's own structs, the compiled module itself (a tiny sizeof kernel).
"""
from __future__ import annotations

import re

import numpy as np

from gmprof.errors import GmprofError
from gmprof.passes import symbolic as S

_SCALAR_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "_Bool": 1, "uchar": 1,
    "int8_t": 1, "uint8_t": 1, "short": 2, "unsigned short": 2, "short int": 2, "ushort": 2,
    "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "signed": 4, "signed int": 4, "uint": 4,
    "int32_t": 4, "uint32_t": 4, "float": 4, "half2": 4, "__half2": 4,
    "__nv_bfloat162": 4, "nv_bfloat162": 4,
    "long": 8, "unsigned long": 8, "long int": 8, "long long": 8, "long long int": 8,
    "unsigned long long": 8, "unsigned long long int": 8, "ulong": 8, "int64_t": 8,
    "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8, "intptr_t": 8, "uintptr_t": 8, "double": 8,
    "longlong": 8, "ulonglong": 8, "cudaTextureObject_t": 8, "dim3": 12, "uint3": 12,
}
_VECTOR_ALIGN_4 = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
                   "float": 4, "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8,
                   "double": 8}

NUMPY_OF = {
    "float": np.float32, "double": np.float64, "int": np.int32, "unsigned int": np.uint32,
    "unsigned": np.uint32, "uint": np.uint32, "int32_t": np.int32, "uint32_t": np.uint32,
    "long long": np.int64, "long long int": np.int64, "unsigned long long": np.uint64,
    "unsigned long long int": np.uint64, "long": np.int64, "unsigned long": np.uint64,
    "int64_t": np.int64, "uint64_t": np.uint64, "size_t": np.uint64, "short": np.int16,
    "unsigned short": np.uint16, "char": np.int8, "signed char": np.int8,
    "unsigned char": np.uint8, "uchar": np.uint8, "int8_t": np.int8, "uint8_t": np.uint8,
    "int16_t": np.int16, "uint16_t": np.uint16, "bool": np.bool_,
    # numpy has no bfloat16: a __nv_bfloat16 array is passed as its bits (uint16) or any
    # 2-byte dtype, unchecked
    "half": np.float16, "__half": np.float16,
}


def vector_size(name: str) -> int | None:
    m = re.fullmatch(r"([a-z]+?)([1-4])", name)
    if not m or m.group(1) not in _VECTOR_ALIGN_4:
        return None
    base, n = _VECTOR_ALIGN_4[m.group(1)], int(m.group(2))
    size = base * n
    if n == 3:
        return size  # float3 has no padding (12 bytes)
    return size


def vector_base(name: str):
    m = re.fullmatch(r"([a-z]+?)([1-4])", name)
    if not m or m.group(1) not in _VECTOR_ALIGN_4:
        return None
    return {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
            "int": np.int32, "uint": np.uint32, "float": np.float32, "long": np.int64,
            "ulong": np.uint64, "longlong": np.int64, "ulonglong": np.uint64,
            "double": np.float64}[m.group(1)]


def clean_type(text: str) -> str:
    words = [w for w in text.replace("*", " ").split()
             if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict",
                          "struct", "class", "union")]
    return " ".join(words)


def split_name_expression(expr: str) -> tuple[str, list[str]]:
    """'matmul<16, float>' -> ('matmul', ['16', 'float'])."""
    expr = expr.strip()
    if "<" not in expr:
        return expr, []
    name, _, rest = expr.partition("<")
    if not rest.endswith(">"):
        raise GmprofError(f"bad kernel name expression {expr!r}", kind="bad-kernel-name")
    rest = rest[:-1]
    args, depth, cur = [], 0, ""
    for ch in rest:
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += ch in "<(["
        depth -= ch in ">)]"
        cur += ch
    if cur.strip():
        args.append(cur.strip())
    return name.strip(), args


class LaunchEnv:
    """Callable env for symbolic.evaluate, for one launch of one kernel."""

    def __init__(self, program, kernel_facts, template_args: list[str], grid, block,
                 scalars: dict, sizes: dict | None = None):
        self.program = program
        self.facts = kernel_facts
        self.grid = grid
        self.block = block
        self.scalars = scalars
        self.sizes = dict(sizes or {})  # type text -> bytes (from the compiled module)
        self.values = program.values.of(kernel_facts)
        self.type_args: dict[str, str] = {}
        self.value_args: dict[str, object] = {}
        params = kernel_facts.function.template_params
        if template_args and len(template_args) > len(params):
            raise GmprofError(f"{kernel_facts.name} takes {len(params)} template arguments, "
                              f"not {len(template_args)}", kind="bad-kernel-name")
        for k, tp in enumerate(params):
            if k < len(template_args):
                text = template_args[k]
            elif tp.default is not None:
                from gmprof.frontend import cxx_ast as X
                text = X.span(tp.default).text
            else:
                raise GmprofError(f"{kernel_facts.name} needs template argument {tp.name}: "
                                  f"launch it as {kernel_facts.name}<...>", kind="bad-kernel-name")
            if tp.kind == "type":
                self.type_args[tp.name] = text
            else:
                self.value_args[tp.name] = text
        self._cache: dict = {}

    def __call__(self, key):
        if key in self._cache:
            return self._cache[key]
        value = self._resolve(key)
        self._cache[key] = value
        return value

    def _resolve(self, key):
        tag, name = key[0], key[1]
        if tag == "param":
            if name not in self.scalars:
                raise S.Unknown(f"argument {name} is not a scalar known at launch")
            return _number(self.scalars[name])
        if tag == "dim":
            obj, _, comp = name.partition(".")
            src = self.block if obj == "blockDim" else self.grid
            return int(src["xyz".index(comp)])
        if tag == "tparam":
            if name in self.value_args:
                return self.expression(self.value_args[name])
            raise S.Unknown(f"template parameter {name} has no value")
        if tag == "macro":
            expr = self.program.macro_expression(name)
            if expr is None:
                raise S.Unknown(f"macro {name} is not an expression")
            return self.node(expr)
        if tag == "const":
            return self._constant(name)
        if tag == "sizeof":
            return self.sizeof(name)
        if tag == "name":
            raise S.Unknown(f"{name} is not known at launch")
        raise S.Unknown(f"cannot evaluate {key}")

    def node(self, node):
        v = self.values.value(node)
        if v.affine is None or not v.affine.is_constant or v.deps:
            raise S.Unknown("not a launch-time value")
        return S.evaluate(v.affine.const, self)

    def expression(self, text: str):
        from gmprof.frontend.parser import get_parser
        from gmprof.frontend.source import SourceFile

        try:
            node = get_parser().parse(text, "expression_entry", SourceFile("<arg>", text), 0,
                                      self.program.tu.oracle)
        except GmprofError:
            raise S.Unknown(f"template argument {text!r} is not an expression")
        return self.node(node)

    def _constant(self, name: str):
        from gmprof.frontend.parser import get_parser

        tu = self.program.tu
        for source, segs in tu.segments.items():
            for seg in segs:
                if seg.kind == "constant" and seg.name == name:
                    decls = get_parser().parse(seg.text(source), "file_declaration", source,
                                               seg.start, tu.oracle)
                    for d in decls:
                        if getattr(d, "name", None) == name and d.init is not None:
                            return self.node(d.init)
        raise S.Unknown(f"constant {name} has no value")

    def sizeof(self, text: str) -> int:
        t = clean_type(text)
        if t.endswith("*") or "*" in text:
            return 8
        if t in self.type_args:
            return self.sizeof(self.type_args[t])
        if t in _SCALAR_SIZES:
            return _SCALAR_SIZES[t]
        v = vector_size(t)
        if v is not None:
            return v
        if t in self.sizes:
            return self.sizes[t]
        macro = self.program.tu.macros.get(t)
        if macro is not None and not macro.function_like and macro.body:
            return self.sizeof(macro.body)
        typedef = self.program.tu.oracle.typedefs.get(t)
        if typedef:
            return self.sizeof(typedef)
        raise S.Unknown(f"sizeof({text}) is not known")

    def elem_size(self, elem_type: str, arr=None) -> int:
        """Bytes of one element: sizeof the type, else the array's itemsize, else 4."""
        try:
            return int(self.sizeof(elem_type))
        except S.Unknown:
            if arr is not None:
                return int(np.dtype(arr.dtype).itemsize)
            return 4

    def shape(self, obj):
        """A declared array's dimensions at this launch (None when one is not known)."""
        from pycparser import c_ast

        decl = obj.symbol.decl
        t = getattr(decl, "type", None)
        if t is None and hasattr(decl, "decl") and decl.decl is not None:
            t = decl.decl.type
        dims = []
        while isinstance(t, c_ast.ArrayDecl):
            if t.dim is None:
                return None
            try:
                dims.append(int(self._dim(t.dim, obj)))
            except S.Unknown:
                return None
            t = t.type
        return tuple(dims)

    def _dim(self, node, obj, depth: int = 0):
        """An array dimension's value. Beyond what the value analysis knows at a launch, a
        name may be a local constant of the declaring function (`constexpr size_t stages =
        4; __shared__ float As[stages][B][B];`, as cuda-samples' globalToShmemAsyncCopy
        writes it): a declaration's dimensions are not a point the analysis follows."""
        from pycparser import c_ast

        try:
            return self.node(node)
        except S.Unknown:
            if depth > 8:
                raise
        if isinstance(node, c_ast.ID):
            init = _local_constant(self.program, obj, node.name)
            if init is None:
                # an object-like macro of constants (cuda-samples' histogram: `__shared__ uint
                # s_Hist[HISTOGRAM256_THREADBLOCK_MEMORY]`, `(WARP_COUNT * 256)`)
                init = self._macro_expression(node.name)
            if init is None:
                raise S.Unknown(f"{node.name} is not a constant known at launch")
            return self._dim(init, obj, depth + 1)
        if isinstance(node, c_ast.BinaryOp) and node.op in _INT_OPS:
            return _INT_OPS[node.op](int(self._dim(node.left, obj, depth + 1)),
                                     int(self._dim(node.right, obj, depth + 1)))
        if isinstance(node, c_ast.Cast):
            return self._dim(node.expr, obj, depth + 1)
        raise S.Unknown("not a launch-time value")

    def _macro_expression(self, name: str):
        """The parsed body of an object-like macro (None: no such macro, or not an
        expression)."""
        from gmprof.frontend.parser import get_parser
        from gmprof.frontend.source import SourceFile

        from gmprof.frontend.expand import expand_text

        macros = self.program.tu.macros
        macro = macros.get(name)
        if macro is None or macro.function_like or not macro.body:
            return None
        try:
            # (expanded first: `(WARP_COUNT * N)` unexpanded reads as a cast to a pointer)
            text = expand_text(macro, macros)
            return get_parser().parse(text, "expression_entry", SourceFile("<macro>", text), 0,
                                      self.program.tu.oracle)
        except GmprofError:
            return None

    def numpy_type(self, text: str):
        """The numpy scalar type a C type is passed as (None when there is no single one)."""
        t = clean_type(text)
        if t in self.type_args:
            return self.numpy_type(self.type_args[t])
        if t in NUMPY_OF:
            return NUMPY_OF[t]
        macro = self.program.tu.macros.get(t)
        if macro is not None and not macro.function_like and macro.body:
            return self.numpy_type(macro.body)
        typedef = self.program.tu.oracle.typedefs.get(t)
        if typedef:
            return self.numpy_type(typedef)
        return None


_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": lambda a, b: int(a / b), "%": lambda a, b: a % b, "<<": lambda a, b: a << b,
            ">>": lambda a, b: a >> b}


def _local_constant(program, obj, name: str):
    """The initialiser of `name` in the function declaring `obj` when it is declared there
    once, with an initialiser, and never assigned (a `const`/`constexpr` local, or one used as
    such); else None."""
    from pycparser import c_ast

    try:
        fn = program.facts(obj.function).function
    except Exception:
        return None
    parsed = getattr(fn, "parsed", None)
    if parsed is None:
        return None

    decls, assigned = [], []

    class Find(c_ast.NodeVisitor):
        def visit_Decl(self, n):
            if n.name == name:
                decls.append(n)
            self.generic_visit(n)

        def visit_Assignment(self, n):
            if isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == name:
                assigned.append(n)
            self.generic_visit(n)

        def visit_UnaryOp(self, n):
            if n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.expr, c_ast.ID) \
                    and n.expr.name == name:
                assigned.append(n)
            self.generic_visit(n)

    Find().visit(parsed.funcdef.body)
    if len(decls) != 1 or assigned or decls[0].init is None:
        return None
    return decls[0].init


def _number(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    return v
