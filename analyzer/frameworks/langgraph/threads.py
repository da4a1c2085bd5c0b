"""Which conversation a run of a graph continues: the `thread_id` of its config.

Checked against langgraph 1.2.24: a graph compiled with a checkpointer keys every checkpoint
by `config["configurable"]["thread_id"]` (pregel/main.py reads `config[CONF][CONFIG_KEY_THREAD_ID]`),
so two runs with the same thread id continue one conversation. A saver the run builds for
itself in memory (`InMemorySaver()`, its old name `MemorySaver()`, checkpoint/memory) is gone
after the run; any other (a database saver, one kept at module level) lasts.
"""

from __future__ import annotations

import libcst as cst

from chatbound.frameworks.langgraph.graphs import RUNS
from chatbound.frameworks.langgraph.prebuilt import AGENTS
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import entry, keyword, positional

THREAD_KEYS = ("thread_id",)
FRESH_SAVERS = frozenset({"InMemorySaver", "MemorySaver"})


def conversation_key(facts, call: cst.Call) -> cst.BaseExpression | None:
    """The expression naming the thread `call` continues, when `call` runs a graph compiled
    with a lasting checkpointer in this module (`graph.invoke(x, config={"configurable":
    {"thread_id": tid}})`); None otherwise."""
    if callee_name(call) not in RUNS or not isinstance(call.func, cst.Attribute):
        return None
    config = keyword(call, "config") or positional(call, 1)
    key = entry(config.value if config else None, "configurable", facts.assignment_before)
    thread = next(
        (found for name in THREAD_KEYS if (found := entry(key, name, facts.assignment_before)) is not None), None
    )
    if thread is None or not _checkpointed(facts, call.func.value, frozenset()):
        return None
    return thread


def _checkpointed(facts, expr: cst.CSTNode | None, seen: frozenset) -> bool:
    """`expr` is a graph compiled here with a lasting checkpointer: `builder.compile(checkpointer=
    saver)` or a prebuilt agent given one (`create_react_agent(..., checkpointer=saver)`), a name
    bound to one, or a call of a function of this module returning one."""
    if isinstance(expr, cst.Name) and expr.value not in seen:
        return _checkpointed(facts, facts.assignment_before(expr), seen | {expr.value})
    if not isinstance(expr, cst.Call):
        return False
    name = callee_name(expr)
    if name == "compile" or name in AGENTS and any(q.startswith(AGENTS[name]) for q in facts.qualified(expr.func)):
        saver = keyword(expr, "checkpointer")  # a prebuilt agent takes it as `compile` does
        return saver is not None and _lasting(facts, saver.value)
    return any(
        _checkpointed(facts, value, seen | {function.name.value})
        for function in facts.callees(expr)
        if function.name.value not in seen
        for value in facts.returns(function)
    )


def _lasting(facts, saver: cst.BaseExpression) -> bool:
    """Not `None`/`False`, and not an in-memory saver made by the function that runs the graph."""
    if isinstance(saver, cst.Name) and saver.value in ("None", "False"):
        return False
    value = facts.assignment_before(saver) if isinstance(saver, cst.Name) else saver
    fresh = isinstance(value, cst.Call) and callee_name(value) in FRESH_SAVERS
    return not (fresh and facts.function_of(value) is not None)
