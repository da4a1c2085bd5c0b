"""LangGraph graphs: the state classes, nodes and checkpointers a module's `StateGraph` is built
from, in that module or across the project's modules and `langgraph.json`; `graph(facts)` is what
the package's other modules ask.

Checked against langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain 1.5.2 and langgraph-cli
0.4.40; the file is named beside each fact below.

- The conversation is a state key reduced by `add_messages` (`messages: Annotated[list,
  add_messages]`, or `MessagesState`: langgraph/graph/message.py), or a list of messages reduced
  by `operator.add` (`Annotated[list[BaseMessage], operator.add]`: channels/binop.py
  `BinaryOperatorAggregate.update` sets `value = operator(value, update)`, so each update is
  appended; `Overwrite(...)` replaces it). A node reads it whole as `state["messages"]`
  (`state.messages` on a pydantic state) and returns what to add. A node is a function given
  to `add_node`, directly or bound by `functools.partial(node, agent=...)`.
- It lasts between turns when the graph is compiled with a checkpointer
  (`builder.compile(checkpointer=saver)`, any saver: graph/state.py `StateGraph.compile`):
  each invoke on a thread adds to the messages the checkpointer stored. Without one the
  state lives for one invoke (a count window can still cut its tool loop).
  In a notebook (nothing imports it), a graph bound to a name that one top-level cell runs
  once, and that is otherwise only drawn or inspected, gets no second turn on any thread: the
  nodes of its builder keep nothing across turns.
- Across modules (`chatbound.analysis.project.users`): a state class in the app's `state.py` (or a subclass there
  of a state class of a third module), nodes in `nodes.py` registered with `add_node` in
  `graph.py`, which compiles the graph with a checkpointer; or a graph named in
  `langgraph.json`'s `"graphs"` (`"./src/agent/graph.py:graph"`, `{"path": ...}`, or the dotted
  `"agent.graph:graph"` imported from the local packages of `"dependencies"`: langgraph-cli
  0.4.40 config.py), which the LangGraph platform serves with its own checkpointer, persisting
  every thread, whatever the code compiles. `project.py` reads those modules and that file and
  tags what each says; a module's graph facts here read those tags back. A node a factory of
  another module makes is `chains.py`'s; the tags importers see of a module's functions
  (`exports`) are `supervisors.py`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import libcst as cst

from chatbound.frameworks.vocabulary import links
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.tree import walk
from chatbound.vocabulary.sinks import keyword, positional

# States whose `messages` key is reduced by add_messages (langgraph graph/message.py;
# langchain agents/middleware/types.py `AgentState`; langgraph-prebuilt chat_agent_executor.py).
MESSAGE_STATES = frozenset(
    {
        "langgraph.graph.MessagesState",
        "langgraph.graph.message.MessagesState",
        "langchain.agents.AgentState",
        "langchain.agents.middleware.AgentState",
        "langgraph.prebuilt.chat_agent_executor.AgentState",
    }
)
TOOL_NAMES = ("ToolNode", "tools_condition", "bind_tools", "create_react_agent", "create_agent")
MESSAGE_STATE_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in MESSAGE_STATES)
DEPLOYMENT_FILE = "langgraph.json"
STATE_TAG, NODE_TAG, SAVER_TAG = "langgraph.state:", "langgraph.node", "langgraph.checkpointer"
# `add_messages`, or `operator.add` over a list of messages (`from operator import add` too)
MESSAGE_REDUCER = re.compile(r"\badd_messages\b|^(?=.*Message\b).*(?:\boperator\.add\b|,\s*add\s*\]\s*$)", re.S)
SERVED_TAG = "langgraph.served:"  # + the variable langgraph.json serves: the platform checkpoints that graph
# + "position:function": a node factory's parameter is given what that function of the factory's module returns
FACTORY_TAG = "langgraph.factory:"
# what importers see of a module's functions (`exports`): a router picking a node by a tool call's name, a node
# factory whose node invokes its parameter at + "position" with the whole state, a chain builder whose prompt
# takes + "key" whole
ROUTER_TAG, NODE_FACTORY_TAG, CHAIN_TAG = "langgraph.router", "langgraph.node_factory:", "langgraph.chain:"
COMPILED_TAG = "langgraph.compiled"  # a module-level graph compiled from a StateGraph the module builds


@dataclass
class Graph:
    """What a module says about its graphs: the keys add_messages reduces, where it is
    declared, the functions that run as nodes, the checkpointers, and tool calling."""

    keys: set[str] = field(default_factory=set)
    reducers: list[cst.CSTNode] = field(default_factory=list)
    states: set[str] = field(default_factory=set)  # local names of message-state classes
    nodes: set[str] = field(default_factory=set)
    checkpointers: list[cst.CSTNode] = field(default_factory=list)
    served: set[str] | None = None  # the nodes of the graph langgraph.json serves (None: all, or no deployment)
    tools: bool = False
    adds_messages: bool = True  # False where every key's reducer is `operator.add`
    # (node factory, parameter position) -> (function of this module whose result it is given, where)
    arguments: dict[tuple[str, int], list[tuple[str, object]]] = field(default_factory=dict)
    # node -> the builders it is registered on (None: one is not a name of this module)
    builders: dict[str, set[str] | None] = field(default_factory=dict)
    one_run: set[str] = field(default_factory=set)  # builders whose every checkpointed graph is run once
    # list keys with no reducer that a node reads and returns grown -> the returned entries (see `_rewritten`)
    rewritten: dict[str, list[cst.CSTNode]] = field(default_factory=dict)


def graph(facts) -> Graph | None:
    """The module's graph facts, computed once; None when it neither imports LangGraph nor is
    named by a module or deployment file that does."""
    data = facts.framework_data
    if __name__ not in data:
        linked = links(facts)
        tagged = any(
            m.tag.startswith("langgraph.")
            for mentions in (*linked.given.values(), *linked.seen.values())
            for m in mentions
        )
        data[__name__] = (
            _graph(facts) if tagged or any(i.startswith("langgraph") for i in facts.nodes.imports) else None
        )
    return data[__name__]


def _graph(facts) -> Graph:
    found = Graph()
    for name, qualified in facts.nodes.bindings.items():
        if qualified & MESSAGE_STATES:
            found.states.add(name)
            found.keys.add("messages")
        if any(q.rsplit(".", 1)[-1] in TOOL_NAMES for q in qualified):
            found.tools = True
    for klass in facts.nodes.classes:  # in source order: a subclass after its base
        bases = [base.value for base in klass.bases if facts.code(base.value) in found.states]
        own = [
            small
            for statement in klass.body.body
            if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body
            if isinstance(small, cst.AnnAssign)
            and isinstance(small.target, cst.Name)
            and MESSAGE_REDUCER.search(facts.code(small.annotation.annotation))
        ]
        if any(not re.search(r"\badd_messages\b", facts.code(small.annotation.annotation)) for small in own):
            found.adds_messages = False
        if bases or own:
            found.states.add(klass.name.value)
            found.keys.update(small.target.value for small in own)
            found.reducers.extend([small.annotation for small in own] or bases)
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name == "add_node":
            added = {
                _node_name(facts, a.value)
                for a in call.args
                if a.keyword is None or a.keyword.value in ("node", "action")
            }
            added.discard(None)
            found.nodes.update(added)
            builder = (
                call.func.value.value
                if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                else None
            )
            for node in added:
                known = found.builders.get(node, set())
                found.builders[node] = None if known is None or builder is None else known | {builder}
        elif name == "compile":
            saver = keyword(call, "checkpointer") or (positional(call, 0) if _builds_graph(facts, call) else None)
            if saver is not None and not (isinstance(saver.value, cst.Name) and saver.value.value in ("None", "False")):
                found.checkpointers.append(saver)
        if name in TOOL_NAMES:
            found.tools = True
    linked = links(facts)
    for name, mentions in linked.seen.items():  # message states of other modules
        reducers = [
            replace(m.place, label="the `add_messages` reducer") for m in mentions if m.tag.startswith(STATE_TAG)
        ]
        if reducers:
            found.states.add(name)
            found.keys.update(m.tag[len(STATE_TAG) :] for m in mentions if m.tag.startswith(STATE_TAG))
            found.reducers.extend(reducers)
    for name, mentions in linked.given.items():  # nodes registered, checkpointers supplied elsewhere
        for mention in mentions:
            if mention.tag == NODE_TAG and name:
                found.nodes.add(name)
            elif mention.tag == SAVER_TAG:
                found.checkpointers.append(mention.place)
            elif mention.tag.startswith(SERVED_TAG):
                found.checkpointers.append(mention.place)
                found.served = _served_nodes(facts, mention.tag[len(SERVED_TAG) :])
            elif mention.tag.startswith(FACTORY_TAG):
                position, _, made_by = mention.tag[len(FACTORY_TAG) :].partition(":")
                found.arguments.setdefault((name, int(position)), []).append((made_by, mention.place))
    for function in facts.nodes.functions:
        first = _state_param(function)
        if (
            first is not None
            and first.annotation is not None
            and facts.code(first.annotation.annotation) in found.states
        ):
            found.nodes.add(function.name.value)
    if not found.reducers and found.keys:
        found.reducers.extend(found.checkpointers)
    found.one_run = _one_run_builders(facts, found)
    found.rewritten = _rewritten(facts, found)
    return found


LIST_ANNOTATION = re.compile(r"^(typing\.)?(list|List|Sequence)\b")


def _rewritten(facts, found: Graph) -> dict[str, list[cst.CSTNode]]:
    """List keys of a state class with no reducer (a plain channel: each update replaces the
    value, langgraph 1.2.24 channels/last_value.py) that a node reads and returns with more in
    it: `h = state.get("history", []); h.append(m); return {"history": h}`. A checkpointer then
    keeps the grown list for the thread's next invoke, as a reducer would; without one the
    state lasts one invoke."""
    if not found.checkpointers:
        return {}
    lists = {
        small.target.value
        for klass in facts.nodes.classes
        for statement in klass.body.body
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
        if isinstance(small, cst.AnnAssign)
        and isinstance(small.target, cst.Name)
        and LIST_ANNOTATION.match(facts.code(small.annotation.annotation))
    } - found.keys
    rewritten: dict[str, list[cst.CSTNode]] = {}
    for function in facts.nodes.functions:
        param = _state_param(function)
        if function.name.value not in found.nodes or param is None:
            continue
        for value in facts.returns(function):
            for element in value.elements if isinstance(value, cst.Dict) else ():
                key = string(element.key) if isinstance(element, cst.DictElement) else None
                if key in lists and _holds_read(facts, element.value, param, key):
                    rewritten.setdefault(key, []).append(element)
    return rewritten


def state_key(facts, expr: cst.CSTNode) -> tuple[str | None, cst.CSTNode | None]:
    """(key, state) for `state["k"]`, `state.k` and `state.get("k", default)`."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        return string(expr.slice[0].slice.value), expr.value
    if isinstance(expr, cst.Call) and callee_name(expr) == "get" and isinstance(expr.func, cst.Attribute) and expr.args:
        return string(expr.args[0].value), expr.func.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value, expr.value
    return None, None


