"""Visitor: the one way the passes walk the tree, as pycparser's c_ast.NodeVisitor.

Used by ResolveNames (scopes.py), FindAccesses (accesses.py), FindLoops (loops.py),
ReachingDefinitions and ExpressionFlow (dataflow.py) and ValueAnalysis (values.py). c_ast's
node classes and gmprof's C++ ones (cxx_ast) all derive from Node directly, so dispatch by
class name matches what isinstance tests matched.

`visit(node, *args)` calls `self.visit_<Class>(node, *args)` for the node's class (c_ast's and
gmprof's C++ nodes alike), or `self.generic_visit(node, *args)`, which visits the children;
extra arguments (a dataflow state) pass through. A visit_ method that wants the children
visited calls generic_visit itself. The method is found once per (visitor class, node class).

    class CountCalls(Visitor):
        def __init__(self):
            self.n = 0

        def visit_FuncCall(self, node):
            self.n += 1
            self.generic_visit(node)    # calls inside the arguments too
"""
from __future__ import annotations

_METHODS: dict = {}  # (visitor class, node class) -> function


class Visitor:
    def visit(self, node, *args):
        key = (type(self), type(node))
        method = _METHODS.get(key)
        if method is None:
            method = getattr(type(self), "visit_" + type(node).__name__, None) or \
                type(self).generic_visit
            _METHODS[key] = method
        return method(self, node, *args)

    def generic_visit(self, node, *args):
        for _, child in node.children():
            self.visit(child, *args)


__all__ = ["Visitor"]
