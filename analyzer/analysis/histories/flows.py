"""What reaches a model: the module's model calls (`sinks`, with clients known by their
constructor), the helpers whose parameters reach one (`sent_params`), every send site
(`sites`) and the (history, send site) pairs where a whole history gets there (`flows`).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.histories.carried import kept_parameter
from chatbound.syntax.messages import callee_name, message_roles, string
from chatbound.vocabulary.facts import Flow, History
from chatbound.vocabulary.sinks import CLIENT_METHODS, Sink, sink_of

HELPER_DEPTH = 4  # helpers between a history and the model call, followed within one module


class FlowFacts:
    """Sinks, send sites and flows."""

    def client_of(self, receiver: cst.BaseExpression, typed: bool = False) -> set[str]:
        """Qualified names of the constructors `receiver` was built by: `client = OpenAI()`,
        `self.llm = ChatAnthropic(...)` anywhere in the class ("which client"); `typed` adds the
        class a parameter it was bound from is annotated with (`specialist: BillingSpecialist`,
        `self.specialist = specialist`), which says which class's methods a call runs."""
        values: list[cst.CSTNode] = []
        if isinstance(receiver, cst.Name):
            values.append(self.assignment_before(receiver))
        elif (
            isinstance(receiver, cst.Attribute)
            and isinstance(receiver.value, cst.Name)
            and receiver.value.value == "self"
        ):
            klass, attr = self.class_of(receiver), receiver.attr.value
            for node in self.nodes.assigns:
                if (
                    isinstance(node, cst.Assign)
                    and self.class_of(node) is klass
                    and any(
                        isinstance(t.target, cst.Attribute)
                        and t.target.attr.value == attr
                        and isinstance(t.target.value, cst.Name)
                        and t.target.value.value == "self"
                        for t in node.targets
                    )
                ):
                    values.append(node.value)
        names: set[str] = set()
        for value in values:
            if isinstance(value, cst.Await):
                value = value.expression
            if typed and isinstance(value, cst.Name):
                value = self.assignment_before(value)
            if isinstance(value, cst.Call):
                names |= self.qualified(value.func)
            elif typed and isinstance(value, cst.Param) and value.annotation is not None:
                names |= self.qualified(value.annotation.annotation)
        return names

    def _sink(self, call: cst.Call) -> Sink | None:
        """`sink_of`, plus model clients known only by their constructor (AutoGen `create`),
        and the framework of a generic `x.chat(...)` named after x's constructor."""
        if self._own_method(call) or (
            isinstance(call.func, cst.Attribute) and frameworks.runs_elsewhere(self, call.func.value, callee_name(call))
        ):
            return None
        sink = sink_of(call, self.qualified, self.assignment_before) or frameworks.sink(self, call)
        if sink is None and isinstance(call.func, cst.Name):
            sink = self._aliased_sink(call)
        spread = self._spread_sink(call) if any(a.star == "**" for a in call.args) else None
        if spread is not None:  # what the spread dict holds is sent too
            known = {id(c) for c in sink.content} if sink is not None else set()
            sink = (
                replace(sink, content=(*sink.content, *(c for c in spread.content if id(c) not in known)))
                if sink
                else spread
            )
        if sink is None and call.args and isinstance(call.args[0].value, cst.Attribute):
            sink = self._method_passed(call)
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

    def _own_method(self, call: cst.Call) -> bool:
        """`ChatApp.stream(...)` or `self.stream(...)` where this module's class defines `stream`:
        the module's own code, which the flows follow inside, not an SDK's method of that name."""
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return False
        owner = func.value.value
        if owner in ("self", "cls"):
            klass = self.class_of(call)
        else:
            named = [c for c in self.nodes.classes if c.name.value == owner]
            klass = named[0] if len(named) == 1 else None
        methods = self.functions.get(func.attr.value, []) if klass is not None else []
        return any(self.class_of(method) is klass for method in methods)

    def _method_passed(self, call: cst.Call) -> Sink | None:
        """A model call made by a runner it is handed to with its arguments:
        `await asyncio.to_thread(client.chat.completions.create, model=m, messages=h)`,
        `invoke_with_retries(client.aio.models.generate_content, model=m, contents=h)`,
        `executor.submit(...)`: the call the method would make with the arguments after it.
        `functools.partial(...)` only builds a callable (nothing is sent there)."""
        first, rest = call.args[0], call.args[1:]
        if first.keyword is not None or first.star or callee_name(call) == "partial":
            return None
        sink = sink_of(call.with_changes(func=first.value, args=rest), self.qualified, self.assignment_before)
        return Sink(call, sink.api, sink.framework, sink.content) if sink is not None else None

    def _aliased_sink(self, call: cst.Call) -> Sink | None:
        """A model call through a second name for its method: `create = client.chat.completions.create`
        ... `create(model=..., messages=h)` is the call `create` was bound to."""
        bound = self.assignment_before(call.func)
        if not isinstance(bound, cst.Attribute):
            return None
        sink = sink_of(call.with_changes(func=bound), self.qualified, self.assignment_before)
        return Sink(call, sink.api, sink.framework, sink.content) if sink is not None else None

    def _spread_sink(self, call: cst.Call) -> Sink | None:
        """A model call given its keywords through a dict built in reach: `kw = {"messages": h}` ...
        `create(model=..., **kw)` is `create(model=..., messages=h)` (`carried`: nothing wrote to
        `kw` between)."""
        args: list[cst.Arg] = []
        for arg in call.args:
            built = self._built(arg.value) if arg.star == "**" and isinstance(arg.value, cst.Name) else None
            if arg.star != "**":
                args.append(arg)
            elif isinstance(built, cst.Dict):
                for element in built.elements:
                    key = string(element.key) if isinstance(element, cst.DictElement) else None
                    if key is None or not key.isidentifier():
                        return None
                    args.append(cst.Arg(element.value, keyword=cst.Name(key)))
            else:
                return None
        sink = sink_of(call.with_changes(args=args), self.qualified, self.assignment_before)
        return Sink(call, sink.api, sink.framework, sink.content) if sink is not None else None

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
        # the model calls, and the calls handing a value to another module's function that sends it
        found: list[tuple[cst.Call, Sink]] = [(s.call, s) for s in self.sinks]
        found.extend(self.imported_sites())
        self._summaries["sites"] = found
        calls = [(call, function) for call in self.nodes.calls for function in self.callees(call)]
        fresh = {id(self.function_of(site)) for site, _ in found}
        seen = set(fresh)
        for _ in range(HELPER_DEPTH):  # a helper that calls a helper that sends (`answer` -> `call_openai`)
            added = []
            for call, function in calls:
                if id(function) in fresh:
                    for param, sink in self.sent_params(function):
                        argument = self.argument_for(call, function, param)
                        if argument is not None:
                            added.append((call, Sink(call, sink.api, sink.framework, (argument,))))
                            self.sent_inside.setdefault(id(call), self.sent_inside.get(id(sink.call), sink.call))
                            if id(sink.call) in self.sent_elsewhere:  # the helper hands it to another module's send
                                self.sent_elsewhere[id(call)] = self.sent_elsewhere[id(sink.call)]
            known = {id(call) for call, _ in found}
            added.extend(site for site in self._built_sites([*found, *added]) if id(site[0]) not in known)
            found.extend(added)
            fresh = {id(self.function_of(call)) for call, _ in added} - seen
            seen |= fresh
            if not fresh:
                break
        return found

    def _built_sites(self, sites: list[tuple[cst.Call, Sink]]) -> list[tuple[cst.Call, Sink]]:
        """`Streamer(client, prompt).stream()`: a class of this module whose constructor keeps a
        parameter on `self` that one of its methods sends. Building the object and calling that
        method sends the argument (the object is the send's carrier, not a history)."""
        inits = {id(self.class_of(f)): f for f in self.functions.get("__init__", []) if self.class_of(f) is not None}
        # class name -> (its constructor, method name -> [(parameter, sink)])
        sent: dict[str, tuple[cst.FunctionDef, dict[str, list[tuple[str, Sink]]]]] = {}
        for site, sink in sites if inits else ():
            method = self.function_of(site)
            klass = self.class_of(method) if method is not None else None
            init = inits.get(id(klass))
            if klass is None or init is None or method is init:
                continue
            for arg in sink.content:
                for use in self.whole_history_in(arg):
                    owner, _, attr = use.storage.key.partition(".")
                    param = kept_parameter(init, attr) if use.storage.kind == "attribute" else None
                    if owner == klass.name.value and param is not None:
                        methods = sent.setdefault(klass.name.value, (init, {}))[1]
                        methods.setdefault(method.name.value, []).append((param, sink))
        found = []
        for call in self.nodes.calls if sent else ():
            init, methods = sent.get(call.func.value, (None, {})) if isinstance(call.func, cst.Name) else (None, {})
            for method in self._methods_run_on(call, set(methods)) if init is not None else ():
                for param, sink in methods[method]:
                    argument = self.argument_in(call, [p.name.value for p in self._params(init)][1:], param)
                    if argument is not None:
                        found.append((call, Sink(call, sink.api, sink.framework, (argument,))))
                        if id(sink.call) in self.sent_elsewhere:
                            self.sent_elsewhere[id(call)] = self.sent_elsewhere[id(sink.call)]
        return found

    def _methods_run_on(self, built: cst.Call, methods: set[str]) -> set[str]:
        """Which of `methods` are called on the object `built` makes: at once
        (`Streamer(...).stream()`) or through the name it is bound to in the same function."""
        parent = self.parent(built)
        if isinstance(parent, cst.Attribute) and parent.attr.value in methods:
            return {parent.attr.value}
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return set()
        target = parent.targets[0].target
        if not isinstance(target, cst.Name):
            return set()
        function = self.function_of(built)
        return {
            call.func.attr.value
            for call in self.calls_in(function)
            if isinstance(call.func, cst.Attribute)
            and call.func.attr.value in methods
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value == target.value
        }

    def flows(self) -> list[Flow]:
        """Whole histories reaching a model: one per (history, send site)."""
        out: list[Flow] = []
        seen = set()
        for site, sink in self.sites():
            for arg in sink.content:
                for use in self.whole_history_in(arg):
                    history = self.histories.get(use.storage.key) or self.imported_histories.get(use.storage.key)
                    if history is None or (use.storage.key, id(site)) in seen:
                        continue
                    seen.add((use.storage.key, id(site)))
                    elsewhere = self.sent_elsewhere.get(id(site))
                    out.append(Flow(history, sink, use, site, (elsewhere,) if elsewhere else ()))
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
            if (
                not isinstance(node, cst.CSTNode)
                or self.function_of(node) is not function
                or self.order(node) >= self.order(site)
            ):
                continue
            conditional = any(isinstance(a, cst.If) for a in self.ancestors(node) if self.function_of(a) is function)
            outer = [loop for loop in self.loops_of(site) if id(loop) not in {id(l) for l in self.loops_of(node)}]
            if not conditional and not any(self._takes_user_turns(loop, history) for loop in outer):
                return True  # set afresh on every call; a loop after it is a tool loop, not a chat
        callers = self.callers(function)
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
