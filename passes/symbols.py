"""FindMemoryObjects: the arrays a device function can touch, with element type and shape.

Read-only analysis. Takes a Function (with its Names) and returns MemoryObjects:
  shared          a static `__shared__` array (or scalar) declared in the function
  shared_dynamic  an `extern __shared__ T name[]` array (sized at launch)
  device          a pointer parameter: device memory, sized at launch by the argument
  global          a file-scope `__device__` / `__managed__` variable
  constant        a file-scope `__constant__` variable
  local           a per-thread local array
Element types and dimensions are kept as written (`float`, `[BLK_DIM][BLK_DIM + 1]`), since
macros and template parameters are only resolved at launch.

    __global__ void t(float *odata, const float *idata) { __shared__ float tile[16][17]; }
    -> odata: device float [], idata: device const float [], tile: shared float [16][17]
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from gmprof.errors import Location
from gmprof.frontend import cxx_ast as X
from gmprof.frontend.program import FileVariable, Function, TranslationUnit

from .scopes import GLOBAL, LOCAL, PARAM, Names, Symbol

SHARED = "shared"
SHARED_DYNAMIC = "shared_dynamic"
DEVICE = "device"
GLOBAL_VAR = "global"
CONSTANT = "constant"
LOCAL_ARRAY = "local"

MEMORY_SPACES = (SHARED, SHARED_DYNAMIC, DEVICE, GLOBAL_VAR, CONSTANT, LOCAL_ARRAY)


@dataclass(eq=False)
class MemoryObject:
    name: str
    space: str
    elem_type: str  # the element type as written, qualifiers included ('const float')
    dims: tuple[str, ...]  # declared dimensions as written; '' for an unsized one
    symbol: Symbol
    location: Location
    function: str | None  # owner function; None for file-scope objects
    is_pointer: bool = False  # a pointer (device parameter) rather than a declared array
    volatile: bool = False
    restrict: bool = False
    const: bool = False

    @property
    def is_shared(self) -> bool:
        return self.space in (SHARED, SHARED_DYNAMIC)

    @property
    def shape_text(self) -> str:
        if self.is_pointer:
            return "[]"
        return "".join(f"[{d}]" for d in self.dims) or "(scalar)"

    def describe(self) -> str:
        kind = {SHARED: "shared", SHARED_DYNAMIC: "shared (dynamic, extern)", DEVICE:
                "device memory (pointer parameter)", GLOBAL_VAR: "device memory (__device__)",
                CONSTANT: "constant memory", LOCAL_ARRAY: "local array"}[self.space]
        return f"{self.name}: {kind}, {self.elem_type} {self.shape_text}"

    def __repr__(self) -> str:
        return f"MemoryObject({self.name!r}, {self.space}, {self.elem_type!r}, {self.dims})"


def type_text(node) -> str:
    """The base type of a declarator chain as text: 'const float', 'float4', 'Vec<float>'."""
    while not isinstance(node, c_ast.TypeDecl):
        if node is None:
            return "?"
        node = node.type
    quals = " ".join(node.quals)
    base = node.type
    if isinstance(base, c_ast.IdentifierType):
        name = " ".join(base.names)
    elif isinstance(base, (c_ast.Struct, c_ast.Union)):
        name = f"struct {base.name}" if base.name else "struct"
    elif isinstance(base, c_ast.Enum):
        name = f"enum {base.name}"
    elif isinstance(base, X.TemplateId):
        name = X.span(base).text if X.span(base) else base.name
    else:
        name = "?"
    return f"{quals} {name}".strip()


def element_text(node) -> str:
    """The element type of a declared array (or a variable) as text, pointer levels included:
    `float *tab[4]` holds 'float *', `float (*ops[3])(float)` 'float (*)()' (8 bytes each:
    launchenv.sizeof reads the '*'), `float a[4]` 'float'."""
    while isinstance(node, c_ast.ArrayDecl):
        node = node.type
    stars = 0
    function = False
    while isinstance(node, (c_ast.PtrDecl, c_ast.FuncDecl)):
        if isinstance(node, c_ast.FuncDecl):
            function = True
        elif not function:
            stars += 1
        node = node.type
    base = type_text(node)
    if function and stars:
        return f"{base} (*)()"
    return f"{base} {'*' * stars}" if stars else base


def _dims(node) -> list[str]:
    dims = []
    while isinstance(node, c_ast.ArrayDecl):
        dims.append(X.span(node.dim).text if node.dim is not None and X.span(node.dim) else "")
        node = node.type
    return dims


def _pointer_quals(node) -> list[str]:
    return list(node.quals) if isinstance(node, c_ast.PtrDecl) else []


def object_for_symbol(sym: Symbol, owner: str | None) -> MemoryObject | None:
    """The memory object a symbol declares, if it declares one."""
    if sym.kind == PARAM and isinstance(sym.decl, c_ast.Decl):
        t = sym.decl.type
        if isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            # an array parameter (`unsigned char v[8]`, `float m[][4]`) is a pointer to its
            # element: C adjusts the outermost dimension away
            elem = t.type
            elem_text = type_text(t)
            quals = _pointer_quals(t)
            inner = elem if isinstance(elem, c_ast.TypeDecl) else None
            return MemoryObject(
                sym.name, DEVICE, elem_text, ("",) + tuple(_dims(elem)), sym,
                sym.decl.coord.location(), owner, is_pointer=True,
                restrict=any("restrict" in q for q in quals),
                const=inner is not None and "const" in inner.quals,
                volatile=inner is not None and "volatile" in inner.quals,
            )
        return None
    if sym.kind == LOCAL and isinstance(sym.decl, c_ast.Decl):
        storage = sym.decl.storage or []
        t = sym.decl.type
        if "__shared__" in storage:
            dynamic = "extern" in storage or (isinstance(t, c_ast.ArrayDecl) and t.dim is None)
            return MemoryObject(sym.name, SHARED_DYNAMIC if dynamic else SHARED, type_text(t),
                                tuple(_dims(t)), sym, sym.decl.coord.location(), owner,
                                volatile="volatile" in (sym.decl.quals or []))
        if isinstance(t, c_ast.ArrayDecl) and "extern" not in storage:
            return MemoryObject(sym.name, LOCAL_ARRAY, type_text(t), tuple(_dims(t)), sym,
                                sym.decl.coord.location(), owner)
        return None
    if sym.kind == GLOBAL and isinstance(sym.decl, FileVariable):
        var = sym.decl
        decl = var.decl
        space = {"__constant__": CONSTANT, "__shared__": SHARED_DYNAMIC}.get(var.space, GLOBAL_VAR)
        loc = decl.coord.location() if decl is not None and X.span(decl) else \
            var.source.location(var.segment.start)
        if decl is None:
            return MemoryObject(sym.name, space, "?", (), sym, loc, None)
        if var.space == "__shared__":
            dynamic = "extern" in (decl.storage or [])
            space = SHARED_DYNAMIC if dynamic else SHARED
        return MemoryObject(sym.name, space, element_text(decl.type), tuple(_dims(decl.type)),
                            sym, loc, None)
    return None


def find_memory_objects(function: Function, names: Names) -> list[MemoryObject]:
    """Objects declared by the function (parameters and locals) plus the file-scope variables it
    refers to, in order of declaration / first use."""
    objects: list[MemoryObject] = []
    seen: set = set()
    for sym in names.params + names.locals:
        obj = object_for_symbol(sym, function.name)
        if obj is not None:
            objects.append(obj)
            seen.add(sym)
    globals_seen: dict[str, MemoryObject] = {}
    for node, sym in names.symbol_of.items():
        if sym.kind == GLOBAL and sym.name not in globals_seen:
            obj = object_for_symbol(sym, None)
            if obj is not None:
                globals_seen[sym.name] = obj
    objects.extend(sorted(globals_seen.values(), key=lambda o: (o.location.line, o.location.col)))
    return objects


def file_objects(tu: TranslationUnit) -> list[MemoryObject]:
    """Every file-scope CUDA variable of the translation unit as a MemoryObject."""
    from .scopes import Symbol as _Symbol

    out = []
    for var in tu.variables:
        if var.name:
            obj = object_for_symbol(_Symbol(var.name, GLOBAL, var), None)
            if obj is not None:
                out.append(obj)
    return out
