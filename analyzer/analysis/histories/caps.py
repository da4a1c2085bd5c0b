"""A hard stop bounds a history too: growth that only runs while the history is under a size
(`if len(h) > LIMIT: return "limit reached"` before the append, the append under
`if len(h) < LIMIT:`, or under a helper's answer, `ok = within_limit()`) keeps it at that size.
The session ends instead of growing; what is sent each turn stays under the cap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.syntax.tree import ModuleTree

EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
STOP_CALLS = frozenset("stop exit abort".split())  # st.stop(), sys.exit(), flask.abort()


class CapFacts(ModuleTree):
    """Size caps that refuse a turn instead of trimming the history."""

    storage_of: Callable[..., Any]  # chatbound.analysis.histories.storage, set by ChatFacts

    def caps(self, history) -> list[cst.CSTNode]:
        """The tests that cap every growth site of `history`, or [] where one site is not capped."""
        found: list[cst.CSTNode] = []
        for site in history.growth:
            if not isinstance(site, cst.CSTNode):
                return []
            cap = self._cap_of(site, history.storage.key)
            if cap is None:
                return []
            found.append(cap)
        return found

    def _cap_of(self, site: cst.CSTNode, key: str) -> cst.CSTNode | None:
        """The `if` that lets `site` run only under a size of `key`'s history, in its function."""
        child = site
        for parent in self.ancestors(site):
            if isinstance(parent, cst.If):
                side = self._side(parent.test, key)
                if (side == "under" and child is parent.body) or (side == "over" and child is parent.orelse):
                    return parent
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                for stmt in parent.body:
                    if stmt is child:
                        break
                    if isinstance(stmt, cst.If) and self._side(stmt.test, key) == "over" and _exits(stmt.body):
                        return stmt
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                return None
            child = parent
        return None

    def _side(self, test: cst.BaseExpression, key: str, depth: int = 0) -> str | None:
        """`over` where `test` holds when the history is past a size, `under` where it holds
        only while it is below one, None where it says nothing about its size."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return {"over": "under", "under": "over"}.get(self._side(test.expression, key, depth) or "")
        if isinstance(test, cst.BooleanOperation):
            sides = {self._side(test.left, key, depth), self._side(test.right, key, depth)}
            wanted = "over" if isinstance(test.operator, cst.Or) else "under"
            return wanted if wanted in sides else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._compared(test, key)
        if depth > 1:
            return None
        if isinstance(test, cst.Name):
            value = self.assignment_before(test)
            return self._side(value, key, depth + 1) if isinstance(value, cst.Call) else None
        if isinstance(test, cst.Call) and any(self._answers_under(f, key, depth) for f in self.callees(test)):
            return "under"
        return None

    def _compared(self, test: cst.Comparison, key: str) -> str | None:
        """`len(h) > N` over, `len(h) < N` under; the other way round with `len(h)` on the right."""
        target = test.comparisons[0]
        op = target.operator
        rising = isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual))
        falling = isinstance(op, (cst.LessThan, cst.LessThanEqual))
        if not (rising or falling):
            return None
        if self._measures_history(test.left, key):
            return "over" if rising else "under"
        if self._measures_history(target.comparator, key):
            return "under" if rising else "over"
        return None

    def _measures_history(self, expr: cst.BaseExpression, key: str) -> bool:
        if not (isinstance(expr, cst.Call) and callee_name(expr) == "len" and len(expr.args) == 1):
            return False
        storage = self.storage_of(expr.args[0].value)
        return storage is not None and storage.key == key

    def _answers_under(self, function: cst.FunctionDef, key: str, depth: int) -> bool:
        """A helper that answers True only under the cap: it ends `return True`, and a test of
        the history's size past a limit returns something else first."""
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else []
        last = body[-1] if body else None
        if not (_returns_true(last) and isinstance(function.body, cst.IndentedBlock)):
            return False
        return any(
            isinstance(stmt, cst.If)
            and self._side(stmt.test, key, depth + 1) == "over"
            and _exits(stmt.body)
            and not _returns_true(stmt.body.body[-1])
            for stmt in body[:-1]
        )


def _returns_true(stmt: cst.CSTNode | None) -> bool:
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else stmt
    return isinstance(small, cst.Return) and isinstance(small.value, cst.Name) and small.value.value == "True"


def _exits(block: cst.BaseSuite) -> bool:
    """The block ends the turn: its last statement returns, raises, leaves the loop or stops the app."""
    last = block.body[-1] if block.body else None  # a statement, or a small statement after `if x:`
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else last
    if isinstance(small, EXITS):
        return True
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and callee_name(small.value) in STOP_CALLS
