"""LangGraph and LangChain v1 agents: graph state, checkpointers, agents and handoffs.

Checked against langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain 1.5.2, langchain-core
1.8.4, langgraph-supervisor 0.0.31 and langgraph-swarm 0.1.0; the file is named beside each
fact below.

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
- Bounds: a trimming call at the send (`trim_messages`), a slice, or a node returning
  `RemoveMessage(...)` (add_messages deletes those ids: how summarization nodes shrink it) or
  `Overwrite(...)` (types.py: replaces an `operator.add` list).
- A prompt chain invoked with the whole state (`chain.invoke(state)` in a node, `chain = prompt |
  llm`) fills its `MessagesPlaceholder("messages")` (or `("placeholder", "{messages}")`) with
  every message of the key (langchain-core 1.8.3 prompts/chat.py `MessagesPlaceholder.
  format_messages`; `n_messages=N` keeps the last N, a bound).
- Agents: `create_react_agent(model, tools, checkpointer=...)` (langgraph-prebuilt
  chat_agent_executor.py) sends `state["messages"]` unless a `pre_model_hook` returns
  `llm_input_messages`; `create_agent(..., checkpointer=..., middleware=[...])` (langchain
  agents/factory.py) sends all of it unless a middleware trims. `SummarizationMiddleware`
  needs `trigger=` (or the deprecated `max_tokens_before_summary=`): without one
  `_should_summarize` is always False (agents/middleware/summarization.py).
- Across modules (`chatbound.analysis.project.users`): a state class in `state.py` (or a subclass there
  of a state class of a third module), nodes in `nodes.py` registered with `add_node` in
  `graph.py`, which compiles the graph with a checkpointer; or a graph named in
  `langgraph.json`'s `"graphs"` (`"./src/agent/graph.py:graph"`, `{"path": ...}`, or the dotted
  `"agent.graph:graph"` imported from the local packages of `"dependencies"`: langgraph-cli
  0.4.40 config.py), which the LangGraph platform serves with its own checkpointer, persisting
  every thread, whatever the code compiles.
  A node may be made by a factory of another module: `add_node("triage", factory.make_node(
  chain))` with `chain = factory.build_assistant(...)` gives `make_node`'s node the chain that
  `build_assistant` returns in the factory's module, where its placeholder is read.
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
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import PositionProvider

from chatbound.findings import Span
from chatbound.fixes.edits import TRIM_IMPORTS, replace_span, text_at
from chatbound.frameworks.vocabulary import Handoff, Kept, links
from chatbound.syntax.messages import callee_name, is_bounding_name, is_whole_slice, slice_of, string
from chatbound.syntax.tree import walk
from chatbound.syntax.visitors import children
from chatbound.vocabulary.facts import Storage
from chatbound.vocabulary.sinks import keyword, positional

TRIGGERS = (re.compile(rb"\b(?:create_react_agent|create_agent)[\s)]*\("),)
HANDOFF_TRIGGERS = (
    re.compile(rb"\b(?:Send|Command|create_supervisor|create_handoff_tool|add_conditional_edges)[\s)]*\("),
)
CALLS = frozenset({"create_react_agent", "create_agent", "compile"})
HANDOFF_CALLS = frozenset({"Send", "Command", "create_supervisor", "create_handoff_tool", "add_conditional_edges"})
KINDS = {
    "checkpoint": "graph state a checkpointer keeps for each thread (every invoke on the thread adds to it)",
    "platform": "graph state the LangGraph platform keeps for each thread of a graph `langgraph.json` serves "
    "(every run on the thread adds to it)",
}
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
AGENTS = {"create_react_agent": "langgraph.prebuilt", "create_agent": "langchain.agents"}
# langchain 1.5.2 agents/middleware/__init__.py: the built-in middlewares that do not shorten
# what the model is sent (ContextEditingMiddleware clears old tool results only, past 100,000
# tokens by default, and keeps every other message).
NOT_TRIMMING = frozenset(
    """HumanInTheLoopMiddleware ModelCallLimitMiddleware ToolCallLimitMiddleware ModelFallbackMiddleware
    PIIMiddleware TodoListMiddleware ModelRetryMiddleware ToolRetryMiddleware LLMToolSelectorMiddleware
    LLMToolEmulator ContextEditingMiddleware ShellToolMiddleware FilesystemFileSearchMiddleware
    ModelRouterMiddleware ModelRefusalMiddleware ToolErrorMiddleware AutoModeMiddleware
    ProviderToolSearchMiddleware""".split()
)
MESSAGE_STATE_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in MESSAGE_STATES)
PROJECT_TRIGGERS = (re.compile(rb"\blanggraph\b|Annotated\[[^\]]*Message[^\]]*\]\s*,\s*(?:operator\.)?add\s*\]"),)
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
HANDOFF_KEYS = ("messages", "chat_history", "history")
TRIM = (
    'trim_messages({messages}, strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, '
    'start_on="human", include_system=True)'
)
HOOK = 'lambda state: {{"llm_input_messages": {trim}}}'.format(trim=TRIM.format(messages='state["messages"]'))

NODE_ADVICE = (
    'Trim what the node sends, not what the checkpointer keeps: `llm.invoke(trim_messages(state["messages"], '
    'strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, start_on="human", '
    "include_system=True))` (`from langchain_core.messages import trim_messages`), or a summarization node that "
    "returns `RemoveMessage`s for what it folded into a summary. The thread keeps every message."
)
ADVICE = {"checkpoint": NODE_ADVICE, "platform": NODE_ADVICE}
REACT_ADVICE = (
    'Give the agent a `pre_model_hook` that returns `{"llm_input_messages": trim_messages(state["messages"], '
    'strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, start_on="human", '
    "include_system=True)}`: the model gets the last whole turns, the checkpointer keeps every message."
)
AGENT_ADVICE = (
    'Add a middleware that bounds what the model is sent: `SummarizationMiddleware(model=..., trigger=("tokens", '
    '4000), keep=("messages", 20))` (`from langchain.agents.middleware import SummarizationMiddleware`), or a '
    '`@before_model` middleware that trims `state["messages"]` with `trim_messages(..., start_on="human")`.'
)
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
    return found


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


# --- what the project pass reads (stdlib ast, chatbound.analysis.project.users) -------------------------


def deployed(config: dict) -> list[tuple[str, str, str]]:
    """The modules a `langgraph.json` serves, as (path from its folder, tag, the text naming it):
    the platform keeps every thread with its own checkpointer (langgraph-cli 0.4.40 config.py).
    A module with a `/` is a file (`"./src/agent/graph.py:graph"`); any other is imported by
    its dotted name (`"agent.graph:graph"`, `_update_graph_paths`) from the local packages of
    `"dependencies"` (`["."]` here): each place that name can be a file in is listed."""
    if not isinstance(config, dict):
        return []
    local = [d for d in config.get("dependencies") or () if isinstance(d, str) and d.startswith(".")]
    found = []
    for spec in (config.get("graphs") or {}).values():
        text = spec.get("path") if isinstance(spec, dict) else spec
        module, _, variable = text.partition(":") if isinstance(text, str) else ("", "", "")
        if "/" in module or "\\" in module or module.endswith(".py"):
            found.append((module, SERVED_TAG + variable, text))
        elif re.fullmatch(r"\w+(?:\.\w+)*", module):
            path = module.replace(".", "/")
            found.extend(
                (f"{folder}/{layout}{path}{ending}", SERVED_TAG + variable, text)
                for folder in local
                for layout in ("", "src/")
                for ending in (".py", "/__init__.py")
            )
    return found


def defines(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    """The module's message-state classes: `STATE_TAG + key` for each key `add_messages` reduces."""
    states = {
        name
        for name, target in _ast_imports(tree).items()
        if target.startswith(("langgraph", "langchain")) and name in MESSAGE_STATE_NAMES
    }
    keys: dict[str, set[str]] = {name: {"messages"} for name in states}
    found = []
    for klass in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        own = {
            s.target.id: s
            for s in klass.body
            if isinstance(s, ast.AnnAssign)
            and isinstance(s.target, ast.Name)
            and MESSAGE_REDUCER.search(ast.unparse(s.annotation))
        }
        inherited = set().union(*(keys.get(_ast_name(base), set()) for base in klass.bases))
        if own or inherited:
            keys[klass.name] = set(own) | inherited
            found.extend((klass.name, STATE_TAG + key, own.get(key, klass)) for key in sorted(keys[klass.name]))
    return found


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, object]]:
    """Imported functions this module registers as graph nodes (`NODE_TAG`), and, when it
    compiles the graph with a checkpointer or the platform serves it, that checkpointer
    (`SAVER_TAG`) for each of them. A node an imported factory makes (`add_node("triage",
    factory.make_node(chain))`, or a name bound to that call) gives the factory the checkpointer
    and, for each argument made by another function of the factory's module (`chain =
    factory.build_assistant(...)`), `FACTORY_TAG` + "position:function"."""
    if not any(target.startswith("langgraph") for target in imported.values()):
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    savers = [
        c
        for c in calls
        if c.func.attr == "compile"
        and any(
            k.arg == "checkpointer" and not (isinstance(k.value, ast.Constant) and k.value.value in (None, False))
            for k in c.keywords
        )
    ]
    served = {m.tag[len(SERVED_TAG) :]: m.place for m in own if m.tag.startswith(SERVED_TAG)}
    builders = {_ast_builder(tree, var): place for var, place in served.items()}
    found = []
    for call in (c for c in calls if c.func.attr == "add_node"):
        builder = call.func.value.id if isinstance(call.func.value, ast.Name) else None
        savers_here = savers + [builders[builder]] if builder in builders else savers
        for arg in [*call.args, *(k.value for k in call.keywords if k.arg in ("node", "action"))]:
            if isinstance(arg, ast.Name) and arg.id in imported:
                found.append((arg.id, NODE_TAG, call))
                found.extend((arg.id, SAVER_TAG, saver) for saver in savers_here[:1])
                continue
            made = _ast_call_of(tree, arg, call)
            factory = _ast_target(made.func, imported) if made is not None else None
            if factory is None:
                continue
            local = _ast_dotted(made.func)
            found.extend((local, SAVER_TAG, saver) for saver in savers_here[:1])
            for position, value in enumerate(made.args):
                argument = _ast_call_of(tree, value, made)
                target = _ast_target(argument.func, imported) if argument is not None else None
                if target is not None and target.rpartition(".")[0] == factory.rpartition(".")[0]:
                    found.append((local, f"{FACTORY_TAG}{position}:{target.rpartition('.')[2]}", call))
    return found


