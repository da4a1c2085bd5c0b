"""Where the servers are launched whose every tool a listing call returns (`session.list_tools()`,
`client.get_tools()`, `load_mcp_tools(session)`, `with MCPClient(params) as tools`): the launch
parameters written in the module, one per server, so that a well-known server
(`chatbound.frameworks.mcp_servers`) is counted here as it is in the toolsets of other SDKs.

Followed through names bound once and `with ... as` targets: the session to the
`stdio_client(params)` whose streams it reads, the client to the parameters it was given.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from chatbound import frameworks
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.values import bound_expression
from chatbound.vocabulary.sinks import keyword, positional


def launches(rule, call: cst.Call) -> list[cst.BaseExpression] | None:
    """The launch parameters of each server whose tools `call` lists, or None when one of them
    is not written in the module."""
    name = callee_name(call)
    if name in frameworks.SERVER_LAUNCHERS:  # `with MCPClient(params) as tools`
        return _launched(rule, call, None)
    if name == "load_mcp_tools":
        session = positional(call, 0) or keyword(call, "session")
        return _session(rule, session.value) if session is not None else None
    if not isinstance(call.func, cst.Attribute):
        return None
    if name == "list_tools":
        return _session(rule, call.func.value)
    client = _origin(rule, call.func.value)
    if name == "get_tools" and isinstance(client, cst.Call) and callee_name(client) in frameworks.SERVER_LAUNCHERS:
        chosen = keyword(call, "server_name")
        return _launched(rule, client, string(chosen.value) if chosen is not None else None)
    return None


def _session(rule, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """`ClientSession(read, write)` over the streams of `with stdio_client(params) as (read, write)`."""
    session = _origin(rule, expr)
    if not isinstance(session, cst.Call) or callee_name(session) not in frameworks.SERVER_SESSIONS:
        return None
    read = positional(session, 0) or keyword(session, "read_stream")
    streams = _origin(rule, read.value) if read is not None else None
    if isinstance(streams, cst.Call) and callee_name(streams) in frameworks.SERVER_LAUNCHERS:
        return _launched(rule, streams, None)
    return None


def _launched(rule, client: cst.Call, chosen: str | None) -> list[cst.BaseExpression] | None:
    """The launch parameters a client was given: one, a list of them, or a dict of them by server
    name (`chosen`: only that server's)."""
    argument, by_name = frameworks.SERVER_LAUNCHERS[callee_name(client)]
    given = positional(client, 0) or keyword(client, argument)
    value = _origin(rule, given.value) if given is not None else None
    if by_name:
        if not isinstance(value, cst.Dict) or any(not isinstance(e, cst.DictElement) for e in value.elements):
            return None
        entries = [e for e in value.elements if isinstance(e, cst.DictElement)]
        if chosen is not None:
            entries = [e for e in entries if string(e.key) == chosen]
        return [e.value for e in entries] or None
    if chosen is not None or value is None:
        return None
    if isinstance(value, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        return [e.value for e in value.elements] or None
    return [value]


def _origin(rule, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """What a name bound once, or a `with ... as` target (a name or one of a tuple of names), holds."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if not isinstance(expr, cst.Name):
        return expr
    bound = bound_expression(rule, expr)
    if bound is not None:
        return bound.expression if isinstance(bound, cst.Await) else bound
    scope = rule.get_metadata(ScopeProvider, expr, None)
    assignments = list(scope[expr.value]) if scope is not None else []
    node = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
    parent = rule.get_metadata(ParentNodeProvider, node, None) if node is not None else None
    for _ in range(3):  # Name -> (Element -> Tuple ->) AsName
        if isinstance(parent, cst.AsName):
            item = rule.get_metadata(ParentNodeProvider, parent, None)
            return item.item if isinstance(item, cst.WithItem) else None
        if not isinstance(parent, (cst.Element, cst.Tuple)):
            return None
        parent = rule.get_metadata(ParentNodeProvider, parent, None)
    return None
