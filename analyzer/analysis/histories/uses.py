"""Whole histories inside an expression (`whole_history_in`): the history itself, a copy
(`list(h)`, `h.copy()`, `h[1:]`), `[sys, *h]`, `[sys] + h`, a comprehension over it,
`"\\n".join(...)` over it, an f-string loop building text from it, a local derived from it, a
module helper returning it (`self.transcript()`), a read of the dict entry, tuple item or
dataclass field it was put in (`box["items"]`: `chatbound.analysis.histories.carried`).
Bounded views (`h[-N:]`, a call named like a window or trim) are not uses.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.syntax.messages import NOT_HISTORY, callee_name, is_bounding_name, is_whole_slice, slice_of, string
from chatbound.syntax.visitors import children
from chatbound.vocabulary.facts import Storage, Use

HISTORY_ACCESSOR = re.compile(
    r"^(get_|full_|all_|entire_|whole_)?(transcript|history|conversation|messages|chat_history|message_history)$|"
    r"^(to_input_list|all_messages)$"
)


def is_history_accessor(call: cst.Call) -> bool:
    """`assistant.transcript()`, `store.get_history(sid)`, `result.to_input_list()`: a call whose
    name says it returns the whole conversation (used when the module does not define it)."""
    return bool(HISTORY_ACCESSOR.match(callee_name(call))) and len(call.args) <= 1


COPIES = frozenset("list tuple copy deepcopy dumps str sorted reversed chain join format".split())


TEXTS = frozenset("join format dumps str".split())
PICKS = frozenset("next min max choice".split())  # one item of the list, not the list


class UseFacts:
    """`whole_history_in` and the locals and helpers it follows."""

    def whole_history_in(self, expr: cst.CSTNode, seen: frozenset = frozenset()) -> list[Use]:
        """Every whole history inside `expr` (see the module docstring); [] for bounded views."""
        if isinstance(expr, cst.Name) and self._rebound_to_view(expr):
            return []
        if isinstance(expr, cst.Call) and self.imported_function(expr) is not None:
            return self._call_uses(expr, seen)  # `memory.get(uid)` of a linked class: its dataflow, not a dict read
        getter = self._property_of(expr) if isinstance(expr, cst.Attribute) else None
        if getter is not None:  # `self.payload` runs `@property def payload(self)`: what it returns
            return self._returned_uses(getter, expr, seen)
        storage = self.storage_of(expr)
        if (
            storage is not None
            and isinstance(expr, cst.Name)
            and storage.kind == "module"
            and self.function_of(expr) is None
            and expr not in seen
            and not self.nodes.growth_by_name.get(expr.value)
        ):  # a script's `api = [... for m in st.session_state.messages]`, read as the script runs on
            value = self.assignment_before(expr)
            copied = self.whole_history_in(value, seen | {expr}) if isinstance(value, cst.BaseExpression) else []
            if copied:
                return [rerooted(u, expr) for u in copied]
        if storage is not None:
            if isinstance(expr, (cst.Subscript, cst.Attribute)) and not self._holds_history(storage):
                carried = self._carried_uses(expr, seen)  # a module-level `box = {"items": h}`: what was put there
                if carried:
                    return carried
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
            return self._carried_uses(expr, seen)
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
            return self._carried_uses(expr, seen)
        uses: list[Use] = []
        for child in children(expr):
            if isinstance(child, cst.CSTNode):
                uses.extend(self.whole_history_in(child, seen))
        return uses

    def _property_of(self, expr: cst.Attribute) -> cst.FunctionDef | None:
        """The `@property` (or `cached_property`) method of this class that `self.<name>` runs."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        klass = self.class_of(expr)
        for function in self.functions.get(expr.attr.value, []):
            names = {_decorator_name(d.decorator) for d in function.decorators}
            if self.class_of(function) is klass and names & {"property", "cached_property"}:
                return function
        return None

    def _returned_uses(self, function: cst.FunctionDef, at: cst.CSTNode, seen: frozenset) -> list[Use]:
        """The whole histories `function` returns (not its parameters), read at `at`."""
        if id(function) in seen:
            return []
        return [
            Use(use.storage, at, (use.node, *use.via))
            for value in self.returns(function)
            for use in self.whole_history_in(value, seen | {id(function)})
            if use.storage.kind != "param"
        ]

    def _holds_history(self, storage: Storage) -> bool:
        return storage.key in self.histories or storage.key in self.imported_histories

    def _carried_uses(self, expr: cst.Subscript | cst.Attribute, seen: frozenset) -> list[Use]:
        """`box["items"]`, `pair[0]`, `box.items`: the histories in what was put there (`carried`)."""
        inner = self.carried(expr)
        if inner is None or expr in seen:
            return []
        return [rerooted(u, expr) for u in self.whole_history_in(inner, seen | {expr})]

    def _rebound_to_view(self, name: cst.Name) -> bool:
        """`h = h[-10:]` before this read: the local names the history's storage still (its
        growth is the history's), but what it holds here is a bounded view of it."""
        value = self.assignment_before(name)
        if isinstance(value, cst.Subscript) and slice_of(value) is not None:
            return not is_whole_slice(value)
        return isinstance(value, cst.Call) and is_bounding_name(callee_name(value))

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
        imported = self.imported_uses(call)  # linked: the other module's dataflow decides, not the name
        if imported is not None:
            return imported
        if is_history_accessor(call):
            return [Use(Storage(self.code(call.func) + "()", "accessor", self.code(call)), call)]
        if NOT_HISTORY.search(name) or name in PICKS:
            return []
        uses = []
        if isinstance(call.func, cst.Attribute) and name in (
            "copy",
            "join",
            "format",
            "model_dump",
            "to_list",
            "values",
        ):
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
                    inner.extend(as_text(u) for u in looped) if isinstance(site, cst.AugAssign) else inner.extend(
                        looped
                    )
            uses.extend(rerooted(u, name) for u in inner)
        if uses and self._local_trimmed(name, function):
            return []
        return uses


def as_text(use: Use) -> Use:
    return Use(use.storage, use.node, use.via, True)


def rerooted(use: Use, node: cst.CSTNode) -> Use:
    """A use seen through a local: reported at the local, unless it was joined into text."""
    if use.text:
        return use
    return Use(use.storage, node, (use.node, *use.via))


def _decorator_name(decorator: cst.BaseExpression) -> str:
    """`property` of `@property`, `cached_property` of `@functools.cached_property`."""
    if isinstance(decorator, cst.Name):
        return decorator.value
    return decorator.attr.value if isinstance(decorator, cst.Attribute) else ""
