"""AutoGen AgentChat (`autogen_agentchat`): an `AssistantAgent` reused across runs.

Checked against autogen-agentchat 0.7.5 and autogen-core 0.7.5:

- `AssistantAgent(...)` without `model_context=` keeps an `UnboundedChatCompletionContext`
  (agents/_assistant_agent.py): every message of every `run` / `run_stream` / `on_messages` is
  added to it and all of it is sent with the system message on each model call, until
  `reset()`. An agent kept between requests (a module name, an attribute) and run again is
  MEMORY-UNBOUNDED-HISTORY.
- Bounds: any `model_context=` (`BufferedChatCompletionContext(buffer_size=N)` keeps every
  message and sends the last N, dropping a leading function result: model_context/
  _buffered_chat_completion_context.py; `HeadAndTailChatCompletionContext` the same at both
  ends, a trailing function call dropped from the head; `TokenLimitedChatCompletionContext`,
  one of the project's own). The fix is the buffered one: `TokenLimitedChatCompletionContext`
  pops messages from the middle until the count fits (_token_limited_chat_completion_context.py
  `get_messages`), which can send a function call without its result or a result without
  its call, a request the OpenAI API rejects.
- Teams (`RoundRobinGroupChat`, `SelectorGroupChat`, `Swarm`): each participant's container
  buffers every message of the group and hands the buffer to the agent's `on_messages_stream`
  on its turn (teams/_group_chat/_chat_agent_container.py), so an `AssistantAgent` with the
  default context adds the whole shared thread to its own and sends all of it. A team kept
  between requests and run again continues its thread until `reset()`
  (_base_group_chat.py `run`, `reset`): each such participant is AGENT-OVERSIZED-HANDOFF.
  `MagenticOneGroupChat` and `GraphFlow` use the same containers: the orchestrator and the
  graph manager broadcast every response to the group topic (_magentic_one_orchestrator.py,
  _graph/_digraph_group_chat.py); `MessageFilterAgent` is the participant that filters.
  Its fix is the same buffered context on the participant's `AssistantAgent(...)`: the team
  still keeps and hands over the whole thread, the participant sends its last messages.
  Unsafe, unlike the single agent's: in a long team run (many participants, a high
  `max_turns`) the task that opened the run can leave the window while the run goes on.
- Kept between requests: in a module name or an attribute, an entry of a dict or session
  (`sessions[sid] = agent`, `cl.user_session.set("agent", agent)`), or rebuilt on each request
  from the state the previous one saved: `save_state()` returns the model context's every
  message and `load_state()` puts them back (_assistant_agent.py `save_state`, `load_state`;
  a team's state holds each participant's and the thread: _base_group_chat.py `save_state`).
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst

from chatbound.findings import Span
from chatbound.fixes.edits import call_at, import_of, keyword_added, replace_span
from chatbound.frameworks.vocabulary import Handoff, Kept
from chatbound.syntax.messages import callee_name, string
from chatbound.vocabulary.sinks import keyword

RUNS = ("run", "run_stream", "on_messages", "on_messages_stream")
TRIGGERS = ((re.compile(rb"\bautogen_agentchat\b"), re.compile(rb"\bAssistantAgent\b")),)  # both: an AgentChat agent
CALLS = frozenset({"AssistantAgent"})
TEAMS = ("RoundRobinGroupChat", "SelectorGroupChat", "Swarm", "MagenticOneGroupChat", "GraphFlow")
HANDOFF_TRIGGERS = (
    re.compile(rb"\b(?:RoundRobinGroupChat|SelectorGroupChat|Swarm|MagenticOneGroupChat|GraphFlow)\s*\("),
)
HANDOFF_CALLS = frozenset(TEAMS)
BUFFER = 20  # messages: about 10 exchanges, tool calls counted
FRAMEWORK = "autogen-agentchat"
CONTEXT_IMPORT = "from autogen_core.model_context import BufferedChatCompletionContext"
TEAM_ADVICE = (
    f"Bound what each participant sends: `model_context=BufferedChatCompletionContext(buffer_size={BUFFER})` on "
    "the agent (it still receives the whole thread, and sends the last messages), `await team.reset()` when a "
    "conversation ends, or call the specialist as a tool (`AgentTool(agent)`), which gets only the task it is given."
)
ADVICE = {
    "autogen-agent": f"Give the agent a bounded model context: `model_context=BufferedChatCompletionContext("
    f"buffer_size={BUFFER})` (`from autogen_core.model_context import BufferedChatCompletionContext`; it keeps every "
    "message and sends the last ones, never a function result without its call); not "
    "`TokenLimitedChatCompletionContext`, which drops messages from the middle and can separate a call from its result.",
}


def memories(facts) -> list[Kept]:
    if not any(i.startswith("autogen_agentchat") for i in facts.nodes.imports):
        return []
    runs = _runs(facts, in_loops=False)
    found = []
    for call in facts.nodes.calls:
        if callee_name(call) != "AssistantAgent" or keyword(call, "model_context") is not None:
            continue
        if not any(q.startswith("autogen_agentchat") for q in facts.qualified(call.func)):
            continue
        kept = _kept_as(facts, call, runs)
        if kept is not None:
            name, how = kept
            found.append(
                Kept(
                    call,
                    f"`{name}` is an AssistantAgent {how} with its default unbounded "
                    "model context: every run adds to it and each model call sends all of it",
                    ADVICE["autogen-agent"],
                    {
                        "history": "AssistantAgent",
                        "framework": FRAMEWORK,
                        "storage": "framework",
                        "sink": f"{name}.run",
                    },
                )
            )
    return found


def handoffs(facts) -> list[Handoff]:
    """Participants with the default context of a team kept between requests and run again."""
    if not any(i.startswith("autogen_agentchat") for i in facts.nodes.imports):
        return []
    runs, resets = (
        _runs(facts, in_loops=True),
        {
            facts.code(c.func.value)
            for c in facts.nodes.calls
            if callee_name(c) == "reset" and isinstance(c.func, cst.Attribute)
        },
    )
    agents = {
        facts.code(t.target): node.value
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign)
        and isinstance(node.value, cst.Call)
        and callee_name(node.value) == "AssistantAgent"
        for t in node.targets
    }
    found = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name not in TEAMS or not any(q.startswith("autogen_agentchat") for q in facts.qualified(call.func)):
            continue
        kept = _kept_as(facts, call, runs)
        listed = keyword(call, "participants") or (call.args[0] if call.args and call.args[0].keyword is None else None)
        if kept is None or kept[0] in resets or listed is None or not isinstance(listed.value, (cst.List, cst.Tuple)):
            continue
        team, how = kept
        for element in listed.value.elements:
            agent = agents.get(facts.code(element.value))
            if agent is not None and keyword(agent, "model_context") is None:
                who = facts.code(element.value)
                where = facts.rule.span(agent)
                found.append(
                    Handoff(
                        element.value,
                        f"`{who}` in `{name}([...])` receives every message of the "
                        f"team's thread, and `{team}` is {how}: with its default unbounded "
                        "model context each of its model calls sends the whole shared thread "
                        "(autogen-agentchat 0.7.5).",
                        TEAM_ADVICE,
                        {"framework": FRAMEWORK, "participant": [where.line, where.col, where.end_line, where.end_col]},
                    )
                )
    return found


def _runs(facts, in_loops: bool) -> dict[str, str]:
    """Objects run once per request (a run inside a function; with `in_loops`, or a loop): the
    lasting state each is read from, or its text where it is none, -> the receiver's text."""
    found = {}
    for c in facts.nodes.calls:
        if (
            callee_name(c) in RUNS
            and isinstance(c.func, cst.Attribute)
            and (facts.function_of(c) is not None or in_loops and facts.loops_of(c))
        ):
            kept = facts.storage_of(c.func.value)
            found.setdefault(kept.key if kept is not None else facts.code(c.func.value), facts.code(c.func.value))
    return found


