"""Which lasting state an expression names (`storage_of`).

State outlives a request when it is a `self`/`cls` attribute (dataclass and pydantic fields
are attributes), a module-level name, an entry of a persistent dict keyed by session
(`sessions[sid]`, `store.setdefault(sid, [])`, `store.get(sid)`, a local alias of one),
`st.session_state.x`, Chainlit `cl.user_session.get("x")`, Flask `session["x"]`, a Gradio
callback's history parameter, a list kept across the iterations of a chat loop, or a local
loaded from a store and saved back (`chatbound.analysis.histories.stores`).
"""

from __future__ import annotations

import functools
import re

import libcst as cst
from libcst.metadata import ScopeProvider

from chatbound import frameworks
from chatbound.frameworks.gradio import EVENTS as GRADIO_EVENTS
from chatbound.frameworks.gradio import KEPT as GRADIO_KEPT
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.scopes import FUNCTION, MODULE
from chatbound.syntax.tree import walk
from chatbound.vocabulary.facts import Storage
from chatbound.vocabulary.sessions import SESSION_OBJECTS
from chatbound.vocabulary.sinks import keyword, positional

ROUTE = re.compile(r"\.(get|post|put|patch|delete|route|api_route|websocket)\b")


SESSION_ATTRIBUTES = ("session", "user_data", "chat_data", "user_session", "session_state")


# what saves a record back to its store, called on it or given it (Beanie `save`/`replace`,
# MongoEngine `save`, SQLAlchemy `add`/`merge`, a repository's `save_conversation(conv)`)
PERSISTS = re.compile(r"^(save\w*|insert\w*|replace|update|put|persist\w*|upsert\w*|merge|add|store\w*|sync)$")
GROWTH = frozenset(("append", "extend", "insert", "add_message"))
TYPING = frozenset(("Optional", "Union", "Annotated", "List", "Dict", "Any"))


INPUT_CALLS = re.compile(r"^(input|raw_input|receive\w*|recv\w*|readline|ask|prompt|get_input|chat_input|listen)$")


