"""Resolve an expression to a constant: a literal, or a name bound once to one.

Rules ask `constant(rule, expr)` and get the value with where it came from, so messages can
say `k=TOP_K (20, line 3)`. Only names assigned exactly once are trusted: a name reassigned
on some path could hold anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, ScopeProvider


@dataclass(frozen=True)
class Constant:
    value: Any
    source: str  # where a named constant is bound, "TOP_K = 20 (line 3)"; "" for a literal
    node: cst.CSTNode


def literal(node: cst.BaseExpression) -> Any:
    """The value of a literal int, float or string expression, else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal(node.expression)
        return -inner if isinstance(inner, (int, float)) else None
    return None


def _assigned_value(rule: cst.BatchableCSTVisitor, target: cst.CSTNode) -> cst.BaseExpression | None:
    parent = rule.get_metadata(ParentNodeProvider, target, None)
    if isinstance(parent, cst.AssignTarget):
        assign = rule.get_metadata(ParentNodeProvider, parent, None)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            return assign.value
    if isinstance(parent, cst.AnnAssign) and parent.target is target:
        return parent.value
    return None


def bound_expression(rule: cst.BatchableCSTVisitor, name: cst.Name) -> cst.BaseExpression | None:
    """The expression `name` is assigned from, when its scope binds it exactly once."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    if scope is None:
        return None
    assignments = list(scope[name.value])
    target = getattr(assignments[0], "node", None) if len(assignments) == 1 else None  # builtins have none
    if not isinstance(target, cst.Name):
        return None
    return _assigned_value(rule, target)


def fallback_of(rule: cst.BatchableCSTVisitor, name: cst.Name) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(given, default) where the scope binds `name` twice, the second time only when the
    first gave nothing: `p = load("v1")`, then `if not p: p = DEFAULT` (or `if p is None:`),
    which is `load("v1") or DEFAULT`."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    bound = [getattr(a, "node", None) for a in scope[name.value]] if scope is not None else []
    targets = [t for t in bound if isinstance(t, cst.Name)]
    if len(bound) != 2 or len(targets) != 2:
        return None
    guarded = [t for t in targets if _only_when_missing(rule, t, name.value)]
    if len(guarded) != 1:
        return None
    given = next(t for t in targets if t is not guarded[0])
    values = _assigned_value(rule, given), _assigned_value(rule, guarded[0])
    return (values[0], values[1]) if values[0] is not None and values[1] is not None else None


def _only_when_missing(rule: cst.BatchableCSTVisitor, target: cst.CSTNode, name: str) -> bool:
    """Whether `target` is bound in the body of an `if not name:` / `if name is None:`."""
    node: cst.CSTNode | None = target
    for _ in range(5):
        node = rule.get_metadata(ParentNodeProvider, node, None) if node is not None else None
        if isinstance(node, cst.If):
            test = node.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                return isinstance(test.expression, cst.Name) and test.expression.value == name
            return (
                isinstance(test, cst.Comparison)
                and isinstance(test.left, cst.Name)
                and test.left.value == name
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Is)
                and isinstance(test.comparisons[0].comparator, cst.Name)
                and test.comparisons[0].comparator.value == "None"
            )
        if node is None or isinstance(node, (cst.FunctionDef, cst.Else)):
            return False
    return False


def grown_from(rule: cst.BatchableCSTVisitor, name: cst.Name) -> cst.BaseExpression | None:
    """The expression `name` is assigned from once, when every other binding of its scope
    only adds to it (`p = BASE.format(...)`, then `p += extra`): what it holds at least."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    targets = [getattr(a, "node", None) for a in scope[name.value]] if scope is not None else []
    added = [
        t
        for t in targets
        if isinstance(t, cst.Name)
        and isinstance((parent := rule.get_metadata(ParentNodeProvider, t, None)), cst.AugAssign)
        and isinstance(parent.operator, cst.AddAssign)
    ]
    plain = [t for t in targets if t not in added]
    if not added or len(plain) != 1 or not isinstance(plain[0], cst.Name):
        return None
    return _assigned_value(rule, plain[0])


def _from_name(rule: cst.BatchableCSTVisitor, name: cst.Name) -> Constant | None:
    return _with_origin(rule, name.value, bound_expression(rule, name))


def _with_origin(rule: cst.BatchableCSTVisitor, label: str, value_node: cst.BaseExpression | None) -> Constant | None:
    if value_node is None:
        return None
    value = literal(value_node)
    if value is None:
        return None
    line = rule.get_metadata(PositionProvider, value_node).start.line
    return Constant(value, f"{label} = {value!r} (line {line})", value_node)


def enclosing_class(rule: cst.BatchableCSTVisitor, node: cst.CSTNode) -> cst.ClassDef | None:
    while node is not None:
        node = rule.get_metadata(ParentNodeProvider, node, None)
        if isinstance(node, cst.ClassDef):
            return node
    return None


def class_attribute(rule: cst.BatchableCSTVisitor, attribute: cst.Attribute) -> cst.BaseExpression | None:
    """What `self.X`, `cls.X` or `Klass.X` is bound to, where the enclosing class body binds X once."""
    if not isinstance(attribute.value, cst.Name):
        return None
    klass = enclosing_class(rule, attribute)
    if klass is None or attribute.value.value not in ("self", "cls", klass.name.value):
        return None
    found = []
    for statement in klass.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = (
                    [t.target for t in small.targets]
                    if isinstance(small, cst.Assign)
                    else [small.target]
                    if isinstance(small, cst.AnnAssign)
                    else []
                )
                if any(isinstance(t, cst.Name) and t.value == attribute.attr.value for t in targets):
                    found.append(small.value)
    return found[0] if len(found) == 1 else None


def _class_constant(rule: cst.BatchableCSTVisitor, attribute: cst.Attribute) -> Constant | None:
    """`self.X`, `cls.X` or `Klass.X` where the enclosing class body binds X once."""
    value = class_attribute(rule, attribute)
    klass = enclosing_class(rule, attribute) if value is not None else None
    if klass is None:
        return None
    return _with_origin(rule, f"{klass.name.value}.{attribute.attr.value}", value)


def constant(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression) -> Constant | None:
    """A literal, or a name or class attribute bound once to a literal; else None."""
    value = literal(node)
    if value is not None:
        return Constant(value, "", node)
    if isinstance(node, cst.Name):
        return _from_name(rule, node)
    if isinstance(node, cst.Attribute):
        return _class_constant(rule, node)
    return None
