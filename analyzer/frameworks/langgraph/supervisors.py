"""Handoffs between LangGraph agents: `Send` and `Command` carrying the whole message state,
langgraph-supervisor's and langgraph-swarm's handoff tools, and a specialist node a router picks
by the name of the model's routing tool call.

Checked against langgraph 1.2.24, langgraph-supervisor 0.0.31 and langgraph-swarm 0.1.0; the file
is named beside each fact below.

- Handoffs: `Send(node, {"messages": state["messages"]})` and `Command(goto=..., update=
  {"messages": state["messages"] + [...]})` (langgraph/types.py); langgraph-supervisor's
  `create_supervisor` builds handoff tools that pass `state["messages"]` whole to the agent
  whatever `add_handoff_messages` says (handoff.py `create_handoff_tool`), and langgraph-swarm's
  `create_handoff_tool` does the same (handoff.py). A conditional edge (graph/state.py
  `add_conditional_edges(source, path, path_map)`: the path function's value, or `path_map`'s,
  names the next node, which is given the whole state; a returned `Send(node, arg)` gives it only
  `arg`: types.py, graph/_branch.py) that picks a node by the name of the source model's tool
  call (a routing schema such as `ToBilling`, the customer-support tutorial's pattern) hands
  that node, or the node an entry node's edge leads to, the whole shared thread.
- The router, the node factory and the chain builder may be functions of another module:
  `exports(tree)` says what each is to the modules importing it (the project pass).
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from chatbound.frameworks.langgraph.chains import _ast_chain_key, _ast_node_factory, _whole_state_chains
from chatbound.frameworks.langgraph.graphs import CHAIN_TAG, NODE_FACTORY_TAG, ROUTER_TAG, graph
from chatbound.frameworks.langgraph.project import compiled_graphs
from chatbound.frameworks.langgraph.state import HANDOFF_KEYS, KINDS, state_messages
from chatbound.frameworks.vocabulary import Handoff, links
from chatbound.syntax.messages import callee_name, string
from chatbound.vocabulary.sinks import keyword, positional

HANDOFF_TRIGGERS = (
    re.compile(rb"\b(?:Send|Command|create_supervisor|create_handoff_tool|add_conditional_edges)[\s)]*\("),
)
HANDOFF_CALLS = frozenset({"Send", "Command", "create_supervisor", "create_handoff_tool", "add_conditional_edges"})
ROUTED_ADVICE = (
    'Route with a brief, not the thread: have the router return `Send(node, {"messages": [HumanMessage('
    'call["args"]["request"])]})` built from the routing tool call\'s arguments (the node then answers from '
    "the brief and its reply still joins the thread), or send the specialist's model `trim_messages(state["
    '"messages"], ..., start_on="human")` of the last turns.'
)
HANDOFF_ADVICE = (
    'Hand over a task, not the transcript: `Send(agent, {"messages": [HumanMessage(task_description)]})` '
    'from a handoff tool that takes a `task_description` argument (LangGraph\'s own "forward a task" pattern); '
    "the specialist then starts from a brief of a few hundred tokens."
)


# --- handoffs ----------------------------------------------------------------------------------


def handoffs(facts) -> list[Handoff]:
    if not any(i.startswith("langgraph") for i in facts.nodes.imports):
        return []
    found = _routed_specialists(facts)
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name not in HANDOFF_CALLS or not any(q.startswith("langgraph") for q in facts.qualified(call.func)):
            continue
        if name == "Send" and len(call.args) >= 2:
            whole = state_messages(facts, call.args[1].value)
            if whole is not None:
                target = facts.code(call.args[0].value)
                found.append(
                    Handoff(
                        call,
                        f"`Send({target}, ...)` gives the node the whole conversation "
                        f"(`{facts.code(whole)}`): it pays for every earlier turn again on each of its calls.",
                        HANDOFF_ADVICE,
                    )
                )
        elif name == "Command":
            goto, update = keyword(call, "goto"), keyword(call, "update")
            whole = _updated_messages(facts, update.value) if goto is not None and update is not None else None
            if whole is not None:
                found.append(
                    Handoff(
                        call,
                        f"`Command(goto={facts.code(goto.value)}, ...)` hands the whole conversation "
                        f"(`{facts.code(whole)}`) to the next agent: it pays for every earlier turn again.",
                        HANDOFF_ADVICE,
                    )
                )
        elif name == "create_supervisor" and keyword(call, "tools") is None:
            found.append(
                Handoff(
                    call,
                    "`create_supervisor(...)` builds handoff tools that pass the supervisor's whole "
                    "message list to each agent (langgraph-supervisor 0.0.31, with or without "
                    "`add_handoff_messages`): every agent pays for the whole conversation again.",
                    HANDOFF_ADVICE,
                )
            )
        elif name == "create_handoff_tool":
            found.append(
                Handoff(
                    call,
                    "`create_handoff_tool(...)` passes the whole message list to the next agent "
                    "(langgraph-swarm 0.1.0, langgraph-supervisor 0.0.31): it pays for every earlier turn "
                    "again.",
                    HANDOFF_ADVICE,
                )
            )
    return found


def _updated_messages(facts, update: cst.BaseExpression) -> cst.CSTNode | None:
    if not isinstance(update, cst.Dict):
        return None
    for element in update.elements:
        if isinstance(element, cst.DictElement) and string(element.key) in HANDOFF_KEYS:
            return state_messages(facts, element.value)
    return None


# --- a specialist routed to by a routing tool call --------------------------------------------


def _routed_specialists(facts) -> list[Handoff]:
    """A node of a checkpointed graph that a conditional edge routes to by the name of the source
    model's tool call (a routing schema: `ToBilling`), directly or through an entry node's edge,
    and that sends the whole shared `state["messages"]` to its own model: the supervisor's
    routing hands the specialist the whole thread (graph/state.py `add_conditional_edges`: the
    path function's value, or `path_map`'s, names the next node, which is given the whole state;
    a `Send` returned instead gives it only the `Send`'s arg)."""
    found = graph(facts)
    if found is None or not found.checkpointers:
        return []
    registered: dict[str, list[cst.Call]] = {}
    edges: dict[str, list[str]] = {}
    routes = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        first, second = positional(call, 0), positional(call, 1)
        if name == "add_node" and first is not None and second is not None:
            registered.setdefault(_pattern(facts, first.value), []).append(call)
        elif name == "add_edge" and first is not None and second is not None:
            edges.setdefault(_pattern(facts, first.value), []).append(_pattern(facts, second.value))
        elif name == "add_conditional_edges" and first is not None and second is not None:
            routes.append(call)
    handoffs, reported = [], set()
    for route in routes:
        source, router = _pattern(facts, route.args[0].value), route.args[1].value
        targets = _route_targets(facts, router, positional(route, 2) or keyword(route, "path_map"))
        for target in targets - {None, source}:
            entered = [_specialist_send(facts, add, route, router) for add in registered.get(target, ())]
            if not any(entered):  # an entry node (a note for the specialist): the node its edge leads to
                entered = [
                    _specialist_send(facts, add, route, router)
                    for after in edges.get(target, ())
                    if after != source
                    for add in registered.get(after, ())
                ]
            for handoff in entered:
                if handoff is not None and id(handoff.node) not in reported:
                    reported.add(id(handoff.node))
                    handoffs.append(handoff)
    return handoffs


def _route_targets(facts, router: cst.BaseExpression, path_map: cst.Arg | None) -> set[str | None]:
    """The node names a router that picks by the tool call's name leads to: the strings its function
    returns there, else `path_map`'s; nothing for any other router."""
    routed = _routes_on_tool_call(facts, router)
    if not routed:
        return set()
    named = {value.value for value in routed if isinstance(value, ast.Constant) and isinstance(value.value, str)}
    if len(named) == len(routed) or path_map is None:
        return named
    value = path_map.value
    return (
        {_pattern(facts, v.value) for v in value.elements if isinstance(v, cst.DictElement)}
        if isinstance(value, cst.Dict)
        else set(_patterns(facts, value))
    )


def _routes_on_tool_call(facts, router: cst.BaseExpression) -> list:
    """What the router returns where it picks by comparing the last tool call's name (`if call["name"]
    == ToBilling.__name__: return "billing"`), as stdlib-tree values; an imported router an
    importer's module says so of, `[None]`; [] for any other router."""
    if not isinstance(router, (cst.Name, cst.Attribute)):
        return []  # a router a factory makes, a lambda: not followed
    if any(m.tag == ROUTER_TAG for m in links(facts).seen.get(facts.code(router), ())):
        return [None]
    for function in facts.functions.get(router.value, ()) if isinstance(router, cst.Name) else ():
        if facts.function_of(function) is None:
            try:
                tree = ast.parse(facts.code(function).strip())
            except (SyntaxError, ValueError):
                return []  # grammar LibCST reads and this interpreter does not
            return _ast_routed(tree.body[0]) if tree.body else []
    return []


def _specialist_send(facts, add: cst.Call, route: cst.Call, router: cst.BaseExpression) -> Handoff | None:
    """The handoff to the node `add` registers, where it sends the whole message state: at the
    node function's send, or, for a node an imported factory makes, at `add` itself."""
    node = add.args[1].value
    routing = (route, f"`{facts.code(router)}` routes here by the name of the model's tool call")
    name = _pattern(facts, add.args[0].value) or ""
    name = facts.code(add.args[0].value) if "{" in name or not name else name  # `team`, in a loop over the teams
    for function in facts.functions.get(node.value, ()) if isinstance(node, cst.Name) else ():
        for flow in facts.flows():
            if flow.use.storage.kind in KINDS and facts.inside(flow.site, function):
                return Handoff(
                    flow.site, _specialist_message(name, facts.code(flow.use.node)), ROUTED_ADVICE, related=(routing,)
                )
        for kept in _whole_state_chains(facts):
            if facts.inside(kept.node, function):
                return Handoff(
                    kept.node, _specialist_message(name, kept.properties["history"]), ROUTED_ADVICE, related=(routing,)
                )
    made = _made_node(facts, node)
    return (
        Handoff(add, _specialist_message(name, made[0]), ROUTED_ADVICE, related=(routing, *made[1])) if made else None
    )


def _made_node(facts, node: cst.BaseExpression) -> tuple[str, tuple] | None:
    """(the key, related places) when `node` is made by an imported node factory whose node
    invokes a chain with the whole state (`factory.make_node(chain)`), given a chain an imported
    function builds with a whole-list placeholder of a message key (`factory.build_assistant(...)`)."""
    made = facts.assignment_before(node) if isinstance(node, cst.Name) else node
    if not isinstance(made, cst.Call):
        return None
    seen = links(facts).seen
    for mention in seen.get(facts.code(made.func), ()):
        if not mention.tag.startswith(NODE_FACTORY_TAG):
            continue
        given = positional(made, int(mention.tag[len(NODE_FACTORY_TAG) :]))
        chain = (
            facts.assignment_before(given.value) if given is not None and isinstance(given.value, cst.Name) else None
        )
        chain = given.value if given is not None and chain is None else chain
        for built in seen.get(facts.code(chain.func), ()) if isinstance(chain, cst.Call) else ():
            key = built.tag[len(CHAIN_TAG) :] if built.tag.startswith(CHAIN_TAG) else None
            if key in graph(facts).keys:
                return f'state["{key}"]', (
                    (mention.place, "the node invokes its chain with the whole state here"),
                    (built.place, f"the chain's prompt takes every message of `{key}` here"),
                )
    return None


def _specialist_message(node: str, read: str) -> str:
    return (
        f"The node `{node}` is routed to by a routing tool call and sends its model the whole shared "
        f"conversation (`{read}`), which the checkpointer keeps for the thread: the specialist pays for every "
        "earlier turn again on each of its calls."
    )


def _patterns(facts, expr: cst.BaseExpression) -> list[str | None]:
    """The node names a `path_map` list spells: its items, a comprehension's, `a + b`."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _patterns(facts, expr.left) + _patterns(facts, expr.right)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [_pattern(facts, e.value) for e in expr.elements]
    if isinstance(expr, cst.ListComp):
        return [_pattern(facts, expr.elt)]
    return [None]


def _pattern(facts, expr: cst.BaseExpression, depth: int = 0) -> str | None:
    """A node's name as the module spells it: a string, or a template over a loop's collection
    (`f"enter_{name}"` in `for name in TEAMS` is `enter_{TEAMS}`), through names; None when unknown."""
    if depth > 4:
        return None
    text = string(expr)
    if text is not None:
        return text
    if isinstance(expr, cst.FormattedString):
        parts = [
            p.value
            if isinstance(p, cst.FormattedStringText)
            else _pattern(facts, p.expression, depth + 1)
            if p.format_spec is None and p.conversion is None
            else None
            for p in expr.parts
        ]
        return "".join(parts) if None not in parts else None
    if not isinstance(expr, cst.Name):
        return None
    if expr.value in ("END", "START"):
        return f"__{expr.value.lower()}__"
    collection = _loop_collection(facts, expr)
    if collection is not None:
        return collection
    value = facts.assignment_before(expr)
    return _pattern(facts, value, depth + 1) if isinstance(value, cst.BaseExpression) else None


def _loop_collection(facts, name: cst.Name) -> str | None:
    """`{TEAMS}` for the key a loop or comprehension around `name` binds it to (`for name in TEAMS`,
    `for name, cfg in TEAMS.items()`)."""
    for outer in facts.ancestors(name):
        loops = (
            [outer]
            if isinstance(outer, cst.For)
            else [outer.for_in]
            if isinstance(outer, (cst.ListComp, cst.GeneratorExp, cst.SetComp))
            else []
        )
        for loop in loops:
            target, items = loop.target, loop.iter
            if (
                isinstance(items, cst.Call)
                and callee_name(items) in ("items", "keys")
                and isinstance(items.func, cst.Attribute)
            ):
                items = items.func.value
                target = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else target
            if isinstance(target, cst.Name) and target.value == name.value:
                return "{" + facts.code(items) + "}"
    return None


# --- what importers see of a module's functions (stdlib ast, chatbound.analysis.project.users) ------


def exports(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    """What the module's functions are to a graph module importing them (`chatbound.analysis.project.users`):
    a router picking a node by a tool call's name (`ROUTER_TAG`), a node factory whose node
    invokes a parameter with the whole state (`NODE_FACTORY_TAG` + its position), a chain builder
    whose prompt takes a message key whole (`CHAIN_TAG` + the key); and the graphs it compiles
    (`project.compiled_graphs`)."""
    found = compiled_graphs(tree)
    for function in (n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        if _ast_routed(function):
            found.append((function.name, ROUTER_TAG, function))
        made = _ast_node_factory(function)
        if made is not None:
            found.append((function.name, f"{NODE_FACTORY_TAG}{made[0]}", made[1]))
        built = _ast_chain_key(function)
        if built is not None:
            found.append((function.name, CHAIN_TAG + built[0], built[1]))
    return found


def _ast_routed(function: ast.AST) -> list[ast.expr]:
    """The values returned where `if call["name"] == ToBilling.__name__: return "billing"` picks a
    node by the name of a tool call read from a message's `tool_calls` (a returned `Send(...)`,
    which gives the node only its arg, is not a node's name)."""
    return [value for node in _ast_routing_ifs(function) for value in _ast_node_returns(node)]


def route_schemas(tree: ast.Module) -> set[str]:
    """The classes whose name a router compares with a tool call's to pick the next node
    (`if call["name"] == ToBilling.__name__: return "billing"`): schemas given to the model
    only to choose a specialist, routes rather than work tools."""
    return {
        n.value.id
        for function in ast.walk(tree)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in _ast_routing_ifs(function)
        if _ast_node_returns(node)
        for n in ast.walk(node.test)
        if isinstance(n, ast.Attribute) and n.attr == "__name__" and isinstance(n.value, ast.Name)
    }


def _ast_node_returns(node: ast.If) -> list[ast.expr]:
    """What the branch returns as the next node's name (not a `Send(...)` or a list of them)."""
    return [
        s.value
        for s in node.body
        if isinstance(s, ast.Return) and s.value is not None and not isinstance(s.value, (ast.Call, ast.List))
    ]


def _ast_routing_ifs(function: ast.AST) -> list[ast.If]:
    """The `if`s of a function that test the name of a tool call read from a message's `tool_calls`."""
    reads = {
        target.id
        for node in ast.walk(function)
        if isinstance(node, (ast.Assign, ast.For))
        and _ast_reads_tool_calls(node.value if isinstance(node, ast.Assign) else node.iter, set())
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    return [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.If)
        and any(
            isinstance(c, ast.Compare)
            and isinstance(c.ops[0], (ast.Eq, ast.In))
            and any(
                isinstance(side, ast.Subscript)
                and isinstance(side.slice, ast.Constant)
                and side.slice.value == "name"
                and _ast_reads_tool_calls(side.value, reads)
                for side in (c.left, *c.comparators)
            )
            for c in ast.walk(node.test)
        )
    ]


def _ast_reads_tool_calls(expr: ast.AST, names: set[str]) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == "tool_calls" or isinstance(n, ast.Name) and n.id in names
        for n in ast.walk(expr)
    )
