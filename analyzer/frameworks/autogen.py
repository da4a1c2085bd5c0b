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
- Teams (`RoundRobinGroupChat`, `SelectorGroupChat`, `Swarm`): each participant's container
  buffers every message of the group and hands the buffer to the agent's `on_messages_stream`
  on its turn (teams/_group_chat/_chat_agent_container.py), so an `AssistantAgent` with the
  default context adds the whole shared thread to its own and sends all of it. A team kept
  between requests and run again continues its thread until `reset()`
  (_base_group_chat.py `run`, `reset`): each such participant is AGENT-OVERSIZED-HANDOFF.
"""

from __future__ import annotations

import re

import libcst as cst

from ..edits import call_at, import_of, replace_span, with_keyword
from ..messages import callee_name
from ..sinks import keyword
from .vocabulary import Handoff, Kept

RUNS = ("run", "run_stream", "on_messages", "on_messages_stream")
TRIGGERS = ((re.compile(rb"\bautogen_agentchat\b"), re.compile(rb"\bAssistantAgent\b")),)  # both: an AgentChat agent
CALLS = frozenset({"AssistantAgent"})
TEAMS = ("RoundRobinGroupChat", "SelectorGroupChat", "Swarm")
HANDOFF_TRIGGERS = (re.compile(rb"\b(?:RoundRobinGroupChat|SelectorGroupChat|Swarm)\s*\("),)
HANDOFF_CALLS = frozenset(TEAMS)
BUFFER = 20  # messages: about 10 exchanges, tool calls counted
TEAM_ADVICE = (
    f"Bound what each participant sends: `model_context=BufferedChatCompletionContext(buffer_size={BUFFER})` on "
    "the agent (it still receives the whole thread, and sends the last messages), `await team.reset()` when a "
    "conversation ends, or call the specialist as a tool (`AgentTool(agent)`), which gets only the task it is given."
)
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
        name = _kept_as(facts, call, runs)
        if name is not None:
            found.append(Kept(call, f"`{name}` is an AssistantAgent kept between runs with its default unbounded "
                              "model context: every run adds to it and each model call sends all of it",
                              ADVICE["autogen-agent"], {"history": "AssistantAgent", "framework": "autogen-agentchat",
                                                        "storage": "framework", "sink": f"{name}.run"}))
    return found


def handoffs(facts) -> list[Handoff]:
    """Participants with the default context of a team kept between requests and run again."""
    if not any(i.startswith("autogen_agentchat") for i in facts.nodes.imports):
        return []
    runs, resets = _runs(facts), {facts.code(c.func.value) for c in facts.nodes.calls
                                  if callee_name(c) == "reset" and isinstance(c.func, cst.Attribute)}
    agents = {facts.code(t.target): node.value for node in facts.nodes.assigns if isinstance(node, cst.Assign)
              and isinstance(node.value, cst.Call) and callee_name(node.value) == "AssistantAgent"
              for t in node.targets}
    found = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name not in TEAMS or not any(q.startswith("autogen_agentchat") for q in facts.qualified(call.func)):
            continue
        team = _kept_as(facts, call, runs)
        listed = keyword(call, "participants") or (call.args[0] if call.args and call.args[0].keyword is None else None)
        if team is None or team in resets or listed is None or not isinstance(listed.value, (cst.List, cst.Tuple)):
            continue
        for element in listed.value.elements:
            agent = agents.get(facts.code(element.value))
            if agent is not None and keyword(agent, "model_context") is None:
                who = facts.code(element.value)
                found.append(Handoff(element.value, f"`{who}` in `{name}([...])` receives every message of the "
                                     f"team's thread, and `{team}` continues across runs: with its default unbounded "
                                     "model context each of its model calls sends the whole shared thread "
                                     "(autogen-agentchat 0.7.5).", TEAM_ADVICE))
    return found


def _runs(facts) -> set[str]:
    """Receivers of a run inside a function or a loop: objects run once per request or turn."""
    return {facts.code(c.func.value) for c in facts.nodes.calls
            if callee_name(c) in RUNS and isinstance(c.func, cst.Attribute)
            and (facts.function_of(c) is not None or facts.loops_of(c))}


def _kept_as(facts, call: cst.Call, runs: set[str]) -> str | None:
    """The name or attribute `call` is kept in between requests and run again from, or None."""
    holder = facts.parent(call)
    targets = [t.target for t in holder.targets] if isinstance(holder, cst.Assign) else []
    kept = [t for t in targets if facts.storage_of(t) is not None and facts.code(t) in runs]
    return facts.code(kept[0]) if kept else None


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
