"""Walking LibCST trees without LibCST's costs: the rules' batched traversal, parents, ranks.

`visit_batched(module, visitors)` is `libcst.visit_batched` done by walking the nodes' fields
in LibCST's visit order (`visit_order`, read from each class), tokens left out (whitespace,
punctuation, operators, brackets: `TOKEN_CLASSES`): the visitors meet the same other nodes
in the same order, but nothing is rebuilt (LibCST's traversal reconstructs every node
as it goes, which costs about as much as the parse) and nothing recurses. `parents(module)`
is what ParentNodeProvider gives and `preorder(module)` each node's rank in that order (the
order of the source text), both recorded by that same walk (or by one of their own for a tree
it has not walked). `install()` (called once by `chatbound.run.pipeline`) puts in `get_visitors`,
which computes each visitor class's method table once (LibCST runs `inspect.getmembers` on
every visitor instance, about 9 ms each, for every file), and hashes nodes in C.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import re
import typing
from collections.abc import Callable, Mapping

from libcst import BatchableCSTVisitor, CSTNode

PREFIXES = ("visit_", "leave_")


@functools.cache
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
    # A node's hash is its identity (LibCST's `CSTNode.__hash__` returns `id(self)`, and `__eq__`
    # is `is`), computed in Python on every dict lookup of a node: a million per large module in
    # the parents, ranks and scopes. `object.__hash__` is the same identity hash, in C.
    for cls in (CSTNode, *NODE_CLASSES):
        if vars(cls).get("__hash__") is _IDENTITY_HASH:
            cls.__hash__ = object.__hash__  # type: ignore[assignment]


@functools.cache
def fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@functools.cache
def node_fields(cls: type) -> tuple[str, ...]:
    """The dataclass fields of `cls` that can hold more than tokens."""
    return tuple(name for name in fields(cls) if _holds_nodes(cls, name))


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
# Whitespace, comments, punctuation, operators and brackets: two thirds of a tree's nodes, and
# no rule visits them or asks about them (an operator is read from its expression's field).
TOKEN_CLASSES = frozenset(
    cls
    for cls in NODE_CLASSES
    if cls.__module__ in ("libcst._nodes.whitespace", "libcst._nodes.op")
    or cls.__name__.startswith(("Left", "Right"))
    and cls.__name__.endswith(("Paren", "Bracket", "Brace"))
)
WALKED_CLASSES = NODE_CLASSES - TOKEN_CLASSES  # what the walks below meet
_IDENTITY_HASH = CSTNode.__hash__  # see install()


def _classes_in(hint) -> set[type]:
    found, pending = set(), [hint]
    while pending:
        item = pending.pop()
        if isinstance(item, type):
            found.add(item)
        else:
            pending.extend(typing.get_args(item))
    return found


@functools.cache
def _hints(cls: type) -> dict[str, object] | None:
    """`cls`'s annotations, read once per class (each reading evaluates them all); None when
    they cannot be read."""
    try:
        return typing.get_type_hints(cls)
    except Exception:
        return None


def _holds_nodes(cls: type, name: str) -> bool:
    """Whether field `name` of `cls` can hold a node that is not a token (by its annotation)."""
    hints = _hints(cls)
    if hints is None or name not in hints:  # an annotation that cannot be read: keep the field
        return True
    hint = hints[name]
    return any(
        issubclass(found, CSTNode) and not any(issubclass(found, t) for t in TOKEN_CLASSES)
        for found in _classes_in(hint)
        if found in NODE_CLASSES or found is CSTNode
    )


def visit_order(cls: type) -> tuple[str, ...]:
    """The fields of a node class that can hold more than tokens, in the order LibCST's
    traversal visits them, read from its `_visit_and_replace_children` (`visit_sequence(self,
    "decorators", ...)`); the dataclass fields where that cannot be read."""
    try:
        source = inspect.getsource(cls._visit_and_replace_children)
    except (OSError, TypeError, AttributeError):
        order = fields(cls)
    else:
        known = set(fields(cls))
        order = tuple(dict.fromkeys(f for f in re.findall(r'visit_\w+\(\s*self,\s*"(\w+)"', source) if f in known))
        order = order or fields(cls)
    return tuple(name for name in order if _holds_nodes(cls, name))


def field_getter(names: tuple[str, ...]) -> Callable[[CSTNode], tuple]:
    """The values of a node's fields `names`, as a tuple, in one call (one `getattr` each costs
    more in the walks, which meet every node)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        name = names[0]
        return lambda node: (getattr(node, name),)
    return lambda node: ()


