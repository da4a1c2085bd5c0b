"""What bounds a history: a trim after growth (`pop(0)`, `popleft()`, `del h[:-N]`, a `clear()`
under a size test), a store that drops its oldest item itself (`deque(maxlen=N)`, a window
memory), and bounded views of a history (`h[-N:]`, a call named like a window or trim).
"""

from __future__ import annotations

import functools
import re

import libcst as cst

from chatbound.syntax.messages import callee_name, is_bounding_name, is_whole_slice, slice_of
from chatbound.syntax.tree import walk
from chatbound.syntax.visitors import children

BOUNDED_CONTAINERS = re.compile(
    r"Reducer$|^ChatMemoryBuffer$|^ChatSummaryMemoryBuffer$|^Memory$|Window|SummaryBuffer|TokenBuffer|"
    r"^ConversationSummaryMemory$|^BufferedChatCompletionContext$|^TokenLimitedChatCompletionContext$|"
    r"^HeadAndTailChatCompletionContext$"
)


SIZE_CALL = re.compile(r"^len$|token|count|size", re.I)


class BoundFacts:
    """Trims, size tests and bounded views."""

    def outgrown(self, trim: cst.CSTNode, history) -> bool:
        """A trim that drops one item per turn where a turn adds more: `if len(h) >= 25: del h[0]`
        before a user and an assistant message are appended still grows `h` by one a turn. A
        removal repeated under `while len(h) > N:` bounds it, and so do as many removals as the
        turn's growth sites in that function."""
        if not self._drops_one(trim) or any(isinstance(a, cst.While) for a in self.ancestors(trim)):
            return False
        function = self.function_of(trim)
        grown = [g for g in history.growth if isinstance(g, cst.CSTNode) and self.function_of(g) is function]
        dropped = [t for t in history.trims if self.function_of(t) is function and self._drops_one(t)]
        return len(dropped) < len(grown)

    def _drops_one(self, trim: cst.CSTNode) -> bool:
        """`h.pop(0)`, `h.popleft()`, `del h[0]`: one item, the oldest; the first match of
        `for i, m in enumerate(h): ... h.pop(i); break`; a helper call whose every trim drops one."""
        if isinstance(trim, cst.Call):
            name = callee_name(trim)
            first = trim.args[0].value if trim.args else None
            if name == "pop" and isinstance(first, cst.Name):
                loop = self._enumerating(first, trim.func.value if isinstance(trim.func, cst.Attribute) else None)
                return loop is not None and self._stops_early(loop)
            helpers = [self.helper_trims.get(id(f), []) for f in self.callees(trim)] if name != "pop" else []
            if any(helpers):
                return all(self._drops_one(t) for found in helpers for t, _, _ in found)
            return name == "popleft" or (name == "pop" and isinstance(first, cst.Integer) and first.value == "0")
        if isinstance(trim, cst.Del):
            target = trim.target
            return (
                isinstance(target, cst.Subscript)
                and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and isinstance(target.slice[0].slice.value, cst.Integer)
                and target.slice[0].slice.value.value == "0"
            )
        return False

    def _trims(self, call: cst.Call) -> bool:
        name = callee_name(call)
        if name in ("popleft", "reduce"):
            return True
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if name == "pop":
            first = call.args[0].value if call.args else None
            if isinstance(first, cst.Name) and self._enumerating(first, receiver) is not None:
                return self._under_size_test(call, receiver)  # `for i, m in enumerate(h): h.pop(i)` when too long
            return first is not None and not isinstance(first, (cst.SimpleString, cst.Name))
        return name == "clear" and self._under_size_test(call, receiver)

    def _enumerating(self, index: cst.Name, receiver: cst.CSTNode | None) -> cst.For | None:
        """The loop around `index`, `for index, _ in enumerate(receiver)`: `index` a position in the list."""
        loop = next((a for a in self.ancestors(index) if isinstance(a, (cst.For, cst.FunctionDef))), None)
        if receiver is None or not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            return None
        target = loop.target
        first = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else None
        listed = loop.iter.args[0].value if loop.iter.args else None
        if callee_name(loop.iter) != "enumerate" or not isinstance(first, cst.Name) or first.value != index.value:
            return None
        return loop if listed is not None and self.code(listed) == self.code(receiver) else None

    @functools.cached_property
    def helper_trims(self) -> dict[int, list[tuple[cst.Call, str, cst.BaseExpression | None]]]:
        """By function id, the trims a function makes of what a parameter holds: (the trim, the
        parameter, the key read from it or None): `h.pop(0)` of `h`, or `messages.pop(i)` after
        `messages = chat.get("messages")` (key `"messages"`). A caller's argument is trimmed at the call."""
        found: dict[int, list] = {}
        for call in self.nodes.trim_calls:
            receiver = call.func.value
            function = self.function_of(call)
            if function is None or not isinstance(receiver, cst.Name) or not self._trims(call):
                continue
            held = self._param_held(receiver)
            if held is not None:
                found.setdefault(id(function), []).append((call, *held))
        return found

    def _param_held(self, name: cst.Name) -> tuple[str, cst.BaseExpression | None] | None:
        """(parameter, key) where `name` is a parameter, or `param.get(key)` / `param[key]` read from one."""
        bound = self.assignment_before(name)
        if isinstance(bound, cst.Param):
            return bound.name.value, None
        if isinstance(bound, cst.Call) and callee_name(bound) == "get" and bound.args:
            owner, key = bound.func.value if isinstance(bound.func, cst.Attribute) else None, bound.args[0].value
        elif isinstance(bound, cst.Subscript) and len(bound.slice) == 1 and isinstance(bound.slice[0].slice, cst.Index):
            owner, key = bound.value, bound.slice[0].slice.value
        else:
            return None
        if not isinstance(key, cst.SimpleString) or not isinstance(owner, cst.Name):
            return None
        param = self.assignment_before(owner)
        return (param.name.value, key) if isinstance(param, cst.Param) else None

    def _under_size_test(self, node: cst.CSTNode, subject: cst.CSTNode | None = None) -> bool:
        """Inside `if len(h) > N:` / `while tokens(h) > budget:`, here or at every call of the
        helper. Given the `subject` trimmed, a test that measures something else (`len(q) == 0`
        of the user's text) is not its size test."""
        if self._size_tested(node, subject):
            return True
        function = self.function_of(node)
        if function is None:
            return False
        callers = self.callers(function)
        return bool(callers) and all(self._size_tested(c) for c in callers)

    def _size_tested(self, node: cst.CSTNode, subject: cst.CSTNode | None = None) -> bool:
        for a in self.ancestors(node):
            if isinstance(a, (cst.If, cst.While)) and self._measures(a.test, subject):
                return True
            if isinstance(a, cst.FunctionDef):
                return False
        return False

    def _measures(self, test: cst.BaseExpression, subject: cst.CSTNode | None) -> bool:
        """Whether a test measures a size: of `subject` where the test measures something by a
        call (`len(h) > 20`, `count_tokens(h) > budget`), else any size it names (`tokens > budget`)."""
        calls = [n for n in walk(test) if isinstance(n, cst.Call) and SIZE_CALL.search(callee_name(n))]
        if calls and subject is not None:
            shown = self.code(subject)
            return any(self.code(n) == shown for call in calls for arg in call.args for n in walk(arg.value))
        return bool(re.search(r"len\(|token|count|size", self.code(test)))

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
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            inner = self.carried(expr)  # `box["items"]`, `pair[0]`, `box.items`: what was put there
            if inner is not None:
                return self.bounded_views_in(inner, seen)
        if isinstance(expr, cst.Name):
            value = self.assignment_before(expr)
            if value is not None and not isinstance(value, (cst.Param, cst.For, cst.AugAssign)):
                return self.bounded_views_in(value, seen)
            return found
        for child in children(expr):
            if isinstance(child, cst.BaseExpression) or isinstance(
                child, (cst.Element, cst.Arg, cst.DictElement, cst.BaseFormattedStringContent, cst.StarredDictElement)
            ):
                found.extend(self.bounded_views_in(child, seen))
            elif isinstance(child, cst.CSTNode) and not isinstance(child, (cst.BaseSuite,)):
                found.extend(self.bounded_views_in(child, seen))
        return found

    def _stops_early(self, loop: cst.For) -> bool:
        """`for m in reversed(h): ... break`: a loop that can stop before the end selects a part.
        Walked once per loop: each growth site inside a big loop asks again."""
        known = self._early.get(loop)
        if known is None:
            known = self._early[loop] = any(
                isinstance(n, (cst.Break, cst.Return)) for n in walk(loop.body) if not isinstance(n, cst.FunctionDef)
            )
        return known


def is_ring(node: cst.CSTNode) -> bool:
    """`deque(maxlen=N)` / `deque([], N)`: a store that drops its oldest item itself (a maxlen
    of `None`, the default, bounds nothing)."""
    if not isinstance(node, cst.Call) or callee_name(node) != "deque":
        return False
    maxlen = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "maxlen"), None)
    if maxlen is None and len(node.args) > 1:
        maxlen = node.args[1].value
    return maxlen is not None and not (isinstance(maxlen, cst.Name) and maxlen.value == "None")


def deleted(node: cst.Del) -> list[cst.BaseExpression]:
    target = node.target
    return [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]