def _holds_read(facts, expr: cst.CSTNode, param: cst.Param, key: str, depth: int = 0) -> bool:
    """`expr` is the list the node read from its state's `key`: the read, `read + [...]`, or a local bound to one."""
    read, base = state_key(facts, expr)
    if read == key and isinstance(base, cst.Name) and facts.assignment_before(base) is param:
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _holds_read(facts, expr.left, param, key, depth)
    if isinstance(expr, cst.Name) and depth < 4:
        value = facts.assignment_before(expr)
        return isinstance(value, cst.BaseExpression) and _holds_read(facts, value, param, key, depth + 1)
    return False


RUNS = ("invoke", "ainvoke", "stream", "astream")
INSPECTS = ("get_graph", "get_state", "get_state_history")


def _one_run_builders(facts, found: Graph) -> set[str]:
    """Builders of a notebook (nothing imports it) whose checkpointed graphs are each run once:
    `interview_graph = builder.compile(checkpointer=memory)` invoked by one top-level cell and
    otherwise only drawn or inspected. Such a thread never gets a second turn."""
    if not facts.rule.context.path.endswith(".ipynb") or len(found.checkpointers) != sum(
        1 for c in found.checkpointers if isinstance(c, cst.Arg)
    ):
        return set()  # a checkpointer supplied by another module or a deployment
    once: dict[str, bool] = {}
    for call in facts.nodes.calls:
        saver = keyword(call, "checkpointer") if callee_name(call) == "compile" else None
        if saver is None or not isinstance(call.func, cst.Attribute) or not isinstance(call.func.value, cst.Name):
            continue
        builder = call.func.value.value
        once[builder] = once.get(builder, True) and _run_once(facts, call)
    return {builder for builder, single in once.items() if single}


