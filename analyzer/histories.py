"""Chat facts about one module: where histories live, how they grow, what reaches a model.

`ChatFacts(rule, nodes)` is built once per module from the nodes a `ChatRule` collected in
the single traversal (see `chatbound.chat`). Questions it answers:

- `storage_of(expr)`: the `Storage` an expression names when it is state that outlives a
  request: a `self`/`cls` attribute (dataclass and pydantic fields are attributes), a
  module-level name, an entry of a persistent dict keyed by session (`sessions[sid]`,
  `store.setdefault(sid, [])`, `store.get(sid)`, a local alias of one),
  `st.session_state.x`, Chainlit `cl.user_session.get("x")`, Flask `session["x"]`, a Gradio
  callback's history parameter, or a list kept across the iterations of a chat loop.
- `whole_history_in(expr)`: every `Use` of a whole history inside `expr`: the history
  itself, a copy (`list(h)`, `h.copy()`, `h[1:]`), `[sys, *h]`, `[sys] + h`, a comprehension
  over it, `"\\n".join(...)` over it, an f-string loop building text from it, a local derived
  from it, a module helper returning it (`self.transcript()`). Bounded views (`h[-N:]`, a
  call named like a window or trim) are not uses.
- `histories[key]`: the `History` of a storage: definitions, growth sites, trims, count
  windows, whether it holds tool traffic or a system message, whether it is chat at all.
- `sinks`: every model call (`chatbound.sinks.Sink`); `flows()`: (history, sink) pairs
  where a whole history reaches a model, including through helpers that send a parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from .messages import (
    is_numeric,
    is_textual,
    CHAT_NAME,
    NOT_HISTORY,
    callee_name,
    holds_tool_traffic,
    is_bounding_name,
    is_count_slice,
    is_whole_slice,
    message_roles,
    slice_of,
    string,
)
from .scopes import FUNCTION, MODULE
from .sinks import CLIENT_METHODS, Sink, dotted, sink_of
from .visitors import children, preorder

GROWTH_METHODS = frozenset(
    "append extend insert appendleft add_message add_messages add_user_message add_ai_message "
    "add_assistant_message add_system_message add_tool_message add_messages_async aadd_messages".split()
)
COPIES = frozenset("list tuple copy deepcopy dumps str sorted reversed chain join format".split())
SESSION_OBJECTS = {
    "streamlit.session_state": "st.session_state",
    "flask.session": "session",
    "quart.session": "session",
    "chainlit.user_session": "cl.user_session",
}
ROUTE = re.compile(r"\.(get|post|put|patch|delete|route|api_route|websocket)\b")
SESSION_ATTRIBUTES = ("session", "user_data", "chat_data", "user_session", "session_state")
BOUNDED_CONTAINERS = re.compile(
    r"Reducer$|^ChatMemoryBuffer$|^ChatSummaryMemoryBuffer$|^Memory$|Window|SummaryBuffer|TokenBuffer|"
    r"^ConversationSummaryMemory$|^BufferedChatCompletionContext$|^TokenLimitedChatCompletionContext$|"
    r"^HeadAndTailChatCompletionContext$"
)
INPUT_CALLS = re.compile(r"^(input|raw_input|receive\w*|recv\w*|readline|ask|prompt|get_input|chat_input|listen)$")
# functions that run once to set a history up, not once per turn (few-shot examples, a reset)
SETUP_FUNCTION = re.compile(
    r"^_*(init|post_init|attrs_post_init|model_post_init|setup|set_up|setUp|load|initiali[sz]e|configure|"
    r"seed|bootstrap|prime|warm|reset|clear|new_session|start_session|few_shot|add_examples|build_examples)", re.I
)


# a local read from a store and written back to it (Redis, a file, a database row)
LOADS = re.compile(r"^(get|hget|load\w*|read\w*|fetch\w*|loads|retrieve\w*|get_\w+)$")
SAVES = re.compile(r"^(set|hset|setex|save\w*|store\w*|put\w*|write\w*|persist\w*|dump|upsert\w*)$")


HISTORY_ACCESSOR = re.compile(
    r"^(get_|full_|all_|entire_|whole_)?(transcript|history|conversation|messages|chat_history|message_history)$|"
    r"^(to_input_list|all_messages)$"
)


def is_history_accessor(call: cst.Call) -> bool:
    """`assistant.transcript()`, `store.get_history(sid)`, `result.to_input_list()`: a call whose
    name says it returns the whole conversation (used when the module does not define it)."""
    return bool(HISTORY_ACCESSOR.match(callee_name(call))) and len(call.args) <= 1


@dataclass(frozen=True)
class Storage:
    key: str  # identity shared by every expression naming the same state
    kind: str  # attribute | module | entry | session | gradio | loop | param
    label: str  # how the code spells it at the first place it was seen


@dataclass(frozen=True)
class Use:
    """A whole history inside an expression: `node` is where it enters, `via` how it got there."""

    storage: Storage
    node: cst.CSTNode
    via: tuple[cst.CSTNode, ...] = ()
    text: bool = False  # joined into prompt text: `node` stays the history inside the join


@dataclass
class History:
    storage: Storage
    definitions: list[cst.CSTNode] = field(default_factory=list)
    growth: list[cst.CSTNode] = field(default_factory=list)  # per-turn growth sites
    init_growth: list[cst.CSTNode] = field(default_factory=list)
    trims: list[cst.CSTNode] = field(default_factory=list)
    windows: list[cst.CSTNode] = field(default_factory=list)  # count-bounded views/stores
    roles: set[str] = field(default_factory=set)
    tool_traffic: bool = False
    system_first: bool = False
    bounded_store: bool = False
    textual: bool = False  # grows with text or records, not numbers

    @property
    def is_chat(self) -> bool:
        return bool(self.roles) or self.textual or bool(CHAT_NAME.search(self.storage.key))

    @property
    def unbounded(self) -> bool:
        return bool(self.growth) and self.is_chat and not self.trims and not self.bounded_store


@dataclass(frozen=True)
class Flow:
    history: History
    sink: Sink
    use: Use
    site: cst.Call  # the call where it enters: the sink, or a module helper that sends it



def _paired(targets: list[cst.BaseExpression], value: cst.BaseExpression):
    """Each target with the value it receives: `old, h = h[:-N], h[-N:]` unpacks pairwise."""
    for target in targets:
        if (
            isinstance(target, (cst.Tuple, cst.List))
            and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))
        ):
            yield from zip((e.value for e in target.elements), (e.value for e in value.elements))
        else:
            yield target, value

class ChatFacts:
    def __init__(self, rule: cst.BatchableCSTVisitor, nodes) -> None:
        self.rule = rule
        self.nodes = nodes
        self._ranks: dict[cst.CSTNode, int] | None = None  # see order()
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        for function in nodes.functions:
            self.functions.setdefault(function.name.value, []).append(function)
        self.list_fields = self._list_fields()
        self.gradio_params = self._gradio_params()
        self._storage_cache: dict[int, Storage | None] = {}
        self.histories: dict[str, History] = {}
        self.sinks: list[Sink] = [s for s in map(self._sink, nodes.calls) if s]
        self._summaries: dict[int, tuple] = {}
        self._collect()

    # --- metadata ----------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.rule.get_metadata(ParentNodeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node = self.parent(node)
        while node is not None:
            yield node
            node = self.parent(node)

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """What a dotted name stands for through the module's imports (`st.session_state` ->
        `streamlit.session_state`): all that the chat facts ask of qualified names, without
        LibCST's scope analysis of the whole module."""
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return set()
        tail = "".join(f".{part}" for part in reversed(parts))
        return {bound + tail for bound in self.nodes.bindings.get(node.value, ())}

    def order(self, node: cst.CSTNode) -> int:
        """Where `node` stands in the source: its rank in LibCST's visit order, which is the
        order of the text (an ancestor before what it holds). Cheaper than positions."""
        if self._ranks is None:
            self._ranks = preorder(self.rule.context.module)
        return self._ranks[node]

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def class_of(self, node: cst.CSTNode) -> cst.ClassDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.ClassDef)), None)

    def loops_of(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        found = []
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(a, (cst.While, cst.For)):
                found.append(a)
        return found

    def inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        return node is outer or any(a is outer for a in self.ancestors(node))

    def code(self, node: cst.CSTNode) -> str:
        return self.rule.context.module.code_for_node(node)

    # --- clients -----------------------------------------------------------------------

    def client_of(self, receiver: cst.BaseExpression) -> set[str]:
        """Qualified names of the constructors `receiver` was built by: `client = OpenAI()`,
        `self.llm = ChatAnthropic(...)` anywhere in the class ("which client")."""
        values: list[cst.CSTNode] = []
        if isinstance(receiver, cst.Name):
            values.append(self.assignment_before(receiver))
        elif isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
            klass, attr = self.class_of(receiver), receiver.attr.value
            for node in self.nodes.assigns:
                if isinstance(node, cst.Assign) and self.class_of(node) is klass and any(
                    isinstance(t.target, cst.Attribute) and t.target.attr.value == attr
                    and isinstance(t.target.value, cst.Name) and t.target.value.value == "self" for t in node.targets
                ):
                    values.append(node.value)
        names: set[str] = set()
        for value in values:
            if isinstance(value, cst.Await):
                value = value.expression
            if isinstance(value, cst.Call):
                names |= self.qualified(value.func)
        return names

    def _sink(self, call: cst.Call) -> Sink | None:
        """`sink_of`, plus model clients known only by their constructor (AutoGen `create`),
        and the framework of a generic `x.chat(...)` named after x's constructor."""
        sink = sink_of(call, self.qualified)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        name = callee_name(call)
        if sink is None and receiver is not None and name in CLIENT_METHODS:
            package = CLIENT_METHODS[name]
            if any(client.startswith(package) for client in self.client_of(receiver)):
                return Sink(call, f"{package}.{name}", package, tuple(a.value for a in call.args))
        if sink is not None and sink.framework == "chat" and receiver is not None:
            package = next((n.split(".")[0] for n in self.client_of(receiver)), "")
            if package:
                return Sink(call, f"{package}.chat", package, sink.content)
        return sink

    # --- storage -----------------------------------------------------------------------

    def session_object(self, expr: cst.BaseExpression) -> str | None:
        """Streamlit/Flask/Chainlit session objects, and per-user stores frameworks hand to
        callbacks (`request.session`, python-telegram-bot's `context.user_data`)."""
        for name in self.qualified(expr):
            if name in SESSION_OBJECTS:
                return SESSION_OBJECTS[name]
        if isinstance(expr, cst.Attribute) and expr.attr.value in SESSION_ATTRIBUTES:
            return expr.attr.value
        return None

    def storage_of(self, expr: cst.CSTNode, seen: frozenset = frozenset()) -> Storage | None:
        """The lasting state `expr` names, or None (a local, a call result, a constant)."""
        if seen:
            return self._storage_of(expr, seen)
        key = id(expr)
        if key not in self._storage_cache:
            self._storage_cache[key] = None
            self._storage_cache[key] = self._storage_of(expr, seen)
        return self._storage_cache[key]

    def _storage_of(self, expr: cst.CSTNode, seen: frozenset) -> Storage | None:
        if isinstance(expr, cst.Attribute):
            base = expr.value
            if isinstance(base, cst.Name) and base.value in ("self", "cls"):
                klass = self.class_of(expr)
                if klass is not None:
                    getter = self._property_storage(klass, expr.attr.value, seen)
                    if getter is not None:
                        return getter
                    key = f"{klass.name.value}.{expr.attr.value}"
                    return Storage(key, "attribute", self.code(expr))
            session = self.session_object(base)
            if session is not None:
                return Storage(f"{session}.{expr.attr.value}", "session", self.code(expr))
            field = self._field_storage(expr)  # a list field of a module class: one identity
            if field is not None:
                return field
            owner = self.storage_of(base, seen)
            if owner is not None:
                return Storage(f"{owner.key}.{expr.attr.value}", owner.kind, self.code(expr))
            return None
        if isinstance(expr, cst.Subscript):
            return self._entry(expr.value, expr.slice[0].slice if len(expr.slice) == 1 else None, expr, seen)
        if isinstance(expr, cst.Call):
            returned = self._returned_storage(expr, seen)  # a helper of this module, by name
            if returned is None and isinstance(expr.func, cst.Attribute) and expr.args:
                if expr.func.attr.value in ("setdefault", "get"):
                    return self._entry(expr.func.value, expr.args[0].value, expr, seen)
            return returned
        if isinstance(expr, cst.Name):
            return self._name_storage(expr, seen)
        return None

    def _property_storage(self, klass: cst.ClassDef, attr: str, seen: frozenset) -> Storage | None:
        """`self.history` read through `@property def history(self): return self._history`."""
        for function in self.functions.get(attr, ()):
            if self.class_of(function) is klass and id(function) not in seen and any(
                callee_name(cst.Call(d.decorator)) in ("property", "cached_property") for d in function.decorators
            ):
                for value in self.returns(function):
                    found = self.storage_of(value, seen | {id(function)})
                    if found is not None:
                        return found
        return None

    def _entry(self, container, key, expr, seen) -> Storage | None:
        if isinstance(key, cst.Index):
            key = key.value
        if key is None or isinstance(key, (cst.Slice, cst.Integer, cst.UnaryOperation)):
            return None
        session = self.session_object(container)
        owner = Storage(session, "session", session) if session else self.storage_of(container, seen)
        if owner is None:
            return None
        text = string(key)
        label = f"{self.code(container)}[{self.code(key)}]"
        if text is not None:
            spelled = f"{owner.key}.{text}" if owner.kind == "session" else f"{owner.key}[{text!r}]"
            return Storage(spelled, owner.kind, label)
        return Storage(f"{owner.key}[]", "entry" if owner.kind != "session" else "session", label)

    def _field_storage(self, expr: cst.Attribute) -> Storage | None:
        """`conv.messages` where `messages` is a list field of a dataclass/model of this module."""
        klass = self.list_fields.get(expr.attr.value)
        if klass is None or self._is_request_body(expr.value):
            return None
        return Storage(f"{klass}.{expr.attr.value}", "attribute", self.code(expr))

    def _is_request_body(self, base: cst.BaseExpression) -> bool:
        """`body.messages` in `@app.post(...) def chat(body: ChatRequest)`: the client's copy."""
        if not isinstance(base, cst.Name):
            return False
        value = self.assignment_before(base)
        function = self.function_of(value) if isinstance(value, cst.Param) else None
        return function is not None and any(
            ROUTE.search(self.code(decorator.decorator)) for decorator in function.decorators
        )

    def _list_fields(self) -> dict[str, str]:
        found = {}
        for klass in self.nodes.classes:
            for statement in klass.body.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        if (
                            isinstance(small, cst.AnnAssign)
                            and isinstance(small.target, cst.Name)
                            and small.value is not None
                            and re.search(r"list|List|deque|Sequence", self.code(small.annotation.annotation) + self.code(small.value))
                        ):
                            found[small.target.value] = klass.name.value
        return found

    def assignment_before(self, name: cst.Name) -> cst.CSTNode | None:
        """The value (or Param) last bound to `name` before it is read, within its scope."""
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        where = self.order(name)
        best, best_at = None, None
        for assignment in scope[name.value]:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                at = 0
                value: cst.CSTNode | None = node
            elif isinstance(node, cst.Name) and not isinstance(self.parent(node), cst.AugAssign):
                at = self.order(node)
                value = self.bound_value(node)
            else:
                continue
            if assignment.scope.kind == MODULE and scope.kind != MODULE and (
                self.function_of(node) is not self.function_of(name)
            ):
                at = 0  # a global read inside a function sees the module binding (or its own `global` ones)
            if isinstance(value, cst.CSTNode) and not isinstance(value, cst.Param) and self.inside(name, value):
                continue  # `h = h[-10:]`: the read sees the binding before this one
            if at < where and (best_at is None or at >= best_at):
                best, best_at = value, at
        return best

    def bound_value(self, target: cst.Name) -> cst.CSTNode | None:
        parent = self.parent(target)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parent(parent)
            return assign.value if isinstance(assign, cst.Assign) else None
        if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is target:
            return parent if isinstance(parent, cst.AugAssign) else parent.value
        if isinstance(parent, cst.NamedExpr):
            return parent.value
        if isinstance(parent, cst.For):
            return parent  # a loop variable: one element, not the list
        return None

    def _name_storage(self, name: cst.Name, seen: frozenset) -> Storage | None:
        if name in seen:
            return None
        seen = seen | {name}
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        if scope is None or name.value in ("self", "cls"):
            return None
        assignments = list(scope[name.value])
        if assignments and all(a.scope.kind == MODULE for a in assignments):
            if any(self._is_variable(getattr(a, "node", None)) for a in assignments):
                if len(assignments) == 1:  # `history = st.session_state.setdefault("history", [])`
                    value = self.bound_value(assignments[0].node)
                    held = self.storage_of(value, seen) if isinstance(value, cst.BaseExpression) else None
                    if held is not None and held.kind == "session":
                        return held
                return Storage(name.value, "module", name.value)
            return None
        outer = {a.scope for a in assignments} - {scope}
        if assignments and outer and all(o.kind == FUNCTION for o in outer):
            node = getattr(assignments[0], "node", None)
            if self._is_variable(node) and scope.kind == FUNCTION:  # a closure's state
                function = self.function_of(node)
                return Storage(f"{function.name.value if function else ''}.{name.value}", "closure", name.value)
        value = self.assignment_before(name)
        if isinstance(value, cst.Param):
            function = self.function_of(value)
            if function is not None and (id(function), value.name.value) in self.gradio_params:
                return Storage(f"{function.name.value}({value.name.value})", "gradio", value.name.value)
            return None
        if value is None or isinstance(value, (cst.For, cst.AugAssign)):
            return None
        if isinstance(value, cst.Await):
            value = value.expression
        found = self.storage_of(value, seen) or self._chained_storage(value, name, seen) or self._default_of(value, name, seen)
        if found is not None:
            return Storage(found.key, found.kind, found.label)
        same = next((n for n in walk(value) if isinstance(n, cst.Name) and n.value == name.value), None)
        if same is not None:  # `h = h[-N:]`, `h = h + [m]`: still the same history, rebound
            return self.storage_of(same, seen)
        return self._loop_storage(name, value, scope) or self._round_trip(name, value)

    def _round_trip(self, name: cst.Name, value: cst.CSTNode) -> Storage | None:
        """`h = json.loads(r.get(key))` ... `r.set(key, json.dumps(h))`: loaded from a store and
        saved back whole in the same function, so it outlives the request."""
        function = self.function_of(value)
        if function is None or not isinstance(value, (cst.Call, cst.Await, cst.BooleanOperation, cst.IfExp)):
            return None
        loads = [n for n in walk(value) if isinstance(n, cst.Call) and LOADS.match(callee_name(n)) and not self._on_param(n)]
        if not loads:
            return None
        places = {self._place(call) for call in loads}  # the store and key it was read from
        start = self.order(value)
        for call in self.nodes.calls:
            if SAVES.match(callee_name(call)) and self.order(call) > start and self.function_of(call) is function:
                whole = any(self._names_whole(arg.value, name.value) for arg in call.args)
                if whole and any(p & self._place(call) for p in places):
                    return Storage(f"{function.name.value}:{name.value}", "stored", name.value)
        return None

    def _on_param(self, call: cst.Call) -> bool:
        """`ctx.store.get(...)` on a parameter: a store handed in for one run, not one that lasts."""
        base = call.func
        while isinstance(base, (cst.Attribute, cst.Call)):
            base = base.value if isinstance(base, cst.Attribute) else base.func
        return isinstance(base, cst.Name) and base.value not in ("self", "cls") and isinstance(
            self.assignment_before(base), cst.Param)

    @staticmethod
    def _names_whole(expr: cst.CSTNode, name: str) -> bool:
        """`name` appears in `expr` outside any slice or bounding call (`json.dumps(h)`, not `h[-20:]`)."""
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name) and node.value == name:
                return True
            if isinstance(node, cst.Subscript) and slice_of(node) is not None:
                continue
            if isinstance(node, cst.Call) and is_bounding_name(callee_name(node)):
                continue
            stack.extend(children(node))
        return False

    def _place(self, call: cst.Call) -> frozenset:
        """What names where a load/save goes: its receiver and its key arguments."""
        receiver = {self.code(call.func.value)} if isinstance(call.func, cst.Attribute) else set()
        keys = {self.code(a.value) for a in call.args if isinstance(a.value, (cst.Name, cst.Attribute, cst.FormattedString))}
        return frozenset(receiver | keys)

    def _chained_storage(self, value: cst.CSTNode, name: cst.Name, seen: frozenset) -> Storage | None:
        """`h = store[sid] = []`: the local and the lasting entry are one list."""
        assign = self.parent(value)
        if not isinstance(assign, cst.Assign) or len(assign.targets) < 2:
            return None
        for target in assign.targets:
            if not (isinstance(target.target, cst.Name) and target.target.value == name.value):
                found = self.storage_of(target.target, seen)
                if found is not None:
                    return found
        return None

    def _default_of(self, value: cst.CSTNode, name: cst.Name, seen: frozenset) -> Storage | None:
        """`h = store.get(sid)` then `if h is None: h = []; store[sid] = h`: the fresh list is a
        default for a missing entry, so the local still names the entry its test read."""
        if not self._is_fresh_list(value):
            return None
        function = self.function_of(value)
        for a in self.ancestors(value):
            if a is function:
                return None
            if isinstance(a, cst.If):
                read = next((n for n in walk(a.test) if isinstance(n, cst.Name) and n.value == name.value), None)
                return self.storage_of(read, seen) if read is not None else None
        return None

    def _loop_storage(self, name: cst.Name, value: cst.CSTNode, scope) -> Storage | None:
        """A fresh list bound to a local that a chat loop grows: a history for the loop's life."""
        if scope is not None and scope.kind == FUNCTION and self._is_fresh_list(value) and self._is_chat_loop(name, value):
            function = self.function_of(value)
            return Storage(f"{function.name.value if function else ''}:{name.value}", "loop", name.value)
        return None

    def _is_variable(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Name) and isinstance(self.parent(node), (cst.AssignTarget, cst.AnnAssign))

    @staticmethod
    def _is_fresh_list(value: cst.CSTNode) -> bool:
        return isinstance(value, cst.List) or (isinstance(value, cst.Call) and callee_name(value) in ("list", "deque"))

    def _is_chat_loop(self, name: cst.Name, value: cst.CSTNode) -> bool:
        """A local list grown in a loop that reads a new user message each iteration."""
        defined_in = set(map(id, self.loops_of(value)))
        for site, _ in self.nodes.growth_by_name.get(name.value, ()):
            loops = [loop for loop in self.loops_of(site) if id(loop) not in defined_in]
            if not loops or self.function_of(site) is not self.function_of(value):
                continue
            if any(any(l is loop for l in self.loops_of(call)) for call in self.nodes.input_calls for loop in loops):
                return True
            if self._adds_user_turn(site) and any(
                self._iterates_data(loop) and any(self.inside(sink.call, loop) for sink in self.sinks) for loop in loops
            ):
                return True
        return False

    @staticmethod
    def _iterates_data(loop: cst.CSTNode) -> bool:
        """`for question in questions:`, not `for _ in range(5)` (a bounded tool loop)."""
        if not isinstance(loop, cst.For):
            return False
        return not (isinstance(loop.iter, cst.Call) and callee_name(loop.iter) in ("range", "enumerate"))

    def _returned_storage(self, call: cst.Call, seen: frozenset) -> Storage | None:
        """`self._history(sid)` / `get_history(sid)`: a module helper returning lasting state."""
        for function in self.callees(call):
            if id(function) in seen:
                continue
            for value in self.returns(function):
                found = self.storage_of(value, seen | {id(function)})
                if found is not None and found.kind != "loop":
                    return found
        return None

    # --- module helpers ------------------------------------------------------------------

    def callees(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Functions of this module `call` may run: by name, methods of the same class first."""
        func = call.func
        if isinstance(func, cst.Name):
            return [f for f in self.functions.get(func.value, []) if self.class_of(f) is None]
        if isinstance(func, cst.Attribute):
            candidates = self.functions.get(func.attr.value, [])
            if isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
                klass = self.class_of(call)
                same = [f for f in candidates if self.class_of(f) is klass]
                return same or candidates
            return candidates if len(candidates) == 1 else []
        return []

    def returns(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        return [r.value for r in self.nodes.returns if r.value is not None and self.function_of(r) is function]

    def _params(self, function: cst.FunctionDef) -> list[cst.Param]:
        return [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]

    def argument_for(self, call: cst.Call, function: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
        params = self._params(function)
        names = [p.name.value for p in params]
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        offset = 1 if names and names[0] in ("self", "cls") and isinstance(call.func, cst.Attribute) else 0
        positional = [a for a in call.args if a.keyword is None and not a.star]
        index = names.index(param) - offset if param in names else -1
        return positional[index].value if 0 <= index < len(positional) else None

    # --- growth, trims, windows ----------------------------------------------------------

    def growth_values(self, site: cst.CSTNode) -> list[cst.CSTNode]:
        if isinstance(site, cst.Call):
            return [a.value for a in site.args if a.keyword is None][-1:] if site.args else []
        if isinstance(site, cst.AugAssign):
            return [site.value]
        if isinstance(site, cst.Assign):
            return [site.value]
        return []

    def carries_tools(self, value: cst.CSTNode) -> bool:
        """Tool traffic, also when the content is a local list of tool results (Anthropic)."""
        if holds_tool_traffic(value):
            return True
        content = None
        if isinstance(value, cst.Dict):
            content = next((e.value for e in value.elements if isinstance(e, cst.DictElement)
                            and string(e.key) == "content"), None)
        if not isinstance(content, cst.Name):
            return False
        bound = self.assignment_before(content)
        if isinstance(bound, (cst.ListComp, cst.GeneratorExp)):
            return holds_tool_traffic(bound.elt)
        if isinstance(bound, cst.List):
            return any(holds_tool_traffic(e.value) for e in bound.elements) or any(
                holds_tool_traffic(operand) for site, operand in self.nodes.growth_by_name.get(content.value, ())
                if operand is not None and self.function_of(site) is self.function_of(content)
            )
        return False

    def history(self, storage: Storage) -> History:
        found = self.histories.get(storage.key)
        if found is None:
            found = self.histories[storage.key] = History(storage)
        return found

    def _is_per_turn(self, site: cst.CSTNode, storage: Storage) -> bool:
        if storage.kind in ("loop", "gradio"):
            return True
        function = self.function_of(site)
        if function is None:
            return storage.kind == "session" or bool(self.loops_of(site))
        return not SETUP_FUNCTION.match(function.name.value)

    def _grow(self, storage: Storage, site: cst.CSTNode) -> None:
        history = self.history(storage)
        (history.growth if self._is_per_turn(site, storage) else history.init_growth).append(site)
        values = self.growth_values(site)
        roles = [r for v in values for r in message_roles(v)]
        history.roles.update(roles)
        if any(is_textual(v) or not is_numeric(v) for v in values):
            history.textual = True
        if any(self.carries_tools(v) for v in values):
            history.tool_traffic = True
        if "system" in roles:
            history.system_first = True

    def _collect(self) -> None:
        for call in self.nodes.growth_calls:
            target = call.func.value
            storage = self.storage_of(target)
            if storage is not None:
                self._grow(storage, call)
                if callee_name(call).startswith("add_"):
                    self._grow(Storage(storage.key + ".messages", storage.kind, storage.label), call)
        for call in self.nodes.calls:
            if callee_name(call) == "setdefault" and any(is_ring(a.value) for a in call.args):
                storage = self.storage_of(call)
                if storage is not None:
                    self.history(storage).bounded_store = True
                    self.history(storage).windows.extend(a.value for a in call.args if is_ring(a.value))
        for call in self.nodes.trim_calls:
            storage = self.storage_of(call.func.value)
            if storage is not None and self._trims(call):
                self.history(storage).trims.append(call)
        for node in self.nodes.assigns:
            self._collect_assign(node)
        for node in self.nodes.dels:
            for target in deleted(node):
                if isinstance(target, cst.Subscript):
                    storage = self.storage_of(target.value)
                    if storage is not None:
                        history = self.history(storage)
                        history.trims.append(node)
                        part = slice_of(target)
                        if part is not None and part.lower is None and part.upper is not None:
                            history.windows.append(node)
        for call in self.nodes.calls:
            self._collect_helper_growth(call)
        for key, function, param in self.gradio_params.values():
            history = self.history(Storage(key, "gradio", param))
            history.growth.append(function)
            history.roles.add("message")

    def _trims(self, call: cst.Call) -> bool:
        name = callee_name(call)
        if name in ("popleft", "reduce"):
            return True
        if name == "pop":
            return bool(call.args) and not isinstance(call.args[0].value, (cst.SimpleString, cst.Name))
        return name == "clear" and self._under_size_test(call)

    def _under_size_test(self, node: cst.CSTNode) -> bool:
        """Inside `if len(h) > N:` / `while tokens(h) > budget:`, here or at every call of the helper."""
        if self._size_tested(node):
            return True
        function = self.function_of(node)
        if function is None:
            return False
        callers = [c for c in self.nodes.calls if callee_name(c) == function.name.value and function in self.callees(c)]
        return bool(callers) and all(self._size_tested(c) for c in callers)

    def _size_tested(self, node: cst.CSTNode) -> bool:
        for a in self.ancestors(node):
            if isinstance(a, (cst.If, cst.While)):
                test = self.code(a.test)
                if re.search(r"len\(|token|count|size", test):
                    return True
            if isinstance(a, cst.FunctionDef):
                return False
        return False

    def _collect_assign(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.AugAssign):
            storage = self.storage_of(node.target)
            if storage is not None and isinstance(node.operator, (cst.AddAssign, cst.BitOrAssign)):
                self._grow(storage, node)
            return
        value = node.value
        if value is None:
            return
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target, value in _paired(targets, value):
            whole_target = target
            if isinstance(target, cst.Subscript) and slice_of(target) is not None:
                target = target.value  # h[:] = ...
            storage = self._target_storage(target, value)
            if storage is None:
                continue
            history = self.history(storage)
            uses = [u for u in self.whole_history_in(value) if u.storage.key == storage.key]
            views = [n for k, n in self.bounded_views_in(value) if k == storage.key]
            callee = callee_name(value) if isinstance(value, cst.Call) else ""
            ctor = next((p for p in dotted(value.func) if p[:1].isupper()), callee) if callee else ""
            if views or (is_bounding_name(callee) and uses):
                history.trims.append(node)
                history.windows.extend(n for n in views if isinstance(n, cst.Subscript) and is_count_slice(n))
            elif (uses and self._extends(value, storage.key)) or callee in ("to_input_list", "all_messages"):
                self._grow(storage, node)
            elif uses:
                continue  # `store[sid] = history`: an alias written back
            elif whole_target is target or not isinstance(whole_target, cst.Subscript):
                for ring in filter(is_ring, walk(value)):  # deque(maxlen=N), or one per session entry
                    held = history if ring is value else self.history(Storage(storage.key + "[]", "entry", storage.label))
                    held.bounded_store = True
                    held.windows.append(ring)
                if isinstance(value, cst.Call) and BOUNDED_CONTAINERS.search(ctor):
                    history.bounded_store = True
                if isinstance(value, cst.List) and value.elements and "system" in message_roles(value.elements[0].value):
                    history.system_first = True
                if self._under_size_test(node) and not uses:
                    history.trims.append(node)
                history.definitions.append(node)

    def _extends(self, value: cst.CSTNode, key: str) -> bool:
        """`h + [m]`, `[*h, m]`, `f"{h}..."`: the old value plus more (not `new or h`)."""
        if isinstance(value, cst.IfExp):
            return self._extends(value.body, key) or self._extends(value.orelse, key)
        if isinstance(value, (cst.BinaryOperation, cst.List, cst.Tuple, cst.FormattedString, cst.ConcatenatedString)):
            return any(u.storage.key == key for u in self.whole_history_in(value))
        if isinstance(value, cst.Name):
            bound = self.assignment_before(value)
            return isinstance(bound, cst.BaseExpression) and self._extends(bound, key)
        return False

    def _target_storage(self, target: cst.CSTNode, value: cst.CSTNode) -> Storage | None:
        """What an assignment target names: a module variable, or a local alias's storage."""
        if not isinstance(target, cst.Name):
            return self.storage_of(target)
        scope = self.rule.get_metadata(ScopeProvider, target, None)
        if scope is not None and any(a.scope.kind == MODULE for a in scope[target.value]):
            return Storage(target.value, "module", target.value)
        read = next((n for n in walk(value) if isinstance(n, cst.Name) and n.value == target.value), None)
        if read is None:
            return self._loop_storage(target, value, scope)
        found = self.storage_of(read) if read is not None else None
        return found if found is not None and found.kind == "loop" else None

    def _collect_helper_growth(self, call: cst.Call) -> None:
        """`self._remember(self.history, msg)` / `add_turn(history, ...)`: a helper that grows."""
        for function in self.callees(call):
            for param in self._grown_params(function):
                argument = self.argument_for(call, function, param)
                storage = self.storage_of(argument) if argument is not None else None
                if storage is not None:
                    self._grow(storage, call)

    def _grown_params(self, function: cst.FunctionDef) -> list[str]:
        names = {p.name.value for p in self._params(function)} - {"self", "cls"}
        grown = []
        for name in names:
            for site, _ in self.nodes.growth_by_name.get(name, ()):
                if self.function_of(site) is function:
                    grown.append(name)
                    break
        return grown

    # --- whole histories and bounded views -------------------------------------------------

    def whole_history_in(self, expr: cst.CSTNode, seen: frozenset = frozenset()) -> list[Use]:
        """Every whole history inside `expr` (see the module docstring); [] for bounded views."""
        storage = self.storage_of(expr)
        if storage is not None:
            return [Use(storage, expr)]
        if isinstance(expr, cst.Name):
            return self._local_uses(expr, seen)
        if isinstance(expr, cst.Subscript):
            if is_whole_slice(expr):
                return self.whole_history_in(expr.value, seen)
            if isinstance(expr.value, (cst.Call, cst.Attribute)) and not slice_of(expr):
                key = expr.slice[0].slice.value if len(expr.slice) == 1 else None
                if string(key) in ("messages", "history", "chat_history"):
                    return self.whole_history_in(expr.value, seen)
            return []
        if isinstance(expr, cst.Call):
            return self._call_uses(expr, seen)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self.whole_history_in(expr.for_in.iter, seen)
        if isinstance(expr, (cst.Lambda, cst.Comparison, cst.UnaryOperation)):
            return []
        if isinstance(expr, cst.IfExp):
            return self.whole_history_in(expr.body, seen) + self.whole_history_in(expr.orelse, seen)
        if isinstance(expr, cst.FormattedString):
            return [as_text(u) for child in expr.parts for u in self.whole_history_in(child, seen)]
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("messages", "chat_history", "history"):
                return self.whole_history_in(expr.value, seen)
            return []
        uses: list[Use] = []
        for child in children(expr):
            if isinstance(child, cst.CSTNode):
                uses.extend(self.whole_history_in(child, seen))
        return uses

    def _call_uses(self, call: cst.Call, seen: frozenset) -> list[Use]:
        name = callee_name(call)
        if is_bounding_name(name):
            return []
        callees = self.callees(call)
        if callees:
            uses = []
            for function in callees:
                if id(function) in seen:
                    continue
                for value in self.returns(function):
                    for use in self.whole_history_in(value, seen | {id(function)}):
                        if use.storage.kind == "param":
                            argument = self.argument_for(call, function, use.storage.label)
                            inner = self.whole_history_in(argument, seen) if argument is not None else []
                            uses.extend(Use(u.storage, u.node, u.via + use.via) for u in inner)
                        else:
                            uses.append(Use(use.storage, call, (use.node, *use.via)))
            return uses
        if is_history_accessor(call):
            return [Use(Storage(self.code(call.func) + "()", "accessor", self.code(call)), call)]
        if NOT_HISTORY.search(name):
            return []
        uses = []
        if isinstance(call.func, cst.Attribute) and name in ("copy", "join", "format", "model_dump", "to_list", "values"):
            uses.extend(self.whole_history_in(call.func.value, seen))
        if name == "join" or name in COPIES or not name.startswith("_"):
            for arg in call.args:
                uses.extend(self.whole_history_in(arg.value, seen))
        if name in TEXTS:
            uses = [as_text(u) for u in uses]
        elif name == "loads":  # `json.loads(json.dumps(h))`: parsed back, a copy of the list
            uses = [Use(u.storage, u.node, u.via) for u in uses]
        return uses

    def _local_uses(self, name: cst.Name, seen: frozenset) -> list[Use]:
        """A local built from a history before this read: `msgs = [sys] + h`, `text += f"{m}"`."""
        if name in seen:
            return []
        seen = seen | {name}
        value = self.assignment_before(name)
        if isinstance(value, cst.Param):
            function = self.function_of(value)
            if function is not None and value.name.value not in ("self", "cls"):
                return [Use(Storage(f"param:{id(function)}:{value.name.value}", "param", value.name.value), name)]
            return []
        uses: list[Use] = []
        assigned_at = None
        if value is not None and not isinstance(value, (cst.For, cst.AugAssign)):
            assigned_at = value
            uses.extend(rerooted(u, name) for u in self.whole_history_in(value, seen))
        function = self.function_of(name)
        start = self.order(assigned_at) if assigned_at is not None else 0
        end = self.order(name)
        for site, operand in self.nodes.growth_by_name.get(name.value, ()):
            if self.function_of(site) is not function or not (start <= self.order(site) < end):
                continue
            inner = self.whole_history_in(operand, seen) if operand is not None else []
            for loop in self.loops_of(site):
                if isinstance(loop, cst.For) and not self._stops_early(loop):
                    looped = self.whole_history_in(loop.iter, seen)
                    inner.extend(as_text(u) for u in looped) if isinstance(site, cst.AugAssign) else inner.extend(looped)
            uses.extend(rerooted(u, name) for u in inner)
        if uses and self._local_trimmed(name, function):
            return []
        return uses

    @staticmethod
    def _stops_early(loop: cst.For) -> bool:
        """`for m in reversed(h): ... break`: a loop that can stop before the end selects a part."""
        return any(isinstance(n, (cst.Break, cst.Return)) for n in walk(loop.body) if not isinstance(n, cst.FunctionDef))

    def _local_trimmed(self, name: cst.Name, function) -> bool:
        for node in self.nodes.dels:
            if self.function_of(node) is function and any(
                isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name.value
                for t in deleted(node)
            ):
                return True
        for call in self.nodes.trim_calls:
            receiver = call.func.value
            if isinstance(receiver, cst.Name) and receiver.value == name.value and self.function_of(call) is function:
                if self._trims(call):
                    return True
        return False

    def bounded_views_in(self, expr: cst.CSTNode, seen: frozenset = frozenset()) -> list[tuple[str, cst.CSTNode]]:
        """(history key, node) for every bounded view of a history inside `expr`."""
        found: list[tuple[str, cst.CSTNode]] = []
        if id(expr) in seen:
            return found
        seen = seen | {id(expr)}
        if isinstance(expr, cst.Subscript) and slice_of(expr) is not None and not is_whole_slice(expr):
            found.extend((u.storage.key, expr) for u in self.whole_history_in(expr.value))
            return found
        if isinstance(expr, cst.Call) and is_bounding_name(callee_name(expr)):
            for arg in expr.args:
                found.extend((u.storage.key, expr) for u in self.whole_history_in(arg.value))
            return found
        if isinstance(expr, cst.Name):
            value = self.assignment_before(expr)
            if value is not None and not isinstance(value, (cst.Param, cst.For, cst.AugAssign)):
                return self.bounded_views_in(value, seen)
            return found
        for child in children(expr):
            if isinstance(child, cst.BaseExpression) or isinstance(child, (cst.Element, cst.Arg, cst.DictElement, cst.BaseFormattedStringContent, cst.StarredDictElement)):
                found.extend(self.bounded_views_in(child, seen))
            elif isinstance(child, cst.CSTNode) and not isinstance(child, (cst.BaseSuite,)):
                found.extend(self.bounded_views_in(child, seen))
        return found

    # --- flows -----------------------------------------------------------------------------

    def sent_params(self, function: cst.FunctionDef, seen: frozenset = frozenset()) -> list[tuple[str, Sink]]:
        """Parameters of a module function that reach a model whole, with the sink."""
        key = id(function)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = []
        found = []
        for site, sink in self.sites():
            if self.function_of(site) is function:
                for arg in sink.content:
                    for use in self.whole_history_in(arg):
                        if use.storage.kind == "param":
                            found.append((use.storage.label, sink))
        self._summaries[key] = found
        return found

    def sites(self) -> list[tuple[cst.Call, Sink]]:
        """Every call that sends to a model: the sinks, and calls to helpers that send a parameter."""
        cached = self._summaries.get("sites")
        if cached is not None:
            return cached
        found: list[tuple[cst.Call, Sink]] = [(s.call, s) for s in self.sinks]
        self._summaries["sites"] = found
        sink_functions = {id(self.function_of(s.call)) for s in self.sinks}
        for call in self.nodes.calls:
            for function in self.callees(call):
                if id(function) in sink_functions:
                    for param, sink in self.sent_params(function):
                        argument = self.argument_for(call, function, param)
                        if argument is not None:
                            found.append((call, Sink(call, sink.api, sink.framework, (argument,))))
        return found

    def flows(self) -> list[Flow]:
        """Whole histories reaching a model: one per (history, send site)."""
        out: list[Flow] = []
        seen = set()
        for site, sink in self.sites():
            for arg in sink.content:
                for use in self.whole_history_in(arg):
                    history = self.histories.get(use.storage.key)
                    if history is None or (use.storage.key, id(site)) in seen:
                        continue
                    seen.add((use.storage.key, id(site)))
                    out.append(Flow(history, sink, use, site))
        return out

    def rebuilt_before(self, flow: Flow) -> bool:
        """The sending function sets the history afresh before the send: a per-request list."""
        return self._rebuilt_before(flow.history, flow.site, frozenset())

    def _rebuilt_before(self, history: History, site: cst.CSTNode, seen: frozenset) -> bool:
        """Set afresh before `site` in its function, or before every call of a helper that sends it."""
        function = self.function_of(site)
        if function is None or id(function) in seen:
            return False
        for node in history.definitions:
            if self.function_of(node) is not function or self.order(node) >= self.order(site):
                continue
            conditional = any(isinstance(a, cst.If) for a in self.ancestors(node) if self.function_of(a) is function)
            outer = [loop for loop in self.loops_of(site) if id(loop) not in {id(l) for l in self.loops_of(node)}]
            if not conditional and not any(self._takes_user_turns(loop, history) for loop in outer):
                return True  # set afresh on every call; a loop after it is a tool loop, not a chat
        callers = [c for c in self.nodes.calls if callee_name(c) == function.name.value and function in self.callees(c)]
        seen = seen | {id(function)}
        return bool(callers) and all(self._rebuilt_before(history, caller, seen) for caller in callers)

    def _takes_user_turns(self, loop: cst.CSTNode, history: History) -> bool:
        """A loop that reads input or adds a user's message (not tool results) each pass."""
        if any(self.inside(call, loop) for call in self.nodes.input_calls):
            return True
        if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and callee_name(loop.iter) == "range":
            return False  # `for _ in range(3)`: a fixed number of rounds inside one request
        return any(self.inside(site, loop) and self._adds_user_turn(site) for site in history.growth)

    def _adds_user_turn(self, site: cst.CSTNode) -> bool:
        values = self.growth_values(site)
        return "user" in [r for v in values for r in message_roles(v)] and not any(map(self.carries_tools, values))

    # --- Gradio ------------------------------------------------------------------------------

    def _gradio_params(self) -> dict[tuple[int, str], tuple[str, cst.FunctionDef, str]]:
        """Parameters of Gradio chat callbacks that the framework grows every turn."""
        found: dict = {}
        if not any(n.startswith("gradio") for n in self.nodes.imports):
            return found
        for call in self.nodes.calls:
            is_interface = callee_name(call) == "ChatInterface" and any(
                n.startswith("gradio.") for n in self.qualified(call.func)
            )
            is_event = callee_name(call) in ("submit", "click", "change", "then", "input")
            if not (is_interface or is_event):
                continue
            fn = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "fn"), None)
            if not isinstance(fn, cst.Name):
                continue
            for function in self.functions.get(fn.value, []):
                params = self._params(function)
                for index, param in enumerate(params):
                    if (is_interface and index == 1) or (index > 0 and CHAT_NAME.search(param.name.value)):
                        key = f"{function.name.value}({param.name.value})"
                        found[(id(function), param.name.value)] = (key, function, param.name.value)
        return found


TEXTS = frozenset("join format dumps str".split())


def as_text(use: Use) -> Use:
    return Use(use.storage, use.node, use.via, True)


def rerooted(use: Use, node: cst.CSTNode) -> Use:
    """A use seen through a local: reported at the local, unless it was joined into text."""
    if use.text:
        return use
    return Use(use.storage, node, (use.node, *use.via))


def is_ring(node: cst.CSTNode) -> bool:
    """`deque(maxlen=N)` / `deque([], N)`: a store that drops its oldest item itself."""
    return (
        isinstance(node, cst.Call)
        and callee_name(node) == "deque"
        and (any(a.keyword is not None and a.keyword.value == "maxlen" for a in node.args) or len(node.args) > 1)
    )


def deleted(node: cst.Del) -> list[cst.BaseExpression]:
    target = node.target
    return [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and everything below it (for one small expression, never a whole module)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))
