"""Random CUDA kernels, each printed twice from the same random choices: as CUDA, and as a
Python model that simulates one thread and yields every access (the oracle).

Nothing here imports gmprof: the expected counts owe nothing to its frontend, passes or runtime.

Memory, chosen so that one thread at a time can be simulated exactly whatever the schedule:
  d     const int *   read-only input, small random values (data-dependent indices and bounds)
  out   int *         starts as arange; every store writes its own index, so it stays arange
  res   unsigned *    res[t] only by thread t (read-modify-write, and the thread's sum at exit)
  hist  unsigned *    atomics only (commutative adds; the value is never read back)
  s     __shared__ int[S]  filled with its indices by the block first, then stores write the
                      index again: every read of s[k] is k, races or not
So every value a thread reads is known, conditions and indices may use any of them, and the
final contents of out, res and hist are predicted too (a check of the native run).

Counting semantics (docs/samples.md, docs/report.md): a source-level access counts once on the
element (device, 4-byte elements) or 4-byte word (shared, summed over blocks) it touches; a
read-modify-write or an atomic is one access, counted in both reads and writes; a condition's
reads count each time it is evaluated; `&&`, `||` and `?:` evaluate only what C evaluates.

Every construct a kernel uses is recorded as a feature tag (`Kernel.features`), so the harness
can tie a mismatch to a family of issue 11 and the generator can leave families out.
"""
from __future__ import annotations

import random

from ir import *  # noqa: F401,F403 (regression files are read in this namespace)
from ir import (Acc, Atomic, Bin, E, For, If, Jump, Kernel, Load, Local, Not, Num, Store,
                Switch, Sym, Tern, ResRMW, Sync, Block, _has_invariant_site, _has_load,
                _thread_trip)


FEATURES = (
    "affine", "data_index", "deref", "ldg", "helper_read", "helper_read_offset",
    "helper_atomic", "helper_atomic_offset", "ternary", "short_circuit", "thread_and_cond",
    "if", "else", "braceless", "switch", "loop_const", "loop_launch", "loop_triangular",
    "loop_geometric", "loop_memread", "loop_csr", "break", "continue", "early_return",
    "shared", "shared_store", "barrier", "atomic", "rmw", "out_store", "local", "grid2d",
    "grid3d", "block_odd", "atomic_ptr_index_read", "loop_thread_trip_invariant_site",
    "struct_member", "shared_scalar", "constant_array",
)




