"""Walking LibCST trees without LibCST's costs: the rules' batched traversal, parents, ranks.

`visit_batched(module, visitors)` is `libcst.visit_batched` done by walking the nodes' fields
in LibCST's visit order (`visit_order`, read from each class): the visitors meet the same
nodes in the same order, but nothing is rebuilt (LibCST's traversal reconstructs every node
as it goes, which costs about as much as the parse) and nothing recurses. `parents(module)`
is what ParentNodeProvider gives and `preorder(module)` each node's rank in that order (the
order of the source text), both from one walk. `get_visitors` (installed once by
`chatbound.analysis`) computes each visitor class's method table once: LibCST runs
`inspect.getmembers` on every visitor instance, about 9 ms each, for every file.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from typing import Callable, Mapping

from libcst import BatchableCSTVisitor, CSTNode

PREFIXES = ("visit_", "leave_")


@functools.lru_cache(maxsize=None)
def _method_names(cls: type) -> tuple[str, ...]:
    return tuple(
        name
        for name in dir(cls)
        if name.startswith(PREFIXES)
        and inspect.isfunction(getattr(cls, name))
        and not getattr(getattr(cls, name), "_is_no_op", False)
    )


def get_visitors(self: BatchableCSTVisitor) -> Mapping[str, Callable]:
    found = {name: getattr(self, name) for name in _method_names(type(self))}
    for name, value in vars(self).items():
        if name.startswith(PREFIXES) and inspect.ismethod(value) and not getattr(value, "_is_no_op", False):
            found[name] = value
    return found


def install() -> None:
    BatchableCSTVisitor.get_visitors = get_visitors  # type: ignore[method-assign]


@functools.lru_cache(maxsize=None)
def fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def visit_order(cls: type) -> tuple[str, ...]:
    """The fields of a node class in the order LibCST's traversal visits them, read from its
    `_visit_and_replace_children` (`visit_sequence(self, "decorators", ...)`); the
    dataclass fields where that cannot be read."""
    try:
        source = inspect.getsource(cls._visit_and_replace_children)
    except (OSError, TypeError, AttributeError):
        return fields(cls)
    known = set(fields(cls))
    order = tuple(dict.fromkeys(f for f in re.findall(r'visit_\w+\(\s*self,\s*"(\w+)"', source) if f in known))
    return order or fields(cls)


def _node_classes() -> frozenset[type]:
    found, pending = set(), [CSTNode]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return frozenset(found)


# isinstance(x, CSTNode) goes through the ABC machinery: a set of the classes is several times cheaper
NODE_CLASSES = _node_classes()


_ORDERS: dict[type, tuple[str, ...]] = {}  # visit_order per class, read once (a dict: no wrapper's cost per node)


def children(node: CSTNode) -> list[CSTNode]:
    """A node's children, in LibCST's visit order."""
    kind = type(node)
    order = _ORDERS.get(kind)
    if order is None:
        order = _ORDERS[kind] = visit_order(kind)
    found: list[CSTNode] = []
    for name in order:
        value = getattr(node, name)
        kind = type(value)
        if kind in NODE_CLASSES:
            found.append(value)
        elif kind is tuple or kind is list:
            found.extend(item for item in value if type(item) in NODE_CLASSES)
    return found


@functools.lru_cache(maxsize=1)  # the file being analyzed: parents and ranks are asked of the same tree
def _index(module: CSTNode) -> tuple[dict[CSTNode, CSTNode], dict[CSTNode, int]]:
    """Each node's parent and its rank (from 1) in LibCST's visit order, in one walk."""
    parent_of: dict[CSTNode, CSTNode] = {}
    rank_of: dict[CSTNode, int] = {}
    pending = [module]
    while pending:
        node = pending.pop()
        rank_of[node] = len(rank_of) + 1
        below = children(node)
        for child in below:
            parent_of[child] = node
        pending.extend(reversed(below))
    return parent_of, rank_of


def parents(module: CSTNode) -> dict[CSTNode, CSTNode]:
    """Each node's parent: what ParentNodeProvider gives."""
    return _index(module)[0]


def preorder(module: CSTNode) -> dict[CSTNode, int]:
    """Each node's rank (from 1) in LibCST's visit order: the order of the source text."""
    return _index(module)[1]


def visit_batched(module: CSTNode, visitors) -> None:
    """Each visitor's `visit_<Type>` before a node's children and `leave_<Type>` after, over
    the whole tree in LibCST's order (what `libcst.visit_batched` does), without recursion."""
    methods: dict[str, list[Callable]] = {}
    for visitor in visitors:
        for name, method in visitor.get_visitors().items():
            methods.setdefault(name, []).append(method)
    calls: dict[type, tuple[list[Callable], list[Callable]]] = {}
    pending: list[tuple[CSTNode, bool]] = [(module, False)]
    while pending:
        node, leaving = pending.pop()
        kind = type(node)
        found = calls.get(kind)
        if found is None:
            found = calls[kind] = (methods.get(f"visit_{kind.__name__}", []), methods.get(f"leave_{kind.__name__}", []))
        if leaving:
            for method in found[1]:
                method(node)
            continue
        for method in found[0]:
            method(node)
        if found[1]:
            pending.append((node, True))
        pending.extend((child, False) for child in reversed(children(node)))
