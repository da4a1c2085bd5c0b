"""What the frameworks that hold a conversation do with it: one module per framework.

Rules never name a framework; they ask the chat facts (`chatbound.histories`), and the
facts ask these modules. Each module declares, in the words the facts already speak:

- `TRIGGERS`: code shapes one of which a file using the framework holds (the memory and
  handoff rules' pre-check), and `CALLS`: the callee names its facts start from (so a
  module holding only those is still read).
- `storage(facts, expr)`: the `Storage` of a conversation the framework keeps that `expr`
  names (LangGraph's `state["messages"]` in a graph node), or None.
- `collect(facts)`: the `History` of each such storage: what grows it every turn, the
  framework's own bounds (trims), and whether it holds tool traffic.
- `memories(facts)`: framework objects that keep a conversation and send all of it
  themselves (an agent with a checkpointer and no trimming hook), as `Kept`.
- `handoffs(facts)`: calls that give another agent the whole conversation, as `Handoff`.
- `KINDS` and `ADVICE`: how a finding describes each storage kind the module adds, and the
  framework's own bound for it.
- `state_messages(facts, expr)`: where `expr` carries the framework's whole message state
  (`state["messages"]` handed to a specialist), or None.
- `fix(finding, module, wrapper, lines)`: the framework's own bound for a finding it owns,
  as `(fix or None, advice)`, or None when the finding is not its own.

A new framework is one new module, listed in `MODULES`.
"""

from __future__ import annotations

import libcst as cst

from . import langgraph, openai_agents
from .vocabulary import Handoff, Kept

MODULES = (langgraph, openai_agents)
__all__ = ["ADVICE", "CALLS", "HANDOFF_CALLS", "HANDOFF_TRIGGERS", "KINDS", "MODULES", "TRIGGERS", "Handoff", "Kept",
           "collect", "fix", "handoffs", "memories", "state_messages", "storage"]

TRIGGERS = tuple(pattern for module in MODULES for pattern in module.TRIGGERS)
HANDOFF_TRIGGERS = tuple(pattern for module in MODULES for pattern in module.HANDOFF_TRIGGERS)
CALLS = frozenset(name for module in MODULES for name in module.CALLS)
HANDOFF_CALLS = frozenset(name for module in MODULES for name in module.HANDOFF_CALLS)
KINDS = {kind: text for module in MODULES for kind, text in module.KINDS.items()}
ADVICE = {kind: text for module in MODULES for kind, text in module.ADVICE.items()}


def storage(facts, expr: cst.CSTNode):
    for module in MODULES:
        found = module.storage(facts, expr)
        if found is not None:
            return found
    return None


def collect(facts) -> None:
    for module in MODULES:
        module.collect(facts)


def memories(facts) -> list[Kept]:
    return [kept for module in MODULES for kept in module.memories(facts)]


def handoffs(facts) -> list[Handoff]:
    return [handoff for module in MODULES for handoff in module.handoffs(facts)]


def state_messages(facts, expr: cst.CSTNode) -> cst.CSTNode | None:
    """Where `expr` carries a framework's whole message state (`state["messages"]`), or None."""
    for module in MODULES:
        found = module.state_messages(facts, expr)
        if found is not None:
            return found
    return None


def fix(finding, module: cst.Module, wrapper, lines):
    """The framework's own fix and advice for ``finding``, or None when no framework owns it."""
    for framework in MODULES:
        found = framework.fix(finding, module, wrapper, lines)
        if found is not None:
            return found
    return None
