"""Every tool of MCP servers in a project's own client code, followed from the call that lists
a server's tools (`session.list_tools()`, as `chatbound.frameworks` knows them) to what holds
all of them on the way to a model.

A client of its own keeps them in many shapes: a name bound once, `.tools` of the result, a
comprehension that keeps every tool (`[convert(t) for t in listed.tools]`), what a function or
method of the module returns (`await server.pydantic_tools()`), a list or an attribute started
empty and grown with each server's tools (`self.tools += await server.tools()` for every
server), the values of a dict of them, a parameter every caller gives them to. The tools
rule asks it where tools are attached; the project summary, for what a function or method
returns (`MCPClient.start()` in `mcp_client.py`, bound by an agent of another module).

A condition that keeps some (`if t.name in NEEDED`, `t.name.startswith(...)`) or a slice
chooses: nothing is held whole then. A condition that only leaves named tools out
(`if t["name"] != "broken"`) keeps every other tool, and whatever the server adds later.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from . import frameworks
from .values import bound_expression

MAX_DEPTH = 12
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
WHOLE_CALLS = ("list", "tuple", "sorted")  # a copy holds what its argument holds
VIEWS = ("values", "copy")  # of a dict or list of tools: every one of them


@dataclass(frozen=True)
class Listed:
    """Every tool of a server, listed by `call`; `into` names where the tools of every server
    are gathered (`self.tools`), None for one server's."""

    call: cst.Call
    into: str | None = None


class ServerTools:
    """Asked of one module's chat facts (`facts.rule` reads the metadata)."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.rule = facts.rule
        self.imports = facts.nodes.imports

    def describe(self, listed: Listed) -> str:
        """How the tools read in a message."""
        call = self.facts.code(listed.call)
        if listed.into is not None:
            return f"every tool of each MCP server gathered into `{listed.into}` by `{call}`"
        return frameworks.server_tools(self.imports, listed.call) or f"every tool `{call}` lists"

    def listed(self, expr: cst.BaseExpression, depth: int = 0) -> Listed | None:
        """What `expr` holds every tool of, or None when it holds no such tools or a part is chosen."""
        if depth > MAX_DEPTH or expr is None:
            return None
        depth += 1
        if isinstance(expr, cst.Await):
            return self.listed(expr.expression, depth)
        if isinstance(expr, COMPREHENSIONS):
            loop = expr.for_in
            if loop.inner_for_in is not None or not all(leaves_out(c.test) for c in loop.ifs):
                return None
            return self.listed(loop.iter, depth)
        if isinstance(expr, cst.Call):
            return self._called(expr, depth)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "tools" and (inner := self.listed(expr.value, depth)) is not None:
                return inner  # `(await session.list_tools()).tools`
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return self._attribute(expr, depth)
            return None
        if isinstance(expr, cst.Name):
            return self._name(expr, depth)
        return None

    def _called(self, call: cst.Call, depth: int) -> Listed | None:
        if frameworks.server_tools(self.imports, call) is not None:
            return Listed(call)
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", "")
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if name in WHOLE_CALLS and isinstance(call.func, cst.Name) and len(positional) == 1:
            return self.listed(positional[0], depth)
        if name in VIEWS and isinstance(call.func, cst.Attribute) and not call.args:
            return self.listed(call.func.value, depth)
        callees = self.facts.callees(call)
        if len(callees) != 1:
            return None
        returned = [r for r in self.facts.returns(callees[0]) if not empty(r)]  # `return []` on failure adds none
        found = [self.listed(r, depth) for r in returned]
        return found[0] if found and all(found) else None

    def _name(self, name: cst.Name, depth: int) -> Listed | None:
        bound = self.facts.assignment_before(name)
        if isinstance(bound, cst.Param):
            return self._passed(name, bound, depth)
        if bound is None:
            return None
        if empty(bound):
            scope = self.facts.function_of(name)
            sites = [(site, value) for site, value in self.facts.nodes.growth_by_name.get(name.value, ())
                     if self.facts.function_of(site) is scope]
            return self._gathered(name.value, sites, depth)
        if bound_expression(self.rule, name) is None:
            return None  # bound more than once: what it holds at the read is not shown
        return self.listed(bound, depth)

    def _passed(self, name: cst.Name, param: cst.Param, depth: int) -> Listed | None:
        """A parameter the module's callers give every tool of servers to (`agent_loop(q, tools)`)."""
        function = self.facts.function_of(param)
        if function is None or bound_expression(self.rule, name) is not None:
            return None
        for call in self.facts.callers(function):
            found = self.listed(self.facts.argument_for(call, function, name.value), depth)
            if found is not None:
                return found
        return None

    def _attribute(self, attribute: cst.Attribute, depth: int) -> Listed | None:
        """`self.tools` of a class that only ever sets it empty and grows it with servers' tools."""
        klass, attr = self.facts.class_of(attribute), attribute.attr.value
        if klass is None:
            return None
        for node in self.facts.nodes.assigns:
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            set_to = not isinstance(node, cst.AugAssign) and any(_is_self(t, attr) for t in targets)
            if set_to and self.facts.class_of(node) is klass and node.value is not None and not empty(node.value):
                return None  # set to something else somewhere: what it holds at the read is not shown
        sites = [(node, node.value) for node in self.facts.nodes.assigns
                 if isinstance(node, cst.AugAssign) and _is_self(node.target, attr) and self.facts.class_of(node) is klass]
        sites += [(call, call.args[-1].value if call.args else None) for call in self.facts.nodes.growth_calls
                  if _is_self(call.func.value, attr) and self.facts.class_of(call) is klass]
        return self._gathered(f"self.{attr}", sites, depth)

    def _gathered(self, into: str, sites, depth: int) -> Listed | None:
        """Every server's tools when the growth `sites` add a server's whole list and none adds
        a chosen part; other additions (one more tool of the app's) leave them whole."""
        found = None
        for _, value in sites:
            listed = self.listed(value, depth) if value is not None else None
            if listed is not None:
                found = found or Listed(listed.call, into)
            elif chosen(value):
                return None
        return found


def empty(expr: cst.BaseExpression) -> bool:
    """`[]`, `()`, `{}`, `None`, `list()`: holds no tool."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return not expr.elements
    if isinstance(expr, cst.Name):
        return expr.value == "None"
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("list", "dict") and not expr.args


def chosen(expr: cst.BaseExpression | None) -> bool:
    """A comprehension with a condition that keeps some tools, or a slice: a part, not all."""
    if isinstance(expr, COMPREHENSIONS):
        return not all(leaves_out(c.test) for c in expr.for_in.ifs)
    return isinstance(expr, cst.Subscript)


def leaves_out(test: cst.BaseExpression) -> bool:
    """A condition that only leaves named tools out (`t.name != "broken"`, `t["name"] not in
    SKIP_LITERALS`, joined by `and`): every other tool, and any the server adds later, is kept."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return leaves_out(test.left) and leaves_out(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if isinstance(target.operator, cst.NotEqual):
        return isinstance(target.comparator, cst.SimpleString)
    if isinstance(target.operator, cst.NotIn):
        names = target.comparator
        return isinstance(names, (cst.List, cst.Tuple, cst.Set)) and all(
            isinstance(e.value, cst.SimpleString) for e in names.elements)
    return False


def _is_self(node: cst.BaseExpression, attr: str) -> bool:
    return (isinstance(node, cst.Attribute) and node.attr.value == attr
            and isinstance(node.value, cst.Name) and node.value.value == "self")
