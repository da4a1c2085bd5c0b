"""CrewAI (`crewai`): an agent's system prompt, and a chat history joined into a crew's inputs.

Checked against crewai 1.15.30; the file is named beside each fact.

- An `Agent`'s `role`, `goal` and `backstory` are its system prompt, sent with every call of
  every task it works on: `"You are {role}. {backstory}\\nYour personal goal is: {goal}"`
  (translations/en.json `role_playing`, utilities/prompts.py `task_execution`), followed by
  the tool instructions. They are written inline, or in the YAML a `@CrewBase` class names
  (`agents_config = "config/agents.yaml"`, the default; read relative to the class's file,
  project/crew_base.py) and given as `Agent(config=self.agents_config["researcher"])`.
- `crew.kickoff(inputs={...})` interpolates the inputs into every task description and agent
  text (crew.py `_interpolate_inputs`), which the agents send to their model: a history
  joined into an input is sent whole on each kickoff.
- `agent.kickoff(messages)` runs one agent without a crew (agent/core.py `kickoff(messages:
  str | list[LLMMessage], ...)`): a list keeps its roles, the last user message becomes the
  request and every message before it is sent as history (`_prepare_kickoff`).
- Not reported: `Crew(memory=True)` keeps every task's result in its `Memory`, but an agent is
  sent only what `recall(task.description, limit=5)` returns (agent/core.py; `limit=20` for
  `agent.kickoff`): a bounded retrieval, not the history.
"""

from __future__ import annotations

import os
import re

import libcst as cst

from chatbound.fixes.edits import WINDOW_TURNS, arg_at, replace_span, text_at
from chatbound.syntax.datafiles import read_data_file
from chatbound.syntax.messages import callee_name, string
from chatbound.vocabulary.sinks import Sink, keyword, positional

TRIGGERS = ((re.compile(rb"\bcrewai\b"), re.compile(rb"\.\s*kickoff(?:_async)?\s*\(")),)  # both: a crew run
CALLS = frozenset({"kickoff", "kickoff_async"})
PROMPT_TRIGGERS = (re.compile(rb"\bbackstory\s*="), re.compile(rb"\bagents_config\b"))
PROMPT_FILES = (re.compile(rb"\bagents_config\b"),)  # a system prompt read from the crew's YAML
PROMPT_KEYWORDS = ("backstory", "config")  # the calls a system prompt may be assembled for
PARTS = ("role", "goal", "backstory")
ROLE_PLAYING = "You are {role}. {backstory}\nYour personal goal is: {goal}"  # translations/en.json
CONFIG = "config/agents.yaml"  # project/crew_base.py `_set_config_paths` default
KICKOFFS = ("kickoff", "kickoff_async")
ADVICE = {
    "crewai": f'Join only the last turns into the crew\'s inputs: `"\\n".join(history[-{2 * WINDOW_TURNS}:])` (a '
    "user and a reply line per turn), or a summary of the older ones; the list keeps every line.",
}


def _imports_crewai(imports) -> bool:
    return any(i == "crewai" or i.startswith("crewai.") for i in imports)


def _agent(qualified: set[str]) -> bool:
    """`crewai.Agent` (`from crewai import Agent`, `crewai.agent.Agent`)."""
    return any(q.startswith("crewai.") and q.endswith(".Agent") for q in qualified)


def system_parts(qualified: set[str], call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """`Agent(role=..., goal=..., backstory=...)`: the expressions its system prompt is made of."""
    if not _agent(qualified):
        return None
    parts = {part: arg.value for part in PARTS for arg in [keyword(call, part)] if arg is not None}
    return parts or None


def system_config(module: cst.Module, qualified: set[str], call: cst.Call, directory: str) -> tuple[str, str] | None:
    """`Agent(config=self.agents_config["writer"])` in a `@CrewBase` class: the system prompt
    its YAML entry makes and the file it was read from (relative to the analyzed file)."""
    config = keyword(call, "config")
    if config is None or not _agent(qualified) or not directory:
        return None
    value = config.value
    if not (
        isinstance(value, cst.Subscript)
        and len(value.slice) == 1
        and isinstance(value.slice[0].slice, cst.Index)
        and module.code_for_node(value.value) == "self.agents_config"
    ):
        return None
    name = string(value.slice[0].slice.value)
    path = _config_path(module, call)
    text = read_data_file(directory, path) if name is not None and path is not None else None
    entry = _entry(text, name) if text is not None else None
    if entry is None:
        return None
    return ROLE_PLAYING.format(**{part: entry.get(part, "").strip() for part in PARTS}), os.path.normpath(path)


def _config_path(module: cst.Module, call: cst.Call) -> str | None:
    """The `agents_config` path of the `@CrewBase` class whose method builds ``call``."""
    for klass in (s for s in module.body if isinstance(s, cst.ClassDef)):
        if not any(callee_name(cst.Call(d.decorator)) == "CrewBase" for d in klass.decorators):
            continue
        if not _holds(klass, call):
            continue
        for statement in klass.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if (
                        isinstance(small, cst.Assign)
                        and len(small.targets) == 1
                        and module.code_for_node(small.targets[0].target) == "agents_config"
                    ):
                        return string(small.value)
        return CONFIG
    return None


def _holds(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is inner:
            return True
        stack.extend(node.children)
    return False


def _entry(text: str, name: str) -> dict[str, str] | None:
    import yaml  # only for CrewAI projects: most runs never load it

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    entry = data.get(name) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        return None
    return {part: entry[part] for part in PARTS if isinstance(entry.get(part), str)}


def sink(facts, call: cst.Call) -> Sink | None:
    """`crew.kickoff(inputs={...})` on a CrewAI `Crew`: the inputs reach the agents' models;
    `agent.kickoff(messages)` on an `Agent`: the messages are its request and history."""
    if callee_name(call) not in KICKOFFS or not isinstance(call.func, cst.Attribute):
        return None
    if not _imports_crewai(facts.nodes.imports):
        return None
    inputs = keyword(call, "inputs")
    if inputs is not None:
        return Sink(call, f"crew.{callee_name(call)}", "crewai", (inputs.value,))
    messages = keyword(call, "messages") or positional(call, 0)
    return Sink(call, f"agent.{callee_name(call)}", "crewai", (messages.value,)) if messages is not None else None


def fix(finding, module: cst.Module, wrapper, lines):
    """A history joined into `kickoff(inputs=...)`: `"\\n".join(history)` ->
    `"\\n".join(history[-20:])` (safe: lines of text, no tool call to split; the list keeps
    every line); any other shape: advice."""
    if finding.properties.get("sink", "").split(".")[0] != "crew":
        return None
    sent = text_at(lines, finding.span)
    found = arg_at(wrapper, finding.span)
    if found is None or callee_name(found[0]) != "join" or not sent.replace(".", "").replace("_", "").isalnum():
        return None, ADVICE["crewai"]
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        f"{sent}[-{2 * WINDOW_TURNS}:]",
        [],
        f"Join the last {2 * WINDOW_TURNS} lines of {sent} into the crew's inputs; the list keeps every line",
        safe=True,
    ), ADVICE["crewai"]
