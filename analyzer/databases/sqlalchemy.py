"""SQLAlchemy 2.1 ORM (`sqlalchemy/orm/query.py`, `sql/selectable.py`).

Reads: `session.query(Model)...` fetched whole (`.all()`, iterated) and `select(Model)...`
run by `session.execute(...)` / `session.scalars(...)` or SQLModel 0.0.44's `Session.exec(...)`
(`sqlmodel/orm/session.py`), also in steps through names (`query = select(...)`, `result =
await db.execute(query)`, `result.scalars().all()`). Bounded: `.limit(N)` anywhere in the
chain, `.first()` / `.one()`. Writes: `session.add(Model(...))` (the row also bound to a name
first) / `add_all([...])`, and Core `session.execute(insert(Model).values(...))`.
Raw SQL through `text(...)` is `chatbound.databases.sql`.
"""

from __future__ import annotations

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.syntax.tree import bound_values

STEPS = frozenset("filter filter_by where order_by join outerjoin options all scalars execute exec".split())


def read(facts, call: cst.Call) -> str | None:
    node: cst.BaseExpression = call
    hops = 0  # names followed to what they were bound from (`result = await db.execute(query)`)
    while True:
        if isinstance(node, cst.Await):
            node = node.expression
            continue
        if isinstance(node, cst.Name) and hops < 3:
            bound, hops = _bound(facts, node), hops + 1
            if bound is None:
                return None
            node = bound
            continue
        if not isinstance(node, cst.Call):
            return None
        name = callee_name(node)
        if name in ("limit", "first", "one", "one_or_none", "scalar", "get", "fetchmany"):
            return None
        if name in ("query", "select") and node.args and _is_model(node.args[0].value):
            return f"orm:{node.args[0].value.value}"
        if (
            name in ("execute", "scalars", "exec")
            and node.args
            and isinstance(node.args[0].value, (cst.Call, cst.Name))
            and isinstance(node.func, cst.Attribute)
        ):
            node = node.args[0].value
        elif name in STEPS and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None


def _bound(facts, name: cst.Name) -> cst.BaseExpression | None:
    """The one value `name` was last bound from before it is read, or None (a parameter, a loop
    target, an unpacking)."""
    values = bound_values(facts, name)
    return values[0] if len(values) == 1 and isinstance(values[0], cst.BaseExpression) else None


def writes(facts, call: cst.Call) -> list[tuple]:
    name = callee_name(call)
    if name in ("execute", "exec") and isinstance(call.func, cst.Attribute) and call.args:
        return _core_insert(facts, call.args[0].value)
    if name not in ("add", "add_all") or not isinstance(call.func, cst.Attribute) or len(call.args) != 1:
        return []
    value = call.args[0].value
    rows = [e.value for e in value.elements] if name == "add_all" and isinstance(value, cst.List) else [value]
    found = []
    for row in rows:
        if isinstance(row, cst.Name):  # `note = Note(...)` ... `session.add(note)`
            row = _bound(facts, row) or row
        if isinstance(row, cst.Call) and _is_model(row.func):
            found.append((f"orm:{row.func.value}", "push", tuple(a.value for a in row.args)))
    return found


def _core_insert(facts, stmt: cst.BaseExpression, hops: int = 0) -> list[tuple]:
    """`session.execute(insert(Model).values(...))`, the statement also through a name: a row (or
    rows) added to the model's table (SQLAlchemy Core `insert`, `sql/dml.py`)."""
    if isinstance(stmt, cst.Name) and hops < 2:
        bound = _bound(facts, stmt)
        return _core_insert(facts, bound, hops + 1) if bound is not None else []
    values: tuple = ()
    while isinstance(stmt, cst.Call) and isinstance(stmt.func, cst.Attribute) and callee_name(stmt) != "insert":
        if callee_name(stmt) == "values":
            values = tuple(a.value for a in stmt.args)
        elif callee_name(stmt) not in ("returning", "on_conflict_do_nothing", "prefix_with"):
            return []
        stmt = stmt.func.value
    if isinstance(stmt, cst.Call) and callee_name(stmt) == "insert" and stmt.args and _is_model(stmt.args[0].value):
        return [(f"orm:{stmt.args[0].value.value}", "push", values)]
    return []


def _is_model(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value[:1].isupper()
