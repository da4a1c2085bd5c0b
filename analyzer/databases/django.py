"""The Django ORM (Django 5.x, `django/db/models/query.py`): a model's default manager
`Model.objects`.

Reads: `Model.objects.filter(...)` / `.all()` / `.order_by(...)` / `.exclude(...)` /
`.values(...)` chains, whole. Bounded: a slice with an upper bound (`[:20]`, on a queryset
ordered newest-first: `order_by("-created")[:20]`; the slice is a bounded view to the chat
facts), `.first()`, `.last()`, `.get()`.
Writes: `Model.objects.create(...)` / `acreate` / `bulk_create([...])`.
"""

from __future__ import annotations

import libcst as cst

from chatbound.syntax.messages import callee_name

STEPS = frozenset(
    "filter exclude all order_by values values_list select_related prefetch_related only defer "
    "reverse distinct using".split()
)


def read(facts, call: cst.Call) -> str | None:
    node: cst.BaseExpression = call
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and callee_name(node) in STEPS:
        node = node.func.value
        model = _manager_of(node)
        if model is not None:
            return f"orm:{model}"
    return None


def writes(facts, call: cst.Call) -> list[tuple]:
    name = callee_name(call)
    if not isinstance(call.func, cst.Attribute) or _manager_of(call.func.value) is None:
        return []
    key = f"orm:{_manager_of(call.func.value)}"
    if name in ("create", "acreate"):
        return [(key, "push", tuple(a.value for a in call.args))]
    if name in ("bulk_create", "abulk_create") and call.args:
        return [(key, "push", (call.args[0].value,))]
    return []


def _manager_of(node: cst.BaseExpression) -> str | None:
    """`Message.objects` -> "Message"."""
    if isinstance(node, cst.Attribute) and node.attr.value == "objects" and isinstance(node.value, cst.Name):
        return node.value.value
    return None
