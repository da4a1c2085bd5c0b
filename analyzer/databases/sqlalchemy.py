"""SQLAlchemy 2.1 ORM (`sqlalchemy/orm/query.py`, `sql/selectable.py`).

Reads: `session.query(Model)...` fetched whole (`.all()`, iterated) and `select(Model)...`
run by `session.execute(...)` / `session.scalars(...)`. Bounded: `.limit(N)` anywhere in
the chain, `.first()` / `.one()`. Writes: `session.add(Model(...))` / `add_all([...])`.
Raw SQL through `text(...)` is `chatbound.databases.sql`.
"""

from __future__ import annotations

import libcst as cst

from chatbound.syntax.messages import callee_name

STEPS = frozenset("filter filter_by where order_by join outerjoin options all scalars execute".split())


def read(facts, call: cst.Call) -> str | None:
    node: cst.BaseExpression = call
    while isinstance(node, cst.Call):
        name = callee_name(node)
        if name in ("limit", "first", "one", "one_or_none", "scalar", "get", "fetchmany"):
            return None
        if name in ("query", "select") and node.args and _is_model(node.args[0].value):
            return f"orm:{node.args[0].value.value}"
        if name in ("execute", "scalars") and node.args and isinstance(node.args[0].value, cst.Call):
            node = node.args[0].value
        elif name in STEPS and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None
    return None


def writes(facts, call: cst.Call) -> list[tuple]:
    name = callee_name(call)
    if name not in ("add", "add_all") or not isinstance(call.func, cst.Attribute) or len(call.args) != 1:
        return []
    value = call.args[0].value
    rows = [e.value for e in value.elements] if name == "add_all" and isinstance(value, cst.List) else [value]
    found = []
    for row in rows:
        if isinstance(row, cst.Call) and _is_model(row.func):
            found.append((f"orm:{row.func.value}", "push", tuple(a.value for a in row.args)))
    return found


def _is_model(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value[:1].isupper()
