"""LangGraph's message state as a conversation: the history a graph node reads whole
(`state["messages"]`), what grows it, what bounds it, where a value carries all of it, and the
`trim_messages` fix at a node's send.

Checked against langgraph 1.2.24 and langchain-core 1.8.4; the file is named beside each fact
below.

- A node reads the message key (`graphs.py` finds it) whole as `state["messages"]`
  (`state.messages` on a pydantic state); the key's reducer grows it on every turn a checkpointer
  keeps ("checkpoint"), or the LangGraph platform keeps for a graph `langgraph.json` serves
  ("platform"). A graph that runs tools puts tool traffic in it, which a count window can split.
- Bounds: a trimming call at the send (`trim_messages`), a slice, or a node returning
  `RemoveMessage(...)` (add_messages deletes those ids: how summarization nodes shrink it) or
  `Overwrite(...)` (types.py: replaces an `operator.add` list).
- `state_messages(facts, expr)`: `state["messages"]` (or `chat_history`, `history`) whole inside
  `expr`, which a handoff (`supervisors.py`) passes on.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from chatbound.findings import Span
from chatbound.fixes.edits import TRIM_IMPORTS, replace_span, text_at
from chatbound.frameworks.langgraph.graphs import DEPLOYMENT_FILE, Graph, _state_param, graph, state_key
from chatbound.syntax.messages import callee_name, is_whole_slice, slice_of, string
from chatbound.syntax.visitors import children
from chatbound.vocabulary.facts import Storage

KINDS = {
    "checkpoint": "graph state a checkpointer keeps for each thread (every invoke on the thread adds to it)",
    "platform": "graph state the LangGraph platform keeps for each thread of a graph `langgraph.json` serves "
    "(every run on the thread adds to it)",
}
HANDOFF_KEYS = ("messages", "chat_history", "history")
TRIM = (
    'trim_messages({messages}, strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, '
    'start_on="human", include_system=True)'
)
NODE_ADVICE = (
    'Trim what the node sends, not what the checkpointer keeps: `llm.invoke(trim_messages(state["messages"], '
    'strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, start_on="human", '
    "include_system=True))` (`from langchain_core.messages import trim_messages`), or a summarization node that "
    "returns `RemoveMessage`s for what it folded into a summary. The thread keeps every message."
)
ADVICE = {"checkpoint": NODE_ADVICE, "platform": NODE_ADVICE}


# --- storages and their histories ----------------------------------------------------------


def storage(facts, expr: cst.CSTNode) -> Storage | None:
    """`state["messages"]` / `state.messages` / `state.get("messages", [])`, where `state` is the state a graph node
    is given; also a list key a node writes back grown (`graphs._rewritten`)."""
    key, base = state_key(facts, expr)
    if key is None or not isinstance(base, cst.Name):
        return None
    found = graph(facts)
    if found is None or key not in found.keys and key not in found.rewritten:
        return None
    param = facts.assignment_before(base)
    function = facts.function_of(param) if isinstance(param, cst.Param) else None
    if function is None or function.name.value not in found.nodes or _state_param(function) is not param:
        return None
    if found.served is not None and function.name.value not in found.served and _platform_only(found):
        return (
            None  # a node of another graph of the module (a subgraph run per Send): the platform keeps no thread of it
        )
    builders = found.builders.get(function.name.value)
    if builders and builders <= found.one_run:
        return Storage(f"graph state.{key} of one run", "graph", f'state["{key}"]')  # no thread gets a second turn
    return _storage(found, key)


def _storage(found: Graph, key: str) -> Storage:
    kind = "platform" if _platform_only(found) else "checkpoint" if found.checkpointers else "graph"
    return Storage(f"graph state.{key}", kind, f'state["{key}"]')


def _platform_only(found: Graph) -> bool:
    return bool(found.checkpointers) and all(getattr(c, "label", "") == DEPLOYMENT_FILE for c in found.checkpointers)


def collect(facts) -> None:
    """Each message key's history: grown by its reducer on every turn a checkpointer keeps,
    trimmed by the `RemoveMessage`s a node returns, holding tool traffic where tools run."""
    found = graph(facts)
    if found is None or not found.nodes:
        return
    removals = [c for c in facts.nodes.calls if callee_name(c) in ("RemoveMessage", "Overwrite")]
    for key in found.keys:
        history = facts.history(_storage(found, key))
        history.roles.add("message")
        history.tool_traffic = history.tool_traffic or found.tools
        history.trims.extend(removals)
        if found.checkpointers:
            history.growth.extend(found.reducers)
            history.keepers.extend(found.checkpointers)
            history.growth_note = "the `add_messages` reducer" if found.adds_messages else "the `operator.add` reducer"
    for key, returned in found.rewritten.items():  # a plain list channel a checkpointed node writes back grown
        facts.history(_storage(found, key)).growth.extend(returned)


def state_messages(facts, expr: cst.CSTNode, depth: int = 0) -> cst.CSTNode | None:
    """`state["messages"]` / `state.messages` whole inside `expr` (through locals, lists, `+`),
    in a module that imports LangGraph."""
    if depth > 4 or graph(facts) is None:
        return None
    if isinstance(expr, cst.Subscript):
        key = expr.slice[0].slice if len(expr.slice) == 1 else None
        if isinstance(key, cst.Index) and string(key.value) in HANDOFF_KEYS and isinstance(expr.value, cst.Name):
            return expr
        if slice_of(expr) is not None and is_whole_slice(expr):
            return state_messages(facts, expr.value, depth + 1)
        return None
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in HANDOFF_KEYS and isinstance(expr.value, cst.Name) and expr.value.value == "state":
            return expr
        return None
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        return state_messages(facts, value, depth + 1) if isinstance(value, cst.BaseExpression) else None
    if isinstance(
        expr,
        (cst.Dict, cst.List, cst.Tuple, cst.DictElement, cst.Element, cst.StarredElement, cst.Arg, cst.BinaryOperation),
    ):
        for child in children(expr):
            found = state_messages(facts, child, depth)
            if found is not None:
                return found
    return None


# --- the fix at a node's send ----------------------------------------------------------------


def _trimmed_send(finding, module, wrapper, lines):
    """`llm.invoke(state["messages"])` -> `llm.invoke(trim_messages(state["messages"], ...))`:
    only where the history is itself a call's argument or an item of one (not text)."""
    if not _sent_as_items(wrapper, finding.span):
        return None
    read = text_at(lines, finding.span)
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        TRIM.format(messages=read),
        TRIM_IMPORTS,
        f"Send trim_messages({read}, ...): the last whole turns under 4,000 tokens, the system message kept; "
        "the checkpointer still keeps every message",
        safe=True,
    )


def _sent_as_items(wrapper, span) -> bool:
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        if isinstance(node, cst.Arg):
            items = [node.value]
            if isinstance(node.value, (cst.List, cst.Tuple)):
                items += [e.value for e in node.value.elements]
            elif isinstance(node.value, cst.BinaryOperation):
                items += [node.value.left, node.value.right]
            if any(_span(positions[item]) == span for item in items if item in positions):
                return True
    return False


def _span(where) -> Span:
    return Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
