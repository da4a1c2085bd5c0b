"""What a tool list written in a module holds, read from syntax alone: how many work tools
and how many routes to other agents. The project summary uses it for the lists and helpers a
module offers (`TOOLS = [...]`, `def all_tools(): return [...]`, a registry dict); the tools
rule resolves its own module's lists with names and scopes, and counts routes the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .messages import callee_name

# Routes to another agent, counted apart from the work tools: Agents SDK handoff() and
# Agent.as_tool() (openai-agents 0.24.0), LangGraph swarm create_handoff_tool(), ADK
# AgentTool(agent=...) (google-adk 1.x, tools/agent_tool.py: the agent runs on the request alone)
ROUTE_CALLS = ("handoff", "create_handoff_tool", "as_tool", "AgentTool")
MAX_DEPTH = 8


@dataclass(frozen=True)
class Size:
    work: int
    routes: int = 0
    partial: bool = False  # some elements (a starred unknown) are not counted

    def __add__(self, other: Size) -> Size:
        return Size(self.work + other.work, self.routes + other.routes, self.partial or other.partial)


def is_route(element: cst.BaseExpression) -> bool:
    return isinstance(element, cst.Call) and callee_name(element) in ROUTE_CALLS


def size_of(node: cst.BaseExpression, known: dict[str, Size], depth: int = 0) -> Size | None:
    """The size of the tool list `node` builds, names looked up in `known` (the module's own
    lists); None when it is no list of tools or its size is not shown."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        if node.elements and all(isinstance(e.value, (cst.SimpleString, cst.Integer, cst.Float)) for e in node.elements):
            return None  # a list of strings or numbers, not of tools
        size = Size(0)
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                inner = size_of(element.value, known, depth + 1)
                size = size + (inner if inner is not None else Size(0, partial=True))
            else:
                size = size + Size(0, 1) if is_route(element.value) else size + Size(1)
        return size
    if isinstance(node, cst.Dict):
        values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        routes = sum(is_route(v) for v in values)
        return Size(len(values) - routes, routes, len(values) < len(node.elements))
    if isinstance(node, cst.Name):
        return known.get(node.value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = size_of(node.left, known, depth + 1), size_of(node.right, known, depth + 1)
        return left + right if left is not None and right is not None else None
    if isinstance(node, cst.Call):
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if callee_name(node) in ("list", "tuple", "set", "sorted") and len(positional) == 1:
            return size_of(positional[0], known, depth + 1)
        if callee_name(node) == "values" and isinstance(node.func, cst.Attribute) and not node.args:
            return size_of(node.func.value, known, depth + 1)
    return None
