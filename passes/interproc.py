"""ClassifyKernels: classify every access a kernel makes, following calls into device functions.

Read-only analysis. For each kernel, its own sites are classified in the kernel's context; for
each call to a parsed `__device__` function, the callee's sites are classified in a context
where its parameters hold the call's argument values and its pointer parameters are bound to
the caller's objects (so `image[i]` inside a helper counts against the kernel's `image`). Calls
are followed to a fixed depth; recursion stops there.

Returns, per kernel, a KernelAnalysis: the SiteClass of every (site, call chain), and each
SiteClass's target object (the kernel-level object its counts go to).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from .classify import Classifier, Frame, SiteClass
from .control import ControlGuards
from .symbols import DEVICE, LOCAL_ARRAY
from .value_domain import UNKNOWN_VALUE, Context
from .values import ValueAnalysis

_MAX_CALL_DEPTH = 6


@dataclass
class Binding:
    """A callee's pointer parameter bound to a caller-level object plus a byte offset."""

    object: object
    offset: object  # Value


@dataclass
class KernelAnalysis:
    kernel: object  # FunctionFacts
    classes: list[SiteClass] = field(default_factory=list)
    targets: dict = field(default_factory=dict)  # SiteClass -> (MemoryObject | None, Value|None)
    calls: list = field(default_factory=list)  # (chain, callee FunctionFacts)
    # calls gmprof cannot see into that may access profiled memory: (call node, callee name,
    # objects it is handed, or None: any object (a function of the file left unparsed)), and
    # optionally a fourth item, the sentence saying why (report/labels.py)
    opaque_calls: list = field(default_factory=list)

    def of_site(self, site) -> list[SiteClass]:
        return [c for c in self.classes if c.site is site]


