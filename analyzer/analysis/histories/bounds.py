"""What bounds a history: a trim after growth (`pop(0)`, `popleft()`, `del h[:-N]`, a `clear()`
under a size test), a store that drops its oldest item itself (`deque(maxlen=N)`, a window
memory), and bounded views of a history (`h[-N:]`, a call named like a window or trim).
"""

from __future__ import annotations

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

    @staticmethod
    def _drops_one(trim: cst.CSTNode) -> bool:
        """`h.pop(0)`, `h.popleft()`, `del h[0]`: one item, the oldest."""
        if isinstance(trim, cst.Call):
            name = callee_name(trim)
            first = trim.args[0].value if trim.args else None
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
        if name == "pop":
            return bool(call.args) and not isinstance(call.args[0].value, (cst.SimpleString, cst.Name))
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        return name == "clear" and self._under_size_test(call, receiver)

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
