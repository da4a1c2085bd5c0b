"""Redis through redis-py 8.1 (`redis/commands/core.py`).

Reads: `r.get(key)` / `r.hget(name, key)` on a client built by `redis.Redis(...)`,
`redis.from_url(...)` or `redis.asyncio` (usually under `json.loads`), and
`r.lrange(key, 0, -1)`, the whole list. Bounded: `lrange(key, -N, -1)` or any other range.
Writes: `set`/`setex`/`hset` put a value back whole; `rpush`/`lpush` add items; `ltrim`
keeps a fixed range (the store bounds itself).
"""

from __future__ import annotations

import libcst as cst

from chatbound.syntax.messages import callee_name


def read(facts, call: cst.Call) -> str | None:
    name = callee_name(call)
    if not isinstance(call.func, cst.Attribute) or not call.args:
        return None
    if name == "lrange" and len(call.args) == 3:
        start, end = (a.value for a in call.args[1:])
        whole = _number(facts, start) == 0 and _number(facts, end) == -1
        return f"redis:{_key(facts, call.args[0].value)}" if whole else None
    if name == "get" and len(call.args) == 1 and _is_client(facts, call.func.value):
        return f"redis:{_key(facts, call.args[0].value)}"
    if name == "hget" and len(call.args) == 2 and _is_client(facts, call.func.value):
        return f"redis:{_key(facts, call.args[0].value)}[{_key(facts, call.args[1].value)}]"
    return None


WRITES = frozenset("rpush lpush ltrim set setex hset".split())


def writes(facts, call: cst.Call) -> list[tuple]:
    name = callee_name(call)
    if (
        name not in WRITES
        or not isinstance(call.func, cst.Attribute)
        or not call.args
        or any(a.star for a in call.args)
    ):
        return []
    key = f"redis:{_key(facts, call.args[0].value)}"
    values = tuple(a.value for a in call.args[1:] if a.keyword is None)
    if name in ("rpush", "lpush"):
        return [(key, "push", values)]
    if name == "ltrim":
        return [(key, "trim", ())]
    if not _is_client(facts, call.func.value):
        return []
    if name == "set" and len(values) == 1:
        return [(key, "set", values)]
    if name == "setex" and len(values) == 2:
        return [(key, "set", values[1:])]
    if name == "hset" and len(values) == 2:
        return [(f"{key}[{_key(facts, values[0])}]", "set", values[1:])]
    return []


def _key(facts, expr: cst.BaseExpression) -> str:
    """A key as the code spells it, through a local bound to a string (`key = f"chat:{uid}"`)."""
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation)):
            return facts.code(value)
    return facts.code(expr)


def _is_client(facts, receiver: cst.BaseExpression) -> bool:
    return any(n.split(".")[0] in ("redis", "aioredis") for n in facts.client_of(receiver))


def _number(facts, node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return -int(node.expression.value)
    return None