class ClassifyKernels:
    def __init__(self, program):
        self.program = program

    def run(self) -> dict:
        out = {}
        for facts in self.program.functions:
            if facts.function.is_kernel:
                out[facts.name] = self.kernel(facts)
        return out

    def kernel(self, facts) -> KernelAnalysis:
        result = KernelAnalysis(facts)
        values = self.program.values.of(facts, Context(facts))
        frame_tail: list[Frame] = []
        self._function(result, facts, values, frame_tail, chain=(), bindings={})
        return result

    def _function(self, result, facts, values, caller_frames, chain, bindings):
        guards = facts.guards
        for site in facts.sites:
            frames = [Frame(facts, values, guards, site.node)] + caller_frames
            sc = Classifier(frames).classify(site, chain, self._base(site, bindings))
            result.classes.append(sc)
            result.targets[sc] = self._target(site, sc, bindings, values)
        if len(chain) >= _MAX_CALL_DEPTH:
            return
        self._constructors(result, facts, bindings, values)
        for call in self._calls(facts):
            self._receiver(result, facts, call, bindings, values)
            callee = self._callee(facts, call)
            if callee is None:
                self._opaque(result, facts, call, bindings, values)
                continue
            args = call.args.exprs if call.args is not None else []
            params = {}
            new_bindings = {}
            from .address import AddressOf, _Lost
            for k, sym in enumerate(callee.names.params):
                if k >= len(args):
                    break
                params[sym] = values.value(args[k])
                obj = callee.names and _param_object(callee, sym)
                local = _address_of_local(facts, args[k])
                if obj is not None and local is not None:
                    # &x of a local scalar or struct: the callee's accesses through this
                    # pointer touch the caller's registers / local memory, not profiled memory
                    new_bindings[obj] = Binding(local, None)
                elif obj is not None:
                    try:
                        offset, _ = AddressOf(values).pointer(args[k])
                        target = self._pointer_target(facts, args[k], bindings, values)
                        if target is not None:
                            tobj, toff = target
                            new_bindings[obj] = Binding(
                                tobj, values._arith("+", toff, offset) if toff is not None
                                else offset)
                    except _Lost:
                        pass
            from gmprof.frontend import cxx_ast as X
            if isinstance(call.name, X.TemplateId):
                for k, sym in enumerate(callee.names.template_params):
                    if k < len(call.name.args) and not isinstance(call.name.args[k],
                                                                   c_ast.Typename):
                        params[sym] = values.value(call.name.args[k])
            ctx = Context(callee, params, values.context, call, values.context.depth + 1)
            callee_values = self.program.values.of(callee, ctx)
            frame = Frame(facts, values, facts.guards, call)
            result.calls.append((chain + (call,), callee))
            self._function(result, callee, callee_values, [frame] + caller_frames,
                           chain + (call,), new_bindings)

    def _opaque(self, result, facts, call, bindings, values) -> None:
        """Record a call gmprof cannot see into when it may touch profiled memory: a function
        of this file that could not be parsed (it may reach any object), or any function handed
        a pointer to a profiled object by an argument that is not itself an access site (an
        atomic's or a load intrinsic's address is counted as one)."""
        from gmprof.frontend import cxx_ast as X

        name = call.name.name if isinstance(call.name, (c_ast.ID, X.TemplateId)) else None
        fn = self.program.tu.function(name) if isinstance(name, str) else None
        if fn is not None and fn.parsed is None:
            result.opaque_calls.append((call, name, None))
            return
        if isinstance(call.name, c_ast.StructRef) and isinstance(call.name.field, c_ast.ID):
            field = call.name.field.name
            if any(f.sites and f.function.name.endswith("::" + field)
                   for f in self.program.functions):
                # obj.f(x) whose class gmprof could not tell (auto, a call's result, a member
                # of a member): a member f of this file that accesses memory may be the one
                text = X.span(call.name).text
                result.opaque_calls.append(
                    (call, text, None, f"{text}() may access it (a member function whose "
                                       "class gmprof could not tell; its accesses are not "
                                       "counted)"))
                return
        sites = [X.span(site.node) for site in facts.sites]
        objects = []
        for arg in (call.args.exprs if call.args is not None else []):
            span = X.span(arg)
            if any(span.start <= sp.start < span.end for sp in sites):
                continue
            target = self._pointer_target(facts, arg, bindings, values)
            if target is not None and target[0] is not None and target[0].space != LOCAL_ARRAY:
                objects.append(target[0])
        if objects and isinstance(name, str) and self.program.facts(f"{name}::{name}"):
            result.opaque_calls.append(  # A(p, i): a constructor, which no copy is made of
                (call, name, objects, f"the constructor {name}::{name} may access it (a "
                                      "constructor's accesses are not counted)"))
        elif objects:
            result.opaque_calls.append((call, name or "(an expression)", objects))

    def _constructors(self, result, facts, bindings, values) -> None:
        """`S s(p, i);`: a constructor a declaration runs is no call this analysis follows (nor
        one whose copy the instrumented kernel could call): where it accesses memory, the
        profiled objects its arguments point to are recorded like ones handed to code gmprof
        cannot see into, so that their counts are labelled lower bounds rather than exact."""
        from gmprof.frontend import cxx_ast as X

        for node in X.walk(facts.function.funcdef.body):
            if not isinstance(node, c_ast.Decl) or \
                    not isinstance(node.init, (c_ast.InitList, c_ast.ExprList)):
                continue
            cls = _class_name(node.type)
            ctor = self.program.facts(f"{cls}::{cls}") if cls else None
            if ctor is None or not ctor.sites:
                continue
            objects = []
            for arg in node.init.exprs:
                target = self._pointer_target(facts, arg, bindings, values)
                if target is not None and target[0] is not None and \
                        target[0].space != LOCAL_ARRAY:
                    objects.append(target[0])
            if objects:
                result.opaque_calls.append(
                    (node, f"{cls}::{cls}", objects, f"the constructor {cls}::{cls} may access "
                                                     "it (a constructor's accesses are not "
                                                     "counted)"))

    def _receiver(self, result, facts, call, bindings, values) -> None:
        """`acc.f(x)`, `a[i].f(x)`, `p->f(x)`: a member function reads and writes its object
        through `this` (its members named bare, `base` for `this->base`), which no site counts
        (the call itself is no access, accesses.py): a profiled object called on is recorded
        like one handed to code gmprof cannot see into, so that its counts are labelled lower
        bounds rather than exact."""
        from gmprof.frontend import cxx_ast as X

        name = call.name
        if not isinstance(name, c_ast.StructRef):
            return
        receiver = name.name if name.type == "->" else c_ast.UnaryOp("&", name.name,
                                                                       name.name.coord)
        target = self._pointer_target(facts, receiver, bindings, values)
        if target is None or target[0] is None or target[0].space == LOCAL_ARRAY:
            return
        text = X.span(name).text
        result.opaque_calls.append(
            (call, text, [target[0]], f"{text}() may read or write it through `this` "
                                      f"(a member function's object is not counted)"))

    def _pointer_target(self, facts, expr, bindings, values):
        """(kernel-level object, extra offset) a caller's pointer expression refers to."""
        from .accesses import FindAccesses

        finder = FindAccesses(facts.function, facts.names, facts.objects)
        obj, _, _ = finder.resolve_pointer(expr)
        if obj is None:
            return None
        if obj in bindings:
            b = bindings[obj]
            return b.object, b.offset
        return obj, None

    @staticmethod
    def _base(site, bindings):
        """The offset of a helper's pointer parameter from the caller's object it is bound
        to; unknown (UNKNOWN_VALUE: nothing is claimed of the address) when the parameter is
        bound to no object, since the pointer may then differ from thread to thread."""
        obj = site.object
        if obj is None:
            return None
        if obj in bindings:
            return bindings[obj].offset
        if obj.space == DEVICE and not site.function.is_kernel:
            return UNKNOWN_VALUE
        return None

    def _target(self, site, sc: SiteClass, bindings, values):
        obj = site.object
        if obj is None:
            return (None, None)
        if obj in bindings:
            # sc's address already holds the binding's offset (_base)
            return (bindings[obj].object, sc.address.offset)
        if obj.space == DEVICE and not site.function.is_kernel:
            return (None, None)  # a callee's pointer parameter we could not bind
        return (obj, sc.address.offset)

    def _calls(self, facts):
        from gmprof.frontend import cxx_ast as X

        return [n for n in X.walk(facts.function.funcdef.body) if isinstance(n, c_ast.FuncCall)]

    def _callee(self, facts, call):
        """The function a call runs; among overloads of its name (`under()`, `under(int d)`),
        the one whose parameters are as many as the call's arguments, where only one is."""
        callee = self._named_callee(facts, call)
        if callee is None:
            return None
        same = [f for f in self.program.functions if f.function.name == callee.function.name]
        if len(same) > 1:
            n = len(call.args.exprs) if call.args is not None else 0
            fit = [f for f in same if f.names is not None and len(f.names.params) == n]
            if len(fit) == 1:
                return fit[0]
        return callee

    def _named_callee(self, facts, call):
        from gmprof.frontend import cxx_ast as X

        name = call.name
        if isinstance(name, c_ast.ID):
            sym = facts.names[name]
            if sym is not None and sym.kind == "function" and sym.decl is not None:
                return self.program.facts(sym.name)
            init = getattr(getattr(sym, "decl", None), "init", None)
            if isinstance(init, X.Lambda):
                return self.program.facts(init.name)  # auto f = [&](int i) {...}; f(3)
            if sym is None or sym.kind == "function":
                return self._own_member(facts, name.name)  # f(x) in a member: this->f(x)
            return None
        if isinstance(name, X.Lambda):
            return self.program.facts(name.name)  # [&](int i) {...}(3)

        if isinstance(name, X.TemplateId):
            return self.program.facts(name.name)
        if isinstance(name, c_ast.StructRef) and isinstance(name.field, c_ast.ID):
            # obj.f(...) / ptr->f(...) / a[i].f(...) / (*p).f(...): a member function defined
            # in its class's body or outside it (`S::f`), found by the class named in the
            # declaration of obj, ptr, a or p (pointers and arrays stripped)
            root = name.name
            while isinstance(root, c_ast.ArrayRef) or \
                    (isinstance(root, c_ast.UnaryOp) and root.op == "*"):
                root = root.name if isinstance(root, c_ast.ArrayRef) else root.expr
            if not isinstance(root, c_ast.ID):
                return None
            if root.name == "this":
                return self._own_member(facts, name.field.name)
            sym = facts.names[root]
            decl = getattr(sym, "decl", None) if sym is not None else None
            cls = _class_name(getattr(decl, "type", None))
            for _ in range(4):  # through typedefs: `typedef St<float> FS; FS s; s.put(i, v)`
                if cls is None or self.program.facts(f"{cls}::{name.field.name}") is not None:
                    break
                cls = _aliased_class(self.program.tu, cls)
            if cls is not None:
                return self.program.facts(f"{cls}::{name.field.name}")
        return None

    def _own_member(self, facts, name):
        """A member of the class whose member `facts` is (defined in its body), by name."""
        fn = facts.function
        if fn.owner is None or "::" not in fn.name:
            return None
        return self.program.facts(f"{fn.name.rsplit('::', 1)[0]}::{name}")


