"""Which bindings a name sees: LibCST's ScopeProvider, reduced to what the rules ask of it.

`scopes(module)` maps every node to its `Scope`; `scope[name]` is every binding of `name`
that the scope sees (its own, else those of the enclosing function and module scopes; a
class body is seen only from itself), each with the node that binds it (a `Name` target, a
`Param`, an import, a `def`) and the scope it binds in. That is what the rules read from
ScopeProvider, built by one walk over the nodes' fields at a tenth of the provider's cost.
Builtins have no binding; `global` and `nonlocal` move a function's bindings to the scope
they name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from chatbound.syntax.visitors import WALKED_CLASSES, field_getter, node_fields

MODULE, FUNCTION, CLASS, COMPREHENSION = "module", "function", "class", "comprehension"
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass(frozen=True, eq=False)
class Binding:
    node: cst.CSTNode
    scope: Scope


class Scope:
    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind = kind
        self.parent = parent
        self.bindings: dict[str, list[Binding]] = {}
        self.declared: dict[str, str] = {}  # name -> "global" | "nonlocal"

    def __getitem__(self, name: str) -> list[Binding]:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings and (scope is self or scope.kind != CLASS):
                return list(scope.bindings[name])
            scope = scope.parent
        return []

    def bind(self, name: str, node: cst.CSTNode) -> None:
        self.bindings.setdefault(name, []).append(Binding(node, self))


def _names(target: cst.CSTNode) -> list[cst.Name]:
    """The names an assignment target binds: `a`, `a, (b, *c)`; not `x.a` or `x[i]`."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []


def _bind_names(scope: Scope, target: cst.CSTNode) -> None:
    for name in _names(target):
        scope.bind(name.value, name)


def _bind_imports(node: cst.Import | cst.ImportFrom, scope: Scope) -> None:
    if isinstance(node.names, cst.ImportStar):
        return
    for alias in node.names:
        bound = alias.asname.name if alias.asname is not None else alias.name
        while isinstance(bound, cst.Attribute):  # `import a.b` binds `a`
            bound = bound.value
        if isinstance(bound, cst.Name):
            scope.bind(bound.value, node)


def _bind_assign(node: cst.Assign, scope: Scope) -> None:
    for target in node.targets:
        _bind_names(scope, target.target)


def _bind_as(node: cst.WithItem | cst.ExceptHandler, scope: Scope) -> None:
    """`with x as (a, b)`, `except E as e`."""
    alias = node.asname if isinstance(node, cst.WithItem) else node.name
    if alias is not None:
        _bind_names(scope, alias.name)


def _bind_walrus(node: cst.NamedExpr, scope: Scope) -> None:
    """`(y := f(x))` binds outside any comprehension it stands in."""
    while scope.kind == COMPREHENSION and scope.parent is not None:
        scope = scope.parent
    _bind_names(scope, node.target)


def _declare(node: cst.Global | cst.Nonlocal, scope: Scope) -> None:
    kind = "global" if isinstance(node, cst.Global) else "nonlocal"
    for item in node.names:
        scope.declared[item.name.value] = kind


# what each kind of node binds in the scope it stands in (a def or class: its name)
_BINDERS = {
    cst.Assign: _bind_assign,
    cst.AnnAssign: lambda node, scope: _bind_names(scope, node.target),
    cst.AugAssign: lambda node, scope: _bind_names(scope, node.target),
    cst.For: lambda node, scope: _bind_names(scope, node.target),
    cst.CompFor: lambda node, scope: _bind_names(scope, node.target),
    cst.WithItem: _bind_as,
    cst.ExceptHandler: _bind_as,
    cst.Param: lambda node, scope: scope.bind(node.name.value, node),
    cst.FunctionDef: lambda node, scope: scope.bind(node.name.value, node),
    cst.ClassDef: lambda node, scope: scope.bind(node.name.value, node),
    cst.Import: _bind_imports,
    cst.ImportFrom: _bind_imports,
    cst.NamedExpr: _bind_walrus,
    cst.Global: _declare,
    cst.Nonlocal: _declare,
}
_KINDS = {
    cst.FunctionDef: FUNCTION,
    cst.Lambda: FUNCTION,
    cst.ClassDef: CLASS,
    **{comprehension: COMPREHENSION for comprehension in COMPREHENSIONS},
}


