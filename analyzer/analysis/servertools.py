"""Every tool of MCP servers in a project's own client code, followed from the call that lists
a server's tools (`session.list_tools()`, as `chatbound.frameworks` knows them) to what holds
all of them on the way to a model.

A client of its own keeps them in many shapes: a name bound once, `.tools` of the result, a
comprehension that keeps every tool (`[convert(t) for t in listed.tools]`), what a function or
method of the module returns (`await server.pydantic_tools()`, `flatten(lists)`), a list or an
attribute started empty and grown with each server's tools (`self.tools += await
server.tools()` for every server), a dict of each server's list (`by_server[name] = tools`)
and its values, flattened, a session entry it is kept in between requests
(`cl.user_session.set("tools", by_server)`), a parameter the module's callers give them to.
The tools rule asks it where tools are attached; the project summary, for what a function or
method returns (`MCPClient.start()` in `mcp_client.py`, bound by an agent of another module).

A condition that keeps some (`if t.name in NEEDED`, `t.name.startswith(...)`) or a slice
chooses: nothing is held whole then. A condition that only leaves named tools out
(`if t["name"] != "broken"`) keeps every other tool, and whatever the server adds later.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from chatbound import frameworks
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.values import bound_expression

MAX_DEPTH = 16
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
WHOLE_CALLS = ("list", "tuple", "sorted")  # a copy holds what its argument holds
VIEWS = ("values", "copy")  # of a dict or list of tools: every one of them


@dataclass(frozen=True)
class Listed:
    """Every tool of a server, listed by `call`; `into` names where the tools of every server
    are gathered (`self.tools`), None for one server's; `nested` is 1 for a dict or list of
    each server's list (`by_server`), 0 for the tools themselves."""

    call: cst.Call
    into: str | None = None
    nested: int = 0


