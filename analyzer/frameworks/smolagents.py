"""smolagents: an agent run again with `reset=False` keeps every step of every run.

Checked against smolagents 1.26.0:

- `MultiStepAgent.run(task, reset=True)` (agents.py): `reset=False` keeps `agent.memory.steps`
  of the earlier runs and appends the new task; each model call sends
  `write_memory_to_messages()`, the system prompt and every step kept (tool calls and
  observations included). Nothing in the library bounds it (memory.py `AgentMemory` is a list).
- Bounds: `step_callbacks=` on the agent (the project's own code, which may prune
  `memory.steps`), or a module that prunes the steps itself (`agent.memory.steps = ...`,
  `del agent.memory.steps[...]`, `agent.memory.reset()`).
- A run with `reset=False` continues only where it runs again: in a loop, or in a function
  while the agent outlives it (a module name, an attribute). An agent built again in each
  iteration of the loop that runs it starts each run empty, as one built per call does.
- `GradioUI(agent)` (gradio_ui.py) keeps the one agent for every chat message and runs it with
  `reset=self.reset_agent_memory`, which defaults to False: each message continues the same
  memory (and every visitor of the app shares it). `reset_agent_memory=True` starts each
  message afresh.
- No fix, advice only: each model call is rebuilt from `agent.memory.steps`
  (`write_memory_to_messages`, agents.py) and no setting sends fewer steps while keeping
  them, so every bound deletes steps that `run(return_full_result=True)` (`RunResult.steps`),
  `replay()` and the project's own code read. Which steps an agent can lose is the
  project's decision (a step callback it writes).
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.frameworks.vocabulary import Kept
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import keyword, positional

TRIGGERS = (
    (re.compile(rb"\bsmolagents\b"), re.compile(rb"\breset\s*=\s*False\b")),
    (re.compile(rb"\bsmolagents\b"), re.compile(rb"\bGradioUI\s*\(")),
)
CALLS = frozenset({"GradioUI"})
ADVICE = {
    "smolagents": "Bound what the agent keeps: prune its memory in a step callback (`step_callbacks=[keep_recent]`, "
    "where `keep_recent(step, agent)` keeps the last steps: `agent.memory.steps[:] = agent.memory.steps[-12:]`), or "
    "run with `reset=True` (`GradioUI(agent, reset_agent_memory=True)`) and hand the next run a short summary of "
    "the earlier ones (`additional_args=`).",
}


def memories(facts) -> list[Kept]:
    if not any(i.startswith("smolagents") for i in facts.nodes.imports):
        return []
    agents = _agents(facts)
    found = []
    for call in facts.nodes.calls:
        if callee_name(call) != "run" or not isinstance(call.func, cst.Attribute) or not _keeps_memory(call):
            continue
        name = facts.code(call.func.value)
        built = agents.get(name)
        if built is None or _bounded(facts, name, built):
            continue
        if not facts.loops_of(call) and (facts.function_of(call) is None or facts.storage_of(call.func.value) is None):
            continue  # one run, or an agent built for this call: nothing carried into a next run
        if _built_per_iteration(facts, call, built):
            continue  # `while True: agent = CodeAgent(...); agent.run(q, reset=False)`: a new memory each pass
        found.append(
            Kept(
                call,
                f"`{name}.run(..., reset=False)` keeps every step of every earlier run in "
                f"`{name}.memory` and each model call sends all of them, tool calls and observations "
                "included (smolagents 1.26)",
                ADVICE["smolagents"],
                {"history": f"{name}.memory", "framework": "smolagents", "storage": "framework", "sink": f"{name}.run"},
            )
        )
    return found + _gradio_uis(facts, agents)


def _gradio_uis(facts, agents: dict[str, cst.Call]) -> list[Kept]:
    """`GradioUI(agent)` without `reset_agent_memory=True`: every chat message continues the memory."""
    found = []
    for call in facts.nodes.calls:
        if callee_name(call) != "GradioUI" or not any(q.startswith("smolagents") for q in facts.qualified(call.func)):
            continue
        reset, given = keyword(call, "reset_agent_memory"), keyword(call, "agent") or positional(call, 0)
        if (
            given is None
            or reset is not None
            and not (isinstance(reset.value, cst.Name) and reset.value.value == "False")
        ):
            continue
        name = facts.code(given.value)
        built = agents.get(name)
        if built is not None and _bounded(facts, name, built):
            continue
        found.append(
            Kept(
                call,
                f"`GradioUI({name})` runs `{name}` with `reset=False` on every chat message "
                "(`reset_agent_memory` defaults to False, smolagents 1.26): its memory keeps every step of "
                "every earlier message and each model call sends all of them, tool calls and observations "
                "included",
                ADVICE["smolagents"],
                {"history": f"{name}.memory", "framework": "smolagents", "storage": "framework", "sink": f"{name}.run"},
            )
        )
    return found


def _bounded(facts, name: str, built: cst.Call) -> bool:
    """A step callback that may prune the memory (not an empty list), or the module prunes it."""
    callbacks = keyword(built, "step_callbacks")
    empty = (
        callbacks is not None and isinstance(callbacks.value, (cst.List, cst.Tuple)) and not callbacks.value.elements
    )
    return callbacks is not None and not empty or _prunes(facts, name)


def _built_per_iteration(facts, run: cst.Call, built: cst.Call) -> bool:
    """The agent is built again inside every loop that runs it (same function): each run's
    memory starts empty, the bound of an agent built per call."""
    around = {id(loop) for loop in facts.loops_of(built)}
    return (
        bool(around)
        and facts.function_of(built) is facts.function_of(run)
        and all(id(loop) in around for loop in facts.loops_of(run))
    )


def _keeps_memory(call: cst.Call) -> bool:
    reset = keyword(call, "reset")
    return reset is not None and isinstance(reset.value, cst.Name) and reset.value.value == "False"


def _agents(facts) -> dict[str, cst.Call]:
    """The module's smolagents agents, by the name or attribute they are assigned to."""
    found = {}
    for node in facts.nodes.assigns:
        value = node.value if isinstance(node, (cst.Assign, cst.AnnAssign)) else None
        if isinstance(value, cst.Call) and any(
            q.startswith("smolagents") and q.endswith("Agent") for q in facts.qualified(value.func)
        ):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            found.update((facts.code(target), value) for target in targets)
    return found


def _prunes(facts, name: str) -> bool:
    """The module prunes `name.memory` itself: the steps reassigned or deleted, or a reset."""
    steps = f"{name}.memory.steps"
    if any(
        callee_name(c) == "reset" and facts.code(c.func).startswith(f"{name}.memory")
        for c in facts.nodes.calls
        if isinstance(c.func, cst.Attribute)
    ):
        return True
    targets = [t.target for n in facts.nodes.assigns if isinstance(n, cst.Assign) for t in n.targets]
    for deleted in facts.nodes.dels:
        targets += (
            [e.value for e in deleted.target.elements] if isinstance(deleted.target, cst.Tuple) else [deleted.target]
        )
    return any(facts.code(t).startswith(steps) for t in targets)


def fix(finding, module, wrapper, lines):
    if finding.properties.get("framework") != "smolagents":
        return None
    return None, ADVICE["smolagents"]
