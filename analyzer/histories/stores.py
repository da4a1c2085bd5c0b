"""Histories kept outside the process: a local read from a store and written back whole in
the same function (`h = json.loads(r.get(key))` ... `r.set(key, json.dumps(h))`, a file, a
database row) lives across requests like an attribute does.
"""

from __future__ import annotations

import re

import libcst as cst

from ..messages import callee_name, is_bounding_name, slice_of
from ..visitors import children
from .tree import walk
from .vocabulary import Storage


# a local read from a store and written back to it (Redis, a file, a database row)
LOADS = re.compile(r"^(get|hget|load\w*|read\w*|fetch\w*|loads|retrieve\w*|get_\w+)$")


SAVES = re.compile(r"^(set|hset|setex|save\w*|store\w*|put\w*|write\w*|persist\w*|dump|upsert\w*)$")


class StoreFacts:
    """The round trip through a store, read by `StorageFacts._name_storage`."""

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