def _run_once(facts, compiled: cst.Call) -> bool:
    """The compiled graph is bound to a top-level name read only by one top-level run outside
    any loop, and by calls that draw or inspect it."""
    value: cst.CSTNode = compiled
    while isinstance(facts.parent(value), cst.Attribute) and isinstance(facts.parent(facts.parent(value)), cst.Call):
        value = facts.parent(facts.parent(value))  # `.with_config(run_name=...)`
    statement = facts.parent(value)
    if not isinstance(statement, cst.Assign) or facts.function_of(statement) is not None or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    runs = 0
    for name in walk(facts.rule.context.module):
        if not isinstance(name, cst.Name) or name.value != target.value or name is target:
            continue
        read = facts.parent(name)
        if isinstance(read, cst.Attribute) and read.attr is name:
            continue  # `x.interview_graph`: another object's attribute
        method = read.attr.value if isinstance(read, cst.Attribute) else ""
        if method in RUNS and facts.function_of(read) is None and not facts.loops_of(read):
            runs += 1
        elif method not in INSPECTS:
            return False  # passed on, rebound, run in a loop or a function: it may run again
    return runs == 1


def _served_nodes(facts, var: str) -> set[str] | None:
    """The functions registered on the builder of `var = builder.compile(...)` (the graph
    langgraph.json serves); None when the module does not show it (every node counts)."""
    for node in facts.nodes.assigns:
        value = node.value if isinstance(node, cst.Assign) else None
        if (
            isinstance(value, cst.Call)
            and callee_name(value) == "compile"
            and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name)
            and any(isinstance(t.target, cst.Name) and t.target.value == var for t in node.targets)
        ):
            builder = value.func.value.value
            return {
                a.value.value
                for c in facts.nodes.calls
                if callee_name(c) == "add_node"
                and isinstance(c.func, cst.Attribute)
                and facts.code(c.func.value) == builder
                for a in c.args
                if isinstance(a.value, cst.Name)
            }
    return None


