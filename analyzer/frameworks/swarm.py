"""OpenAI Swarm (`swarm`: github.com/openai/swarm, or PyPI's openai-swarm 0.1.1, the same package).

Checked against swarm/core.py at 6af0b4c, the main branch's last commit, whose swarm/ package
PyPI's openai-swarm 0.1.1 holds byte for byte (tests/test_swarm_runtime.py runs it):

- `client.run(agent, messages)` (`client = Swarm()`) sends `[{"role": "system", ...}] + history`
  to `chat.completions.create` on every step, where `history` is a copy of `messages`
  (`get_chat_completion`), and returns only the new messages (`Response.messages`, tool
  results included). A REPL that does `messages.extend(response.messages)` re-sends the
  whole conversation each turn: the generic analysis follows the list once the call is a sink.
- A handoff is an agent function that returns another `Agent`: `handle_function_result` makes
  it the active agent, and the loop goes on with the same `history`, so the new agent gets the
  whole conversation. There is no filter: the only bound is what the caller passes in.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.frameworks.vocabulary import Handoff
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import Sink, keyword, positional

TRIGGERS = ((re.compile(rb"\bswarm\b"), re.compile(rb"\.\s*run\s*\(")),)  # both: a Swarm run
HANDOFF_TRIGGERS = (re.compile(rb"\bfunctions\s*=\s*\["),)
HANDOFF_CALLS = frozenset({"Agent"})
HANDOFF_ADVICE = (
    "Swarm hands the new agent the whole history. Keep the specialist's run apart: inside the function call "
    '`client.run(specialist, [{"role": "user", "content": brief}])` with a brief of the task, and return its '
    "answer as text (or a `Result(value=...)`), so the specialist pays for the brief, not the transcript."
)


def _imports_swarm(facts) -> bool:
    if __name__ not in facts.framework_data:
        facts.framework_data[__name__] = any(i == "swarm" or i.startswith("swarm.") for i in facts.nodes.imports)
    return facts.framework_data[__name__]


def sink(facts, call: cst.Call) -> Sink | None:
    """`client.run(agent, messages)` / `client.run(agent=..., messages=...)` on a `Swarm()`."""
    if callee_name(call) not in ("run", "run_and_stream") or not isinstance(call.func, cst.Attribute):
        return None
    if not _imports_swarm(facts) or not any(q.startswith("swarm") for q in facts.client_of(call.func.value)):
        return None
    messages = keyword(call, "messages") or positional(call, 1)
    return Sink(call, "swarm.run", "swarm", (messages.value,)) if messages is not None else None


def handoffs(facts) -> list[Handoff]:
    """Agent functions that return another agent (the module's `Agent(...)` or a name bound to one)."""
    if not _imports_swarm(facts):
        return []
    agents = {
        facts.code(target.target)
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign) and _is_agent(facts, node.value)
        for target in node.targets
    }
    listed = {
        element.value.value
        for call in facts.nodes.calls
        if callee_name(call) == "Agent" and _is_agent(facts, call)
        for arg in [keyword(call, "functions")]
        if arg is not None and isinstance(arg.value, cst.List)
        for element in arg.value.elements
        if isinstance(element.value, cst.Name)
    }
    found = []
    for node in facts.nodes.returns:
        function = facts.function_of(node)
        value = node.value
        if function is None or function.name.value not in listed or value is None:
            continue
        if facts.code(value) in agents or _is_agent(facts, value):
            found.append(
                Handoff(
                    value,
                    f"`{function.name.value}` returns the agent `{facts.code(value)}`: Swarm makes it "
                    "the active agent and sends it the whole conversation (swarm core.py `run`), so it "
                    "pays for every earlier turn again.",
                    HANDOFF_ADVICE,
                )
            )
    return found


def _is_agent(facts, value: cst.CSTNode) -> bool:
    return (
        isinstance(value, cst.Call)
        and callee_name(value) == "Agent"
        and any(q.startswith("swarm") for q in facts.qualified(value.func))
    )