_GETTERS: dict[type, Callable[[CSTNode], tuple]] = {}  # the getter of visit_order's fields per class, made once


def children(node: CSTNode) -> list[CSTNode]:
    """A node's children but the tokens (whitespace, punctuation, operators), in LibCST's visit order."""
    kind = type(node)
    getter = _GETTERS.get(kind)
    if getter is None:
        getter = _GETTERS[kind] = field_getter(visit_order(kind))
    found: list[CSTNode] = []
    for value in getter(node):
        kind = type(value)
        if kind in WALKED_CLASSES:
            found.append(value)
        elif kind is tuple or kind is list:
            found += [item for item in value if type(item) in WALKED_CLASSES]
    return found


class _Walked:
    """The parents and ranks of the tree walked last (the file being analyzed: every part of the
    analysis asks them of the same tree), kept from the rules' traversal when it ran."""

    root: CSTNode | None = None
    parent_of: dict[CSTNode, CSTNode] = {}
    rank_of: dict[CSTNode, int] = {}


def _index(module: CSTNode) -> tuple[dict[CSTNode, CSTNode], dict[CSTNode, int]]:
    """Each node's parent and its rank (from 1) in LibCST's visit order, in one walk."""
    if _Walked.root is not module:
        visit_batched(module, ())
    return _Walked.parent_of, _Walked.rank_of


def parents(module: CSTNode) -> dict[CSTNode, CSTNode]:
    """Each node's parent: what ParentNodeProvider gives."""
    return _index(module)[0]


def preorder(module: CSTNode) -> dict[CSTNode, int]:
    """Each node's rank (from 1) in LibCST's visit order: the order of the source text."""
    return _index(module)[1]


def visit_batched(module: CSTNode, visitors) -> None:
    """Each visitor's `visit_<Type>` before a node's children and `leave_<Type>` after, over
    the whole tree in LibCST's order (what `libcst.visit_batched` does), without recursion.
    The walk records each node's parent and rank on the way, for `parents` and `preorder`
    (a walk of its own costs a tenth of the parse)."""
    methods: dict[str, list[Callable]] = {}
    for visitor in visitors:
        for name, method in visitor.get_visitors().items():
            methods.setdefault(name, []).append(method)
    calls: dict[type, tuple[list[Callable], list[Callable]]] = {}
    parent_of: dict[CSTNode, CSTNode] = {}
    rank_of: dict[CSTNode, int] = {}
    rank = 0
    pending: list = [module]  # nodes to visit, and (node,) to leave
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is tuple:
            node = node[0]
            if node is module:  # every node walked: the rules' `leave_Module` asks for parents
                _Walked.root, _Walked.parent_of, _Walked.rank_of = module, parent_of, rank_of
            for method in calls[type(node)][1]:
                method(node)
            continue
        found = calls.get(kind)
        if found is None:
            found = calls[kind] = (methods.get(f"visit_{kind.__name__}", []), methods.get(f"leave_{kind.__name__}", []))
        rank += 1
        rank_of[node] = rank
        for method in found[0]:
            method(node)
        if found[1]:
            pending.append((node,))
        below = children(node)
        if below:
            parent_of.update(dict.fromkeys(below, node))
            below.reverse()
            pending += below
    if _Walked.root is not module:  # no visitor leaves the root
        _Walked.root, _Walked.parent_of, _Walked.rank_of = module, parent_of, rank_of
