"""The type oracle: which identifiers name types, and which name templates.

C cannot be parsed without knowing which names are types (`a * b;`), and C++ template-ids
(`f<32>(x)`) cannot be told from comparisons without knowing which names are templates. The
post-lexer asks this oracle. Its knowledge comes from: CUDA's and C's built-in type names; the
translation unit's typedef/struct/class/union/enum/using declarations and template declarations
(found by a lexical scan of the file and its local includes, so host code counts too); and
macros whose body is a type (`#define DATA_TYPE float`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .preprocess import Macro
from .scan import Tok

_VECTOR_BASES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                 "ulonglong", "float", "double")

BUILTIN_TYPES = frozenset(
    [f"{base}{n}" for base in _VECTOR_BASES for n in (1, 2, 3, 4)]
    + [
        "dim3", "size_t", "ptrdiff_t", "ssize_t", "intptr_t", "uintptr_t", "wchar_t", "clock_t",
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
        "uint", "ushort", "ulong", "uchar",
        "half", "__half", "half2", "__half2", "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16",
        "cudaTextureObject_t", "cudaSurfaceObject_t", "cudaError_t", "cudaStream_t",
        "cudaGraphConditionalHandle",
        "cuComplex", "cuFloatComplex", "cuDoubleComplex",
        "cufftComplex", "cufftDoubleComplex", "cufftReal", "cufftDoubleReal",
        "curandState", "curandState_t", "curandStatePhilox4_32_10_t",
        "std::size_t", "std::uint32_t", "std::int32_t", "std::uint64_t", "std::int64_t",
        "cg::thread_block", "cg::grid_group", "cg::thread_group", "cg::coalesced_group",
        "cooperative_groups::thread_block", "cooperative_groups::grid_group",
        "cooperative_groups::thread_group", "cooperative_groups::coalesced_group",
        "thread_block", "grid_group", "thread_group", "coalesced_group",
    ]
)

BUILTIN_TYPE_TEMPLATES = frozenset([
    "std::numeric_limits", "numeric_limits", "cuda::std::numeric_limits", "std::complex",
    "texture", "surface", "cg::thread_block_tile", "thread_block_tile",
    "cooperative_groups::thread_block_tile", "cub::BlockReduce", "cub::WarpReduce",
    "cub::BlockScan", "cub::WarpScan", "cub::BlockLoad", "cub::BlockStore",
    "cub::BlockRadixSort", "std::enable_if", "std::is_same", "cuda::std::array", "std::array",
])

BUILTIN_FUNC_TEMPLATES = frozenset([
    "tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered", "texCubemap",
    "tex2Dgather", "surf1Dread", "surf2Dread", "surf3Dread", "surf1Dwrite", "surf2Dwrite",
    "surf3Dwrite", "cg::tiled_partition", "tiled_partition", "cooperative_groups::tiled_partition",
    "cg::reduce", "cg::inclusive_scan", "cg::exclusive_scan", "std::min", "std::max",
    "std::swap", "cuda::std::min", "cuda::std::max", "__ldg", "static_cast",
])

# Keywords a macro may stand for (`#define RESTRICT __restrict__`) that the grammar reads as
# qualifiers or specifiers.
_QUALIFIER_KEYWORDS = frozenset({
    "const", "volatile", "__restrict__", "__restrict", "restrict", "static", "inline",
    "__inline__", "__forceinline__", "__noinline__", "__device__", "__host__", "__shared__",
    "__constant__", "__managed__", "register", "extern", "constexpr",
})

# Words that may make up a type written out in a macro body: `#define REAL unsigned int`.
_TYPE_WORDS = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
    "const", "volatile", "struct", "union", "enum", "*", "&", "__restrict__",
}


@dataclass
class TypeOracle:
    types: set[str] = field(default_factory=lambda: set(BUILTIN_TYPES))
    type_templates: set[str] = field(default_factory=lambda: set(BUILTIN_TYPE_TEMPLATES))
    func_templates: set[str] = field(default_factory=lambda: set(BUILTIN_FUNC_TEMPLATES))
    typedefs: dict = field(default_factory=dict)  # name -> the type it names, as text
    #: object-like macros that stand for one qualifier or specifier keyword
    #: (`#define RESTRICT __restrict__`): name -> the keyword
    keyword_macros: dict = field(default_factory=dict)

    #: inside a class body: the class's name (`S(int a)` declares its constructor)
    class_name: str | None = None

    def in_class(self, name: str, type_params: tuple) -> "TypeOracle":
        """This oracle as seen from a member function defined in class `name`'s body, with the
        type parameters of the enclosing class templates."""
        return dataclasses.replace(self, types=self.types | set(type_params) | {name},
                                   class_name=name)

    def is_type(self, name: str) -> bool:
        return name in self.types or _unqualified(name) in self.types

    def add_macros(self, macros: dict[str, Macro]) -> None:
        """Object-like macros whose body spells a type become type names (fixed point, since
        one macro may name another); those that stand for one qualifier keyword are kept
        apart, for the post-lexer to read as that keyword."""
        for macro in macros.values():
            word, seen = macro, set()
            while word is not None and not word.function_like and word.name not in seen:
                seen.add(word.name)
                body = word.body.strip()
                if body in _QUALIFIER_KEYWORDS:
                    self.keyword_macros[macro.name] = body
                    break
                word = macros.get(body)
        changed = True
        while changed:
            changed = False
            for macro in macros.values():
                if macro.function_like or macro.name in self.types or not macro.body:
                    continue
                words = macro.body.replace("*", " * ").replace("&", " & ").split()
                if words and all(w in _TYPE_WORDS or self.is_type(w) for w in words) and any(
                    w not in ("const", "volatile", "*", "&", "__restrict__") for w in words
                ):
                    self.types.add(macro.name)
                    changed = True

    def scan_tokens(self, tokens: list[Tok]) -> None:
        """Learn type and template names from a whole file's tokens (declarations anywhere)."""
        code = [t for t in tokens if t.kind not in ("comment", "dir")]
        n = len(code)
        for i, tok in enumerate(code):
            text = tok.text
            if tok.kind != "id":
                continue
            if text in ("struct", "class", "union", "enum") and i + 1 < n:
                if text == "class" and i > 0 and code[i - 1].text in ("<", ","):
                    # `template <class T, class U>`: a template parameter, a type only inside
                    # its template (the post-lexer declares it there)
                    continue
                j = i + 1
                if code[j].text == "class" and text == "enum":  # enum class X
                    j += 1
                # skip attributes/alignment: struct __align__(16) S
                while j < n and code[j].text in ("__align__", "alignas", "__attribute__",
                                                  "__declspec", "__device_builtin__"):
                    j = _skip_group(code, j + 1)
                if j < n and code[j].kind == "id":
                    self.types.add(code[j].text)
                    if text != "enum" and _preceded_by_template(code, i):
                        self.type_templates.add(code[j].text)
            elif text == "typedef":
                name = _typedef_name(code, i)
                if name:
                    self.types.add(name)
                    words = []
                    for t in code[i + 1:i + 40]:
                        if t.text == name or t.text in (";", "{"):
                            break
                        words.append(t.text)
                    paren = words.index("(") if "(" in words else -1
                    if 0 < paren < len(words) - 1 and words[paren + 1] == "*":
                        # a pointer to a function (or array): `float (*op_t)(float)` names a
                        # pointer type, 8 bytes (launchenv.sizeof reads the '*')
                        self.typedefs.setdefault(name, " ".join(words[:paren]) + " (*)")
                    elif words and "(" not in words:
                        self.typedefs.setdefault(name, " ".join(words))
            elif text == "using" and i + 2 < n and code[i + 1].kind == "id" \
                    and code[i + 2].text == "=":
                self.types.add(code[i + 1].text)
                words = []
                for t in code[i + 3:i + 40]:
                    if t.text in (";", "{"):
                        break
                    words.append(t.text)
                if words:
                    self.typedefs.setdefault(code[i + 1].text, " ".join(words))
            elif text == "template" and i + 1 < n and code[i + 1].text == "<":
                name = _template_function_name(code, i)
                if name:
                    self.func_templates.add(name)