def _bind_statement(node: cst.CSTNode, scope: Scope) -> None:
    binder = _BINDERS.get(type(node))
    if binder is not None:
        binder(node, scope)


def _children(node: cst.CSTNode):
    """(field, child) for each child: the field says which scope the child belongs to."""
    for name in node_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind in WALKED_CLASSES:
            yield name, value
        elif kind is tuple or kind is list:
            for item in value:
                if type(item) in WALKED_CLASSES:
                    yield name, item


def _inner_field(node: cst.CSTNode, field: str, child: cst.CSTNode) -> bool:
    """Whether `child` (in `node`'s `field`) lives in the new scope `node` opens."""
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        return field in ("params", "body")
    if isinstance(node, cst.ClassDef):
        return field == "body"
    return True  # a comprehension: all but its first iterable, handled by the caller


_GETTERS: dict[type, Callable] = {}  # the getter of node_fields per class, made once


def scopes(module: cst.Module) -> dict[cst.CSTNode, Scope]:
    """Every node's scope (what ScopeProvider maps), bindings resolved."""
    found: dict[cst.CSTNode, Scope] = {}
    module_scope = Scope(MODULE, None)
    opened: list[Scope] = [module_scope]
    pending: list[tuple[cst.CSTNode, Scope]] = [(module, module_scope)]
    while pending:
        node, scope = pending.pop()
        found[node] = scope
        node_type = type(node)
        binder = _BINDERS.get(node_type)
        if binder is not None:
            binder(node, scope)
        kind = _KINDS.get(node_type)
        if kind is None and node_type is not cst.Param:
            getter = _GETTERS.get(node_type)
            if getter is None:
                getter = _GETTERS[node_type] = field_getter(node_fields(node_type))
            for value in getter(node):
                value_type = type(value)
                if value_type in WALKED_CLASSES:
                    pending.append((value, scope))
                elif value_type is tuple or value_type is list:
                    pending += [(item, scope) for item in value if type(item) in WALKED_CLASSES]
            continue
        if node_type is cst.Param:  # its default and annotation are evaluated where the def stands
            outer = scope.parent
            for field in node_fields(node_type):
                value = getattr(node, field)
                value_type = type(value)
                if value_type in WALKED_CLASSES:
                    pending.append(
                        (value, outer if outer is not None and field in ("default", "annotation") else scope)
                    )
                elif value_type is tuple or value_type is list:
                    pending.extend((item, scope) for item in value if type(item) in WALKED_CLASSES)
            continue
        inner = Scope(kind, scope)
        opened.append(inner)
        first_iterable = node.for_in.iter if kind == COMPREHENSION else None
        for field, child in _children(node):
            if kind == COMPREHENSION and field == "for_in":
                found[child] = inner
                _bind_statement(child, inner)
                pending.append((child.iter, scope))  # evaluated in the enclosing scope
                pending.extend(
                    (grandchild, inner) for _, grandchild in _children(child) if grandchild is not first_iterable
                )
            else:
                pending.append((child, inner if _inner_field(node, field, child) else scope))
    _apply_declarations(opened, module_scope)
    return found


def _apply_declarations(opened: list[Scope], module_scope: Scope) -> None:
    """Move the bindings of `global x` / `nonlocal x` names to the scope they name."""
    for scope in opened:
        for name, kind in scope.declared.items():
            moved = scope.bindings.pop(name, [])
            target = module_scope
            if kind == "nonlocal":
                target = scope.parent
                while target is not None and (target.kind != FUNCTION or name not in target.bindings):
                    target = target.parent
                target = target or module_scope
            target.bindings.setdefault(name, []).extend(Binding(b.node, target) for b in moved)
