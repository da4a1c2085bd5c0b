"""Which histories serve more than one user.

A server or a bot is one process answering everyone: what it keeps outside a request (a
module-level list, a class attribute, an attribute of the one instance it builds) is one
history for all callers. Such a history is shared when an entry point that serves many users
(`chatbound.vocabulary.servers`: a route, a bot handler, a Gradio or Chainlit callback), or a
function of the module it calls, grows it with the caller's turn and sends it to a model.
State keyed by who asks (`sessions[user_id]`, a session object, Gradio's history argument) is
per user and never shared here.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.facts import Flow
from chatbound.vocabulary.servers import BARE_EVENTS, DECORATOR_VERBS, HANDLER_CALLS, IDENTITY, SERVER_PACKAGES

SHARED_KINDS = ("module", "attribute")  # lasting state with no key: one value per process


@dataclass(frozen=True)
class Entry:
    """A function that serves many users, and how the code registers it."""

    function: cst.FunctionDef
    how: str  # `@app.post("/chat")`, `CommandHandler("ask", ask)`
    node: cst.CSTNode  # the decorator or the registering call


@dataclass(frozen=True)
class Shared:
    """A history one process keeps for everyone, grown and sent while serving a caller."""

    flow: Flow
    entry: Entry
    growth: tuple[cst.CSTNode, ...]  # the growth sites run while serving
    identity: str  # a parameter of the entry that says who asks ("" when none is in reach)


def entries(facts) -> dict[int, Entry]:
    """The module's entry points, by the function's id: none unless the module imports a
    package that serves many users (`SERVER_PACKAGES`)."""
    found: dict[int, Entry] = {}
    if not any(name.lstrip(".").split(".")[0] in SERVER_PACKAGES for name in facts.nodes.imports):
        return found
    for function in facts.nodes.functions:
        for decorator in function.decorators:
            if _serves(decorator.decorator, function):
                found[id(function)] = Entry(function, f"@{facts.code(decorator.decorator)}", decorator)
                break
    for call in facts.nodes.calls:
        handler = _handler_argument(call)
        if isinstance(handler, cst.Name):
            for function in facts.functions.get(handler.value, []):
                if facts.class_of(function) is None:
                    found.setdefault(id(function), Entry(function, facts.code(call), call))
    return found


def _serves(decorator: cst.BaseExpression, function: cst.FunctionDef) -> bool:
    """`@app.post(...)`, `@bot.command()`, `@cl.on_message`, `@client.event` on `on_message`."""
    called = isinstance(decorator, cst.Call)
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    if not isinstance(target, cst.Attribute):
        return False
    verb = target.attr.value
    if called:
        return verb in DECORATOR_VERBS
    return verb in BARE_EVENTS and (verb != "event" or function.name.value == "on_message")


def _handler_argument(call: cst.Call) -> cst.BaseExpression | None:
    where = HANDLER_CALLS.get(callee_name(call))
    if where is None:
        return None
    index, keyword = where
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if len(positional) > index else None


def served(facts) -> dict[int, Entry]:
    """Every function that runs while an entry point serves a caller: the entry points and the
    module's functions they call, transitively. A method is reached through `self` inside an
    entry of its own class, or through a module-level instance of its class (the one object
    the process builds); an instance built per request is not shared."""
    reached = dict(entries(facts))
    work = [entry.function for entry in reached.values()]
    while work:
        function = work.pop()
        entry = reached[id(function)]
        for call in facts.nodes.calls:
            if facts.function_of(call) is not function:
                continue
            for callee in facts.callees(call):
                if id(callee) not in reached and _same_object(facts, call, callee):
                    reached[id(callee)] = entry
                    work.append(callee)
    return reached


def _same_object(facts, call: cst.Call, callee: cst.FunctionDef) -> bool:
    klass = facts.class_of(callee)
    if klass is None:
        return True
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
        return facts.class_of(call) is klass
    return isinstance(receiver, cst.Name) and receiver.value in _module_instances(facts, klass)


def _module_instances(facts, klass: cst.ClassDef) -> set[str]:
    """Module-level names bound to `klass(...)`: `bot = Assistant()`."""
    names: set[str] = set()
    for node in facts.nodes.assigns:
        if isinstance(node, cst.Assign) and facts.function_of(node) is None and facts.class_of(node) is None:
            value = node.value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value == klass.name.value
            ):
                names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return names


def shared_flows(facts) -> list[Shared]:
    """Each history with no key that an entry point grows and sends, once per send."""
    reached = served(facts)
    found = []
    for flow in facts.flows():
        history = flow.history
        if history.storage.kind not in SHARED_KINDS or not history.is_chat:
            continue
        function = facts.function_of(flow.site)
        entry = reached.get(id(function)) if function is not None else None
        if entry is None or not _kept_for_everyone(facts, flow, function, entry):
            continue
        growth = tuple(g for g in history.growth if id(facts.function_of(g)) in reached)
        if growth:
            found.append(Shared(flow, entry, growth, _identity(entry.function)))
    return found


def _kept_for_everyone(facts, flow: Flow, function: cst.FunctionDef, entry: Entry) -> bool:
    """An attribute is one per process only on an object the process builds once: the class
    of an entry method (a bot's cog, a handler class) or a module-level instance."""
    if flow.history.storage.kind != "attribute":
        return True
    klass = facts.class_of(function)
    return klass is not None and (facts.class_of(entry.function) is klass or bool(_module_instances(facts, klass)))


def _identity(function: cst.FunctionDef) -> str:
    """The entry's parameter that says who asks, if it has one."""
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        if IDENTITY.match(param.name.value):
            return param.name.value
    return ""
