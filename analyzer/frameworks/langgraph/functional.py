"""LangGraph's functional API: an `@entrypoint` workflow that saves its conversation for its
next run on the thread, and sends all of it.

Checked against langgraph 1.2.24:

- `@entrypoint(checkpointer=saver)` makes the function a graph whose `__previous__` channel (a
  `LastValue`) holds what its last run on the thread saved: the return value, or the `save` of
  `entrypoint.final(value=..., save=...)` (func/__init__.py `_pluck_save_value`). The
  checkpointer keeps the channel per thread and gives it back as `previous` on the next run
  (pregel/_algo.py). Without a checkpointer nothing is kept.
- The function receives it through a parameter named `previous`: injected by name
  (_internal/_runnable.py `KWARGS_CONFIG_KEYS`).
- A chat workflow saves `add_messages(previous, inputs)` with the reply (or `previous + [...]`,
  `[*previous, ...]`) and sends that list to its model, directly or through a `@task`: every
  run sends the whole thread again.
- Bounds: a trimming call (`trim_messages`, `bounded_view`) or a slice between `previous` and
  the send, or a slice of what is saved. The fix is LangGraph's own: `trim_messages` at the
  send (`chatbound.frameworks.langgraph.state`, storage "checkpoint"), which leaves the save whole.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.frameworks.langgraph.state import NODE_ADVICE
from chatbound.frameworks.vocabulary import Kept
from chatbound.syntax.messages import callee_name, is_whole_slice
from chatbound.syntax.tree import walk
from chatbound.vocabulary.sinks import keyword, positional

TRIGGERS = (re.compile(rb"@entrypoint\s*\("),)
CALLS = frozenset({"entrypoint"})
ENTRYPOINT = "langgraph.func.entrypoint"
ADDS = frozenset({"add_messages", "list", "tuple"})  # calls whose result holds all of their arguments' messages
MAX_DEPTH = 6  # locals followed back from a send to `previous`


def memories(facts) -> list[Kept]:
    """Each send, in a checkpointed `@entrypoint` function, of a list that holds all of
    `previous` where the function saves that list back with the new turn."""
    if not any(i.startswith("langgraph") for i in facts.nodes.imports):
        return []
    found = []
    for function in facts.nodes.functions:
        saver = _checkpointer(facts, function)
        previous = _previous(function)
        if saver is None or previous is None:
            continue
        saves = [save for save in _saves(facts, function) if _grows(facts, save, previous)]
        if not saves:
            continue
        for site, sink in facts.sites():
            if facts.function_of(site) is not function:
                continue
            sent = next((c for c in sink.content if _carries(facts, c, previous, 0)), None)
            if sent is not None:
                found.append(_kept(facts, function, saver, sent, saves[0], sink.api))
    return found


def _kept(facts, function: cst.FunctionDef, saver: cst.Arg, sent: cst.BaseExpression, save, api: str) -> Kept:
    name = function.name.value
    return Kept(
        sent,
        f"`{facts.code(sent)}` holds `previous`, all that the `@entrypoint(checkpointer={facts.code(saver.value)})` "
        f"workflow `{name}` saved on its last run on the thread, which each run saves back with the new turn, "
        f"and is sent whole to {api}",
        NODE_ADVICE,
        {"framework": "langgraph", "history": "previous", "storage": "checkpoint", "sink": api},
        ((save, "saved back with the new turn here"),),
    )


def _checkpointer(facts, function: cst.FunctionDef) -> cst.Arg | None:
    """The `checkpointer=` of the function's `@entrypoint(...)` (not None or False)."""
    for decorator in function.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Call) and ENTRYPOINT in facts.qualified(call.func):
            saver = keyword(call, "checkpointer")
            if saver is not None and not (isinstance(saver.value, cst.Name) and saver.value.value in ("None", "False")):
                return saver
    return None


def _previous(function: cst.FunctionDef) -> cst.Param | None:
    params = function.params
    return next((p for p in (*params.params, *params.kwonly_params) if p.name.value == "previous"), None)


def _saves(facts, function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What each `return` of the function (not of a nested one) saves for the next run."""
    found = []
    for node in walk(function.body):
        if isinstance(node, cst.Return) and node.value is not None and facts.function_of(node) is function:
            value = node.value
            if isinstance(value, cst.Call) and callee_name(value) == "final":
                saved = keyword(value, "save") or positional(value, 1)
                value = saved.value if saved is not None else None
            if value is not None:
                found.append(value)
    return found


def _grows(facts, save: cst.BaseExpression, previous: cst.Param) -> bool:
    """The save holds all of `previous` and more (not `return previous` as it came)."""
    unchanged = isinstance(save, cst.Name) and facts.assignment_before(save) is previous
    return not unchanged and _carries(facts, save, previous, 0)


def _carries(facts, expr: cst.CSTNode, previous: cst.Param, depth: int) -> bool:
    """Whether `expr` holds all of `previous`: read as it is, through the locals it was bound
    from, or in a list, sum or `add_messages` that adds to it; never through any other call (a
    trimming one) or a slice."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        bound = facts.assignment_before(expr)
        return (
            bound is previous or isinstance(bound, cst.BaseExpression) and _carries(facts, bound, previous, depth + 1)
        )
    if isinstance(expr, cst.Await):
        return _carries(facts, expr.expression, previous, depth + 1)
    if isinstance(expr, cst.Subscript):
        return is_whole_slice(expr) and _carries(facts, expr.value, previous, depth + 1)
    if isinstance(expr, cst.BooleanOperation):  # `previous or []`
        return any(_carries(facts, side, previous, depth + 1) for side in (expr.left, expr.right))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return any(_carries(facts, side, previous, depth + 1) for side in (expr.left, expr.right))
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(
            isinstance(e, cst.StarredElement) and _carries(facts, e.value, previous, depth + 1) for e in expr.elements
        )
    if isinstance(expr, cst.Call):
        return callee_name(expr) in ADDS and any(
            a.keyword is None and _carries(facts, a.value, previous, depth + 1) for a in expr.args
        )
    return False