def _ast_call_of(tree: ast.Module, value: ast.expr, user: ast.Call) -> ast.Call | None:
    """The call `value` is, or the call last assigned to the name `value` before `user` in the
    function holding `user` (a name bound in a loop counts)."""
    if isinstance(value, ast.Call):
        return value
    if not isinstance(value, ast.Name):
        return None
    scopes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno <= user.lineno <= (node.end_lineno or node.lineno)
    ]
    scope = max(scopes, key=lambda node: node.lineno, default=tree)
    bound = [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign)
        and node.lineno <= user.lineno
        and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)
    ]
    last = max(bound, key=lambda node: (node.lineno, node.col_offset), default=None)
    return last.value if last is not None and isinstance(last.value, ast.Call) else None


def _ast_dotted(func: ast.expr) -> str | None:
    """`make_node` or `factory.make_node`: a callee as a dotted local name."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _ast_target(func: ast.expr, imported: dict[str, str]) -> str | None:
    """The import target a callee names (`factory.make_node` -> `app.assistants.factory.make_node`),
    or None for a callee this module does not import."""
    dotted = _ast_dotted(func)
    head, _, rest = (dotted or "").partition(".")
    if head not in imported:
        return None
    return f"{imported[head]}.{rest}" if rest else imported[head]


def _ast_builder(tree: ast.Module, var: str) -> str | None:
    """`builder` of `var = builder.compile(...)`: the graph langgraph.json serves as `var`."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "compile"
            and isinstance(node.value.func.value, ast.Name)
        ):
            return node.value.func.value.id
    return None


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