def _kept_as(facts, call: cst.Call, runs: dict[str, str]) -> tuple[str, str] | None:
    """Where `call`'s agent or team is kept between requests and run again from, and how it is
    kept: (the name, attribute or entry it is run from, a phrase), or None."""
    holder = facts.parent(call)
    targets = [t.target for t in holder.targets] if isinstance(holder, cst.Assign) else []
    for target in targets:
        kept = facts.storage_of(target)
        if kept is not None and kept.key in runs:
            return runs[kept.key], "kept between runs"
    local = next((t.value for t in targets if isinstance(t, cst.Name) and facts.storage_of(t) is None), None)
    if local is None:
        return None
    function = facts.function_of(call)
    for key, container in _entries_of(facts, local, function):
        if key in runs:
            return runs[key], f"kept in `{container}` between runs"
    if _reloaded(facts, local, function, runs):
        return local, "rebuilt on each request from the state the previous run saved (`save_state()` / `load_state()`)"
    return None


def _entries_of(facts, local: str, function) -> list[tuple[str, str]]:
    """The lasting entries the local `local` of `function` is put in (`sessions[sid] = local`,
    `cl.user_session.set("agent", local)`), as (storage key, the container's text)."""
    found = []
    for node in facts.nodes.assigns:
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Name)
            and node.value.value == local
            and facts.function_of(node) is function
        ):
            found += [
                (kept.key, facts.code(t.target.value if isinstance(t.target, cst.Subscript) else t.target))
                for t in node.targets
                for kept in [facts.storage_of(t.target)]
                if kept is not None
            ]
    for c in facts.nodes.calls:
        if (
            callee_name(c) == "set"
            and isinstance(c.func, cst.Attribute)
            and len(c.args) == 2
            and isinstance(c.args[1].value, cst.Name)
            and c.args[1].value.value == local
            and facts.function_of(c) is function
        ):
            session, key = facts.session_object(c.func.value), string(c.args[0].value)
            if session is not None and key is not None:
                found.append((f"{session}.{key}", facts.code(c.func.value)))
    return found


