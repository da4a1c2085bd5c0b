"""Which histories serve more than one user.

A server or a bot is one process answering everyone: what it keeps outside a request (a
module-level list, a class attribute, an attribute of the one instance it builds) is one
history for all callers. Such a history is shared when an entry point that serves many users
(`chatbound.vocabulary.servers`: a route, a bot handler, a Gradio or Chainlit callback), or a
function of the module it calls, grows it with the caller's turn and sends it to a model.
State keyed by who asks (`sessions[user_id]`, a session object, Gradio's history argument) is
per user and never shared here.

Two more shapes hold one conversation for everyone without a list in sight:
- `held_conversations`: a framework object that keeps a conversation (a LangChain memory, a
  chain given one: `chatbound.frameworks.keeps_conversation`) made once for the process, at
  module level or by a cached factory (`functools.cache`), and used while serving;
- `constant_keys`: a run of a store that keeps conversations by key (a checkpointed graph's
  `thread_id`: `chatbound.frameworks.conversation_key`) given a literal, the same for every caller.
A function of a module with no server import is served when an importer that serves many
users calls it (a Streamlit script, a route: `SERVED_TAG`, linked by the project pass).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from chatbound import frameworks
from chatbound.syntax.messages import callee_name
from chatbound.syntax.values import bound_expression
from chatbound.vocabulary.facts import Flow
from chatbound.vocabulary.servers import (
    BARE_EVENTS,
    CACHED_FACTORIES,
    DECORATOR_VERBS,
    HANDLER_CALLS,
    IDENTITY,
    RERUN_PACKAGES,
    SERVED_TAG,
    SERVER_PACKAGES,
)

SHARED_KINDS = ("module", "attribute")  # lasting state with no key: one value per process
SCRIPT = "the script's top level (every session reruns it in the one server process)"


@dataclass(frozen=True)
class Entry:
    """A function that serves many users, and how the code registers it."""

    function: cst.FunctionDef | None  # None: the top level of a script every session reruns
    how: str  # `@app.post("/chat")`, `CommandHandler("ask", ask)`
    node: cst.CSTNode  # the decorator or the registering call

    @property
    def where(self) -> str:
        return self.how if self.function is None else f"the function `{self.function.name.value}` ({self.how})"

    @property
    def name(self) -> str:
        return self.function.name.value if self.function is not None else ""


@dataclass(frozen=True)
class Shared:
    """A history one process keeps for everyone, grown and sent while serving a caller."""

    flow: Flow
    entry: Entry
    growth: tuple[cst.CSTNode, ...]  # the growth sites run while serving
    identity: str  # a parameter of the entry that says who asks ("" when none is in reach)


@dataclass(frozen=True)
class Held:
    """A framework object keeping one conversation, made once for the process, used while serving."""

    made: cst.CSTNode  # where it is made once: the module-level value, or the cached factory's decorator
    how: str  # "at module level", "by the cached factory `get_chain`"
    entry: Entry
    use: cst.CSTNode  # where served code uses it
    identity: str


@dataclass(frozen=True)
class Keyed:
    """A literal naming the conversation a served run continues: one conversation for every caller."""

    key: cst.BaseExpression
    call: cst.Call
    entry: Entry
    identity: str


def _imports_any(facts, packages) -> bool:
    return any(name.lstrip(".").split(".")[0] in packages for name in facts.nodes.imports)


def entries(facts) -> dict[int, Entry]:
    """The module's entry points, by the function's id: those an importer serving many users
    calls (`SERVED_TAG`), and, in a module that imports a package serving many users
    (`SERVER_PACKAGES`), its routes, handlers and callbacks."""
    found: dict[int, Entry] = {}
    given = facts.linked.links.given if facts.linked is not None else {}
    for function in facts.nodes.functions:
        mention = next((m for m in given.get(function.name.value, ()) if m.tag == SERVED_TAG), None)
        if mention is not None and facts.class_of(function) is None and isinstance(facts.parent(function), cst.Module):
            found[id(function)] = Entry(function, f"called by {mention.place.path}:{mention.place.span.line}", function)
    if not _imports_any(facts, SERVER_PACKAGES):
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
                    found.setdefault(
                        id(function), Entry(function, f"{facts.code(call.func)}({handler.value}, ...)", call)
                    )
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


def served(facts, script: bool = False) -> dict[int, Entry]:
    """Every function that runs while an entry point serves a caller: the entry points and the
    module's functions they call, transitively. A method is reached through `self` inside an
    entry of its own class, or through a module-level instance of its class (the one object
    the process builds); an instance built per request is not shared. With `script`, the top
    level of a script every session reruns (`RERUN_PACKAGES`) is an entry too, by `id(None)`:
    what it binds is made again per session, but what it gets from a cache is not."""
    reached = dict(entries(facts))
    if script and _imports_any(facts, RERUN_PACKAGES):
        reached[id(None)] = Entry(None, SCRIPT, facts.rule.context.module)
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
            found.append(Shared(flow, entry, growth, _identity(entry)))
    return found


def _kept_for_everyone(facts, flow: Flow, function: cst.FunctionDef, entry: Entry) -> bool:
    """An attribute is one per process only on an object the process builds once: the class
    of an entry method (a bot's cog, a handler class) or a module-level instance."""
    if flow.history.storage.kind != "attribute":
        return True
    klass = facts.class_of(function)
    return klass is not None and (facts.class_of(entry.function) is klass or bool(_module_instances(facts, klass)))


def _identity(entry: Entry) -> str:
    """The entry's parameter that says who asks, if it has one."""
    function = entry.function
    if function is None:
        return ""
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        if IDENTITY.match(param.name.value):
            return param.name.value
    return ""


def held_conversations(facts) -> list[Held]:
    """Each framework object keeping a conversation that served code uses while the process
    made it once: one per object, at its first use."""
    reached = served(facts, script=True)
    found: dict[int, Held] = {}
    for call in facts.nodes.calls:
        entry = reached.get(id(facts.function_of(call)))
        if entry is None:
            continue
        # the object a method is called on, or given to another module's function that calls it
        receivers = [call.func.value] if isinstance(call.func, cst.Attribute) else []
        for receiver in [*receivers, *facts.given_receivers(call)]:
            once = _made_once(facts, receiver, frozenset())
            if once is not None and id(once[0]) not in found:
                found[id(once[0])] = Held(once[0], once[1], entry, receiver, _identity(entry))
    return list(found.values())


def _made_once(
    facts, expr: cst.CSTNode | None, seen: frozenset, part: int | None = None
) -> tuple[cst.CSTNode, str] | None:
    """Where the process makes the conversation object `expr` names once: a module-level
    binding (not in a script rerun per session), or a call of a cached factory whose parameters
    do not say who asks. `part`: the element of the returned tuple a target unpacks."""
    if isinstance(expr, cst.Name) and expr.value not in seen:
        value = facts.assignment_before(expr)
        unpacked = _unpacked(facts, expr) if value is None else None
        value, part = unpacked if unpacked is not None else (value, None)
        if not isinstance(value, cst.BaseExpression):
            return None
        if facts.function_of(value) is None and part is None and not _imports_any(facts, RERUN_PACKAGES):
            return (value, "at module level") if keeps(facts, value, frozenset()) else None
        return _made_once(facts, value, seen | {expr.value}, part)
    if not isinstance(expr, cst.Call):
        return None
    for function in facts.callees(expr):
        cache = next((d for d in function.decorators if _caches(facts, d.decorator)), None)
        params = [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
        if cache is None or any(IDENTITY.match(p.name.value) for p in params):
            continue
        returned = [_element(value, part) for value in facts.returns(function)]
        if any(keeps(facts, value, frozenset({function.name.value})) for value in returned):
            return cache, f"by the cached factory `{function.name.value}`"
    return None


def _unpacked(facts, name: cst.Name) -> tuple[cst.BaseExpression, int] | None:
    """(value, index) of the last `a, b = value` in `name`'s function (or top level) before it
    that binds `name` as the index-th target: `engine, ctx = load()`."""
    found = None
    for node in facts.nodes.assigns:
        if not isinstance(node, cst.Assign) or facts.function_of(node) is not facts.function_of(name):
            continue
        if facts.order(node) > facts.order(name):
            continue
        for target in node.targets:
            elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ()
            for index, element in enumerate(elements):
                if isinstance(element.value, cst.Name) and element.value.value == name.value:
                    found = (node.value, index)
    return found


def _element(value: cst.BaseExpression, part: int | None) -> cst.BaseExpression | None:
    """What a return gives the `part`-th target of an unpacking (`return engine, ctx`), or all of it."""
    if part is None:
        return value
    elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else ()
    element = elements[part] if part < len(elements) else None
    return element.value if isinstance(element, cst.Element) else None


def _caches(facts, decorator: cst.BaseExpression) -> bool:
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    return bool(facts.qualified(target) & CACHED_FACTORIES)


def keeps(facts, expr: cst.CSTNode | None, seen: frozenset) -> bool:
    """Whether `expr` is an object keeping one conversation: made by a framework call that keeps
    one, a call given one (`Chain(memory=memory)`), a name bound to one, or what a function of
    this module or another returns."""
    if isinstance(expr, cst.Name) and expr.value not in seen:
        return keeps(facts, facts.assignment_before(expr), seen | {expr.value})
    if not isinstance(expr, cst.Call):
        return False
    if any(frameworks.keeps_conversation(name) for name in _made_by(facts, expr)):
        return True
    given = (
        a.value for a in expr.args if a.keyword is not None and a.keyword.value in frameworks.CONVERSATION_KEYWORDS
    )
    if any(keeps(facts, value, seen) for value in given):
        return True
    remote = facts.imported_function(expr)
    if remote is not None and remote.keeps is not None:
        return True
    return any(
        keeps(facts, value, seen | {function.name.value})
        for function in facts.callees(expr)
        if function.name.value not in seen
        for value in facts.returns(function)
    )


def _made_by(facts, call: cst.Call) -> set[str]:
    """What `call` is, qualified: its callee through the imports, or a method of an object an
    imported call built (`index.as_chat_engine()` after `index = VectorStoreIndex.from_documents(d)`)."""
    names = facts.qualified(call.func)
    if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
        names |= {f"{maker}.{call.func.attr.value}" for maker in facts.client_of(call.func.value)}
    return names


def constant_keys(facts) -> list[Keyed]:
    """Each served run of a conversation store (`frameworks.conversation_key`) whose key is a
    literal: every caller continues the same conversation."""
    reached = served(facts)
    found = []
    for call in facts.nodes.calls:
        function = facts.function_of(call)
        entry = reached.get(id(function)) if function is not None else None
        key = _literal(facts, frameworks.conversation_key(facts, call)) if entry is not None else None
        if entry is not None and key is not None:
            found.append(Keyed(key, call, entry, _identity(entry)))
    return found


def _literal(facts, key: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The literal `key` is, or the one a local bound only once holds (`thread_id = 2`), else None."""
    if isinstance(key, cst.Name):
        key = bound_expression(facts.rule, key)
    return key if isinstance(key, (cst.SimpleString, cst.Integer)) else None