# ---------------------------------------------------------------- the generator
class Gen:
    """Draws one kernel from `rng` (random.Random, or Hypothesis' st.randoms()). Features in
    `disabled` are never used."""

    def __init__(self, rng: random.Random, name: str, disabled=frozenset(), ranges=False):
        self.r = rng
        # ranges: some reads in a constant-bound loop walk it (`d[j0 + (e % (D - 5))]`), for
        # gmprof's range, spread and loop-entry counting (bench/oracle.py --ranges); off, the
        # random stream and so every kernel are the earlier grammar's
        self.ranges = ranges
        self.name = name
        self.disabled = set(disabled)
        self.features: set = set()
        self.helpers: dict = {}
        self.scope: list = []  # loop variables and locals in scope: (name, lo, hi) bounds
        self.loop_depth = 0
        self.nlocal = 0
        self.nloop = 0
        self.budget = 0
        self.in_switch = False
        self.returns_ok = False

    def on(self, feature: str) -> bool:
        return feature not in self.disabled

    def coin(self, p: float, feature: str | None = None) -> bool:
        if feature is not None and not self.on(feature):
            return False
        return self.r.random() < p

    def use(self, feature: str):
        self.features.add(feature)

    # ------------------------------------------------------------ launch shape
    def launch(self):
        r = self.r
        dims = r.choice([1, 1, 1, 2, 3])
        if dims == 3 and not self.on("grid3d"):
            dims = 1
        if dims == 2 and not self.on("grid2d"):
            dims = 1
        if dims == 1:
            bx = r.choice([32, 64, 40, 33, 17, 96, 5]) if self.on("block_odd") else \
                r.choice([32, 64, 96])
            block, grid = (bx, 1, 1), (r.randint(1, 4), 1, 1)
        elif dims == 2:
            self.use("grid2d")
            bx = r.choice([8, 16, 12, 32]) if self.on("block_odd") else r.choice([16, 32])
            block, grid = (bx, r.randint(1, 4), 1), (r.randint(1, 3), r.randint(1, 2), 1)
        else:
            self.use("grid3d")
            bx = r.choice([4, 8, 6]) if self.on("block_odd") else 8
            block = (bx, r.randint(1, 3), r.randint(1, 2))
            grid = (r.randint(1, 2), r.randint(1, 2), r.randint(1, 2))
        if block[0] % 32:
            self.use("block_odd")
        return grid, block

    # ------------------------------------------------------------ pure int expressions
    def atom(self, thread_only=False) -> E:
        r = self.r
        thread = [Sym("threadIdx.x", "tx", True), Sym("tid", "tid", True), Sym("t", "t")]
        if self.block[1] > 1:
            thread.append(Sym("threadIdx.y", "ty", True))
        if self.block[2] > 1:
            thread.append(Sym("threadIdx.z", "tz", True))
        if thread_only:
            return r.choice(thread[:2] + thread[3:])
        other = [Sym("blockIdx.x", "bx"), Sym("blockDim.x", "BX"), Sym("n", "n"),
                 Num(r.randint(0, 9))]
        if self.grid[1] > 1:
            other.append(Sym("blockIdx.y", "by"))
        if self.grid[2] > 1:
            other.append(Sym("blockIdx.z", "bz"))
        other += [Sym(v, v) for v, *_ in self.scope]
        return r.choice(thread + other)

    def expr(self, depth=0) -> E:
        """A non-negative int, small enough that no arithmetic overflows."""
        r = self.r
        k = r.random()
        if depth >= 2 or k < 0.35:
            return self.atom()
        if k < 0.55 and self.budget > 0:
            return self.load(depth + 1)
        if k < 0.62 and self.coin(1, "ternary"):
            self.use("ternary")
            return Tern(self.cond(depth + 1), self.expr(depth + 1), self.expr(depth + 1))
        op = r.choice(["+", "+", "*", "/", "%", ">>", "&", "^", "|", "min", "max"])
        a = self.expr(depth + 1)
        if op in ("*", "/", "%", ">>"):
            b = Num(r.randint(1, 4) if op != ">>" else r.randint(0, 3))
            if op == "*":
                a = Bin("%", a, Num(r.randint(2, 64)))  # keep products small
        else:
            b = self.expr(depth + 1)
        self.use("affine")
        return Bin(op, a, b)

    def index(self, size: int, depth=0) -> E:
        """An index into an array of `size` elements: an expression taken modulo the size."""
        e = self.expr(depth)
        if isinstance(e, Load):
            self.use("data_index")
        return Bin("%", e, Num(size))

    def load(self, depth=0) -> E:
        r = self.r
        self.budget -= 1
        arrs = ["d", "d", "out"] + (["s"] if self.S else []) + (["sp"] if self.SP else []) + \
            (["sc"] if self.SC else []) + ([f"c_{self.name}"] if self.C else [])
        arr = r.choice(arrs)
        if arr == "sc":
            self.use("shared_scalar")
            return Load("sc", Num(0))
        if arr == "sp":
            self.use("struct_member")
            return Load("sp", self.index(self.SP, depth), member=r.choice("ab"))
        if arr.startswith("c_"):
            self.use("constant_array")
            return Load(arr, self.index(self.C, depth))
        size = {"d": self.D, "out": self.OUT, "s": self.S}[arr]
        forms = ["sub", "sub", "deref"]
        if arr == "d":
            forms += [f for f, feat in (("ldg_amp", "ldg"), ("ldg_ptr", "ldg"),
                                        ("helper", "helper_read")) if self.on(feat)]
        else:
            forms += ["helper"] if self.on("helper_read") else []
        form = r.choice(forms)
        if form == "deref":
            self.use("deref")
        if form.startswith("ldg"):
            self.use("ldg")
        if arr == "s":
            self.use("shared")
        if form == "helper":
            off = r.choice([0, 0, r.randint(1, size // 2)]) if self.on("helper_read_offset") \
                else 0
            self.use("helper_read_offset" if off else "helper_read")
            h = f"ld_{self.name}"
            self.helpers[h] = "read"
            if arr != "d":
                # a helper taking int * for out / s: reads through a const int * parameter
                pass
            return Load(arr, self.index(size - off, depth), form, off, h)
        return Load(arr, self.index(size, depth), form)

    def cond(self, depth=0) -> E:
        r = self.r
        k = r.random()
        if depth < 2 and k < 0.3 and self.on("short_circuit"):
            self.use("short_circuit")
            a, b = self.cond(depth + 1), self.cond(depth + 1)
            if self._thread_only(a) != self._thread_only(b):
                if not self.on("thread_and_cond"):
                    return a
                self.use("thread_and_cond")
            return Bin(r.choice(["&&", "||"]), a, b)
        if k < 0.37:
            return Not(self.cond(depth + 1))
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        if r.random() < 0.35:
            a = self.atom(thread_only=True)
            b = Num(r.randint(0, 40))
            c = Bin(op, a, b)
        else:
            c = Bin(op, self.expr(depth + 1), self.expr(depth + 1))
        if self._thread_only(c):
            # a test of thread indices only, nested with any other condition (an enclosing
            # `if`, a ternary, `&&`), is issue 11's first family: without it, no test is
            # thread-only (the global index t stands in)
            if not self.on("thread_and_cond"):
                return Bin(op, Sym("t", "t"), Num(r.randint(0, 200)))
            self.use("thread_and_cond")
        return c

    @staticmethod
    def _thread_only(e: E) -> bool:
        """Whether a condition reads only thread indices and constants."""
        if isinstance(e, Num):
            return True
        if isinstance(e, Sym):
            return e.thread_only
        if isinstance(e, Bin):
            return Gen._thread_only(e.a) and Gen._thread_only(e.b)
        if isinstance(e, Not):
            return Gen._thread_only(e.a)
        return False

    # ------------------------------------------------------------ statements
    def stmts(self, n: int, depth: int) -> list:
        out = []
        save = len(self.scope)  # locals declared in a body are not seen after it
        for _ in range(n):
            if self.budget <= 0:
                break
            out.append(self.stmt(depth))
        del self.scope[save:]
        return [s for s in out if s is not None]

    def stmt(self, depth: int) -> S:
        r = self.r
        self.budget -= 1
        kinds = ["acc", "acc", "rmw", "out", "atomic"]
        if self.S:
            kinds.append("sstore")
        if self.SP:
            kinds.append("spstore")
        if self.SC:
            kinds.append("scstore")
        if depth < 3:
            kinds += ["if", "if", "for", "for"]
            if not self.in_switch:
                kinds.append("switch")
        if self.loop_depth and not self.in_switch:
            kinds += ["jump", "jump"]
        if self.returns_ok and not self.in_switch:
            kinds.append("return")
        kinds.append("local")
        k = r.choice(kinds)
        if k == "acc":
            return Acc(r.choice(["+=", "^="]), self.expr())
        if k == "rmw" and self.on("rmw"):
            self.use("rmw")
            return ResRMW(self.expr())
        if k == "out" and self.on("out_store"):
            self.use("out_store")
            return Store("out", self.index(self.OUT), r.choice(["sub", "deref"]))
        if k == "sstore" and self.on("shared_store"):
            self.use("shared_store")
            if self.on("helper_read_offset") and r.random() < 0.3:
                off = r.randint(0, self.S // 2)
                h = f"st_{self.name}"
                self.helpers[h] = "store"
                self.use("helper_read_offset" if off else "helper_read")
                return Store("s", self.index(self.S - off), "helper", off, h)
            return Store("s", self.index(self.S), r.choice(["sub", "deref"]))
        if k == "spstore":
            self.use("struct_member")
            return Store("sp", self.index(self.SP), member=r.choice("ab"))
        if k == "scstore":
            self.use("shared_scalar")
            return Store("sc", Num(0))
        if k == "atomic" and self.on("atomic"):
            self.use("atomic")
            form = r.choice(["amp", "ptr"] + (["helper"] if self.on("helper_atomic") else []))
            if form == "helper":
                off = r.choice([0, r.randint(1, self.H // 2)]) \
                    if self.on("helper_atomic_offset") else 0
                self.use("helper_atomic_offset" if off else "helper_atomic")
                h = f"add_{self.name}"
                self.helpers[h] = "atomic"
                return Atomic(self.index(self.H - off), self.expr(1), form, off, h)
            idx = self.index(self.H)
            if form == "ptr" and _has_load(idx):
                if self.on("atomic_ptr_index_read"):
                    self.use("atomic_ptr_index_read")
                else:
                    form = "amp"
            return Atomic(idx, self.expr(1), form)
        if k == "if" and self.on("if"):
            self.use("if")
            brace = not self.coin(0.3, "braceless")
            c = self.cond()
            then = self.stmts(r.randint(1, 2 if brace else 1), depth + 1) or [Acc("+=", Num(1))]
            els = None
            if self.coin(0.4, "else"):
                self.use("else")
                els = self.stmts(r.randint(1, 2 if brace else 1), depth + 1) or \
                    [Acc("+=", Num(2))]
            if not brace and len(then) == 1 and (els is None or len(els) == 1):
                self.use("braceless")
            return If(c, then, els, brace)
        if k == "switch" and self.on("switch"):
            self.use("switch")
            self.in_switch = True
            cases = [(self.stmts(r.randint(0, 2), depth + 1), r.random() < 0.3)
                     for _ in range(r.randint(1, 3))]
            default = self.stmts(r.randint(0, 1), depth + 1)
            self.in_switch = False
            return Switch(Bin("%", self.expr(1), Num(len(cases) + 1)), cases, default)
        if k == "for":
            if self.loop_depth >= 2:
                return Acc("+=", self.expr())
            return self.loop(depth)
        if k == "jump":
            what = r.choice(["break", "continue"])
            if not self.on(what):
                return Acc("+=", Num(3))
            self.use(what)
            return If(self.cond(), [Jump(what)], None, r.random() < 0.5)
        if k == "return" and self.on("early_return"):
            self.use("early_return")
            return If(self.cond(), [Jump("return")], None, True)
        if k == "local" and self.on("local"):
            self.use("local")
            name = f"v{self.nlocal}"
            self.nlocal += 1
            s = Local(name, self.expr())
            self.scope.append((name,))
            return s
        return Acc("+=", self.expr())

    def loop(self, depth: int) -> S:
        r = self.r
        kinds = [k for k in ("loop_const", "loop_launch", "loop_triangular", "loop_geometric",
                             "loop_memread", "loop_csr") if self.on(k)]
        if not kinds:
            return Acc("+=", Num(4))
        kind = r.choice(kinds)
        v = f"j{self.nloop}"
        self.nloop += 1
        step, step_e = "++", None
        J = Sym(v, v)
        if kind == "loop_const":
            init, cond = Num(0), Bin("<", J, Num(r.randint(0, 5)))
        elif kind == "loop_launch":
            # a block-stride loop, bounded by n or blockDim
            init = Sym("threadIdx.x", "tx")
            bound = r.choice([Sym("n", "n"), Sym("blockDim.x", "BX")])
            cond = Bin("<", J, bound)
            step, step_e = "+=", r.choice([Sym("blockDim.x", "BX"), Num(r.randint(8, 32))])
        elif kind == "loop_triangular":
            outer = [s for s in self.scope if s[0].startswith("j")]
            bound = Sym(outer[-1][0], outer[-1][0]) if outer and r.random() < 0.7 else \
                Bin("%", Sym("threadIdx.x", "tx"), Num(r.randint(2, 6)))
            init, cond = Num(0), Bin(r.choice(["<", "<="]), J, bound)
        elif kind == "loop_geometric":
            init, cond, step = Num(r.choice([1, 4, 16, 32, 7])), Bin(">", J, Num(0)), ">>"
        elif kind == "loop_memread":
            self.budget -= 1
            form = r.choice(["sub", "sub", "deref"] + (["ldg_amp"] if self.on("ldg") else []))
            if form == "ldg_amp":
                self.use("ldg")
            init, cond = Num(0), Bin("<", J, Load("d", self.index(self.D, 2), form))
        else:  # loop_csr: for (j = d[r]; j < d[r + 1]; j++)
            self.budget -= 2
            rv = Bin("%", self.atom(), Num(self.D - 1))
            init = Load("d", rv)
            cond = Bin("<", J, Load("d", Bin("+", rv, Num(1))))
            self.use("data_index")
        self.use(kind)
        brace = not self.coin(0.3, "braceless")
        self.scope.append((v,))
        self.loop_depth += 1
        body = self.stmts(r.randint(1, 2 if brace else 1), depth + 1) or [Acc("+=", J)]
        if self.ranges and kind == "loop_const" and r.random() < 0.7:
            # a read in every iteration that walks the loop (a range, or a spread when the
            # rest of its address is a shared array's data and the same for the block)
            if self.budget > 0 and r.random() < 0.5:
                rest = self.load(depth + 1)
            else:
                rest = self.expr(depth + 1)
            arrs = ["d", "d"] + (["s"] if self.S > 6 else []) + (["out"] if self.OUT > 6 else [])
            arr = r.choice(arrs)
            size = {"d": self.D, "out": self.OUT, "s": self.S}[arr]
            if arr == "s":
                self.use("shared")
            walk = Load(arr, Bin("+", J, Bin("%", rest, Num(size - 5))), "sub")
            body = [Acc("+=", walk)] + body if brace else body
        self.loop_depth -= 1
        self.scope.pop()
        if not brace and len(body) == 1:
            self.use("braceless")
        loop = For(v, init, cond, step, body, step_e, brace)
        if _thread_trip(loop) and _has_invariant_site(body, v):
            # one lane's trip count weights a tid-invariant, loop-invariant site (issue 11 has
            # no family for it: found by this oracle)
            if not self.on("loop_thread_trip_invariant_site"):
                return Acc("+=", Num(5))
            self.use("loop_thread_trip_invariant_site")
        return loop

    def walk(self) -> S:
        """(ranges) `if (d[a] > b) for (j = 0; j < K; j++) acc += X[j + (e % (size - 6))];`,
        one to three such reads: device and shared ranges (counted as ranges when the data
        condition keeps them from static formulas), and `s[(s[j + e] + e') % S]`, a spread when
        the block reads it alike. e is the same in every iteration: for the block or per
        thread, a constant, blockIdx.x, the thread's index or a read of d."""
        r = self.r
        v = f"j{self.nloop}"
        self.nloop += 1
        J = Sym(v, v)

        def rest(block_alike: bool) -> E:
            opts = [Num(r.randint(0, 9)), Sym("blockIdx.x", "bx"),
                    Load("d", Num(r.randint(0, self.D - 1)))]
            if not block_alike:
                opts += [Sym("tid", "tid", True), Sym("t", "t"),
                         Load("d", Bin("%", Sym("t", "t"), Num(self.D)))]
            return r.choice(opts)

        reads = []
        for _ in range(r.randint(1, 3)):
            kind = r.choice(["d", "d", "out"] + (["s", "s_spread"] if self.S > 8 else []))
            if kind == "s_spread":
                inner = Load("s", Bin("+", J, Bin("%", rest(True), Num(self.S - 6))))
                reads.append(Load("s", Bin("%", Bin("+", inner, rest(True)), Num(self.S))))
            else:
                size = {"d": self.D, "out": self.OUT, "s": self.S}[kind]
                alike = kind == "s" and r.random() < 0.7
                reads.append(Load(kind, Bin("+", J, Bin("%", rest(alike), Num(size - 6)))))
            if kind.startswith("s"):
                self.use("shared")
        self.use("loop_const")
        self.use("if")
        self.use("data_index")
        loop = For(v, Num(0), Bin("<", J, Num(r.randint(0, 6))), "++",
                   [Acc("+=", e) for e in reads])
        return If(Bin(">", Load("d", Num(r.randint(0, self.D - 1))), Num(r.randint(0, 6))),
                  [loop])

    # ------------------------------------------------------------ the whole kernel
    def kernel(self) -> Kernel:
        r = self.r
        self.grid, self.block = self.launch()
        threads = self.grid[0] * self.grid[1] * self.grid[2] * \
            self.block[0] * self.block[1] * self.block[2]
        self.D = r.randint(8, 64)
        self.OUT = r.randint(8, 96)
        self.H = r.randint(4, 32)
        self.S = r.randint(8, 160) if self.on("shared") and r.random() < 0.7 else 0
        # drawn from a second generator: the kernels of the earlier grammar stay as they were
        r2 = random.Random(r.random())
        self.SP = r2.randint(4, 40) if self.on("struct_member") and r2.random() < 0.25 else 0
        self.SC = self.on("shared_scalar") and r2.random() < 0.2
        self.C = r2.randint(4, 32) if self.on("constant_array") and r2.random() < 0.2 else 0
        cvals = [r2.randint(0, 7) for _ in range(self.C)]
        self.budget = r.randint(4, 16)
        body = []
        top = r.randint(1, 4)
        barrier_ok = self.on("barrier")
        for i in range(top):
            self.returns_ok = False  # an early return only after the last barrier
            last = i == top - 1 or not barrier_ok
            if last:
                self.returns_ok = True
            save = len(self.scope)
            body += self.stmts(1, 0)
            del self.scope[save:]
            if not last and r.random() < 0.5:
                self.use("barrier")
                body.append(Sync())
            if self.budget <= 0:
                break
        if self.ranges and all(self.on(f) for f in ("loop_const", "if", "data_index")):
            for _ in range(r.randint(1, 2)):
                body.insert(r.randint(0, len(body)), self.walk())
        # locals declared at the top level stay in scope for the next statements; the loop
        # above drops them to keep the model's scoping simple
        body = [Block([s]) if isinstance(s, Local) else s for s in body]
        n = r.randint(4, 48)
        dvals = [r.randint(0, 7) for _ in range(self.D)]
        if self.S:
            self.use("shared")
        # the prologue fills sp and sets sc: they are used whenever they are declared
        if self.SP:
            self.use("struct_member")
        if self.SC:
            self.use("shared_scalar")
        if self.C:
            self.use("constant_array")
        return Kernel(self.name, self.grid, self.block, self.D, self.OUT, self.H, self.S, n,
                      dvals, body, dict(self.helpers), set(self.features), self.SP, self.C,
                      cvals, self.SC)


def generate(seed: int, name: str | None = None, disabled=frozenset(), ranges=False) -> Kernel:
    return Gen(random.Random(seed), name or f"k{seed}", disabled, ranges).kernel()


def kernels(disabled=frozenset(), name: str = "k0"):
    """A Hypothesis strategy of kernels: Hypothesis draws (and shrinks) every random choice."""
    from hypothesis import strategies as st

    return st.randoms(use_true_random=False).map(lambda r: Gen(r, name, disabled).kernel())
