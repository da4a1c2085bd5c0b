"""Pydantic AI: a run's `message_history` fed back from the last result, and what bounds it.

The send (`agent.run(..., message_history=h)`), the growth by `extend(result.new_messages())`
and the fix (`bounded_view` at the send, `h = [*h, *result.new_messages()]`: chatbound.memory_fixes)
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
"""

from __future__ import annotations

import libcst as cst

from ..messages import callee_name
from ..sinks import keyword

REPLAYS = frozenset({"all_messages"})
# A tool's `ctx.deps`: the run's dependencies, one object every tool of the agent is given
# (pydantic-ai-slim 1.0.0 and 2.68.0 _run_context.py `RunContext.deps`); tools all acting on it are one toolkit
TOOL_CONTEXT = ("deps",)


def collect(facts) -> None:
    """A history processor on an agent of the module trims every history its runs are given."""
    if not any(i.startswith("pydantic_ai") for i in facts.nodes.imports):
        return
    processors = [c for c in facts.nodes.calls if _processes_history(c)]
    if not processors:
        return
    for sink in facts.sinks:
        given = keyword(sink.call, "message_history") if sink.framework == "pydantic_ai" else None
        storage = facts.storage_of(given.value) if given is not None else None
        if storage is not None:
            facts.history(storage).trims.extend(processors)


def _processes_history(call: cst.Call) -> bool:
    """`Agent(history_processors=[...])` (1.x) or `Agent(capabilities=[ProcessHistory(...)])` (1.x, 2.x)."""
    if keyword(call, "history_processors") is not None:
        return True
    capabilities = keyword(call, "capabilities")
    return capabilities is not None and isinstance(capabilities.value, (cst.List, cst.Tuple)) and any(
        isinstance(e.value, cst.Call) and callee_name(e.value) == "ProcessHistory" for e in capabilities.value.elements)