def _unqualified(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def _skip_group(code: list[Tok], j: int) -> int:
    """Skip a parenthesised group starting at code[j] (if any); return the next index."""
    if j < len(code) and code[j].text == "(":
        depth = 0
        while j < len(code):
            if code[j].text == "(":
                depth += 1
            elif code[j].text == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return j


def _preceded_by_template(code: list[Tok], i: int) -> bool:
    """Whether code[i] (struct/class) directly follows a `template <...>` head."""
    if i == 0 or code[i - 1].text not in (">", ">>"):
        return False
    depth = 0
    for j in range(i - 1, -1, -1):
        t = code[j].text
        if t == ">":
            depth += 1
        elif t == ">>":
            depth += 2
        elif t == "<":
            depth -= 1
            if depth == 0:
                return j > 0 and code[j - 1].text == "template"
        elif t in (";", "{", "}"):
            return False
    return False


def _typedef_name(code: list[Tok], i: int) -> str | None:
    """The name a typedef declares: the last identifier outside brackets/braces/parentheses
    before ';', or the one a parenthesised pointer declarator names (`typedef float
    (*op_t)(float);`: op_t, not the parameter's type)."""
    depth_brace = depth_bracket = depth_paren = 0
    name = None
    for j in range(i + 1, min(len(code), i + 400)):
        t = code[j]
        if t.text == "{":
            depth_brace += 1
        elif t.text == "}":
            depth_brace -= 1
        elif t.text == "[":
            depth_bracket += 1
        elif t.text == "]":
            depth_bracket -= 1
        elif t.text == "(":
            if depth_brace == 0 and j + 1 < len(code) and code[j + 1].text in ("*", "&"):
                pointer = _declarator_name(code, j + 1)
                if pointer:
                    return pointer
            depth_paren += 1
        elif t.text == ")":
            depth_paren -= 1
        elif t.text == ";" and depth_brace == 0:
            return name
        elif t.kind == "id" and depth_brace == 0 and depth_bracket == 0 and depth_paren == 0:
            name = t.text
    return None


def _declarator_name(code: list[Tok], j: int) -> str | None:
    """The name after `*` / `&` and their qualifiers in `(*const name)`, if one is there."""
    while j < len(code) and code[j].text in ("*", "&", "const", "volatile", "__restrict__",
                                             "__restrict"):
        j += 1
    return code[j].text if j < len(code) and code[j].kind == "id" else None


def _template_function_name(code: list[Tok], i: int) -> str | None:
    """For `template <...> ... name(`, the function's name; None for class templates."""
    depth = 0
    j = i + 1
    n = len(code)
    while j < n:
        t = code[j].text
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == ">>":
            depth -= 2
        if depth <= 0:
            break
        j += 1
    j += 1
    pdepth = 0
    while j < n:
        t = code[j]
        if t.text in ("struct", "class", "union") and pdepth == 0:
            return None
        if t.text in (";", "{", "=") and pdepth == 0:
            return None
        if t.text == "(":
            if pdepth == 0 and j > 0 and code[j - 1].kind == "id" and code[j - 1].text not in (
                "__launch_bounds__", "__attribute__", "__align__", "alignas", "decltype"
            ):
                return code[j - 1].text
            pdepth += 1
        elif t.text == ")":
            pdepth -= 1
        j += 1
    return None
