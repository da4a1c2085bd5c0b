"""Which imported names a file uses in a way the linked facts are asked about (`asked(source)`),
and which top-level names of a module are functions or classes (`defined(source)`).

The chat facts look an imported function or method up only at a call: `chat(history)`,
`memory.get()`, a method of an instance built by calling an imported class (`Memory()`) or of
a parameter annotated with one whose methods the function calls (`specialist: BillingSpecialist`
... `specialist.run(h)`, or kept as `self.specialist`). The prompt and tool rules look an
imported constant up where its name is read (`SYSTEM_PROMPT`, `registry.TOOLS`, `all_tools()`).
So a name the file only annotates with or lists as a base class is asked nothing, and a class
or function it only reads (`isinstance(x, Stream)`, `cast_to=ChatCompletion`) offers it no
constant: most of what a typed library imports. Both are read on CPython's tree, a fraction
of a summary's cost.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Asked:
    read: frozenset[str]  # first names of the dotted names the file reads (calls included)
    called: frozenset[str]  # of those it calls, or types a parameter with whose methods it calls


def asked(source: bytes) -> Asked | None:
    """What the file asks of its imported names; None when CPython cannot parse it (then
    every import is asked about)."""
    from chatbound.syntax.parse import no_gc, python_tree

    with no_gc():
        tree = python_tree(source)
        if isinstance(tree, str):
            return None
        found = _asked(tree)
        del tree  # freed before the collector is back
    return found


def defined(source: bytes) -> frozenset[str]:
    """The module's top-level functions and classes (what `import` binds is not among them);
    empty when CPython cannot parse it."""
    from chatbound.syntax.parse import no_gc, python_tree

    with no_gc():
        tree = python_tree(source)
        if isinstance(tree, str):
            return frozenset()
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        found = frozenset(node.name for node in tree.body if isinstance(node, kinds))
        del tree
    return found


def _asked(tree: ast.Module) -> Asked:
    read: set[str] = set()
    called: set[str] = set()
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            read.add(node.id)
            continue
        if isinstance(node, ast.Call):
            root = _root(node.func)
            if root is not None:
                called.add(root)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            called |= _typed_receivers(node)
            defaults = (d for d in node.args.kw_defaults if d is not None)  # None: a keyword-only parameter without one
            pending.extend((*node.decorator_list, *node.args.defaults, *defaults, *node.body))
            continue  # annotations are not reads
        elif isinstance(node, ast.ClassDef):
            pending.extend((*node.decorator_list, *node.keywords, *node.body))  # not the bases
            continue
        elif isinstance(node, ast.AnnAssign):
            pending.extend(child for child in (node.target, node.value) if child is not None)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return Asked(frozenset(read), frozenset(called))


def _typed_receivers(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names in the annotations of the parameters whose methods the function calls
    (`specialist.run(...)`) or that it keeps (`self.specialist = specialist`)."""
    params = {
        arg.arg: arg.annotation
        for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)
        if arg.annotation is not None
    }
    if not params:
        return set()
    used = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            used.add(_root(node.func))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Name):
            used.add(node.value.id)
    return {n.id for name in used & params.keys() for n in ast.walk(params[name]) if isinstance(n, ast.Name)}


def _root(node: ast.expr) -> str | None:
    """`a` of `a`, `a.b.c`, `a().b`; None otherwise."""
    while isinstance(node, (ast.Attribute, ast.Call)):
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return node.id if isinstance(node, ast.Name) else None