class ServerTools:
    """Asked of one module's chat facts (`facts.rule` reads the metadata)."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.rule = facts.rule
        self.imports = facts.nodes.imports
        self._arguments: list[tuple[cst.FunctionDef, cst.Call]] = []  # the calls whose callee's returns are followed
        self._given_in: cst.FunctionDef | None = None

    def describe(self, listed: Listed) -> str:
        """How the tools read in a message."""
        call = self.facts.code(listed.call)
        if listed.into is not None:
            return f"every tool of each MCP server gathered into `{listed.into}` by `{call}`"
        return frameworks.server_tools(self.imports, listed.call) or f"every tool `{call}` lists"

    def tools(self, expr: cst.BaseExpression, given_in: cst.FunctionDef | None = None) -> Listed | None:
        """Every tool of servers `expr` holds, or None when it holds none or a part is chosen;
        `given_in`: the function whose parameters its callers are asked about (where the
        tools are attached), or None."""
        self._given_in = given_in
        found = self.listed(expr)
        return found if found is not None and found.nested == 0 else None

    def listed(self, expr: cst.BaseExpression | None, depth: int = 0) -> Listed | None:
        if depth > MAX_DEPTH or expr is None:
            return None
        depth += 1
        if isinstance(expr, cst.Await):
            return self.listed(expr.expression, depth)
        if isinstance(expr, COMPREHENSIONS):
            return self._comprehension(expr, depth)
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

    def _comprehension(self, expr, depth: int) -> Listed | None:
        """`[convert(t) for t in tools]`, the values of a dict of each server's list
        (`[tools for _, tools in by_server.items()]`), and those lists flattened
        (`[t for tools in lists for t in tools]`); a condition must only leave named tools out."""
        outer, inner = expr.for_in, expr.for_in.inner_for_in
        if not all(leaves_out(c.test) for loop in (outer, inner) if loop is not None for c in loop.ifs):
            return None
        if inner is not None:  # flattened: each list of the outer loop, every element of it
            if inner.inner_for_in is not None:
                return None
            if not _same_name(
                inner.iter, outer.target
            ):  # `[t for s in sessions for t in (await s.list_tools()).tools]`
                found = self.listed(inner.iter, depth)
                return found if found is not None and found.nested == 0 else None
            found = self.listed(outer.iter, depth)
            return replace(found, nested=0) if found is not None and found.nested == 1 else None
        iterated = outer.iter
        if (
            isinstance(iterated, cst.Call)
            and callee_name(iterated) == "items"
            and isinstance(iterated.func, cst.Attribute)
            and isinstance(outer.target, cst.Tuple)
            and len(outer.target.elements) == 2
            and _same_name(getattr(expr, "elt", None), outer.target.elements[1].value)
        ):
            return self.listed(iterated.func.value, depth)  # the values of a dict
        return self.listed(iterated, depth)

    def _called(self, call: cst.Call, depth: int) -> Listed | None:
        if frameworks.server_tools(self.imports, call) is not None:
            return Listed(call)
        name = callee_name(call)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if name in WHOLE_CALLS and isinstance(call.func, cst.Name) and len(positional) == 1:
            return self.listed(positional[0], depth)
        if name in VIEWS and isinstance(call.func, cst.Attribute) and not call.args:
            return self.listed(call.func.value, depth)
        callees = self.facts.callees(call)
        if len(callees) != 1 or any(f is callees[0] for f, _ in self._arguments):
            return None
        returned = [r for r in self.facts.returns(callees[0]) if not empty(r)]  # `return []` on failure adds none
        self._arguments.append((callees[0], call))
        try:
            found = [self.listed(r, depth) for r in returned]
        finally:
            self._arguments.pop()
        return found[0] if found and all(found) else None

    def _name(self, name: cst.Name, depth: int) -> Listed | None:
        bound = self.facts.assignment_before(name)
        if isinstance(bound, cst.Param):
            return self._passed(name, bound, depth)
        if bound is None:
            return None
        sites = self._sites(name)
        if empty(bound):
            return self._gathered(name.value, sites, depth)
        entry = self.facts.storage_of(bound) if isinstance(bound, cst.Call) else None
        if entry is not None and entry.kind == "session":  # filled here, or read as another handler left it
            return self._gathered(name.value, sites, depth) if sites else self._kept(entry, depth)
        if bound_expression(self.rule, name) is None:
            return None  # bound more than once: what it holds at the read is not shown
        found = self.listed(bound, depth)
        return None if found is None or any(chosen(value) for _, value, _ in sites) else found

    def _sites(self, name: cst.Name) -> list[tuple[cst.CSTNode, cst.BaseExpression | None, int]]:
        """What grows the list or dict `name` in its function: `.append`/`.extend`/`+=` (each
        adding tools), `name[key] = value` (each adding a list)."""
        function = self.facts.function_of(name)
        sites = [
            (site, value, 0)
            for site, value in self.facts.nodes.growth_by_name.get(name.value, ())
            if self.facts.function_of(site) is function
        ]
        for node in self.facts.nodes.assigns:
            target = node.targets[0].target if isinstance(node, cst.Assign) and len(node.targets) == 1 else None
            if (
                isinstance(target, cst.Subscript)
                and _same_name(target.value, name)
                and self.facts.function_of(node) is function
            ):
                sites.append((node, node.value, 1))
        return sites

    def _kept(self, entry, depth: int) -> Listed | None:
        """A session entry (`cl.user_session.get("tools", {})`): what the module sets it to
        (`cl.user_session.set("tools", by_server)`), in any handler."""
        for call in self.facts.nodes.calls:
            func = call.func
            if callee_name(call) != "set" or not isinstance(func, cst.Attribute) or len(call.args) < 2:
                continue
            session = self.facts.session_object(func.value)
            if session is not None and f"{session}.{string(call.args[0].value)}" == entry.key:
                found = self.listed(call.args[1].value, depth)
                if found is not None:
                    return replace(found, into=entry.label)
        return None

    def _passed(self, name: cst.Name, param: cst.Param, depth: int) -> Listed | None:
        """A parameter: the argument of the call being followed (`flatten(lists)`), or, in the
        function the tools are attached in, what the module's callers give it (`agent_loop(q, tools)`)."""
        function = self.facts.function_of(param)
        for followed, call in reversed(self._arguments):
            if followed is function:
                return self.listed(self.facts.argument_for(call, function, name.value), depth)
        if function is None or function is not self._given_in:
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
        sites = [
            (node, node.value, 0)
            for node in self.facts.nodes.assigns
            if isinstance(node, cst.AugAssign) and _is_self(node.target, attr) and self.facts.class_of(node) is klass
        ]
        sites += [
            (call, call.args[-1].value if call.args else None, 0)
            for call in self.facts.nodes.growth_calls
            if _is_self(call.func.value, attr) and self.facts.class_of(call) is klass
        ]
        return self._gathered(f"self.{attr}", sites, depth)

    def _gathered(self, into: str, sites, depth: int) -> Listed | None:
        """Every server's tools when the growth `sites` add a server's whole list (or, `nested`
        1, a server's list as one entry) and none adds a chosen part; other additions (one
        more tool of the app's) leave them whole."""
        found = None
        for _, value, nested in sites:
            listed = self.listed(value, depth) if value is not None else None
            if listed is not None and listed.nested == 0:
                found = found or Listed(listed.call, into, nested)
            elif chosen(value):
                return None
        return found


def empty(expr: cst.BaseExpression) -> bool:
    """`[]`, `()`, `{}`, `None`, `list()`: holds no tool."""
    if isinstance(expr, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return not expr.elements
    if isinstance(expr, cst.Name):
        return expr.value == "None"
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value in ("list", "dict")
        and not expr.args
    )


def chosen(expr: cst.BaseExpression | None) -> bool:
    """A comprehension with a condition that keeps some tools, or a slice: a part, not all."""
    if isinstance(expr, COMPREHENSIONS):
        return not all(leaves_out(c.test) for c in expr.for_in.ifs)
    return isinstance(expr, cst.Subscript)


def leaves_out(test: cst.BaseExpression) -> bool:
    """A condition that only leaves named tools out (`t.name != "broken"`, `t["name"] not in
    ("a", "b")`, joined by `and`): every other tool, and any the server adds later, is kept."""
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
            isinstance(e.value, cst.SimpleString) for e in names.elements
        )
    return False


def _same_name(node: cst.CSTNode | None, other: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and isinstance(other, cst.Name) and node.value == other.value


def _is_self(node: cst.BaseExpression, attr: str) -> bool:
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == attr
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    )