def _reloaded(facts, local: str, function, runs: dict[str, str]) -> bool:
    """`local.load_state(...)` beside its construction, and a run object's `save_state()` in the
    function that runs it: each request continues the context the previous one saved."""
    loads = any(
        callee_name(c) == "load_state"
        and isinstance(c.func, cst.Attribute)
        and facts.code(c.func.value) == local
        and facts.function_of(c) is function
        for c in facts.nodes.calls
    )
    run_in = {
        (facts.code(c.func.value), id(facts.function_of(c)))
        for c in facts.nodes.calls
        if callee_name(c) in RUNS
        and isinstance(c.func, cst.Attribute)
        and facts.function_of(c) is not None
        and facts.code(c.func.value) in runs.values()
    }
    saves = any(
        callee_name(c) == "save_state"
        and isinstance(c.func, cst.Attribute)
        and (facts.code(c.func.value), id(facts.function_of(c))) in run_in
        for c in facts.nodes.calls
    )
    return loads and saves


def fix(finding, module: cst.Module, wrapper, lines):
    """`AssistantAgent(...)` -> `AssistantAgent(..., model_context=BufferedChatCompletionContext(
    buffer_size=20))`: the agent kept between runs (safe), or a participant of a kept team,
    whose `AssistantAgent(...)` the finding names (unsafe: see the module's notes)."""
    if finding.properties.get("framework") != FRAMEWORK:
        return None
    participant = finding.properties.get("participant")
    advice = TEAM_ADVICE if participant else ADVICE["autogen-agent"]
    where = Span(*participant) if participant else finding.span
    call = call_at(wrapper, where)
    if call is None or not import_of(module, "AssistantAgent").startswith("autogen_agentchat"):
        return None, advice
    fixed = keyword_added(wrapper, lines, call, "model_context", f"BufferedChatCompletionContext(buffer_size={BUFFER})")
    kept = "the team still hands it the whole thread" if participant else "it still keeps every message"
    return replace_span(
        replace(finding, span=where),
        module,
        wrapper,
        lines,
        fixed,
        [CONTEXT_IMPORT],
        f"Send the last {BUFFER} messages of the agent's context ({kept}; a function result is never sent without "
        "its call)",
        safe=not participant,
    ), advice
