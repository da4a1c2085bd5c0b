"""Which calls read a database history whole and which write to it: each store's module
asked in turn (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from chatbound.databases import django, mongo, redis, sql, sqlalchemy
from chatbound.syntax.messages import callee_name, is_whole_slice, slice_of

MODULES = (mongo, redis, sql, sqlalchemy, django)


@dataclass(frozen=True)
class Write:
    """A write to a store: `push` adds `values` (one turn), `set` replaces the history with
    `values[0]`, `trim` drops the oldest items (the store bounds itself)."""

    key: str
    how: str
    values: tuple[cst.CSTNode, ...] = ()


def read(facts, expr: cst.CSTNode) -> str | None:
    """The key of the store `expr` reads whole (seen through `await`, `json.loads(...)` and
    `... or default`), or None."""
    while True:
        if isinstance(expr, cst.Await):
            expr = expr.expression
        elif isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            expr = expr.left
        elif (
            isinstance(expr, cst.Call)
            and callee_name(expr) in ("loads", "decode")
            and (expr.args or isinstance(expr.func, cst.Attribute))
        ):
            expr = expr.args[0].value if callee_name(expr) == "loads" and expr.args else expr.func.value
        else:
            break
    if not isinstance(expr, cst.Call) or _bounded_further(facts, expr):
        return None
    for module in MODULES:
        key = module.read(facts, expr)
        if key is not None:
            return key
    return None


# steps that keep only part of what a read chain returns: `.limit(N)` (pymongo, SQLAlchemy),
# `.first()`, `.fetchmany(N)`, motor's `to_list(N)`
BOUNDING_STEPS = frozenset("limit first last one one_or_none fetchone fetchmany scalar get".split())


def _bounded_further(facts, call: cst.Call) -> bool:
    """`coll.find(q)` inside `coll.find(q).sort(...).limit(20)`: the chain reads only part."""
    node: cst.CSTNode = call
    while True:
        attribute = facts.parent(node)
        if isinstance(attribute, cst.Subscript) and attribute.value is node and slice_of(attribute) is not None:
            return not is_whole_slice(attribute)  # `Message.objects.filter(...)[:20]`
        outer = facts.parent(attribute) if isinstance(attribute, cst.Attribute) else None
        if not (isinstance(outer, cst.Call) and outer.func is attribute):
            return False
        name = attribute.attr.value
        if name in BOUNDING_STEPS or (
            name == "to_list"
            and outer.args
            and not (isinstance(outer.args[0].value, cst.Name) and outer.args[0].value.value == "None")
        ):
            return True
        node = outer


def writes(facts, call: cst.Call) -> list[Write]:
    return [Write(*w) for module in MODULES for w in module.writes(facts, call)]