def _node_name(facts, value: cst.BaseExpression) -> str | None:
    """The function `add_node` is given: `chatbot`, or `agent_node` of `functools.partial(agent_node,
    agent=...)` given directly or through a name."""
    bound = facts.assignment_before(value) if isinstance(value, cst.Name) else None
    for candidate in (value, bound):
        if isinstance(candidate, cst.Call) and callee_name(candidate) == "partial" and candidate.args:
            first = candidate.args[0].value
            return first.value if isinstance(first, cst.Name) else None
    return value.value if isinstance(value, cst.Name) else None


def runs_elsewhere(facts, receiver: cst.BaseExpression, method: str) -> bool:
    """`graph.invoke(state)` of a graph this module compiles (`graph = builder.compile()` of a
    `StateGraph`), or imports from the module that compiles it: no model call itself, the state goes to the graph's nodes, whose own model
    calls say what is sent (langgraph 1.2 pregel: `invoke` runs the nodes on the input)."""
    if not isinstance(receiver, cst.Name) or method not in RUNS:
        return False
    if any(m.tag == COMPILED_TAG for m in links(facts).seen.get(receiver.value, ())):
        return True  # `from graph import graph`: compiled in the module it comes from
    bound = facts.assignment_before(receiver)
    return isinstance(bound, cst.Call) and callee_name(bound) == "compile" and _builds_graph(facts, bound)


def _builds_graph(facts, call: cst.Call) -> bool:
    """`builder.compile(saver)` where `builder = StateGraph(...)`, or `builder = build()` of a
    module function returning one."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    return receiver is not None and _is_builder(facts, receiver, frozenset())


def _is_builder(facts, value: cst.BaseExpression, seen: frozenset) -> bool:
    """`value` is a `StateGraph(...)`: made here, bound to a name, or returned by a module function."""
    if isinstance(value, cst.Name):
        bound = facts.assignment_before(value)
        return isinstance(bound, cst.BaseExpression) and bound is not value and _is_builder(facts, bound, seen)
    if not isinstance(value, cst.Call):
        return False
    if callee_name(value) == "StateGraph":
        return True
    return any(
        _is_builder(facts, returned, seen | {id(function)})
        for function in facts.callees(value)
        if id(function) not in seen
        for returned in facts.returns(function)
    )


def _state_param(function: cst.FunctionDef) -> cst.Param | None:
    params = [*function.params.posonly_params, *function.params.params]
    if params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    return params[0] if params else None
