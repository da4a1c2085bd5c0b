"""What a tool list written in a module holds, read from syntax alone: how many work tools
and how many routes to other agents. The project summary uses it for the lists and helpers a
module offers (`TOOLS = [...]`, `def all_tools(): return [...]`, a registry dict); the tools
rule resolves its own module's lists with names and scopes, and counts routes the same way.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from chatbound.syntax.messages import callee_name

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
        if node.elements and all(
            isinstance(e.value, (cst.SimpleString, cst.Integer, cst.Float)) for e in node.elements
        ):
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


# --- a toolkit for one job: tools that act on one object --------------------------------------

TOOLKIT_SHARE = 2 / 3  # of the work tools acting on one object, from which the list is one job's toolkit
NOT_RESOURCES = ("getLogger",)  # a logger every function writes to ties no tools together


def resources(module: cst.Module) -> set[str]:
    """Module-level names bound to an object the code builds (a browser driver, a database
    pool), at module level (under an `if` or `try` too) or through `global` in a function."""
    nodes = list(_nodes(module))
    found = _built([n for n in nodes if isinstance(n, (cst.Assign, cst.AnnAssign))], None)
    for function in (n for n in nodes if isinstance(n, cst.FunctionDef)):
        found |= _globals_built(function)
    return found


def _globals_built(function: cst.FunctionDef) -> set[str]:
    names = {n.name.value for node in _nodes(function.body) if isinstance(node, cst.Global) for n in node.names}
    if not names:
        return set()
    return _built([n for n in _nodes(function.body) if isinstance(n, (cst.Assign, cst.AnnAssign))], names)


def _built(statements, among: set[str] | None) -> set[str]:
    found = set()
    for statement in statements:
        if not isinstance(statement, (cst.Assign, cst.AnnAssign)) or statement.value is None:
            continue
        value = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
        if not isinstance(value, cst.Call) or callee_name(value) in NOT_RESOURCES:
            continue
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        found.update(t.value for t in targets if isinstance(t, cst.Name) and (among is None or t.value in among))
    return found


def acts_on(function: cst.FunctionDef, context: tuple[str, ...] = ()) -> set[str]:
    """The objects a tool function works on: the roots of what it calls methods on, assigns
    into or reads a part of for a call (`len(browser.tabs)`); a parameter's `context` attribute
    (`ctx.deps.state`, Pydantic AI's run dependencies) counts as the object below it. An object
    handed whole to a function (`list_accounts(ctx.deps.db)`, `click(driver, x)`) is not: the
    work is in that function, and a database session every service function is given ties no
    tools to one job."""
    params = {p.name.value for p in function.params.params}
    found = set()
    for node in _nodes(function.body):
        if isinstance(node, cst.Call):
            used = [(node.func.value, 0)] if isinstance(node.func, cst.Attribute) else []
            used += [(a.value, 1) for a in node.args]  # an argument: a part of the object, not the whole
        elif isinstance(node, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            used = [(t.value, 0) for t in targets if isinstance(t, (cst.Attribute, cst.Subscript))]
        else:
            continue
        for expr, below in used:
            parts = _root(expr)
            if not parts:
                continue
            if parts[0] in params:
                if len(parts) > 2 + below and parts[1] in context:
                    found.add(".".join(parts[1:3]))
            elif len(parts) > below:
                found.add(parts[0])
    return found


def shared_object(objects: list[set[str]]) -> str | None:
    """The one object at least two thirds of the tools act on (`objects`: one set per tool), or None."""
    counts: dict[str, int] = {}
    for names in objects:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    best = max(counts, key=counts.get, default=None)
    if best is None or counts[best] < 2 or counts[best] < TOOLKIT_SHARE * len(objects):
        return None
    return best


def _root(expr: cst.BaseExpression) -> list[str]:
    """`ctx.deps.state.items` -> ['ctx', 'deps', 'state', 'items']; [] for anything not a dotted name."""
    parts = []
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Attribute):
            parts.append(expr.attr.value)
        expr = expr.value
    return [expr.value, *parts[::-1]] if isinstance(expr, cst.Name) else []


def _nodes(node: cst.CSTNode):
    """Everything below `node`, functions and classes defined inside it excluded."""
    stack = list(node.children)
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(current.children)


def registered_tools(script: str) -> list[str] | None:
    """The functions a server script registers as tools with a `.tool` decorator (`@mcp.tool`,
    `@mcp.tool(name=...)`, `@server.tool()`), or None when the text is no Python."""
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError):
        return None
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(target := (d.func if isinstance(d, ast.Call) else d), ast.Attribute) and target.attr == "tool"
            for d in node.decorator_list
        )
    ]
