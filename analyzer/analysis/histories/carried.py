"""What a read out of a container built in the same scope gives (`carried`): the list a program
puts in a dict entry, a tuple, or a dataclass field and reads back before the send.

`box = {"items": h}` ... `box["items"]`, `pair = (h, None)` ... `pair[0]`, `box = Box(h)` (a
dataclass, a NamedTuple, a pydantic model or a class whose `__init__` keeps the parameter as
`self.items = items`) ... `box.items`: each read is the expression put there. The container is a
local (or module name) bound once to the literal or the constructor call, and nothing writes to it
between that binding and the read (no item or attribute assignment, no `del`, no method call on
it): otherwise what the read gives is not known, and nothing is followed. The key decides, never
its spelling.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from chatbound.syntax.messages import string
from chatbound.syntax.tree import ModuleTree

DATACLASS = ("dataclasses.dataclass", "pydantic.dataclasses.dataclass", "attr.s", "attrs.define", "attr.define")
FIELD_BASES = ("typing.NamedTuple", "pydantic.BaseModel")


class CarriedFacts(ModuleTree):
    """`carried(expr)`: the expression a constant-key read of a local container gives."""

    nodes: Any  # chatbound.analysis.chat.ChatNodes, set by ChatFacts
    functions: dict[str, list[cst.FunctionDef]]

    def carried(self, expr: cst.CSTNode) -> cst.BaseExpression | None:
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if not isinstance(index, cst.Index):
                return None
            built = self._built(expr.value)
            if isinstance(built, cst.Dict):
                return _dict_entry(built, index.value)
            if isinstance(built, (cst.Tuple, cst.List)):
                return _element(built, index.value)
            return None
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            built = self._built(expr.value)
            if isinstance(built, cst.Call):
                return self._field_argument(built, expr.attr.value)
        return None

    def _built(self, name: cst.Name) -> cst.CSTNode | None:
        """The literal or call `name` was bound to before this read, when nothing wrote to it since."""
        value = self.assignment_before(name)
        if not isinstance(value, (cst.Dict, cst.Tuple, cst.List, cst.Call)):
            return None
        function = self.function_of(name)
        # bound in the reading function: only what runs between counts; at module level, a function
        # called between may write to it too
        local = function is not None and self.function_of(value) is function
        start, end = self.order(value), self.order(name)

        def between(node: cst.CSTNode) -> bool:
            if local:
                return self.function_of(node) is function and start < self.order(node) < end
            return self.function_of(node) is not None or start < self.order(node) < end

        for node in (*self.nodes.assigns, *self.nodes.dels):
            if self._writes(node, name) and between(node):
                return None
        for call in self.nodes.calls:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == name.value
                and between(call)
            ):
                return None  # `box.update(...)`, `box.pop(...)`: changed in place
        return value

    @staticmethod
    def _writes(node: cst.CSTNode, name: cst.Name) -> bool:
        targets: list[cst.BaseExpression]
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        elif isinstance(node, cst.Del):
            targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        else:
            return False
        return any(
            isinstance(t, (cst.Subscript, cst.Attribute))
            and isinstance(t.value, cst.Name)
            and t.value.value == name.value
            for t in targets
        )

    def builds_record(self, call: cst.Call) -> bool:
        """`Box(h)`: a constructor of this module's dataclass, NamedTuple, pydantic model or class
        keeping its parameters, whose arguments `carried` reads back as fields."""
        klass = self._record_class(call)
        return klass is not None and (
            self._fields(klass) is not None
            or any(self.class_of(f) is klass for f in self.functions.get("__init__", ()))
        )

    def _record_class(self, call: cst.Call) -> cst.ClassDef | None:
        if not isinstance(call.func, cst.Name):
            return None
        return next(
            (
                c
                for c in self.nodes.classes
                if c.name.value == call.func.value and self.class_of(c) is None and self.function_of(c) is None
            ),
            None,
        )

    def _field_argument(self, call: cst.Call, attr: str) -> cst.BaseExpression | None:
        """The argument of `Box(...)` that the field or kept parameter `attr` of this module's class holds."""
        klass = self._record_class(call)
        if klass is None or any(a.star for a in call.args):
            return None
        fields = self._fields(klass)
        if fields is not None:
            positional = fields[1]
            return self.argument_in(call, fields[0] if positional else [], attr) if attr in fields[0] else None
        init = next((f for f in self.functions.get("__init__", ()) if self.class_of(f) is klass), None)
        if init is None:
            return None
        params = [p.name.value for p in init.params.params][1:]  # `self` is not passed
        kept = kept_parameter(init, attr)
        if kept is None or kept not in [p.name.value for p in (*init.params.params, *init.params.kwonly_params)]:
            return None
        return self.argument_in(call, params, kept)

    def _fields(self, klass: cst.ClassDef) -> tuple[list[str], bool] | None:
        """(the fields in order, whether they may be passed by position) of a dataclass, NamedTuple
        or pydantic model of this module; None for another class."""
        decorated = any(
            self.qualified(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) & set(DATACLASS)
            for d in klass.decorators
        )
        bases = {name for b in klass.bases for name in self.qualified(b.value)}
        if not decorated and not bases & set(FIELD_BASES):
            return None
        if decorated and klass.bases:
            return None  # inherited fields come first: their order is not this class's to tell
        names = []
        for statement in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    if "ClassVar" not in self.code(small.annotation.annotation):
                        names.append(small.target.value)
        return names, "pydantic.BaseModel" not in bases  # a pydantic model takes keywords only


def _dict_entry(built: cst.Dict, key: cst.BaseExpression) -> cst.BaseExpression | None:
    wanted = string(key)
    if wanted is None:
        return None
    found = None
    for element in built.elements:
        if not isinstance(element, cst.DictElement):
            found = None  # `{**other, ...}`: an earlier entry may come from it
            continue
        if string(element.key) == wanted:
            found = element.value
    return found


def _element(built: cst.Tuple | cst.List, index: cst.BaseExpression) -> cst.BaseExpression | None:
    if not isinstance(index, cst.Integer):
        return None
    at = int(index.value, 0)
    elements = built.elements
    if any(isinstance(e, cst.StarredElement) for e in elements[: at + 1]) or at >= len(elements):
        return None
    return elements[at].value


def kept_parameter(init: cst.FunctionDef, attr: str) -> str | None:
    """`self.<attr> = <param>` at the top level of `__init__`: the parameter kept as the attribute."""
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else ()
    for statement in body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Attribute)
                and isinstance(small.targets[0].target.value, cst.Name)
                and small.targets[0].target.value.value == "self"
                and small.targets[0].target.attr.value == attr
                and isinstance(small.value, cst.Name)
            ):
                return small.value.value
    return None
