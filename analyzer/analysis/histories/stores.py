"""Histories kept outside the process.

A database (`chatbound.databases`: MongoDB, Redis, SQL, an ORM) is a history when one request
reads it whole and writes the new turn back: `store_read(expr)` names the store a read takes
whole (its `Storage`, kind "database"), and `_collect_stores` records as its growth the writes
made in a function that also reads it whole (directly, through a helper of the module, or
through a repository of another module the project pass linked), and as its bounds the trims
the store does itself and a tail written back. A local grown and then written back whole
(`h.append(m)` ... `coll.update_one(..., {"$set": {"history": h}})`) grows the store there.

A local read from any other store and written back whole in the same function
(`h = json.loads(r.get(key))` ... `r.set(key, json.dumps(h))`, a file) lives across requests
like an attribute does (`_round_trip`).
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.databases import access as databases
from chatbound.syntax.messages import callee_name, is_bounding_name, message_roles, slice_of, string
from chatbound.syntax.tree import walk
from chatbound.syntax.visitors import children
from chatbound.vocabulary.facts import History, Storage
from chatbound.vocabulary.summaries import RemoteHistory

# a local read from a store and written back to it (Redis, a file, a database row)
LOADS = re.compile(r"^(get|hget|load\w*|read\w*|fetch\w*|loads|retrieve\w*|get_\w+)$")


SAVES = re.compile(r"^(set|hset|setex|save\w*|store\w*|put\w*|write\w*|persist\w*|dump|upsert\w*)$")


class StoreFacts:
    """Database histories (`store_read`, `_collect_stores`) and the round trip through a
    store read by `StorageFacts._name_storage`."""

    def store_read(self, expr: cst.CSTNode) -> Storage | None:
        """The database history `expr` reads whole (`coll.find(q)`, `r.lrange(k, 0, -1)`, rows
        of a `SELECT` with no `LIMIT`), or None (a bounded read, or no store)."""
        key = databases.read(self, expr)
        if key is None:
            return None
        label = self.code(expr)
        if len(label) > 40 and isinstance(expr, cst.Call):
            label = f"{self.code(expr.func)}(...)"
        return Storage(key, "database", label)

    def _collect_stores(self) -> None:
        """Growth and bounds of database histories (see the module docstring)."""
        writes = [(call, w) for call in self.nodes.calls for w in databases.writes(self, call)]
        self.store_writes = writes
        remote = [
            (call, function, w)
            for call in self.nodes.calls
            if not self.callees(call)
            for function in [self.imported_function(call)]
            if function is not None
            for w in function.writes
        ]
        # a record's list is saved where it grows (`_record_storage`); other database growth counts where written back
        kept = [
            h
            for h in self.histories.values()
            if h.storage.kind == "database" and not h.storage.key.startswith("record:")
        ]
        if not writes and not remote and not kept:
            return
        reads = self._store_reads()
        saved: set[tuple[int, str]] = set()  # (function, key): the function writes the history back whole
        for call, write in writes:
            history = self.history(Storage(write.key, "database", write.key.partition(":")[2]))
            self._store_write(history, call, write.how, write.values, reads, saved)
        for call, function, write in remote:
            history = self.imported_history(RemoteHistory(write.history, function.path))
            values = ()
            if write.param is not None:
                argument = self.argument_in(call, function.params, write.param)
                values = (argument,) if argument is not None else ()
            self._store_write(history, call, write.how, values, reads, saved)
        for history in kept:  # a local grown, then written back whole in the same function
            history.growth = [
                g
                for g in history.growth
                if isinstance(g, cst.CSTNode)
                and (id(self.function_of(g)), history.storage.key) in saved
                or id(g) in self.store_growth
            ]

    def _store_write(self, history: History, call: cst.Call, how: str, values, reads, saved) -> None:
        key = history.storage.key
        if how == "trim":
            history.trims.append(call)
            return
        if how == "push":  # what a turn's row holds, wherever it is written
            history.textual = history.textual or bool(values) or any(a.keyword is not None for a in call.args)
            history.roles.update(r for v in values for r in message_roles(v))
            history.roles.update(
                string(a.value)
                for a in call.args
                if a.keyword is not None and a.keyword.value == "role" and string(a.value)
            )
        if not self._read_with(call, key, reads):
            return  # written where nothing reads it whole: not one request's round trip
        if how == "push":
            self.store_growth.add(id(call))
            history.growth.append(call)
            return
        for value in values:
            if any(k == key for k, _ in self.bounded_views_in(value)):
                history.trims.append(call)
            elif any(u.storage.key == key for u in self.whole_history_in(value)):
                if self._extends(value, key):
                    self.store_growth.add(id(call))
                    history.growth.append(call)
                    history.textual = True
                else:
                    saved.add((id(self.function_of(call)), key))

    def _read_with(self, call: cst.Call, key: str, reads: dict[int, set[str]]) -> bool:
        """Whether a function that makes `call` (itself, or one calling it through the module's
        helpers) also reads the history `key` whole."""
        function = id(self.function_of(call))
        for reached in self._reach().values():
            if function in reached and any(
                k == key or key.startswith(k + "[") for f in reached for k in reads.get(f, ())
            ):
                return True
        return False

    def _store_reads(self) -> dict[int, set[str]]:
        """The database histories each function reads whole, by the function's id."""
        found: dict[int, set[str]] = {}
        for call in self.nodes.calls:
            storage = self.store_read(call)
            key = storage.key if storage is not None else None
            if key is None:
                remote = None if self.callees(call) else self.imported_function(call)
                if remote is not None and remote.returns is not None:
                    key = f"{remote.returns.path}:{remote.returns.summary.key}"
            if key is not None:
                found.setdefault(id(self.function_of(call)), set()).add(key)
        return found

    def _reach(self) -> dict[int, set[int]]:
        """By id, each function of the module (and its top level, as None) and the ids of the
        module's functions it runs, transitively."""
        if self._reached is None:
            direct: dict[int, set[int]] = {}
            for call in self.nodes.calls:
                direct.setdefault(id(self.function_of(call)), set()).update(map(id, self.callees(call)))
            self._reached = {}
            for start in direct:
                seen, pending = {start}, [start]
                while pending:
                    for callee in direct.get(pending.pop(), ()):
                        if callee not in seen:
                            seen.add(callee)
                            pending.append(callee)
                self._reached[start] = seen
        return self._reached

    def _round_trip(self, name: cst.Name, value: cst.CSTNode) -> Storage | None:
        """`h = json.loads(r.get(key))` ... `r.set(key, json.dumps(h))`: loaded from a store and
        saved back whole in the same function, so it outlives the request."""
        function = self.function_of(value)
        if function is None or not isinstance(value, (cst.Call, cst.Await, cst.BooleanOperation, cst.IfExp)):
            return None
        loads = [
            n for n in walk(value) if isinstance(n, cst.Call) and LOADS.match(callee_name(n)) and not self._on_param(n)
        ]
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
        return (
            isinstance(base, cst.Name)
            and base.value not in ("self", "cls")
            and isinstance(self.assignment_before(base), cst.Param)
        )

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
        keys = {
            self.code(a.value) for a in call.args if isinstance(a.value, (cst.Name, cst.Attribute, cst.FormattedString))
        }
        return frozenset(receiver | keys)
