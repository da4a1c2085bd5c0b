"""How each history grows: `_collect` walks the module's growth calls, assignments and
`del`s once and fills `histories[key]` (definitions, per-turn and set-up growth, trims,
count windows, roles, tool traffic, a system message first, a bounded store).
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import ScopeProvider

from chatbound import frameworks
from chatbound.analysis.histories.bounds import BOUNDED_CONTAINERS, deleted, is_ring
from chatbound.analysis.histories.storage import INPUT_CALLS
from chatbound.syntax.messages import (
    callee_name,
    holds_tool_traffic,
    is_bounding_name,
    is_count_slice,
    is_numeric,
    is_textual,
    is_whole_slice,
    message_roles,
    slice_of,
    string,
)
from chatbound.syntax.scopes import MODULE
from chatbound.syntax.tree import walk
from chatbound.vocabulary.facts import History, Storage
from chatbound.vocabulary.sinks import dotted

GROWTH_METHODS = frozenset(
    "append extend insert appendleft add_message add_messages add_user_message add_ai_message "
    "add_assistant_message add_system_message add_tool_message add_messages_async aadd_messages".split()
)


def growth_label(site: cst.CSTNode) -> str:
    """How a growth site grows its history, as a message says it."""
    if isinstance(site, cst.Call):
        return f"`{callee_name(site)}()`"
    if isinstance(site, cst.AugAssign):
        return "`+=`"
    if isinstance(site, cst.FunctionDef):
        return "the chat UI"
    return "reassignment"


ITERATES = frozenset("list tuple sorted reversed enumerate zip iter".split())  # the items of their arguments
# functions that run once to set a history up, not once per turn (few-shot examples, a reset)
SETUP_FUNCTION = re.compile(
    r"^_*(init|post_init|attrs_post_init|model_post_init|setup|set_up|setUp|load|initiali[sz]e|configure|"
    r"seed|bootstrap|prime|warm|reset|clear|new_session|start_session|few_shot|add_examples|build_examples)",
    re.I,
)


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


def _bounded_replay(value: cst.CSTNode) -> bool:
    """`result.to_input_list()[-N:]`, `trim(result.to_input_list())`: a run's replay cut down
    before it is kept (`[1:]`, all but the first item, cuts nothing that grows)."""
    if isinstance(value, cst.Subscript):
        cut = slice_of(value) is not None and not is_whole_slice(value)
        return cut and isinstance(value.value, cst.Call) and callee_name(value.value) in frameworks.REPLAYS
    return (
        isinstance(value, cst.Call)
        and is_bounding_name(callee_name(value))
        and any(isinstance(a.value, cst.Call) and callee_name(a.value) in frameworks.REPLAYS for a in value.args)
    )


class GrowthFacts:
    """Builds `histories`: growth, definitions and trims of every storage."""

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
            content = next(
                (e.value for e in value.elements if isinstance(e, cst.DictElement) and string(e.key) == "content"), None
            )
        if not isinstance(content, cst.Name):
            return False
        bound = self.assignment_before(content)
        if isinstance(bound, (cst.ListComp, cst.GeneratorExp)):
            return holds_tool_traffic(bound.elt)
        if isinstance(bound, cst.List):
            return any(holds_tool_traffic(e.value) for e in bound.elements) or any(
                holds_tool_traffic(operand)
                for site, operand in self.nodes.growth_by_name.get(content.value, ())
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
        if self._fills_from_data(site, storage):
            return False
        function = self.function_of(site)
        if function is None:
            return storage.kind == "session" or any(
                self._takes_turns(loop, site, storage) for loop in self.loops_of(site)
            )
        return not SETUP_FUNCTION.match(function.name.value)

    def _takes_turns(self, loop: cst.CSTNode, site: cst.CSTNode, storage: Storage) -> bool:
        """A loop of the module's top level that grows a history turn by turn: a `while` chat
        loop, one that reads input, adds messages, or sends the list inside it. A `for` that
        fills a list from files or documents, sent once after it, runs once."""
        if isinstance(loop, cst.While) or any(self.inside(call, loop) for call in self.nodes.input_calls):
            return True
        return any(message_roles(v) for v in self.growth_values(site)) or self._sent_inside(loop, storage)

    def _sent_inside(self, loop: cst.CSTNode, storage: Storage) -> bool:
        """A model call inside `loop` gets the whole list: each pass resends what the earlier ones added."""
        return any(
            self.inside(sink.call, loop)
            and any(u.storage.key == storage.key for a in sink.content for u in self.whole_history_in(a))
            for sink in self.sinks
        )

    def _fills_from_data(self, site: cst.CSTNode, storage: Storage) -> bool:
        """A list filled item by item from another collection, not fed turns: what it adds
        carries no message role and comes from iterating something that is neither a model's
        reply, input, nor a parameter (the request), and no model gets the list inside that
        loop: documents read in a loop over files, graded retrieval results, the tools a server
        lists."""
        values = self.growth_values(site)
        if not values or any(message_roles(v) for v in values):
            return False
        loops = [loop for loop in self.loops_of(site) if isinstance(loop, cst.For)]
        sources = [loop.iter for loop in loops]
        for value in values:
            bound = self.assignment_before(value) if isinstance(value, cst.Name) else value
            if isinstance(bound, (cst.ListComp, cst.GeneratorExp)):
                sources.append(bound.for_in.iter)
        if not sources or any(self.fed_by_turns(source) for source in sources):
            return False
        return not any(self._sent_inside(loop, storage) for loop in loops)

    def fed_by_turns(self, expr: cst.CSTNode) -> bool:
        """Whether `expr` derives from a model's reply, input, or a parameter (what a request
        brings): `response.content`, `result.new_messages()`, `turns`."""
        return self._origin(expr, 0) is not None

    def from_model_reply(self, expr: cst.CSTNode) -> bool:
        """Whether `expr` derives from a model call's result (`response.content`)."""
        return self._origin(expr, 0) == "model"

    def _origin(self, expr: cst.CSTNode, depth: int) -> str | None:
        """ "model", "input" or "param" for what `expr` is read from, through attributes,
        subscripts and the locals it was bound from; through a method call not a parameter
        (`result.new_messages()` is the reply's, `session.list_tools()` is not the parameter's)."""
        called = False
        while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Await)) or (
            isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not self._is_model_call(expr)
        ):
            called = called or isinstance(expr, cst.Call)
            expr = (
                expr.expression
                if isinstance(expr, cst.Await)
                else expr.func.value
                if isinstance(expr, cst.Call)
                else expr.value
            )
        if isinstance(expr, cst.Call) and callee_name(expr) in ITERATES and depth <= 4:  # `enumerate(turns)`
            found = next(filter(None, (self._origin(a.value, depth + 1) for a in expr.args)), None)
        elif isinstance(expr, cst.Call):
            found = "model" if self._is_model_call(expr) else "input" if INPUT_CALLS.match(callee_name(expr)) else None
        elif not isinstance(expr, cst.Name) or depth > 4:
            found = None
        else:
            value = self.assignment_before(expr)
            if isinstance(value, cst.Param):
                found = "param" if value.name.value not in ("self", "cls") else None
            elif isinstance(value, cst.For):
                found = self._origin(value.iter, depth + 1)
            else:
                found = self._origin(value, depth + 1) if isinstance(value, cst.BaseExpression) else None
        return None if called and found == "param" else found

    def _is_model_call(self, call: cst.Call) -> bool:
        return any(sink.call is call for sink in self.sinks)

    def _grow(self, storage: Storage, site: cst.CSTNode) -> None:
        history = self.history(storage)
        (history.growth if self._is_per_turn(site, storage) else history.init_growth).append(site)
        values = self.growth_values(site)
        values += [given for v in values for given in self._given_for(v)]
        roles = [r for v in values for r in message_roles(v)]
        history.roles.update(roles)
        if any(is_textual(v) or not is_numeric(v) for v in values):
            history.textual = True
        if any(self.carries_tools(v) for v in values):
            history.tool_traffic = True
        if "system" in roles:
            history.system_first = True

    def _given_for(self, value: cst.CSTNode) -> list[cst.BaseExpression]:
        """What the module's calls pass for a parameter a helper grows the history with
        (`def _add(self, item): self.messages.append(item)`, then `self._add({"role": "tool", ...})`)."""
        bound = self.assignment_before(value) if isinstance(value, cst.Name) else None
        function = self.function_of(bound) if isinstance(bound, cst.Param) else None
        if function is None or not isinstance(bound, cst.Param):
            return []
        name = bound.name.value
        given = (self.argument_for(call, function, name) for call in self.callers(function))
        return [argument for argument in given if argument is not None]

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
        for call in self.nodes.calls:
            self._collect_session_set(call)
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
            self._collect_helper_trims(call)
        for key, function, param in self.gradio_params.values():
            history = self.history(Storage(key, "gradio", param))
            history.growth.append(function)
            history.roles.add("message")
        self._collect_stores()
        frameworks.collect(self)
        for history in self.histories.values():
            history.trims = [t for t in history.trims if not self.outgrown(t, history)]
            if history.unbounded:
                history.trims.extend(self.caps(history))

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
        for target, value in _paired(targets, value):  # noqa: B020  (each target with its own part of the value)
            whole_target = target
            if isinstance(target, cst.Subscript) and slice_of(target) is not None:
                target = target.value  # h[:] = ...
            storage = self._target_storage(target, value)
            if storage is None:
                continue
            self._grow_record_fields(storage, value, node)
            history = self.history(storage)
            uses = [u for u in self.whole_history_in(value) if u.storage.key == storage.key]
            views = [n for k, n in self.bounded_views_in(value) if k == storage.key]
            callee = callee_name(value) if isinstance(value, cst.Call) else ""
            ctor = next((p for p in dotted(value.func) if p[:1].isupper()), callee) if callee else ""
            if views or (is_bounding_name(callee) and uses):
                history.trims.append(node)
                history.windows.extend(n for n in views if isinstance(n, cst.Subscript) and is_count_slice(n))
            elif _bounded_replay(value):
                history.trims.append(node)
            elif (uses and self._extends(value, storage.key)) or callee in frameworks.REPLAYS:
                self._grow(storage, node)
            elif uses:
                continue  # `store[sid] = history`: an alias written back
            elif whole_target is target or not isinstance(whole_target, cst.Subscript):
                for ring in filter(is_ring, walk(value)):  # deque(maxlen=N), or one per session entry
                    held = (
                        history if ring is value else self.history(Storage(storage.key + "[]", "entry", storage.label))
                    )
                    held.bounded_store = True
                    held.windows.append(ring)
                if isinstance(value, cst.Call) and BOUNDED_CONTAINERS.search(ctor):
                    history.bounded_store = True
                if (
                    isinstance(value, cst.List)
                    and value.elements
                    and "system" in message_roles(value.elements[0].value)
                ):
                    history.system_first = True
                if self._under_size_test(node, target) and not uses:
                    history.trims.append(node)
                history.definitions.append(node)

    def _grow_record_fields(self, storage: Storage, value: cst.CSTNode, node: cst.CSTNode) -> None:
        """`store[uid] = Conversation(history=result.to_input_list(), ...)` (or a local bound to the
        record) regrows `store[uid].history`: the field keeps a run's replay."""
        record = self._built(value) if isinstance(value, cst.Name) else value
        if not isinstance(record, cst.Call) or not callee_name(record)[:1].isupper():
            return
        for arg in record.args:
            held = self.assignment_before(arg.value) if isinstance(arg.value, cst.Name) else arg.value
            if arg.keyword is not None and isinstance(held, cst.Call) and callee_name(held) in frameworks.REPLAYS:
                self._grow(Storage(f"{storage.key}.{arg.keyword.value}", storage.kind, storage.label), node)

    def _collect_session_set(self, call: cst.Call) -> None:
        """`cl.user_session.set("h", value)` is `h = value` on the session's entry: a replay
        (`result.to_input_list()`) or the old list plus more grows it."""
        if not (callee_name(call) == "set" and isinstance(call.func, cst.Attribute) and len(call.args) == 2):
            return
        if self.session_object(call.func.value) is None:
            return
        storage = self._entry(call.func.value, call.args[0].value, call, frozenset())
        value = call.args[1].value
        callee = callee_name(value) if isinstance(value, cst.Call) else ""
        if storage is None:
            return
        if _bounded_replay(value):
            self.history(storage).trims.append(call)
        elif callee in frameworks.REPLAYS or self._extends(value, storage.key):
            self._grow(storage, call)

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
            read = self._replayed(value, target.value)  # `h = result.all_messages()` of a run given `h`
        if read is None:
            return self._loop_storage(target, value, scope)
        found = self.storage_of(read) if read is not None else None
        return found if found is not None and found.kind == "loop" else None

    def _replayed(self, value: cst.CSTNode, name: str) -> cst.Name | None:
        """`name` as the run gave it, where `value` is `result.all_messages()` (a replay) and
        `result` the run's result: `result = agent.run(q, message_history=name)`."""
        if not (
            isinstance(value, cst.Call)
            and callee_name(value) in frameworks.REPLAYS
            and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name)
        ):
            return None
        run = self.assignment_before(value.func.value)
        run = run.expression if isinstance(run, cst.Await) else run
        given = [a.value for a in run.args] if isinstance(run, cst.Call) else []
        return next((read for v in given if (read := self._given_as(v, name, 0)) is not None), None)

    def _given_as(self, value: cst.CSTNode, name: str, depth: int) -> cst.Name | None:
        """The read of `name` an argument is: the name itself, a second name bound to it, or an
        entry of a container (`box["items"]`, `**{"message_history": h}`) it was put in."""
        if depth > 4:
            return None
        if isinstance(value, cst.Name):
            if value.value == name:
                return value
            bound = self.assignment_before(value)
            return self._given_as(bound, name, depth + 1) if isinstance(bound, cst.BaseExpression) else None
        if isinstance(value, cst.Dict):
            return next(
                (r for e in value.elements if (r := self._given_as(e.value, name, depth + 1)) is not None), None
            )
        carried = self.carried(value)
        return self._given_as(carried, name, depth + 1) if carried is not None else None

    def _collect_helper_growth(self, call: cst.Call) -> None:
        """`self._remember(self.history, msg)` / `add_turn(history, ...)`: a helper that grows,
        of this module or, as the project pass linked it, of another (`chat(agent, self._history, text)`)."""
        callees = self.callees(call)
        for function in callees:
            for param in self.grown_params(function):
                argument = self.argument_for(call, function, param)
                storage = self.storage_of(argument) if argument is not None else None
                if storage is not None:
                    self._grow(storage, call)
        remote = self.imported_function(call) if not callees else None
        if remote is None:
            return
        for param, roles in remote.grows:
            argument = self.passed_on(call, remote.params, param)
            storage = self.storage_of(argument) if argument is not None else None
            if storage is not None:
                self._grow(storage, call)
                self.history(storage).roles.update(roles)
                self.history(storage).textual = True

    def _collect_helper_trims(self, call: cst.Call) -> None:
        """`shorten(chats[uid])`: a helper of the module that trims what its parameter holds trims
        the caller's history at the call (`outgrown` then weighs the calls against the growth)."""
        for function in self.callees(call):
            for _, param, key in self.helper_trims.get(id(function), []):
                argument = self.argument_for(call, function, param)
                if argument is None:
                    continue
                storage = (
                    self.storage_of(argument) if key is None else self._entry(argument, key, argument, frozenset())
                )
                if storage is not None:
                    self.history(storage).trims.append(call)

    def returned_params(self, function: cst.FunctionDef) -> list[str]:
        """Parameters `function` grows and returns as the same list (`return reply, messages`,
        also after `messages = [...] if messages is None else messages`): a caller that keeps
        what it returns keeps the list it passed in, grown."""
        returned = []
        for value in self.returns(function):
            parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            returned += [p for p in parts if isinstance(p, cst.Name) and self._keeps_param(p)]
        return [name for name in self.grown_params(function) if any(p.value == name for p in returned)]

    def _keeps_param(self, name: cst.Name) -> bool:
        """`name` holds the parameter of that name: bound to it, or to `x if test else name`, `name or x`."""
        value = self.assignment_before(name)
        if isinstance(value, cst.IfExp):
            value = next(
                (v for v in (value.body, value.orelse) if isinstance(v, cst.Name) and v.value == name.value), None
            )
        elif isinstance(value, cst.BooleanOperation):
            value = next(
                (v for v in (value.left, value.right) if isinstance(v, cst.Name) and v.value == name.value), None
            )
        else:
            return isinstance(value, cst.Param)
        return value is not None and isinstance(self.assignment_before(value), cst.Param)

    def grown_params(self, function: cst.FunctionDef) -> list[str]:
        """The parameters `function` grows (`history.append(...)`, `history += [...]`)."""
        names = {p.name.value for p in self._params(function)} - {"self", "cls"}
        grown = []
        for name in names:
            for site, _ in self.nodes.growth_by_name.get(name, ()):
                if self.function_of(site) is function:
                    grown.append(name)
                    break
        return grown
