"""LangChain prompt chains a LangGraph node invokes with its whole state: a chain whose prompt has
a whole-list placeholder puts every message of the key, as the checkpointer keeps it, into each
call.

Checked against langchain-core 1.8.3 and 1.8.4 (prompts/chat.py) and langgraph 1.2.24.

- A prompt chain invoked with the whole state (`chain.invoke(state)` in a node, `chain = prompt |
  llm`) fills its `MessagesPlaceholder("messages")` (or `("placeholder", "{messages}")`) with
  every message of the key (langchain-core 1.8.3 prompts/chat.py `MessagesPlaceholder.
  format_messages`; `n_messages=N` keeps the last N, a bound).
- A node may be made by a factory of another module: `add_node("triage", factory.make_node(
  chain))` with `chain = factory.build_assistant(...)` gives `make_node`'s node the chain that
  `build_assistant` returns in the factory's module, where its placeholder is read (the stdlib
  readings at the end are what `exports`, in `supervisors.py`, tells importers).
"""

from __future__ import annotations

import ast

import libcst as cst

from chatbound.frameworks.langgraph.graphs import RUNS, _state_param, graph
from chatbound.frameworks.langgraph.project import _ast_name
from chatbound.frameworks.langgraph.state import NODE_ADVICE
from chatbound.frameworks.vocabulary import Kept
from chatbound.syntax.messages import callee_name, is_bounding_name, string
from chatbound.syntax.tree import walk
from chatbound.vocabulary.sinks import keyword, positional

# --- prompt chains given the whole state ----------------------------------------------------


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
        method = _run_method(facts, call)
        if method is None:
            continue
        state = positional(call, 0) or keyword(call, "input")
        function = facts.function_of(call)
        if (
            state is None
            or function is None
            or function.name.value not in found.nodes
            or not _whole_state(facts, state.value, _state_param(function))
        ):
            continue
        key = _placeholder_key(facts, method.value, function)
        if key in found.keys:
            chain = facts.code(method.value)
            related = [
                (place, f"`{made_by}(...)` makes the chain and the node is registered on a checkpointed graph here")
                for made_by, place in _factory_arguments(facts, method.value, function)
                if _made_key(facts, made_by) == key
            ]
            kept.append(
                Kept(
                    state.value,
                    f"`{chain}.{method.attr.value}({facts.code(state.value)})` gives the prompt chain the "
                    f"node's whole state, and its placeholder for `{key}` puts every message of the thread the "
                    "checkpointer keeps into each call (langchain-core 1.8)",
                    NODE_ADVICE,
                    {
                        "framework": "langchain",
                        "history": f'state["{key}"]',
                        "storage": "framework",
                        "sink": f"{chain}.{method.attr.value}",
                    },
                    tuple(related),
                )
            )
    return kept


def _run_method(facts, call: cst.Call) -> cst.Attribute | None:
    """`chain.invoke` of `chain.invoke(...)`, or of `run = chain.invoke` ... `run(...)`."""
    func = call.func
    if isinstance(func, cst.Name):
        bound = facts.assignment_before(func)
        func = bound if isinstance(bound, cst.Attribute) else func
    return func if isinstance(func, cst.Attribute) and func.attr.value in RUNS else None


def _whole_state(facts, value: cst.BaseExpression, param: cst.Param | None, depth: int = 0) -> bool:
    """`value` is the node's state parameter: read as is, through names bound to it, or out of
    a container it was put in (`box = {"items": state}` ... `box["items"]`)."""
    if param is None or depth > 4:
        return False
    if isinstance(value, cst.Name):
        bound = facts.assignment_before(value)
        if bound is param:
            return True
        return isinstance(bound, cst.BaseExpression) and _whole_state(facts, bound, param, depth + 1)
    carried = facts.carried(value)
    return carried is not None and _whole_state(facts, carried, param, depth + 1)


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


# --- the same, read with the stdlib ast for importers ----------------------------------------


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