def _aliased_class(tu, name):
    """The class a typedef or alias names (`typedef St<float> FS;` -> 'St'), or None."""
    import re

    text = tu.oracle.typedefs.get(name)
    words = re.findall(r"[A-Za-z_]\w*", text.split("<")[0]) if text else []
    return words[-1] if words and words[-1] != name else None


def _class_name(t):
    """The class a declaration's type names, through pointers, references and arrays: `S *p`,
    `FDWT<float, 3> f`, `const S &s`, `S a[4]` -> 'S', 'FDWT', 'S', 'S'."""
    from gmprof.frontend import cxx_ast as X

    while isinstance(t, (c_ast.PtrDecl, X.RefDecl, c_ast.ArrayDecl)):
        t = t.type
    if not isinstance(t, c_ast.TypeDecl):
        return None
    base = t.type
    if isinstance(base, X.TemplateId):
        return base.name.rsplit("::", 1)[-1]
    if isinstance(base, (c_ast.Struct, c_ast.Union)):
        return base.name
    if isinstance(base, c_ast.IdentifierType) and len(base.names) == 1:
        return base.names[0].rsplit("::", 1)[-1]
    return None


def _address_of_local(facts, expr):
    """A MemoryObject standing for `&x` when x is a local variable that is not an array."""
    from pycparser import c_ast as C

    from .scopes import LOCAL, PARAM
    from .symbols import LOCAL_ARRAY, MemoryObject, type_text

    if not (isinstance(expr, C.UnaryOp) and expr.op == "&" and isinstance(expr.expr, C.ID)):
        return None
    sym = facts.names[expr.expr]
    if sym is None or sym.kind not in (LOCAL, PARAM) or not isinstance(sym.decl, C.Decl):
        return None
    if any(o.symbol is sym for o in facts.objects):
        return None
    return MemoryObject(sym.name, LOCAL_ARRAY, type_text(sym.decl.type), (), sym,
                        sym.decl.coord.location(), facts.name)


def _param_object(callee_facts, sym):
    for obj in callee_facts.objects:
        if obj.symbol is sym:
            return obj
    return None