def _ast_imports(tree: ast.Module) -> dict[str, str]:
    return {
        alias.asname or alias.name: f"{node.module}.{alias.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def _ast_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _node_name(facts, value: cst.BaseExpression) -> str | None:
    """The function `add_node` is given: `chatbot`, or `agent_node` of `functools.partial(agent_node,
    agent=...)` given directly or through a name."""
    bound = facts.assignment_before(value) if isinstance(value, cst.Name) else None
    for candidate in (value, bound):
        if isinstance(candidate, cst.Call) and callee_name(candidate) == "partial" and candidate.args:
            first = candidate.args[0].value
            return first.value if isinstance(first, cst.Name) else None
    return value.value if isinstance(value, cst.Name) else None


def _builds_graph(facts, call: cst.Call) -> bool:
    """`builder.compile(saver)` where `builder = StateGraph(...)`."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if isinstance(receiver, cst.Call):
        return callee_name(receiver) == "StateGraph"
    value = facts.assignment_before(receiver) if isinstance(receiver, cst.Name) else None
    return isinstance(value, cst.Call) and callee_name(value) == "StateGraph"


def _state_param(function: cst.FunctionDef) -> cst.Param | None:
    params = [*function.params.posonly_params, *function.params.params]
    if params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    return params[0] if params else None


# --- storages and their histories ----------------------------------------------------------


def storage(facts, expr: cst.CSTNode) -> Storage | None:
    """`state["messages"]` / `state.messages`, where `state` is the state a graph node is given."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key, base = string(expr.slice[0].slice.value), expr.value
    elif isinstance(expr, cst.Attribute):
        key, base = expr.attr.value, expr.value
    else:
        return None
    if key is None or not isinstance(base, cst.Name):
        return None
    found = graph(facts)
    if found is None or key not in found.keys:
        return None
    param = facts.assignment_before(base)
    function = facts.function_of(param) if isinstance(param, cst.Param) else None
    if function is None or function.name.value not in found.nodes or _state_param(function) is not param:
        return None
    if found.served is not None and function.name.value not in found.served and _platform_only(found):
        return (
            None  # a node of another graph of the module (a subgraph run per Send): the platform keeps no thread of it
        )
    builders = found.builders.get(function.name.value)
    if builders and builders <= found.one_run:
        return Storage(f"graph state.{key} of one run", "graph", f'state["{key}"]')  # no thread gets a second turn
    return _storage(found, key)


def _storage(found: Graph, key: str) -> Storage:
    kind = "platform" if _platform_only(found) else "checkpoint" if found.checkpointers else "graph"
    return Storage(f"graph state.{key}", kind, f'state["{key}"]')


def _platform_only(found: Graph) -> bool:
    return bool(found.checkpointers) and all(getattr(c, "label", "") == DEPLOYMENT_FILE for c in found.checkpointers)


def collect(facts) -> None:
    """Each message key's history: grown by its reducer on every turn a checkpointer keeps,
    trimmed by the `RemoveMessage`s a node returns, holding tool traffic where tools run."""
    found = graph(facts)
    if found is None or not found.nodes:
        return
    removals = [c for c in facts.nodes.calls if callee_name(c) in ("RemoveMessage", "Overwrite")]
    for key in found.keys:
        history = facts.history(_storage(found, key))
        history.roles.add("message")
        history.tool_traffic = history.tool_traffic or found.tools
        history.trims.extend(removals)
        if found.checkpointers:
            history.growth.extend(found.reducers)
            history.growth_note = "the `add_messages` reducer" if found.adds_messages else "the `operator.add` reducer"


# --- agents that keep a conversation ---------------------------------------------------------


def memories(facts) -> list[Kept]:
    """`create_react_agent` / `create_agent` with a checkpointer and nothing that trims, and
    prompt chains a node invokes with the whole checkpointed state."""
    if not any(i.startswith(("langgraph", "langchain")) for i in facts.nodes.imports):
        return []
    found = _whole_state_chains(facts)
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name not in AGENTS or not any(q.startswith(AGENTS[name]) for q in facts.qualified(call.func)):
            continue
        saver = keyword(call, "checkpointer")
        if saver is None or isinstance(saver.value, cst.Name) and saver.value.value in ("None", "False"):
            continue
        saver_text = facts.code(saver.value)
        if name == "create_react_agent":
            if keyword(call, "pre_model_hook") is not None:
                continue
            why = "and no `pre_model_hook` trims what the model gets"
            advice = REACT_ADVICE
        else:
            why = _untrimmed_middleware(facts, keyword(call, "middleware"))
            if why is None:
                continue
            advice = AGENT_ADVICE
        found.append(
            Kept(
                call,
                f"`{name}(..., checkpointer={saver_text})` keeps every message of a thread {why}: each turn sends "
                "the whole thread to the model again",
                advice,
                {"framework": "langgraph", "history": name, "storage": "framework", "sink": name},
            )
        )
    return found


def _whole_state_chains(facts) -> list[Kept]:
    """`chain.invoke(state)` in a node of a checkpointed graph, where `chain` is a prompt chain
    whose placeholder takes a message key of the state whole."""
    found = graph(facts)
    if (
        found is None
        or not found.checkpointers
        or any(callee_name(c) in ("RemoveMessage", "Overwrite") for c in facts.nodes.calls)
    ):
        return []
    kept = []
    for call in facts.nodes.calls:
        if callee_name(call) not in ("invoke", "ainvoke", "stream", "astream") or not isinstance(
            call.func, cst.Attribute
        ):
            continue
        state = positional(call, 0)
        function = facts.function_of(call)
        if (
            state is None
            or not isinstance(state.value, cst.Name)
            or function is None
            or function.name.value not in found.nodes
            or _state_param(function) is None
            or _state_param(function).name.value != state.value.value
        ):
            continue
        key = _placeholder_key(facts, call.func.value, function)
        if key in found.keys:
            chain = facts.code(call.func.value)
            related = [
                (place, f"`{made_by}(...)` makes the chain and the node is registered on a checkpointed graph here")
                for made_by, place in _factory_arguments(facts, call.func.value, function)
                if _made_key(facts, made_by) == key
            ]
            kept.append(
                Kept(
                    state.value,
                    f"`{chain}.{callee_name(call)}({state.value.value})` gives the prompt chain the "
                    f"node's whole state, and its placeholder for `{key}` puts every message of the thread the "
                    "checkpointer keeps into each call (langchain-core 1.8)",
                    NODE_ADVICE,
                    {
                        "framework": "langchain",
                        "history": f'state["{key}"]',
                        "storage": "framework",
                        "sink": f"{chain}.{callee_name(call)}",
                    },
                    tuple(related),
                )
            )
    return kept


def _placeholder_key(facts, expr: cst.BaseExpression, node: cst.FunctionDef, depth: int = 0) -> str | None:
    """The state key a runnable's messages placeholder takes whole: `prompt | llm` whose prompt
    has `MessagesPlaceholder("messages")` (not `n_messages=`), through names, the node's
    parameters bound by `functools.partial` and this module's factory functions; None for
    anything else, and for a chain with a trimming step."""
    if depth > 12:
        return None
    if isinstance(expr, cst.Await):
        return _placeholder_key(facts, expr.expression, node, depth + 1)
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        if isinstance(value, cst.Param) and facts.function_of(value) is not node:
            return _factory_key(facts, facts.function_of(value), value, depth)
        if isinstance(value, cst.Param):
            value = _partial_argument(facts, node, value.name.value)
        return _placeholder_key(facts, value, node, depth + 1) if isinstance(value, cst.BaseExpression) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        if any(_trims(facts, n) for n in walk(expr)):
            return None
        return _placeholder_key(facts, expr.left, node, depth + 1)
    if not isinstance(expr, cst.Call):
        return None
    if callee_name(expr) in ("from_messages", "ChatPromptTemplate"):
        return _placeholder(expr)
    if callee_name(expr) == "partial" and isinstance(expr.func, cst.Attribute):  # `prompt.partial(time=...)`
        return _placeholder_key(facts, expr.func.value, node, depth + 1)
    for function in facts.callees(expr):  # a factory of this module: `return prompt | llm.bind_tools(tools)`
        for value in facts.returns(function):
            key = _placeholder_key(facts, value, function, depth + 1)
            if key is not None:
                return key
    return None


def _factory_key(facts, factory: cst.FunctionDef | None, param: cst.Param, depth: int) -> str | None:
    """The key taken whole by the chain a node factory's parameter is given: `make_node(chain)`
    registered by another module with `chain = factory.build_assistant(...)`, a function of this
    module whose returned chain has a whole-list placeholder."""
    return next(
        (
            key
            for made_by, _ in _given(facts, factory, param)
            for key in [_made_key(facts, made_by, depth)]
            if key is not None
        ),
        None,
    )


def _made_key(facts, made_by: str, depth: int = 0) -> str | None:
    """The key taken whole by the chain the module's function `made_by` returns."""
    for function in facts.functions.get(made_by, ()):
        for value in facts.returns(function) if facts.function_of(function) is None else ():
            key = _placeholder_key(facts, value, function, depth + 1)
            if key is not None:
                return key
    return None


def _given(facts, factory: cst.FunctionDef | None, param: cst.Param) -> list[tuple[str, object]]:
    """(function of this module, where) for what importers give the node factory's `param`."""
    params = [*factory.params.posonly_params, *factory.params.params] if factory is not None else []
    return graph(facts).arguments.get((factory.name.value, params.index(param)), []) if param in params else []


def _factory_arguments(facts, chain: cst.BaseExpression, node: cst.FunctionDef) -> list[tuple[str, object]]:
    """What importers give the node factory whose parameter `chain` is, read in `node`."""
    param = facts.assignment_before(chain) if isinstance(chain, cst.Name) else None
    owner = facts.function_of(param) if isinstance(param, cst.Param) else None
    return _given(facts, owner, param) if owner is not None and owner is not node else []


def _trims(facts, node: cst.CSTNode) -> bool:
    """A step of a chain that trims: `trim_messages(...)`, or a name bound to one."""
    if isinstance(node, cst.Name):
        value = facts.assignment_before(node)
        node = value if isinstance(value, cst.Call) else node
    return isinstance(node, cst.Call) and is_bounding_name(callee_name(node))


def _partial_argument(facts, node: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
    """What `functools.partial(node, param=value)` binds `param` of `node` to, in this module."""
    for call in facts.nodes.calls:
        if (
            callee_name(call) == "partial"
            and call.args
            and isinstance(call.args[0].value, cst.Name)
            and call.args[0].value.value == node.name.value
        ):
            bound = keyword(call, param)
            if bound is not None:
                return bound.value
    return None


def _placeholder(prompt: cst.Call) -> str | None:
    """The variable of the prompt's whole-list placeholder: `MessagesPlaceholder("messages")`,
    `MessagesPlaceholder(variable_name="messages")`, `("placeholder", "{messages}")`."""
    listed = positional(prompt, 0) or keyword(prompt, "messages")
    for element in (
        listed.value.elements if listed is not None and isinstance(listed.value, (cst.List, cst.Tuple)) else ()
    ):
        value = element.value
        if isinstance(value, cst.Call) and callee_name(value) == "MessagesPlaceholder":
            name = keyword(value, "variable_name") or positional(value, 0)
            if keyword(value, "n_messages") is None and name is not None:
                return string(name.value)
        if (
            isinstance(value, cst.Tuple)
            and len(value.elements) == 2
            and string(value.elements[0].value) == "placeholder"
        ):
            text = string(value.elements[1].value) or ""
            if text.startswith("{") and text.endswith("}"):
                return text[1:-1]
    return None


def _untrimmed_middleware(facts, middleware: cst.Arg | None) -> str | None:
    """Why the agent's middleware does not bound what the model gets, or None when it may."""
    if middleware is None:
        return "and no middleware trims what the model gets"
    if not isinstance(middleware.value, (cst.List, cst.Tuple)):
        return None  # built elsewhere: it may trim
    untriggered = False
    for element in middleware.value.elements:
        value = element.value
        name = callee_name(value) if isinstance(value, cst.Call) else ""
        if name == "SummarizationMiddleware":
            if keyword(value, "trigger") or keyword(value, "max_tokens_before_summary"):
                return None
            untriggered = True
        elif name not in NOT_TRIMMING:
            return None  # a middleware of the project's own (or a decorated hook): it may trim
    if untriggered:
        return "and its `SummarizationMiddleware` has no `trigger=`, so it never summarizes (langchain 1.x)"
    return "and none of its middleware trims what the model gets"


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


def exports(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    """What the module's functions are to a graph module importing them (`chatbound.analysis.project.users`):
    a router picking a node by a tool call's name (`ROUTER_TAG`), a node factory whose node
    invokes a parameter with the whole state (`NODE_FACTORY_TAG` + its position), a chain builder
    whose prompt takes a message key whole (`CHAIN_TAG` + the key)."""
    found = []
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
    reads = {
        target.id
        for node in ast.walk(function)
        if isinstance(node, (ast.Assign, ast.For))
        and _ast_reads_tool_calls(node.value if isinstance(node, ast.Assign) else node.iter, set())
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    return [
        s.value
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
        for s in node.body
        if isinstance(s, ast.Return) and s.value is not None and not isinstance(s.value, (ast.Call, ast.List))
    ]


def _ast_reads_tool_calls(expr: ast.AST, names: set[str]) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == "tool_calls" or isinstance(n, ast.Name) and n.id in names
        for n in ast.walk(expr)
    )


def _ast_node_factory(function: ast.AST) -> tuple[int, ast.Call] | None:
    """(the parameter's position, the call) when `function` returns a nested node function that
    invokes that parameter with its whole state: `def make_node(chain): def node(state): chain.invoke(state)`."""
    params = [a.arg for a in function.args.args]
    returned = {r.value.id for r in function.body if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)}
    for node in function.body:
        if (
            not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            or node.name not in returned
            or not node.args.args
        ):
            continue
        state = node.args.args[0].arg
        for call in ast.walk(node):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in RUNS
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in params
                and call.args
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id == state
            ):
                return params.index(call.func.value.id), call
    return None


def _ast_chain_key(function: ast.AST) -> tuple[str, ast.Call] | None:
    """(the key, the prompt) when `function` returns `prompt | llm` whose prompt has a whole-list
    placeholder (the stdlib-tree reading of `_placeholder_key` for a factory of this module)."""
    bound = {
        t.id: n.value for n in function.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    for returned in (n.value for n in function.body if isinstance(n, ast.Return) and n.value is not None):
        value = bound.get(returned.id, returned) if isinstance(returned, ast.Name) else returned
        while isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
            if any(isinstance(c, ast.Call) and is_bounding_name(_ast_name(c.func)) for c in ast.walk(value)):
                return None
            value = value.left
            value = bound.get(value.id, value) if isinstance(value, ast.Name) else value
        if (
            isinstance(value, ast.Call)
            and _ast_name(value.func) in ("from_messages", "ChatPromptTemplate")
            and value.args
        ):
            for element in value.args[0].elts if isinstance(value.args[0], (ast.List, ast.Tuple)) else ():
                key = _ast_placeholder(element)
                if key is not None:
                    return key, value
    return None


def _ast_placeholder(element: ast.expr) -> str | None:
    """`("placeholder", "{messages}")` or `MessagesPlaceholder("messages")` without `n_messages=`."""
    if (
        isinstance(element, ast.Tuple)
        and len(element.elts) == 2
        and all(isinstance(e, ast.Constant) for e in element.elts)
    ):
        kind, text = (e.value for e in element.elts)
        return text[1:-1] if kind == "placeholder" and isinstance(text, str) and text[:1] + text[-1:] == "{}" else None
    if isinstance(element, ast.Call) and _ast_name(element.func) == "MessagesPlaceholder":
        named = {k.arg: k.value for k in element.keywords}
        name = named.get("variable_name") or (element.args[0] if element.args else None)
        if "n_messages" not in named and isinstance(name, ast.Constant) and isinstance(name.value, str):
            return name.value
    return None


def _updated_messages(facts, update: cst.BaseExpression) -> cst.CSTNode | None:
    if not isinstance(update, cst.Dict):
        return None
    for element in update.elements:
        if isinstance(element, cst.DictElement) and string(element.key) in HANDOFF_KEYS:
            return state_messages(facts, element.value)
    return None


def state_messages(facts, expr: cst.CSTNode, depth: int = 0) -> cst.CSTNode | None:
    """`state["messages"]` / `state.messages` whole inside `expr` (through locals, lists, `+`),
    in a module that imports LangGraph."""
    if depth > 4 or graph(facts) is None:
        return None
    if isinstance(expr, cst.Subscript):
        key = expr.slice[0].slice if len(expr.slice) == 1 else None
        if isinstance(key, cst.Index) and string(key.value) in HANDOFF_KEYS and isinstance(expr.value, cst.Name):
            return expr
        if slice_of(expr) is not None and is_whole_slice(expr):
            return state_messages(facts, expr.value, depth + 1)
        return None
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in HANDOFF_KEYS and isinstance(expr.value, cst.Name) and expr.value.value == "state":
            return expr
        return None
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        return state_messages(facts, value, depth + 1) if isinstance(value, cst.BaseExpression) else None
    if isinstance(
        expr,
        (cst.Dict, cst.List, cst.Tuple, cst.DictElement, cst.Element, cst.StarredElement, cst.Arg, cst.BinaryOperation),
    ):
        for child in children(expr):
            found = state_messages(facts, child, depth)
            if found is not None:
                return found
    return None


# --- fixes ----------------------------------------------------------------------------------------


def fix(finding, module: cst.Module, wrapper, lines):
    """A node's send of checkpointed state: `trim_messages(...)` around it; a prebuilt agent
    with a checkpointer: a trimming `pre_model_hook`; `create_agent`: advice."""
    properties = finding.properties
    if properties.get("storage") in ("checkpoint", "platform"):
        return _trimmed_send(finding, module, wrapper, lines), NODE_ADVICE
    if properties.get("framework") != "langgraph":
        return None
    if properties.get("history") == "create_react_agent":
        return _trimming_hook(finding, module, wrapper, lines), REACT_ADVICE
    return None, AGENT_ADVICE


def _trimmed_send(finding, module, wrapper, lines):
    """`llm.invoke(state["messages"])` -> `llm.invoke(trim_messages(state["messages"], ...))`:
    only where the history is itself a call's argument or an item of one (not text)."""
    if not _sent_as_items(wrapper, finding.span):
        return None
    read = text_at(lines, finding.span)
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        TRIM.format(messages=read),
        TRIM_IMPORTS,
        f"Send trim_messages({read}, ...): the last whole turns under 4,000 tokens, the system message kept; "
        "the checkpointer still keeps every message",
        safe=True,
    )


def _sent_as_items(wrapper, span) -> bool:
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        if isinstance(node, cst.Arg):
            items = [node.value]
            if isinstance(node.value, (cst.List, cst.Tuple)):
                items += [e.value for e in node.value.elements]
            elif isinstance(node.value, cst.BinaryOperation):
                items += [node.value.left, node.value.right]
            if any(_span(positions[item]) == span for item in items if item in positions):
                return True
    return False


def _span(where) -> Span:
    return Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)


def _trimming_hook(finding, module, wrapper, lines):
    """`create_react_agent(...)` -> the same call with a `pre_model_hook` that trims."""
    positions = wrapper.resolve(PositionProvider)
    call = next((n for n in positions if isinstance(n, cst.Call) and _span(positions[n]) == finding.span), None)
    if call is None or keyword(call, "state_schema") is not None or any(a.star for a in call.args):
        return None
    args = list(call.args)
    if args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    hook = cst.Arg(
        cst.parse_expression(HOOK),
        keyword=cst.Name("pre_model_hook"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    fixed = call.with_changes(args=[*args, hook])
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        module.code_for_node(fixed),
        TRIM_IMPORTS,
        'Add a pre_model_hook that sends trim_messages(state["messages"], ...) as llm_input_messages: the model '
        "gets the last whole turns under 4,000 tokens, the checkpointer still keeps every message",
        safe=True,
    )
