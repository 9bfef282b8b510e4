"""The oracle's kernels as trees: expressions, statements and the Kernel, each printed
twice, as CUDA (c) and as the Python model of one thread (p). gen.py draws them; model.py runs
the Python side. Imports nothing from gmprof."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


# ---------------------------------------------------------------- expressions
class E:
    pure_thread = False  # depends on thread indices only (for the thread-only-test family)


@dataclass
class Num(E):
    v: int

    def c(self):
        return str(self.v)

    def p(self):
        return str(self.v)


@dataclass
class Sym(E):
    cuda: str
    py: str
    thread_only: bool = False

    def c(self):
        return self.cuda

    def p(self):
        return self.py


@dataclass
class Bin(E):
    op: str
    a: E
    b: E

    def c(self):
        if self.op in ("min", "max"):
            return f"{self.op}({self.a.c()}, {self.b.c()})"
        return f"({self.a.c()} {self.op} {self.b.c()})"

    def p(self):
        a, b = self.a.p(), self.b.p()
        if self.op in ("min", "max"):
            return f"{self.op}({a}, {b})"
        if self.op == "/":
            return f"({a} // {b})"
        if self.op == "&&":
            return f"(1 if ({a}) and ({b}) else 0)"
        if self.op == "||":
            return f"(1 if ({a}) or ({b}) else 0)"
        if self.op in ("<", "<=", ">", ">=", "==", "!="):
            return f"int({a} {self.op} {b})"
        return f"({a} {self.op} {b})"


@dataclass
class Not(E):
    a: E

    def c(self):
        return f"!{self.a.c()}" if isinstance(self.a, (Sym, Num)) else f"!({self.a.c()})"

    def p(self):
        return f"int(not ({self.a.p()}))"


@dataclass
class Tern(E):
    cond: E
    a: E
    b: E

    def c(self):
        return f"({self.cond.c()} ? {self.a.c()} : {self.b.c()})"

    def p(self):
        return f"(({self.a.p()}) if ({self.cond.p()}) else ({self.b.p()}))"


@dataclass
class Load(E):
    """A read of d, out or s at `idx` (already in range); `form` says how it is written."""
    arr: str
    idx: E
    form: str = "sub"  # sub, deref, ldg_amp, ldg_ptr, helper
    off: int = 0  # helper: the pointer's offset; idx is then relative to it
    helper: str = ""

    member: str = ""  # sp: the struct member read (a or b)

    def c(self):
        if self.arr == "sc":
            return "sc"
        i = self.idx.c()
        if self.arr == "sp":
            return f"sp[{i}].{self.member}"
        if self.form == "sub":
            return f"{self.arr}[{i}]"
        if self.form == "deref":
            return f"*({self.arr} + {i})"
        if self.form == "ldg_amp":
            return f"__ldg(&{self.arr}[{i}])"
        if self.form == "ldg_ptr":
            return f"__ldg({self.arr} + {i})"
        base = f"{self.arr} + {self.off}" if self.off else self.arr
        return f"{self.helper}({base}, {i})"

    def p(self):
        if self.arr == "sc":
            return "R('sc', 0)"
        i = self.idx.p()
        if self.off:
            i = f"{self.off} + {i}"
        if self.arr == "sp":  # two 4-byte words an element: a, then b
            return f"R('sp', 2 * ({i}) + {0 if self.member == 'a' else 1})"
        return f"R({self.arr!r}, {i})"


# ---------------------------------------------------------------- statements
@dataclass
class S:
    pass


@dataclass
class Acc(S):
    op: str  # += or ^=
    e: E

    def c(self, ind):
        return [f"{ind}acc {self.op} {self.e.c()};"]

    def p(self, ind):
        o = "+" if self.op == "+=" else "^"
        return [f"{ind}acc = (acc {o} ({self.e.p()})) & 0xFFFFFFFF"]


@dataclass
class ResRMW(S):
    e: E

    def c(self, ind):
        return [f"{ind}res[t] += {self.e.c()};"]

    def p(self, ind):
        return [f"{ind}RW('res', t, ({self.e.p()}))"]


@dataclass
class Store(S):
    """`{ int k = idx; arr[k] = k; }` (out or s): the stored value is the index. form: sub,
    deref, helper (a __device__ function given arr + off and the index relative to it)."""
    arr: str
    idx: E
    form: str = "sub"
    off: int = 0
    helper: str = ""

    member: str = ""

    def c(self, ind):
        if self.arr == "sc":
            return [f"{ind}sc = 7;"]
        k = self.idx.c()
        if self.arr == "sp":
            return [f"{ind}{{ int k = {k}; sp[k].{self.member} = k; }}"]
        if self.form == "helper":
            base = f"{self.arr} + {self.off}" if self.off else self.arr
            return [f"{ind}{{ int k = {k}; {self.helper}({base}, k, {self.off} + k); }}"]
        tgt = f"{self.arr}[k]" if self.form == "sub" else f"*({self.arr} + k)"
        return [f"{ind}{{ int k = {k}; {tgt} = k; }}"]

    def p(self, ind):
        if self.arr == "sc":
            return [f"{ind}W('sc', 0)"]
        k = self.idx.p()
        if self.arr == "sp":
            return [f"{ind}W('sp', 2 * ({k}) + {0 if self.member == 'a' else 1})"]
        return [f"{ind}W({self.arr!r}, {self.off} + ({k}))"]


@dataclass
class Atomic(S):
    """atomicAdd on hist: `&hist[i]`, `hist + i`, or through a helper taking `hist + off`."""
    idx: E
    val: E
    form: str = "amp"
    off: int = 0
    helper: str = ""

    def c(self, ind):
        i, v = self.idx.c(), self.val.c()
        if self.form == "amp":
            return [f"{ind}atomicAdd(&hist[{i}], (unsigned)({v}));"]
        if self.form == "ptr":
            return [f"{ind}atomicAdd(hist + {i}, (unsigned)({v}));"]
        base = f"hist + {self.off}" if self.off else "hist"
        return [f"{ind}{self.helper}({base}, {i}, (unsigned)({v}));"]

    def p(self, ind):
        # C evaluates the arguments (index, value) before the atomic; their order does not
        # change any count
        return [f"{ind}ATOM({self.off} + ({self.idx.p()}), ({self.val.p()}))"]


@dataclass
class Local(S):
    name: str
    e: E

    def c(self, ind):
        return [f"{ind}int {self.name} = {self.e.c()};"]

    def p(self, ind):
        return [f"{ind}{self.name} = {self.e.p()}"]


@dataclass
class Block(S):
    body: list

    def c(self, ind):
        out = [f"{ind}{{"]
        for s in self.body:
            out += s.c(ind + "  ")
        return out + [f"{ind}}}"]

    def p(self, ind):
        out = []
        for s in self.body:
            out += s.p(ind)
        return out or [f"{ind}pass"]


def _body_c(body: list, ind: str, brace: bool, head: str) -> list:
    if not brace and len(body) == 1 and not isinstance(body[0], (Local, If)):
        return [head] + body[0].c(ind + "  ")
    out = [head + " {"]
    for s in body:
        out += s.c(ind + "  ")
    return out + [f"{ind}}}"]


def _body_p(body: list, ind: str) -> list:
    out = []
    for s in body:
        out += s.p(ind)
    return out or [f"{ind}pass"]


@dataclass
class If(S):
    cond: E
    then: list
    els: list | None = None
    brace: bool = True

    def c(self, ind):
        out = _body_c(self.then, ind, self.brace, f"{ind}if ({self.cond.c()})")
        if self.els is not None:
            if self.brace:
                out[-1] += " else {"
                for s in self.els:
                    out += s.c(ind + "  ")
                out.append(f"{ind}}}")
            else:
                out += _body_c(self.els, ind, self.brace, f"{ind}else")
        return out

    def p(self, ind):
        out = [f"{ind}if {self.cond.p()}:"] + _body_p(self.then, ind + "    ")
        if self.els is not None:
            out += [f"{ind}else:"] + _body_p(self.els, ind + "    ")
        return out


@dataclass
class Jump(S):
    """break / continue / an early return (the thread's sum is stored first)."""
    what: str

    def c(self, ind):
        if self.what == "return":
            return [f"{ind}{{ res[t] += acc; return; }}"]
        return [f"{ind}{self.what};"]

    def p(self, ind):
        if self.what == "return":
            return [f"{ind}RW('res', t, acc)", f"{ind}return"]
        return [f"{ind}{self.what}"]


@dataclass
class Switch(S):
    """switch with cases 0..n-1 and default; a case marked fallthrough runs into the next."""
    e: E
    cases: list  # list of (body, fallthrough)
    default: list

    def c(self, ind):
        out = [f"{ind}switch ({self.e.c()}) {{"]
        for i, (body, ft) in enumerate(self.cases):
            # a case's statements in braces: a local declared there must not be jumped over
            out.append(f"{ind}case {i}: {{")
            for s in body:
                out += s.c(ind + "  ")
            out.append(f"{ind}}}" if ft else f"{ind}  break; }}")
        out.append(f"{ind}default: {{")
        for s in self.default:
            out += s.c(ind + "  ")
        out.append(f"{ind}  break; }}")
        return out + [f"{ind}}}"]

    def p(self, ind):
        out = [f"{ind}sv = {self.e.p()}"]
        bodies = [b for b, _ in self.cases] + [self.default]
        for i in range(len(self.cases)):
            # what case i runs: its body, then the next ones while they fall through
            run = list(bodies[i])
            j = i
            while j < len(self.cases) and self.cases[j][1]:
                j += 1
                run += bodies[j]
            out += [f"{ind}{'if' if i == 0 else 'elif'} sv == {i}:"] + _body_p(run, ind + "    ")
        kw = "else:" if self.cases else "if True:"
        return out + [f"{ind}{kw}"] + _body_p(self.default, ind + "    ")


@dataclass
class For(S):
    var: str
    init: E
    cond: E  # references the variable
    step: str  # "++", ">>= 1", "+= E" (with step_e)
    body: list
    step_e: E | None = None
    brace: bool = True

    def c(self, ind):
        step = f"{self.var}++" if self.step == "++" else \
            f"{self.var} >>= 1" if self.step == ">>" else f"{self.var} += {self.step_e.c()}"
        head = f"{ind}for (int {self.var} = {self.init.c()}; {self.cond.c()}; {step})"
        return _body_c(self.body, ind, self.brace, head)

    def p(self, ind):
        v = self.var
        inc = f"{v} + 1" if self.step == "++" else f"{v} >> 1" if self.step == ">>" else \
            f"{v} + ({self.step_e.p()})"
        i2 = ind + "    "
        return [f"{ind}{v} = {self.init.p()}", f"{ind}first_{v} = True", f"{ind}while True:",
                f"{i2}if not first_{v}:", f"{i2}    {v} = {inc}", f"{i2}first_{v} = False",
                f"{i2}if not ({self.cond.p()}):", f"{i2}    break"] + _body_p(self.body, i2)


@dataclass
class Sync(S):
    def c(self, ind):
        return [f"{ind}__syncthreads();"]

    def p(self, ind):
        return []


# ---------------------------------------------------------------- a kernel
@dataclass
class Kernel:
    name: str
    grid: tuple
    block: tuple
    D: int  # size of d
    OUT: int
    H: int
    S: int  # shared words (0: no shared array)
    n: int  # the int parameter
    dvals: list  # the contents of d
    body: list
    helpers: dict = field(default_factory=dict)  # name -> kind ('read' or 'atomic' or 'store')
    features: set = field(default_factory=set)
    SP: int = 0  # elements of the shared struct array sp (0: none)
    C: int = 0  # elements of the __constant__ array c_<name> (0: none)
    cvals: list = field(default_factory=list)
    SC: bool = False  # a shared scalar sc
    seed: int | None = None
    alias: str = ""  # a copy renamed (shrinking): the name its helpers were made with

    @property
    def threads(self) -> int:
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    # the CUDA text
    def cuda(self) -> str:
        out = []
        for h, kind in sorted(self.helpers.items()):
            if kind == "read":
                out.append(f"__device__ int {h}(const int *p, int i) {{ return p[i]; }}")
            elif kind == "atomic":
                out.append(f"__device__ void {h}(unsigned *h, int i, unsigned v) "
                           f"{{ atomicAdd(&h[i], v); }}")
            else:
                out.append(f"__device__ void {h}(int *p, int i, int v) {{ p[i] = v; }}")
        if self.SP:
            out.append(f"struct P_{self.name} {{ int a; int b; }};")
        if self.C:
            out.append(f"__constant__ int c_{self.name}[{self.C}] = "
                       f"{{{', '.join(map(str, self.cvals))}}};")
        out.append(f"__global__ void {self.name}(const int *d, int *out, unsigned *res, "
                   f"unsigned *hist, int n)")
        out.append("{")
        ind = "  "
        out.append(f"{ind}int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + "
                   "threadIdx.x;")
        out.append(f"{ind}int bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + "
                   "blockIdx.x;")
        out.append(f"{ind}int t = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;")
        out.append(f"{ind}unsigned acc = 0;")
        if self.S:
            out.append(f"{ind}__shared__ int s[{self.S}];")
            out.append(f"{ind}for (int w = tid; w < {self.S}; "
                       "w += blockDim.x * blockDim.y * blockDim.z)")
            out.append(f"{ind}  s[w] = w;")
        if self.SP:
            out.append(f"{ind}__shared__ P_{self.name} sp[{self.SP}];")
            out.append(f"{ind}for (int w = tid; w < {self.SP}; "
                       "w += blockDim.x * blockDim.y * blockDim.z) {")
            out.append(f"{ind}  sp[w].a = w;")
            out.append(f"{ind}  sp[w].b = w;")
            out.append(f"{ind}}}")
        if self.SC:
            out.append(f"{ind}__shared__ int sc;")
            out.append(f"{ind}if (tid == 0)")
            out.append(f"{ind}  sc = 7;")
        if self.S or self.SP or self.SC:
            out.append(f"{ind}__syncthreads();")
        for s in self.body:
            out += s.c(ind)
        out.append(f"{ind}res[t] += acc;")
        out.append("}")
        text = "\n".join(out) + "\n"
        if self.alias:
            text = re.sub(rf"(?<![0-9A-Za-z]){re.escape(self.alias)}(?![0-9A-Za-z_])",
                          self.name, text)
        return text

    # the Python model of one thread
    def python(self) -> str:
        ind = "    "
        out = ["def thread(tx, ty, tz, bx, by, bz, BX, BY, BZ, GX, GY, GZ, n, R, W, RW, ATOM):",
               f"{ind}tid = (tz * BY + ty) * BX + tx",
               f"{ind}bid = (bz * GY + by) * GX + bx",
               f"{ind}t = bid * (BX * BY * BZ) + tid",
               f"{ind}acc = 0"]
        if self.S:
            out += [f"{ind}w = tid", f"{ind}while w < {self.S}:",
                    f"{ind}    W('s', w)", f"{ind}    w += BX * BY * BZ"]
        if self.SP:
            out += [f"{ind}w = tid", f"{ind}while w < {self.SP}:",
                    f"{ind}    W('sp', 2 * w)", f"{ind}    W('sp', 2 * w + 1)",
                    f"{ind}    w += BX * BY * BZ"]
        if self.SC:
            out += [f"{ind}if tid == 0:", f"{ind}    W('sc', 0)"]
        for s in self.body:
            out += s.p(ind)
        out.append(f"{ind}RW('res', t, acc)")
        return "\n".join(out) + "\n"



def _has_load(e) -> bool:
    if isinstance(e, Load):
        return True
    return any(_has_load(getattr(e, a)) for a in ("a", "b", "cond", "idx")
               if isinstance(getattr(e, a, None), E))


_THREADISH = {"tx", "ty", "tz", "tid", "t"}


def _syms(e, out=None) -> set:
    """The names an expression reads (Sym's Python names; loads add their index's)."""
    out = set() if out is None else out
    if isinstance(e, Sym):
        out.add(e.py)
    for a in ("a", "b", "cond", "idx"):
        sub = getattr(e, a, None)
        if isinstance(sub, E):
            _syms(sub, out)
    return out


def _threadish(names: set) -> bool:
    # locals and loop variables may hold thread-dependent values: counted as thread-dependent
    return any(n in _THREADISH or n.startswith(("v", "j")) for n in names)


def _thread_trip(loop) -> bool:
    names = _syms(loop.init) | _syms(loop.cond) - {loop.var}
    if loop.step_e is not None:
        names |= _syms(loop.step_e)
    return _threadish(names)


def _has_invariant_site(body: list, var: str) -> bool:
    """Whether a site in the loop body has an address free of thread indices and of the loop
    variable (a tid-invariant, loop-invariant site)."""
    def sites_e(e):
        if isinstance(e, Load):
            yield e
        for a in ("a", "b", "cond", "idx"):
            sub = getattr(e, a, None)
            if isinstance(sub, E):
                yield from sites_e(sub)

    def sites_s(stmts):
        for st in stmts:
            for a in ("e", "idx", "val", "cond", "init", "step_e"):
                sub = getattr(st, a, None)
                if isinstance(sub, E):
                    yield from sites_e(sub)
            if isinstance(st, (Store, Atomic)):
                yield st
            for a in ("then", "els", "body", "default"):
                sub = getattr(st, a, None)
                if isinstance(sub, list):
                    yield from sites_s(sub)
            if isinstance(st, Switch):
                for b, _ in st.cases:
                    yield from sites_s(b)

    for site in sites_s(body):
        names = _syms(site.idx)
        if not _threadish(names | ({"j"} if var in names else set())):
            return True
    return False