class StorageFacts:
    """`storage_of(expr)` and the cases it is made of; one `Storage` identity per piece of state."""

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
        if isinstance(expr, (cst.Call, cst.Await, cst.BooleanOperation)):
            read = self.store_read(expr)  # a database read whole (chatbound.analysis.histories.stores)
            if read is not None:
                return read
        if isinstance(expr, cst.BooleanOperation):  # `cl.user_session.get("h") or []`: the entry, or a first list
            fresh = isinstance(expr.operator, cst.Or) and self._is_fresh_list(expr.right)
            return self.storage_of(expr.left, seen) if fresh else None
        if isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
            kept = frameworks.storage(self, expr)  # a conversation a framework keeps (graph state, a thread)
            if kept is not None:
                return kept
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
            return self._record_storage(expr)
        if isinstance(expr, cst.Subscript):
            return self._entry(expr.value, expr.slice[0].slice if len(expr.slice) == 1 else None, expr, seen)
        if isinstance(expr, cst.Call):
            if callee_name(expr) == "cast" and len(expr.args) == 2:  # `typing.cast(T, x)` is `x`
                return self.storage_of(expr.args[1].value, seen)
            returned = self._returned_storage(expr, seen)  # a helper of this module, by name
            if returned is None and isinstance(expr.func, cst.Attribute) and expr.args:
                if expr.func.attr.value in ("setdefault", "get"):
                    return self._entry(expr.func.value, expr.args[0].value, expr, seen)
            return returned
        if isinstance(expr, cst.Name):
            return self._name_storage(expr, seen)
        return None

    def _imported_list(self, name: cst.Name) -> Storage | None:
        """A module-level list of another module of the project, imported by name (`from
        config import history`), as the project pass linked it: one list for the process."""
        lists = self.linked.lists if self.linked is not None else {}
        target = next((q for q in sorted(self.qualified(name)) if q in lists), None)
        return Storage(target, "module", name.value) if target is not None else None

    def _property_storage(self, klass: cst.ClassDef, attr: str, seen: frozenset) -> Storage | None:
        """`self.history` read through `@property def history(self): return self._history`."""
        for function in self.functions.get(attr, ()):
            if (
                self.class_of(function) is klass
                and id(function) not in seen
                and any(
                    callee_name(cst.Call(d.decorator)) in ("property", "cached_property") for d in function.decorators
                )
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

    def _record_storage(self, expr: cst.Attribute) -> Storage | None:
        """`conversation.turns` grown by a function that saves `conversation` (`conversation.save()`,
        `manager.save(conversation)`, `db.commit()` after loading it): a record's list field, read
        and written back by each request (an ORM relationship, an ODM document's list)."""
        base, field = expr.value, expr.attr.value
        function = self.function_of(expr)
        if not isinstance(base, cst.Name) or base.value in ("self", "cls") or function is None:
            return None
        calls = self.calls_in(function)
        grown = any(
            callee_name(call) in GROWTH
            and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Attribute)
            and call.func.value.attr.value == field
            and isinstance(call.func.value.value, cst.Name)
            and call.func.value.value.value == base.value
            for call in calls
        )
        if not grown or self._is_request_body(base) or not self._saves(base, calls):
            return None
        return Storage(f"record:{self._record_type(base)}.{field}", "database", self.code(expr))

    def _saves(self, record: cst.Name, calls: list[cst.Call]) -> bool:
        bound = self.assignment_before(record)
        loaded = isinstance(bound, cst.Param) or (  # `db.get(Conversation, cid)`, `await repo.find(cid)`
            isinstance(bound, (cst.Call, cst.Await)) and not self._is_fresh_list(bound)
        )
        for call in calls:
            name = callee_name(call)
            receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
            on_record = isinstance(receiver, cst.Name) and receiver.value == record.value
            given = any(isinstance(a.value, cst.Name) and a.value.value == record.value for a in call.args)
            if PERSISTS.match(name) and (on_record or given):
                return True
            if name == "commit" and not call.args and loaded:  # the ORM's unit of work flushes what it loaded
                return True
        return False

    def _record_type(self, record: cst.Name) -> str:
        """The model class of a record (its parameter's annotation, or the class a read names), else its name."""
        bound = self.assignment_before(record)
        source = bound.annotation.annotation if isinstance(bound, cst.Param) and bound.annotation else bound
        if isinstance(source, cst.CSTNode):
            for node in walk(source):
                if isinstance(node, cst.Name) and node.value[:1].isupper() and node.value not in TYPING:
                    return node.value
        return record.value

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
                            and re.search(
                                r"list|List|deque|Sequence",
                                self.code(small.annotation.annotation) + self.code(small.value),
                            )
                        ):
                            found[small.target.value] = klass.name.value
        return found

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
            return self._imported_list(name)
        outer = {a.scope for a in assignments} - {scope}
        if assignments and outer and all(o.kind == FUNCTION for o in outer):
            node = getattr(assignments[0], "node", None)
            function = self.function_of(node)
            rebound = any(self.function_of(a.node) is not function for a in assignments if isinstance(a.node, cst.Name))
            if (
                self._is_variable(node)
                and scope.kind == FUNCTION
                and (rebound or self._grown_by_inner(name.value, function))
            ):
                return Storage(f"{function.name.value if function else ''}.{name.value}", "closure", name.value)
        value = self.assignment_before(name)
        if isinstance(value, cst.Param):
            function = self.function_of(value)
            if function is not None and (id(function), value.name.value) in self.gradio_params:
                return Storage(f"{function.name.value}({value.name.value})", "gradio", value.name.value)
            return None
        if value is None:
            return self._unpacked_storage(name, scope, seen)
        if isinstance(value, (cst.For, cst.AugAssign)):
            return None
        if isinstance(value, cst.Await):
            value = value.expression
        found = (
            self.storage_of(value, seen)
            or self._chained_storage(value, name, seen)
            or self._default_of(value, name, seen)
        )
        if found is not None:
            return Storage(found.key, found.kind, found.label)
        same = next((n for n in walk(value) if isinstance(n, cst.Name) and n.value == name.value), None)
        if same is not None:  # `h = h[-N:]`, `h = h + [m]`: still the same history, rebound
            return self.storage_of(same, seen)
        return self._loop_storage(name, value, scope) or self._round_trip(name, value)

    def _unpacked_storage(self, name: cst.Name, scope, seen: frozenset) -> Storage | None:
        """`stamp, h = chats[uid]`: a part of a stored tuple is stored too (the list in it is
        the one the entry holds). Only a read of the entry is followed, not a call's result."""
        where = self.order(name)
        targets = [
            a.node
            for a in scope[name.value]
            if isinstance(getattr(a, "node", None), cst.Name) and self.order(a.node) < where
        ]
        if not targets:
            return None
        target = max(targets, key=self.order)
        element, holder = self.parent(target), self.parent(self.parent(target))
        value = self._unpacked_from(target)
        read = isinstance(value, cst.Subscript) or (
            isinstance(value, cst.Call) and callee_name(value) in ("get", "setdefault")
        )
        if not (read and isinstance(holder, cst.Tuple) and isinstance(self.parent(holder), cst.AssignTarget)):
            return None
        if any(isinstance(e, cst.StarredElement) for e in holder.elements):
            return None
        owner = self.storage_of(value, seen)
        if owner is None or owner.kind == "loop":
            return None
        index = next(i for i, e in enumerate(holder.elements) if e is element)
        return Storage(f"{owner.key}[{index}]", owner.kind, f"{self.code(value)}[{index}]")

    def _grown_by_inner(self, name: str, outer: cst.FunctionDef | None) -> bool:
        """A closure's state: a function nested in `outer` grows it (or rebinds it, `nonlocal`),
        so it lasts between that function's calls. One the outer function grows and an inner one only reads (a
        streaming generator made per request) is the outer call's value, followed as a local."""
        return any(self.function_of(site) is not outer for site, _ in self.nodes.growth_by_name.get(name, ()))

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
        starts = self._is_fresh_list(value) or (  # `h = None`, then `reply, h = ask(q, h)` starts it
            isinstance(value, cst.Name) and value.value == "None" and bool(self.round_trips(name.value))
        )
        if scope is not None and scope.kind == FUNCTION and starts and self._is_chat_loop(name, value):
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
        replays = self._replays.get(name.value, ())  # `h = result.all_messages()`
        for site, _ in [*self.nodes.growth_by_name.get(name.value, ()), *replays, *self.round_trips(name.value)]:
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

    def round_trips(self, name: str) -> list[tuple[cst.Assign, cst.Call]]:
        """`reply, h = ask(q, h)`, where `ask` grows and returns the list it is given as `h`:
        each pass keeps the grown list for the next."""
        found = []
        for node, call in self._call_results.get(name, ()):
            for function in self.callees(call):
                passed = (self.argument_for(call, function, param) for param in self.returned_params(function))
                if any(isinstance(a, cst.Name) and a.value == name for a in passed):
                    found.append((node, call))
                    break
        return found

    @functools.cached_property
    def _call_results(self) -> dict[str, list[tuple[cst.Assign, cst.Call]]]:
        """`reply, h = ask(q, h)` / `h = await ask(h)` by each name bound (`round_trips` asks by name)."""
        found: dict[str, list[tuple[cst.Assign, cst.Call]]] = {}
        for node in self.nodes.assigns:
            call = (
                node.value.expression
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Await)
                else node.value
            )
            if not isinstance(node, cst.Assign) or not isinstance(call, cst.Call):
                continue
            targets = [
                e.value for t in node.targets for e in (t.target.elements if isinstance(t.target, cst.Tuple) else ())
            ]
            for name in dict.fromkeys(
                t.value for t in [*targets, *(t.target for t in node.targets)] if isinstance(t, cst.Name)
            ):
                found.setdefault(name, []).append((node, call))
        return found

    @functools.cached_property
    def _replays(self) -> dict[str, list[tuple[cst.Assign, cst.Call]]]:
        """`h = result.all_messages()` by the name it binds: a run's replay regrows `h`."""
        found: dict[str, list[tuple[cst.Assign, cst.Call]]] = {}
        for node in self.nodes.assigns:
            if (
                isinstance(node, cst.Assign)
                and isinstance(node.value, cst.Call)
                and callee_name(node.value) in frameworks.REPLAYS
            ):
                for name in dict.fromkeys(t.target.value for t in node.targets if isinstance(t.target, cst.Name)):
                    found.setdefault(name, []).append((node, node.value))
        return found

    def _iterates_data(self, loop: cst.CSTNode) -> bool:
        """`for question in questions:`, not `for _ in range(5)` (a bounded tool loop) nor a
        walk over one model reply (`for block in response.content`: its tool calls)."""
        if not isinstance(loop, cst.For):
            return False
        if isinstance(loop.iter, cst.Call) and callee_name(loop.iter) in ("range", "enumerate"):
            return False
        return not self.from_model_reply(loop.iter)

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

    def _gradio_params(self) -> dict[tuple[int, str], tuple[str, cst.FunctionDef, str]]:
        """Parameters of Gradio chat callbacks that the framework grows every turn."""
        found: dict = {}
        for function, param in frameworks.history_callbacks(self):  # a chat UI of another module calls it
            found[(id(function), param)] = (f"{function.name.value}({param})", function, param)
        if not any(n.startswith("gradio") for n in self.nodes.imports):
            return found
        kept = self._gradio_kept_components()
        for call in self.nodes.calls:
            is_interface = callee_name(call) == "ChatInterface" and any(
                n.startswith("gradio.") for n in self.qualified(call.func)
            )
            is_event = callee_name(call) in GRADIO_EVENTS
            if not (is_interface or is_event):
                continue
            fn = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "fn"), None)
            if not isinstance(fn, cst.Name):
                continue
            inputs = _components(_argument(call, 1, "inputs")) if is_event else []
            for function in self.functions.get(fn.value, []):
                params = self._params(function)
                for index, param in enumerate(params):
                    given = inputs[index] if index < len(inputs) else None
                    if (is_interface and index == 1) or (given is not None and given in kept):
                        key = f"{function.name.value}({param.name.value})"
                        found[(id(function), param.name.value)] = (key, function, param.name.value)
        return found

    def _gradio_kept_components(self) -> set[str]:
        """Names of `gr.Chatbot` / `gr.State` components some event writes back (one of its
        outputs): their value lasts between turns, and a handler given it as an input gets the
        whole chat (Gradio 5 events.py: `fn` receives the `inputs` values in order)."""
        components = set()
        for call in self.nodes.calls:
            if callee_name(call) in GRADIO_KEPT and any(n.startswith("gradio.") for n in self.qualified(call.func)):
                parent = self.parent(call)
                if isinstance(parent, cst.Assign):
                    components |= {t.target.value for t in parent.targets if isinstance(t.target, cst.Name)}
        written = {
            name
            for call in self.nodes.calls
            if callee_name(call) in GRADIO_EVENTS
            for name in _components(_argument(call, 2, "outputs"))
        }
        return components & written


def _argument(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    given = keyword(call, name) or positional(call, position)
    return given.value if given is not None else None


def _components(value: cst.BaseExpression | None) -> list[str | None]:
    """The component names an `inputs=` / `outputs=` lists, in order (None for one that is no name)."""
    items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value] if value else []
    return [item.value if isinstance(item, cst.Name) else None for item in items]
