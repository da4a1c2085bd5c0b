"""Google ADK (`google-adk`): which of a module's agents hold a conversation, and their
instructions (what PROMPT-OVERSIZED-SYSTEM asks).

Checked against adk-python `cli/utils/agent_loader.py` (google-adk 1.x, main of 2026-11):

- `adk web`, `adk run` and `adk api_server` serve the module-level `root_agent` of an app's
  `agent.py` or package `__init__.py` (or the `root_agent` of a module-level `App(...)`) on a
  session that keeps every turn, so its `instruction=` / `global_instruction=` is sent with
  every call of every turn.
- An LLM agent listed in a served agent's `sub_agents=[...]` takes that conversation over by
  transfer, and is served too.
- Any other agent shows no conversation in its module: run as a tool (`AgentTool(agent=...)`
  runs it on the one request it is given), a step of a `SequentialAgent`, or defined for
  another module to use.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from ..messages import callee_name
from ..values import bound_expression

LLM_AGENTS = ("Agent", "LlmAgent")
INSTRUCTIONS = ("instruction", "global_instruction")
ROOT = "root_agent"  # the name the agent loader serves


def is_llm_agent(qualified: Iterable[str]) -> bool:
    """`google.adk.Agent`, `google.adk.agents.LlmAgent` and their other import paths."""
    return any(name.startswith("google.adk.") and name.rsplit(".", 1)[-1] in LLM_AGENTS for name in qualified)


def served_agents(rule: cst.BatchableCSTVisitor, module: cst.Module) -> set[int]:
    """The ids of the agent calls of `module` that hold a conversation: the served root and the
    LLM agents it transfers to, followed through names bound once."""
    pending = list(_roots(module))
    served: set[int] = set()
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name):
            node = bound_expression(rule, node)
        if not isinstance(node, cst.Call) or id(node) in served or callee_name(node) not in LLM_AGENTS:
            continue
        served.add(id(node))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "sub_agents" and isinstance(arg.value, (cst.List, cst.Tuple)):
                pending.extend(e.value for e in arg.value.elements if isinstance(e, cst.Element))
    return served


def _roots(module: cst.Module) -> Iterable[cst.BaseExpression]:
    """`root_agent = ...` at module level, and `root_agent=` of a module-level call (`App`)."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.Assign):
                continue
            if any(isinstance(t.target, cst.Name) and t.target.value == ROOT for t in small.targets):
                yield small.value
            if isinstance(small.value, cst.Call):
                yield from (a.value for a in small.value.args if a.keyword is not None and a.keyword.value == ROOT)
