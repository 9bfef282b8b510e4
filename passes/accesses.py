"""FindAccesses: every memory access site of a device function, its object and its kind.

Read-only analysis. Takes a parsed Function, its Names and MemoryObjects; returns AccessSites in
source order. An access site is one expression that reads or writes one element of a memory
object:
  s[i][j]          a full subscript of a declared array (partial subscripts are addresses)
  p[i], p[i].x     a subscript of a pointer (a member of the element counts as that element)
  *(p + i), *p     a dereference;  p->x  a member through a pointer
  counter          a scalar file-scope __device__ / __shared__ variable used as a value
  &a[i] passed to atomicAdd & co.: a read-write access (the atomic reads and writes it)
  &a[i] or a + i passed to a load or store intrinsic (__ldg, __ldcg, __stcs...): a read or a
                   write of a[i]
Its kind is read, write (the target of `=`), or read-write (`+=`, `++`, atomics).

Pointers are followed through local aliases (`float *row = A + i * n; row[j]` is an access to A)
when every definition of the alias points into the same object; otherwise the site is kept with
object None and the reason, and the runtime finds the object from the address.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.errors import Location
from gmprof.frontend import cxx_ast as X
from gmprof.frontend.program import Function

from .scopes import GLOBAL, LOCAL, PARAM, Names
from .symbols import LOCAL_ARRAY, MemoryObject
from .visitor import Visitor

READ = "read"
WRITE = "write"
READ_WRITE = "read-write"

ATOMIC_FUNCTIONS = frozenset(
    f"{base}{suffix}"
    for base in ("atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc",
                 "atomicDec", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor")
    for suffix in ("", "_block", "_system")
)

# Intrinsics that read or write the element their first argument points at: the cache-hinted
# loads and stores (CUDA's `__ldg(const T *)`, `__stcs(T *, T)`...) and the atomics.
ADDRESS_FUNCTIONS = {
    **{name: "read" for name in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv")},
    **{name: "write" for name in ("__stcg", "__stcs", "__stwb", "__stwt")},
    **{name: "read-write" for name in ATOMIC_FUNCTIONS},
}


@dataclass(eq=False)
class AccessSite:
    node: c_ast.Node  # the access expression (outermost ArrayRef, the '*' UnaryOp, ...)
    object: MemoryObject | None
    kind: str  # READ / WRITE / READ_WRITE
    subscripts: tuple  # index expressions as written, outermost first ([i][j] -> (i, j))
    via: str | None  # the local pointer the access went through, if any
    form: str  # 'subscript' a[i], 'deref' *(p + i), 'arrow' p->x, 'scalar' x, 'pointer' (the
    # pointer argument of an atomic: atomicAdd(p + i, v))
    function: Function
    unresolved: str | None = None  # why the object is unknown (when object is None)
    atomic: str | None = None  # the atomic function, for atomic accesses
    id: int = -1  # index within the translation unit's sites, set by the caller
    # the member expression when the access reads or writes a member of the element
    # (`sp[i].b`, `p->v.x`): a shared array is counted per word, so the member's words are
    # the ones touched, not the element's
    member: c_ast.Node | None = None

    @property
    def location(self) -> Location:
        return self.node.coord.location()

    @property
    def text(self) -> str:
        return X.span(self.node).text

    @property
    def index_text(self) -> str:
        if self.form == "subscript":
            return "".join(f"[{X.span(s).text}]" for s in self.subscripts)
        if self.subscripts:
            return " + ".join(X.span(s).text for s in self.subscripts)
        return "0"

    @property
    def object_name(self) -> str:
        if self.object is not None:
            return self.object.name
        return "?"

    @property
    def profiled(self) -> bool:
        """Whether gmprof counts this site (local arrays live in registers / local memory)."""
        return self.object is None or self.object.space != LOCAL_ARRAY

    def __repr__(self) -> str:
        return f"AccessSite({self.text!r}, {self.object_name}, {self.kind})"


def parent_map(root) -> dict:
    """node -> parent, for every node under root (keyed by node object)."""
    parents = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for _, child in node.children():
            parents[child] = node
            stack.append(child)
    return parents


class FindAccesses(Visitor):
    def __init__(self, function: Function, names: Names, objects: list[MemoryObject],
                 array_members: dict | None = None):
        self.function = function
        self.names = names
        self.by_symbol = {obj.symbol: obj for obj in objects}
        self.objects = objects
        self.parents = parent_map(function.funcdef.body)
        self.sites: list[AccessSite] = []
        self._claimed: set = set()  # nodes already inside a recorded access's base
        self._alias_cache: dict = {}
        self.array_members = array_members or {}  # struct -> its array members
        # `T &r = a[i];` binds a reference to an element: the binding is not an access, every
        # use of r is an access to a[i].
        self.references: dict = {}  # Symbol -> the bound element expression
        self._reference_inits: set = set()
        for sym in names.locals:
            decl = sym.decl
            if isinstance(decl, c_ast.Decl) and isinstance(decl.type, X.RefDecl) and \
                    decl.init is not None and isinstance(decl.init, (c_ast.ArrayRef,
                                                                     c_ast.UnaryOp)):
                self.references[sym] = decl.init
                self._reference_inits.add(decl.init)

    # -- pointer resolution --------------------------------------------------------------
    def resolve_pointer(self, expr, depth: int = 0):
        """(object, via, reason) for a pointer-valued expression."""
        if depth > 12:
            return None, None, "pointer defined through too many steps"
        if isinstance(expr, c_ast.ID):
            sym = self.names[expr]
            if sym is None:
                return None, None, f"unknown name {expr.name}"
            if sym in self.by_symbol:
                return self.by_symbol[sym], None, None
            if sym.kind == LOCAL and isinstance(sym.decl, c_ast.Decl):
                if _arithmetic(sym.decl.type):
                    # `int j = d[i]` holds a value read from d, not a pointer into it
                    return None, None, f"{sym.name} is not a pointer"
                obj, reason = self.resolve_alias(sym, depth)
                return obj, sym.name, reason
            if sym.kind == PARAM:
                return None, None, f"{sym.name} is not a pointer"
            return None, None, f"{expr.name} is not a known memory object"
        if isinstance(expr, (c_ast.Cast, X.CxxCast)):
            return self.resolve_pointer(expr.expr, depth + 1)
        if isinstance(expr, c_ast.BinaryOp) and expr.op in ("+", "-"):
            left = self.resolve_pointer(expr.left, depth + 1)
            if left[0] is not None or expr.op == "-":
                return left
            return self.resolve_pointer(expr.right, depth + 1)
        if isinstance(expr, c_ast.UnaryOp) and expr.op == "&":
            inner = expr.expr
            while isinstance(inner, c_ast.ArrayRef):
                inner = inner.name
            if isinstance(inner, c_ast.StructRef):
                inner = inner.name
                while isinstance(inner, c_ast.ArrayRef):
                    inner = inner.name
            return self.resolve_pointer(inner, depth + 1)
        if isinstance(expr, c_ast.UnaryOp) and expr.op in ("p++", "p--", "++", "--"):
            return self.resolve_pointer(expr.expr, depth + 1)
        if isinstance(expr, c_ast.ArrayRef):
            # a row of a multi-dimensional array: s[i] used as a pointer
            base = expr
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            return self.resolve_pointer(base, depth + 1)
        if isinstance(expr, c_ast.TernaryOp):
            a = self.resolve_pointer(expr.iftrue, depth + 1)
            b = self.resolve_pointer(expr.iffalse, depth + 1)
            if a[0] is not None and a[0] is b[0]:
                return a
            names = sorted({t[0].name for t in (a, b) if t[0] is not None})
            if len(names) == 2:
                return None, None, f"pointer aliasing: it may point into {names[0]} or {names[1]}"
            return None, None, "the pointer is chosen by a condition"
        if isinstance(expr, c_ast.StructRef):
            return None, None, f"pointer loaded from a structure member ({X.span(expr).text})"
        if isinstance(expr, c_ast.FuncCall):
            return None, None, "pointer returned by a call"
        return None, None, "pointer expression not understood"

    def resolve_alias(self, sym, depth):
        """A local pointer aliases one object if every definition points into it."""
        if sym in self._alias_cache:
            return self._alias_cache[sym]
        self._alias_cache[sym] = (None, f"{sym.name} is defined in terms of itself")
        defs = [sym.decl.init] if sym.decl.init is not None else []
        for node in self._assignments_to(sym):
            if node.op in ("=",):
                defs.append(node.rvalue)
            # p += k, p++ keep pointing into the same object
        result = (None, f"local {sym.name} is never given a value")
        if defs:
            targets = [self.resolve_pointer(d, depth + 1) for d in defs]
            objs = {id(t[0]) for t in targets}
            if all(t[0] is not None for t in targets) and len(objs) == 1:
                result = (targets[0][0], None)
            elif any(t[0] is None for t in targets):
                bad = next(t for t in targets if t[0] is None)
                result = (None, f"{sym.name}: {bad[2]}")
            else:
                result = (None, f"pointer aliasing: {sym.name} may point into "
                          + " or ".join(sorted({t[0].name for t in targets})))
        if self._address_taken(sym):
            result = (None, f"the address of {sym.name} is taken, so it may change anywhere")
        self._alias_cache[sym] = result
        return result

    def _uses(self, sym):
        return [node for node, s in self.names.symbol_of.items() if s is sym]

    def _assignments_to(self, sym):
        out = []
        for use in self._uses(sym):
            parent = self.parents.get(use)
            if isinstance(parent, c_ast.Assignment) and parent.lvalue is use:
                out.append(parent)
        return out

    def _address_taken(self, sym) -> bool:
        for use in self._uses(sym):
            parent = self.parents.get(use)
            if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
                return True
        return False

    # -- kinds -----------------------------------------------------------------------------
    def kind_of(self, node) -> tuple[str, str | None]:
        """(kind, atomic function) for an access expression, from how its value is used."""
        parent = self.parents.get(node)
        child = node
        # a member of the element: p[i].x = v writes element i
        while isinstance(parent, c_ast.StructRef) and parent.name is child and parent.type == ".":
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, c_ast.Assignment) and parent.lvalue is child:
            return (WRITE if parent.op == "=" else READ_WRITE), None
        if isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++", "p--"):
            return READ_WRITE, None
        return READ, None

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> list[AccessSite]:
        self._visit(self.function.funcdef.body)
        self.sites.sort(key=lambda s: (s.node.coord.start, -s.node.coord.end))
        return self.sites

    def _visit(self, node):
        stack = [node]
        while stack:
            n = stack.pop()
            if n not in self._claimed:
                self.visit(n)
            kids = [c for _, c in n.children()]
            stack.extend(reversed(kids))

    def _record(self, node, obj, kind, subscripts, via, form, reason=None, atomic=None):
        if obj is None and reason is None:
            reason = "unknown object"
        member = node if form == "arrow" else None
        parent = self.parents.get(node)
        while isinstance(parent, c_ast.StructRef) and parent.type == "." and \
                parent.name is (member or node):
            member, parent = parent, self.parents.get(parent)
        if member is not None and isinstance(parent, c_ast.FuncCall) and parent.name is member:
            return  # acc.f(x), a[i].f(x): a member function's call, no memory read there
        self.sites.append(AccessSite(node, obj, kind, tuple(subscripts), via, form,
                                     self.function, reason, atomic, member=member))

    # Each node the walk reaches (_visit) is visited once: visit_<Class>(n) records the access
    # it makes, if any; any other class makes none.
    def generic_visit(self, n):
        return None

    def visit_ArrayRef(self, n):
        parent = self.parents.get(n)
        if isinstance(parent, c_ast.ArrayRef) and parent.name is n:
            return  # inner part of a chain; the outermost decides
        base, subs = subscript_chain(n)
        if self._is_local_value(base):
            return  # an array member of a local struct: registers, not memory
        if self._member_array_of_pointee(base):
            # p->arr[i]: bytes of the struct p points to, an access to it as p->field is
            if self._address_use(n):
                return
            obj, via, reason = self.resolve_pointer(base.name)
            kind, atomic = self._atomic_or_kind(n)
            self._record(n, obj, kind, self._offsets(base.name), via, "arrow", reason, atomic)
            self._claim_base(base)
            return
        obj, via, reason = self.resolve_pointer(base)
        rank = self._rank(obj, base)
        if rank is not None and len(subs) < rank:
            return  # a partial subscript: an address (decays to a row pointer)
        if self._address_use(n):
            return
        kind, atomic = self._atomic_or_kind(n)
        if rank is not None and len(subs) > rank:
            # e.g. float **a: a[i] reads a pointer from a; [j] goes through an unknown one
            self._record(n, None, kind, subs[rank:], None, "subscript",
                         "pointer loaded from memory")
            return
        self._record(n, obj, kind, subs, via, "subscript", reason, atomic)
        # the subscript expressions hold their own accesses; the base does not
        self._claim_base(base)

    def visit_UnaryOp(self, n):
        if n.op != "*":
            return
        parent = self.parents.get(n)
        if isinstance(parent, c_ast.FuncCall) and parent.name is n:
            return  # (*fp)(x): a call through a function pointer reads no data there
        if self._address_use(n):
            return
        obj, via, reason = self.resolve_pointer(n.expr)
        offsets = self._offsets(n.expr)
        kind, atomic = self._atomic_or_kind(n)
        self._record(n, obj, kind, offsets, via, "deref", reason, atomic)

    def visit_StructRef(self, n):
        if n.type != "->":
            return
        parent = self.parents.get(n)
        if isinstance(parent, c_ast.FuncCall) and parent.name is n:
            return  # vec->push(x): a member function's call, no memory read
        obj, via, reason = self.resolve_pointer(n.name)
        kind, atomic = self._atomic_or_kind(n)
        self._record(n, obj, kind, self._offsets(n.name), via, "arrow", reason, atomic)

    def visit_FuncCall(self, n):
        if not (isinstance(n.name, c_ast.ID) and n.name.name in ADDRESS_FUNCTIONS and
                n.args is not None and n.args.exprs):
            return
        # atomicAdd(p + i, v), __ldg(p + i): the pointer itself is the first argument
        # (`&a[i]` is handled where the subscript is)
        ptr = n.args.exprs[0]
        if isinstance(ptr, c_ast.UnaryOp) and ptr.op == "&":
            return
        name = n.name.name
        obj, via, reason = self.resolve_pointer(ptr)
        offsets = self._offsets(ptr)
        self._record(ptr, obj, ADDRESS_FUNCTIONS[name], offsets, via, "pointer",
                     reason, name if name in ATOMIC_FUNCTIONS else None)
        # the pointer is no access of its own; the offsets hold theirs (`h + v[i]`)
        inside = {id(x) for off in offsets for x in X.walk(off)}
        self._claimed.update(x for x in X.walk(ptr) if id(x) not in inside)

    def visit_ID(self, n):
        parent = self.parents.get(n)
        sym = self.names[n]
        if sym in self.references:
            self._reference_use(n, sym)
            return
        if sym is None or sym not in self.by_symbol:
            return
        obj = self.by_symbol[sym]
        if obj.dims or obj.is_pointer:
            return  # an array or pointer named without a subscript: an address
        if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
            if self._intrinsic_of_address(parent) is None:
                return  # &x: an address
            kind, atomic = self._atomic_or_kind(n, through_address=True)
            self._record(n, obj, kind, (), None, "scalar", None, atomic)
            return
        kind, atomic = self.kind_of(n)
        self._record(n, obj, kind, (), None, "scalar")

    def _reference_use(self, n, sym) -> None:
        bound = self.references[sym]
        if isinstance(bound, c_ast.ArrayRef):
            base, subs = subscript_chain(bound)
            form = "subscript"
        else:
            base = bound.expr
            subs = self._offsets(base)
            form = "deref"
        obj, _, reason = self.resolve_pointer(base)
        kind, atomic = self._atomic_or_kind(n)
        self._record(n, obj, kind, subs, sym.name, form, reason, atomic)

    def _is_local_value(self, base) -> bool:
        """Whether `base` is a member of a local (non-pointer) variable: `v.arr`."""
        if not (isinstance(base, c_ast.StructRef) and base.type == "."):
            return False
        root = base
        while isinstance(root, (c_ast.StructRef, c_ast.ArrayRef)):
            if isinstance(root, c_ast.StructRef) and root.type == "->":
                return False
            root = root.name
        if not isinstance(root, c_ast.ID):
            return False
        sym = self.names[root]
        if not (sym is not None and sym.kind in (LOCAL, PARAM) and sym not in self.by_symbol
                and not isinstance(sym.type, c_ast.PtrDecl)):
            return False
        # `v.arr[i]` lies in v itself only where arr is an array member; `v.ptr[i]` follows a
        # pointer v holds (a kernel's by-value struct parameter's device array) and was
        # counted nowhere, the report silent about it. Where the member is not known to be an
        # array, the access is counted with its object found at run time (a local array's
        # address is then passed over there: gmprof.cuh in_global)
        field = base.field.name if isinstance(base.field, c_ast.ID) else None
        return field is not None and any(field in names for names in self.array_members.values())

    def _member_array_of_pointee(self, base) -> bool:
        """`p->arr` where p is a pointer variable to a struct whose member arr is an array
        (struct_members.py), so that `p->arr[i]` lies inside *p."""
        if not (isinstance(base, c_ast.StructRef) and base.type == "->" and
                isinstance(base.name, c_ast.ID) and isinstance(base.field, c_ast.ID)):
            return False
        from .struct_members import pointee_struct

        sym = self.names[base.name]
        decl = getattr(sym, "decl", None) if sym is not None else None
        struct = pointee_struct(getattr(decl, "type", None)) if decl is not None else None
        return struct is not None and base.field.name in self.array_members.get(struct, ())

    def _claim_base(self, base):
        for node in X.walk(base):
            self._claimed.add(node)

    def _rank(self, obj, base) -> int | None:
        """How many subscripts a full access of `base` takes (None when unknown)."""
        if obj is None:
            return None
        if isinstance(base, (c_ast.Cast, X.CxxCast, c_ast.BinaryOp)) or (
                isinstance(base, c_ast.ID) and self.names[base] is not None
                and self.names[base] not in self.by_symbol):
            return 1  # through a cast or an alias: one subscript per element of the new type
        if obj.is_pointer:
            return len(obj.dims)
        return max(len(obj.dims), 1)

    def _address_use(self, node) -> bool:
        """`&a[i]` not passed to an atomic or a load/store intrinsic is address arithmetic,
        not an access; nor is the element a reference is bound to."""
        if node in self._reference_inits:
            return True
        parent = self.parents.get(node)
        if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
            return self._intrinsic_of_address(parent) is None
        return False

    def _intrinsic_of_address(self, amp) -> str | None:
        """The atomic or load/store intrinsic `&x` is the first argument of, if any."""
        parent = self.parents.get(amp)
        if isinstance(parent, c_ast.ExprList):
            call = self.parents.get(parent)
            if isinstance(call, c_ast.FuncCall) and parent.exprs and parent.exprs[0] is amp:
                name = call.name.name if isinstance(call.name, c_ast.ID) else None
                if name in ADDRESS_FUNCTIONS:
                    return name
        return None

    def _atomic_or_kind(self, node, through_address=False):
        """(kind, atomic function or None); `&x` passed to an intrinsic takes its kind."""
        parent = self.parents.get(node)
        if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
            name = self._intrinsic_of_address(parent)
            if name is not None:
                return ADDRESS_FUNCTIONS[name], (name if name in ATOMIC_FUNCTIONS else None)
        return self.kind_of(node)

    def _offsets(self, expr) -> list:
        """The element offsets added to a pointer: *(p + i + j) -> [i, j]."""
        out = []
        while True:
            if isinstance(expr, c_ast.BinaryOp) and expr.op in ("+", "-"):
                if self.resolve_pointer(expr.left)[0] is not None or not \
                        self._looks_integral(expr.left):
                    out.append(expr.right)
                    expr = expr.left
                else:
                    out.append(expr.left)
                    expr = expr.right
            elif isinstance(expr, (c_ast.Cast, X.CxxCast)):
                expr = expr.expr
            else:
                break
        out.reverse()
        return out

    @staticmethod
    def _looks_integral(expr) -> bool:
        return isinstance(expr, c_ast.Constant)


def subscript_chain(node) -> tuple:
    """(base, [subscripts, outermost first]) of `a[i][j]`: (a, [i, j]); (node, []) for a node
    that is not a subscript."""
    subs = []
    base = node
    while isinstance(base, c_ast.ArrayRef):
        subs.append(base.subscript)
        base = base.name
    subs.reverse()
    return base, subs


def find_accesses(function: Function, names: Names, objects: list[MemoryObject],
                  array_members: dict | None = None) -> list[AccessSite]:
    if function.funcdef is None:
        return []
    return FindAccesses(function, names, objects, array_members).run()


__all__ = ["AccessSite", "find_accesses", "parent_map", "READ", "WRITE", "READ_WRITE",
           "ATOMIC_FUNCTIONS", "ADDRESS_FUNCTIONS", "GLOBAL"]


_ARITHMETIC_WORDS = {"char", "short", "int", "long", "signed", "unsigned", "float", "double",
                     "bool", "_Bool", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t",
                     "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "__half",
                     "half", "__nv_bfloat16"}


def _arithmetic(decl_type) -> bool:
    """Whether a declared type is a plain arithmetic scalar (`int`, `unsigned long`), which
    never holds a pointer: `auto`, typedef names and class types may, so they are not."""
    if not isinstance(decl_type, c_ast.TypeDecl):
        return False
    inner = decl_type.type
    return isinstance(inner, c_ast.IdentifierType) and bool(inner.names) and all(
        w in _ARITHMETIC_WORDS for w in inner.names)
