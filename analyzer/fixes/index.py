"""What the fixes look up in one module, indexed once per module: a module with many findings is
walked, and its nodes printed, once, not once per finding (each question below is a lookup).

`module_index(module)` holds what the module's tree says (names, growth calls and assignments
by the text of what they act on, functions and calls by name, each node's parent);
`located(wrapper)` what its positions say (the node at a span, the innermost node of a kind
holding some lines, the call at a span). One module is indexed at a time, as the pipeline
analyses one file at a time.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.findings import Span
from chatbound.syntax.visitors import children

GROWTH_METHODS = ("append", "extend", "insert")


def walk_down(node: cst.CSTNode):
    """``node`` and everything below it, in source order (preorder)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def spelled(module: cst.Module, node: cst.CSTNode) -> str:
    """The node's source text with its white space folded: how two spellings are compared."""
    return " ".join(module.code_for_node(node).split())


@dataclass
class ModuleIndex:
    """What the fixes look up in a module's tree, collected in one walk."""

    module: cst.Module
    names: set = field(default_factory=set)
    growth_calls: list = field(default_factory=list)
    assigns: list = field(default_factory=list)
    nodes: list = field(default_factory=list)  # every node, in source order
    parents: dict = field(default_factory=dict)  # id(node) -> parent

    def owner(self, node: cst.CSTNode) -> cst.ClassDef | None:
        """The innermost class holding ``node``."""
        while id(node) in self.parents:
            node = self.parents[id(node)]
            if isinstance(node, cst.ClassDef):
                return node
        return None

    def _by_spelling(self, pairs) -> tuple[dict, dict]:
        """(node, spelling) pairs by spelling, and by (id of the owning class, spelling)."""
        anywhere: dict[str, list] = {}
        in_class: dict[tuple[int, str], list] = {}
        for node, spelling in pairs:
            anywhere.setdefault(spelling, []).append(node)
            in_class.setdefault((id(self.owner(node)), spelling), []).append(node)
        return anywhere, in_class

    @functools.cached_property
    def _growth(self) -> tuple[dict, dict]:
        return self._by_spelling((call, spelled(self.module, call.func.value)) for call in self.growth_calls)

    @functools.cached_property
    def _assigned(self) -> tuple[dict, dict]:
        pairs = []
        for node in self.assigns:
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
                pairs.append((node.value, spelled(self.module, target)))
        return self._by_spelling(pairs)

    def growth_of(self, spelling: str, klass: cst.ClassDef | None = None) -> list[cst.Call]:
        """`.append/.extend/.insert` calls on what ``spelling`` names; for `self.x`, those of
        ``klass`` when it is given (another class's `self.x` is another object)."""
        return _scoped(self._growth, spelling, klass)

    def assigned(self, spelling: str, klass: cst.ClassDef | None = None) -> list[cst.BaseExpression]:
        """The values ``spelling`` is set to (`=` and annotated `=`, not `+=`), scoped as `growth_of`."""
        return _scoped(self._assigned, spelling, klass)

    @functools.cached_property
    def bound_once(self) -> dict[str, cst.BaseExpression]:
        """Names assigned exactly once in the module (any scope), with the value."""
        seen: dict[str, list] = {}
        for node in self.assigns:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                seen.setdefault(node.targets[0].target.value, []).append(node.value)
        return {name: values[0] for name, values in seen.items() if len(values) == 1}

    @functools.cached_property
    def annotated(self) -> list[tuple[str, str]]:
        """(target, annotation) spellings of the annotated assignments, spaces removed."""
        module = self.module
        return [
            (module.code_for_node(node.target), module.code_for_node(node.annotation.annotation).replace(" ", ""))
            for node in self.assigns
            if isinstance(node, cst.AnnAssign)
        ]

    @functools.cached_property
    def functions(self) -> dict[str, list[cst.FunctionDef]]:
        found: dict[str, list[cst.FunctionDef]] = {}
        for node in self.nodes:
            if isinstance(node, cst.FunctionDef):
                found.setdefault(node.name.value, []).append(node)
        return found

    @functools.cached_property
    def calls_by_callee(self) -> dict[str | None, list[cst.Call]]:
        found: dict[str | None, list[cst.Call]] = {}
        for node in self.nodes:
            if isinstance(node, cst.Call):
                found.setdefault(callee(node), []).append(node)
        return found

    @functools.cached_property
    def order(self) -> dict[int, int]:
        """Each node's place in source order, by id."""
        return {id(node): i for i, node in enumerate(self.nodes)}

    def in_order(self, nodes) -> list:
        """``nodes`` in source order, each once."""
        return sorted({id(n): n for n in nodes}.values(), key=lambda n: self.order[id(n)])

    def path_to(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes from the module down to ``node``."""
        path = [node]
        while id(path[-1]) in self.parents:
            path.append(self.parents[id(path[-1])])
        return path[::-1]


def _scoped(maps: tuple[dict, dict], spelling: str, klass: cst.ClassDef | None) -> list:
    anywhere, in_class = maps
    if klass is not None and spelling.startswith(("self.", "cls.")):
        return in_class.get((id(klass), spelling), [])
    return anywhere.get(spelling, [])


def callee(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", None)


_MODULES: dict[int, tuple[cst.Module, ModuleIndex]] = {}


def module_index(module: cst.Module) -> ModuleIndex:
    cached = _MODULES.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    index = ModuleIndex(module)
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        index.nodes.append(node)
        below = children(node)
        for child in below:
            index.parents[id(child)] = node
        stack.extend(reversed(below))
        if isinstance(node, cst.Name):
            index.names.add(node.value)
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            index.assigns.append(node)
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in GROWTH_METHODS
        ):
            index.growth_calls.append(node)
    _MODULES.clear()  # one module at a time
    _MODULES[id(module)] = (module, index)
    return index


def _zero_based(span: Span) -> tuple[int, int, int, int]:
    return span.line, span.col - 1, span.end_line, span.end_col - 1


class Located:
    """What the fixes look up by position in one module (its wrapper's `PositionProvider`)."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.wrapper = wrapper
        self.positions = wrapper.resolve(PositionProvider)
        self._lines: dict[type, tuple[list[int], list[tuple[int, cst.CSTNode]]]] = {}

    @functools.cached_property
    def _by_span(self) -> dict[tuple[int, int, int, int], cst.CSTNode]:
        """The first node in source order at each 0-based span (the outermost where spans coincide)."""
        found: dict[tuple[int, int, int, int], cst.CSTNode] = {}
        for node in module_index(self.wrapper.module).nodes:
            where = self.positions.get(node)
            if where is not None:
                found.setdefault((where.start.line, where.start.column, where.end.line, where.end.column), node)
        return found

    @functools.cached_property
    def _calls(self) -> dict[tuple[int, int, int, int], cst.Call]:
        """The first call in position order at each 0-based span."""
        found: dict[tuple[int, int, int, int], cst.Call] = {}
        for node, where in self.positions.items():
            if isinstance(node, cst.Call):
                found.setdefault((where.start.line, where.start.column, where.end.line, where.end.column), node)
        return found

    def _by_line(self, nodes) -> dict[int, list[cst.CSTNode]]:
        found: dict[int, list[cst.CSTNode]] = {}
        for node in nodes:
            found.setdefault(self.positions[node].start.line, []).append(node)
        return found

    @functools.cached_property
    def growth_by_line(self) -> dict[int, list[cst.CSTNode]]:
        """The module's growth calls by their first line."""
        return self._by_line(module_index(self.wrapper.module).growth_calls)

    @functools.cached_property
    def assigns_by_line(self) -> dict[int, list[cst.CSTNode]]:
        """The module's assignments (`+=` too) by their first line."""
        return self._by_line(module_index(self.wrapper.module).assigns)

    def node_at(self, span: Span) -> cst.CSTNode | None:
        return self._by_span.get(_zero_based(span))

    def call_at(self, span: Span) -> cst.Call | None:
        return self._calls.get(_zero_based(span))

    def innermost(self, span: Span, kind) -> cst.CSTNode | None:
        """The node of ``kind`` with the latest first line among those whose lines hold ``span``
        (of several on that line, the last in position order): nodes of a kind sorted once by
        their first line, and searched back from the span's."""
        if kind not in self._lines:
            found = [
                (where.start.line, where.end.line, node)
                for node, where in self.positions.items()
                if isinstance(node, kind)
            ]
            found.sort(key=lambda item: item[0])  # stable: position order within a line
            self._lines[kind] = ([start for start, _, _ in found], [(end, node) for _, end, node in found])
        starts, rest = self._lines[kind]
        for i in range(bisect.bisect_right(starts, span.line) - 1, -1, -1):
            end, node = rest[i]
            if span.end_line <= end:
                return node
        return None


_LOCATED: dict[int, Located] = {}


def located(wrapper: MetadataWrapper) -> Located:
    cached = _LOCATED.get(id(wrapper))
    if cached is not None and cached.wrapper is wrapper:
        return cached
    _LOCATED.clear()  # one module at a time
    _LOCATED[id(wrapper)] = found = Located(wrapper)
    return found
