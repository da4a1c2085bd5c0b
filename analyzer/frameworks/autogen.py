"""AutoGen AgentChat (`autogen_agentchat`): an `AssistantAgent` reused across runs.

Checked against autogen-agentchat 0.7.5 and autogen-core 0.7.5:

- `AssistantAgent(...)` without `model_context=` keeps an `UnboundedChatCompletionContext`
  (agents/_assistant_agent.py): every message of every `run` / `run_stream` / `on_messages` is
  added to it and all of it is sent with the system message on each model call, until
  `reset()`. An agent kept between requests (a module name, an attribute) and run again is
  MEMORY-UNBOUNDED-HISTORY.
- Bounds: any `model_context=` (`BufferedChatCompletionContext(buffer_size=N)` keeps every
  message and sends the last N, dropping a leading function result: model_context/
  _buffered_chat_completion_context.py; `TokenLimitedChatCompletionContext`,
  `HeadAndTailChatCompletionContext`, one of the project's own).
"""

from __future__ import annotations

import re

import libcst as cst

from ..edits import call_at, import_of, replace_span, with_keyword
from ..messages import callee_name
from ..sinks import keyword
from .vocabulary import Kept

RUNS = ("run", "run_stream", "on_messages", "on_messages_stream")
TRIGGERS = ((re.compile(rb"\bautogen_agentchat\b"), re.compile(rb"\bAssistantAgent\b")),)  # both: an AgentChat agent
CALLS = frozenset({"AssistantAgent"})
BUFFER = 20  # messages: about 10 exchanges, tool calls counted
ADVICE = {
    "autogen-agent": f"Give the agent a bounded model context: `model_context=BufferedChatCompletionContext("
    f"buffer_size={BUFFER})` (`from autogen_core.model_context import BufferedChatCompletionContext`; it keeps every "
    "message and sends the last ones, never a function result without its call), or "
    "`TokenLimitedChatCompletionContext` for a token budget.",
}


def memories(facts) -> list[Kept]:
    if not any(i.startswith("autogen_agentchat") for i in facts.nodes.imports):
        return []
    runs = {facts.code(c.func.value) for c in facts.nodes.calls
            if callee_name(c) in RUNS and isinstance(c.func, cst.Attribute) and facts.function_of(c) is not None}
    found = []
    for call in facts.nodes.calls:
        if callee_name(call) != "AssistantAgent" or keyword(call, "model_context") is not None:
            continue
        if not any(q.startswith("autogen_agentchat") for q in facts.qualified(call.func)):
            continue
        holder = facts.parent(call)
        targets = [t.target for t in holder.targets] if isinstance(holder, cst.Assign) else []
        kept = [t for t in targets if facts.storage_of(t) is not None and facts.code(t) in runs]
        if kept:
            name = facts.code(kept[0])
            found.append(Kept(call, f"`{name}` is an AssistantAgent kept between runs with its default unbounded "
                              "model context: every run adds to it and each model call sends all of it",
                              ADVICE["autogen-agent"], {"history": "AssistantAgent", "framework": "autogen-agentchat",
                                                        "storage": "framework", "sink": f"{name}.run"}))
    return found


def fix(finding, module: cst.Module, wrapper, lines):
    if finding.properties.get("framework") != "autogen-agentchat":
        return None
    call = call_at(wrapper, finding.span)
    if call is None or not import_of(module, "AssistantAgent").startswith("autogen_agentchat"):
        return None, ADVICE["autogen-agent"]
    fixed = with_keyword(call, "model_context", f"BufferedChatCompletionContext(buffer_size={BUFFER})")
    return replace_span(
        finding, module, wrapper, lines, module.code_for_node(fixed),
        ["from autogen_core.model_context import BufferedChatCompletionContext"],
        f"Send the last {BUFFER} messages of the agent's context (it still keeps every message; a function result "
        "is never sent without its call)",
        safe=True,
    ), ADVICE["autogen-agent"]
