"""MongoDB through pymongo 4.20 (`pymongo/synchronous/collection.py`, `cursor_shared.py`) and
motor 3.7 / pymongo's async API (`to_list(length=None)`).

Reads: `coll.find_one(filter)` is a document whose list fields (`doc["history"]`) hold a
chat; `coll.find(filter)` with any cursor steps (`.sort(...)`, `.to_list()`) is every
matching document, one per turn. Bounded: `.limit(N)` or `find(..., limit=N)`,
`to_list(N)`, a `{"history": {"$slice": -N}}` projection.
Writes: `insert_one`/`insert_many` add documents; `update_one`/`update_many`/
`find_one_and_update` with `$push`/`$addToSet` add to a field (`$each` with `$slice: -N`, or
`$pop`, trims it), with `$set` replace it.
"""

from __future__ import annotations

import libcst as cst

from chatbound.syntax.messages import callee_name, string

CURSOR_STEPS = frozenset("sort skip batch_size hint max_time_ms allow_disk_use collation comment to_list".split())
PUSHES = ("$push", "$addToSet")


def read(facts, call: cst.Call) -> str | None:
    while isinstance(call.func, cst.Attribute) and callee_name(call) in CURSOR_STEPS | {"limit"}:
        if callee_name(call) == "limit" or (callee_name(call) == "to_list" and _length(call) is not None):
            return None
        if not isinstance(call.func.value, cst.Call):
            return None
        call = call.func.value
    name = callee_name(call)
    if name not in ("find", "find_one") or not isinstance(call.func, cst.Attribute):
        return None
    if any(a.keyword is not None and a.keyword.value == "limit" for a in call.args) or _slices(facts, call):
        return None
    if name == "find" and not _is_query(call):
        return None  # `text.find("x")`: a string, not a collection
    return f"mongo:{collection(facts, call.func.value)}"


def writes(facts, call: cst.Call) -> list[tuple]:
    name = callee_name(call)
    if not isinstance(call.func, cst.Attribute) or not call.args:
        return []
    if name in ("insert_one", "insert_many"):
        coll = collection(facts, call.func.value)
        document = call.args[0].value
        values = tuple(e.value for e in document.elements) if isinstance(document, cst.List) else (document,)
        return [(f"mongo:{coll}", "push", values)]
    if name not in ("update_one", "update_many", "find_one_and_update") or len(call.args) < 2:
        return []
    coll = collection(facts, call.func.value)
    found = []
    for operator, fields in _operators(facts, call.args[1].value):
        for field, value in fields:
            key = f"mongo:{coll}[{field!r}]"
            if operator in PUSHES:
                each = _entry(value, "$each") if isinstance(value, cst.Dict) else None
                if isinstance(each, cst.List):
                    found.append((key, "push", tuple(e.value for e in each.elements)))
                else:
                    found.append((key, "push", (each or value,)))
                if isinstance(value, cst.Dict) and _entry(value, "$slice") is not None:
                    found.append((key, "trim", ()))
            elif operator == "$set":
                found.append((key, "set", (value,)))
            elif operator == "$pop":
                found.append((key, "trim", ()))
    return found


def collection(facts, receiver: cst.CSTNode, depth: int = 0) -> str:
    """The collection's name where the code shows it (`db["chats"]`, `db.chats`,
    `db.get_collection("chats")`, through a name or a `self.` attribute), else its spelling."""
    from chatbound.syntax.tree import bound_values

    if (
        isinstance(receiver, cst.Subscript)
        and len(receiver.slice) == 1
        and isinstance(receiver.slice[0].slice, cst.Index)
    ):
        name = string(receiver.slice[0].slice.value)
        if name is not None:
            return name
    if isinstance(receiver, cst.Call) and callee_name(receiver) == "get_collection" and receiver.args:
        name = string(receiver.args[0].value)
        if name is not None:
            return name
    values = bound_values(facts, receiver) if depth < 3 else []
    if len(values) == 1:
        return collection(facts, values[0], depth + 1)
    if isinstance(receiver, cst.Attribute) and not (
        isinstance(receiver.value, cst.Name) and receiver.value.value in ("self", "cls")
    ):
        return receiver.attr.value
    return facts.code(receiver)


def _is_query(call: cst.Call) -> bool:
    """`find({...})` / `find(filter=...)` / `find()`: a query document, not a substring."""
    if not call.args:
        return True
    first = call.args[0]
    return first.keyword is not None or not isinstance(
        first.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    )


def _length(call: cst.Call) -> cst.BaseExpression | None:
    """`to_list(N)`: at most N documents; `to_list()` / `to_list(None)` / `to_list(length=None)` all."""
    arg = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "length"), None)
    return None if arg is None or (isinstance(arg, cst.Name) and arg.value == "None") else arg


def _slices(facts, call: cst.Call) -> bool:
    """A projection that keeps only part of a list field: `{"history": {"$slice": -20}}`."""
    projection = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "projection"), None)
    positional = [a.value for a in call.args if a.keyword is None]
    if projection is None and len(positional) > 1:
        projection = positional[1]
    return projection is not None and "$slice" in facts.code(projection)


def _operators(facts, update: cst.CSTNode):
    """(operator, [(field, value)]) of an update document, through a name bound to one."""
    if isinstance(update, cst.Name):
        from chatbound.syntax.tree import bound_values

        values = bound_values(facts, update)
        update = values[0] if values else update
    if not isinstance(update, cst.Dict):
        return
    for element in update.elements:
        operator = string(element.key) if isinstance(element, cst.DictElement) else None
        if operator is not None and isinstance(element.value, cst.Dict):
            yield (
                operator,
                [
                    (string(e.key), e.value)
                    for e in element.value.elements
                    if isinstance(e, cst.DictElement) and string(e.key) is not None
                ],
            )


def _entry(document: cst.Dict, key: str) -> cst.BaseExpression | None:
    return next((e.value for e in document.elements if isinstance(e, cst.DictElement) and string(e.key) == key), None)
