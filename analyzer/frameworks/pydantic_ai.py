"""Pydantic AI: a run's `message_history` fed back from the last result, and what bounds it.

The send (`agent.run(..., message_history=h)`) and the growth by `extend(result.new_messages())`
predate this module and live in the shared analysis. What it adds, checked against
pydantic-ai-slim 1.0.0, 1.107.10 and 2.68.0:

- `result.all_messages()` returns the history that was sent followed by the run's new
  messages (run.py `all_messages`: "Messages from older runs are included"), so `h =
  result.all_messages()` in a chat loop grows `h` every turn (`REPLAYS`).
- Bounds: a history processor replaces the history the run sends and keeps. 1.x takes
  `Agent(history_processors=[...])` (deprecated in late 1.x, which turns it into
  `ProcessHistory` capabilities: _utils.py `consume_deprecated_history_processors_as_capabilities`);
  2.x takes only `Agent(capabilities=[ProcessHistory(fn)])` (capabilities/process_history.py).
  Either on an agent of the module bounds the histories its runs are given.
- Fix, `message_history=h`: `bounded_view(h, last_turns=10)` (compaction/shapes.py reads
  ModelRequest/ModelResponse; the first request, holding the system prompt Pydantic AI sends
  only with an empty history, stays pinned), and a store `h = r.all_messages()` becomes
  `h = [*h, *r.new_messages()]`, since `all_messages()` returns the history that was sent;
  `h.extend(r.new_messages())` already keeps it whole. pydantic-ai-slim 2.68: 30 turns with
  tool calls through a FunctionModel store the same history as the code as written (all but
  the usage counts, which shrink), each call sends at most 31 messages, not 79, and starts
  with the system prompt. (A history processor is no fix here: its result replaces the run's
  history, so `all_messages()` returns the trimmed list.)
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from chatbound.findings import Finding, Fix
from chatbound.fixes.edits import (
    BOUNDED_IMPORT,
    HISTORY_STAYS,
    WINDOW_TURNS,
    arg_at,
    replace_span,
    store_edit,
    stores_of,
    text_at,
)
from chatbound.fixes.index import located, module_index
from chatbound.syntax.messages import callee_name, string
from chatbound.vocabulary.sinks import keyword

REPLAYS = frozenset({"all_messages"})
# A tool's `ctx.deps`: the run's dependencies, one object every tool of the agent is given
# (pydantic-ai-slim 1.0.0 and 2.68.0 _run_context.py `RunContext.deps`); tools all acting on it are one toolkit
TOOL_CONTEXT = ("deps",)
# Tools a run chooses per step (pydantic-ai-slim 2.68.0): an `@agent.tool(prepare=fn)` /
# `tool_plain(prepare=fn)` whose prepare returns None is left out of that step's request (tools.py
# `ToolPrepareFunc`), one with `defer_loading=True` is hidden until tool search reveals it
# (agent/__init__.py `Agent.tool`); `Agent(capabilities=[PrepareTools(fn)])` filters the definitions of
# all of an agent's tools for each step (capabilities/prepare_tools.py).
TOOL_CHOICES = ("prepare", "defer_loading")
ADVICE = {
    "pydantic_ai": f"Send a bounded view: `message_history=bounded_view(history, last_turns={WINDOW_TURNS})` "
    "(`from chatbound.compaction import bounded_view`; it keeps the first request, which holds the system prompt), "
    "and store only the new messages: `history = [*history, *result.new_messages()]` (or "
    "`history.extend(result.new_messages())`), not `result.all_messages()`, which returns the bounded history "
    "that was sent. " + HISTORY_STAYS,
}


def collect(facts) -> None:
    """A history processor on an agent of the module trims every history its runs are given."""
    if not any(i.startswith("pydantic_ai") for i in facts.nodes.imports):
        return
    processors = [c for c in facts.nodes.calls if _processes_history(c)]
    if not processors:
        return
    # a run of this module, or of another module's function given the agent and the history
    for site in (*facts.sinks, *(s for _, s in facts.imported_sites())):
        for sent in site.content if site.framework == "pydantic_ai" else ():
            _trimmed(facts, sent, processors)


def _trimmed(facts, history: cst.BaseExpression, processors: list[cst.Call]) -> None:
    """The history a run is given (as is, or read out of a container it was put in) is trimmed."""
    carried = facts.carried(history)
    storage = facts.storage_of(carried if carried is not None else history)
    if storage is not None:
        facts.history(storage).trims.extend(processors)


def chooses_tools(call: cst.Call) -> bool:
    """`Agent(capabilities=[PrepareTools(fn)])`: the agent's tools are chosen for each step."""
    return _capability(call, "PrepareTools")


def _processes_history(call: cst.Call) -> bool:
    """`Agent(history_processors=[...])` (1.x) or `Agent(capabilities=[ProcessHistory(...)])` (1.x, 2.x)."""
    if keyword(call, "history_processors") is not None:
        return True
    return _capability(call, "ProcessHistory")


def _capability(call: cst.Call, name: str) -> bool:
    capabilities = keyword(call, "capabilities")
    return (
        capabilities is not None
        and isinstance(capabilities.value, (cst.List, cst.Tuple))
        and any(isinstance(e.value, cst.Call) and callee_name(e.value) == name for e in capabilities.value.elements)
    )


def fix(finding: Finding, module: cst.Module, wrapper, lines):
    if finding.properties.get("framework") != "pydantic_ai":
        return None
    return _message_history_view(finding, module, wrapper, lines), ADVICE["pydantic_ai"]


def _given_as_history(finding: Finding, module, wrapper) -> bool:
    """The finding's span is the run's `message_history=` argument, or that entry of a dict of
    options spread into the run (`options = {"message_history": h}` ... `run_sync(q, **options)`)."""
    found = arg_at(wrapper, finding.span)
    if found is not None:
        return found[1].keyword is not None and found[1].keyword.value == "message_history"
    node = located(wrapper).node_at(finding.span)
    entry = module_index(module).parents.get(id(node)) if node is not None else None
    return isinstance(entry, cst.DictElement) and string(entry.key) == "message_history"


def _message_history_view(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`message_history=h` -> `message_history=bounded_view(h, last_turns=10)`, and a store
    `h = r.all_messages()` -> `h = [*h, *r.new_messages()]` (the stored history stays whole)."""
    history = text_at(lines, finding.span)
    if not _given_as_history(finding, module, wrapper) or str(finding.properties.get("expression", "")) != history:
        return None
    stores = stores_of(module, wrapper, " ".join(history.split()), "all_messages")
    if stores is None:
        return None
    fix = replace_span(
        finding,
        module,
        wrapper,
        lines,
        f"bounded_view({history}, last_turns={WINDOW_TURNS})",
        [BOUNDED_IMPORT],
        f"Send bounded_view({history}, last_turns={WINDOW_TURNS}) as the message history (the first request, with the "
        "system prompt, stays)"
        + (
            "; store the run's new messages after it, not all_messages(), so the stored history stays whole"
            if stores
            else "; the stored history is unchanged"
        ),
        safe=True,
    )
    edits = [store_edit(module, wrapper, store, f"[*{history}, *{{r}}.new_messages()]") for store in stores]
    return fix and replace(fix, edits=(*fix.edits, *edits))
