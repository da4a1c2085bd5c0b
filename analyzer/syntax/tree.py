"""Where a node stands in its module: parents, enclosing function and class, loops, the
value a name was last bound to, and which of the module's functions a call may run.

The navigation every other part of the chat facts is written in. It reads LibCST metadata
(parents, scopes), which is only live during the rule traversal.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from chatbound.syntax.messages import callee_name
from chatbound.syntax.scopes import MODULE
from chatbound.syntax.visitors import children, preorder


class ModuleTree:
    """Navigation over one module's tree; `self.rule` and `self.nodes` are set by `ChatFacts`."""

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    @functools.cached_property
    def _parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        """The parent mapping itself: asked hundreds of thousands of times per large module,
        each `get_metadata` round trip costs more than the lookup."""
        return self.rule.metadata[ParentNodeProvider]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        node = self.parent(node)
        while node is not None:
            yield node
            node = self.parent(node)

    def qualified(self, node: cst.CSTNode) -> set[str]:
        """What a dotted name stands for through the module's imports (`st.session_state` ->
        `streamlit.session_state`): all that the chat facts ask of qualified names, without
        LibCST's scope analysis of the whole module."""
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return set()
        if node.value == "self" and parts and parts[-1] in self._imported_attributes:  # `self.runner.run`
            bindings = self._imported_attributes[parts.pop()]
        else:
            bindings = self.nodes.bindings.get(node.value, ())
        tail = "".join(f".{part}" for part in reversed(parts))
        return {bound + tail for bound in bindings}

    @functools.cached_property
    def _imported_attributes(self) -> dict[str, set[str]]:
        """`self.runner = Runner`: an attribute the module binds only ever to imported names
        stands for what they stand for."""
        found: dict[str, set[str]] = {}
        other = set()
        for node in self.nodes.assigns:
            for target in node.targets if isinstance(node, cst.Assign) else [node]:
                held = target.target
                if not (
                    isinstance(held, cst.Attribute) and isinstance(held.value, cst.Name) and held.value.value == "self"
                ):
                    continue
                value = node.value
                bound = self.nodes.bindings.get(value.value, ()) if isinstance(value, cst.Name) else ()
                if bound and isinstance(node, cst.Assign):
                    found.setdefault(held.attr.value, set()).update(bound)
                else:
                    other.add(held.attr.value)
        return {attribute: names for attribute, names in found.items() if attribute not in other}

    def order(self, node: cst.CSTNode) -> int:
        """Where `node` stands in the source: its rank in LibCST's visit order, which is the
        order of the text (an ancestor before what it holds). Cheaper than positions."""
        if self._ranks is None:
            self._ranks = preorder(self.rule.context.module)
        return self._ranks[node]

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return self._enclosing(node, cst.FunctionDef, self._functions_of)

    def class_of(self, node: cst.CSTNode) -> cst.ClassDef | None:
        return self._enclosing(node, cst.ClassDef, self._classes_of)

    @functools.cached_property
    def _functions_of(self) -> dict[cst.CSTNode, cst.CSTNode | None]:
        return {}

    @functools.cached_property
    def _classes_of(self) -> dict[cst.CSTNode, cst.CSTNode | None]:
        return {}

    def _enclosing(self, node: cst.CSTNode, kind: type, known: dict) -> cst.CSTNode | None:
        """The nearest ancestor of `kind`, remembered for every node on the way up (the same
        statements are asked about again and again)."""
        path = []
        found = None
        parent = self.parent(node)
        while parent is not None:
            if parent in known:
                found = known[parent]
                break
            if isinstance(parent, kind):
                found = parent
                break
            path.append(parent)
            parent = self.parent(parent)
        for passed in path:
            known[passed] = found
        return found

    def loops_of(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        found = []
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(a, (cst.While, cst.For)):
                found.append(a)
        return found

    def inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        return node is outer or any(a is outer for a in self.ancestors(node))

    def code(self, node: cst.CSTNode) -> str:
        return self.rule.context.module.code_for_node(node)

    def assignment_before(self, name: cst.Name) -> cst.CSTNode | None:
        """The value (or Param) last bound to `name` before it is read, within its scope."""
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        where = self.order(name)
        best, best_at = None, None
        for assignment in scope[name.value]:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                at = 0
                value: cst.CSTNode | None = node
            elif isinstance(node, cst.Name) and not isinstance(self.parent(node), cst.AugAssign):
                at = self.order(node)
                value = self.bound_value(node)
            else:
                continue
            if (
                assignment.scope.kind == MODULE
                and scope.kind != MODULE
                and (self.function_of(node) is not self.function_of(name))
            ):
                at = 0  # a global read inside a function sees the module binding (or its own `global` ones)
            if isinstance(value, cst.CSTNode) and not isinstance(value, cst.Param) and self.inside(name, value):
                continue  # `h = h[-10:]`: the read sees the binding before this one
            if value is None and isinstance(node, cst.Name) and self.inside(name, self._unpacked_from(node)):
                continue  # `reply, h = ask(q, h)`: so does a read in the value a tuple unpacks
            if at < where and (best_at is None or at >= best_at) and not self._left_before(node, name):
                best, best_at = value, at
        return best

    def _left_before(self, binding: cst.CSTNode, read: cst.Name) -> bool:
        """`if cmd == "#clear": h = []; continue`: a binding in a branch that ends by leaving
        (`continue`, `break`, `return`, `raise`) is not what a read after the branch sees."""
        node = self.parent(binding)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
            if (
                isinstance(node, cst.IndentedBlock)
                and isinstance(self.parent(node), (cst.If, cst.Else))
                and not self.inside(read, node)
                and _leaves(node)
            ):
                return True
            node = self.parent(node)
        return False

    def bound_value(self, target: cst.Name) -> cst.CSTNode | None:
        parent = self.parent(target)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parent(parent)
            return assign.value if isinstance(assign, cst.Assign) else None
        if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.target is target:
            return parent if isinstance(parent, cst.AugAssign) else parent.value
        if isinstance(parent, cst.NamedExpr):
            return parent.value
        if isinstance(parent, cst.For):
            return parent  # a loop variable: one element, not the list
        if isinstance(parent, cst.AsName) and isinstance(with_item := self.parent(parent), cst.WithItem):
            return with_item.item  # `async with agent.run_stream(q) as result`: what the block is entered with
        return None

    def _unpacked_from(self, target: cst.Name) -> cst.CSTNode | None:
        """The value an element of a tuple target receives its part of (`a, h = f(h)`: `f(h)`)."""
        node = self.parent(target)
        if not isinstance(node, (cst.Element, cst.StarredElement)):
            return None
        while isinstance(node, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
            node = self.parent(node)
        assign = self.parent(node) if isinstance(node, cst.AssignTarget) else None
        return assign.value if isinstance(assign, cst.Assign) else None

    def callees(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Functions of this module `call` may run: by name, methods of the same class first."""
        func = call.func
        if isinstance(func, cst.Name):
            return [f for f in self.functions.get(func.value, []) if self.class_of(f) is None]
        if isinstance(func, cst.Attribute):
            candidates = self.functions.get(func.attr.value, [])
            if isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
                klass = self.class_of(call)
                same = [f for f in candidates if self.class_of(f) is klass]
                return same or candidates
            return candidates if len(candidates) == 1 else []
        return []

    def callers(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The module's calls that may run `function` (see `callees`)."""
        return [call for call in self._calls_named.get(function.name.value, ()) if function in self.callees(call)]

    @functools.cached_property
    def _calls_named(self) -> dict[str, list[cst.Call]]:
        """The module's calls by callee name: asked for each function, again and again."""
        found: dict[str, list[cst.Call]] = {}
        for call in self.nodes.calls:
            found.setdefault(callee_name(call), []).append(call)
        return found

    def calls_in(self, function: cst.FunctionDef | None) -> list[cst.Call]:
        """The calls `function` makes itself (not those of functions nested in it); None: the module's top level."""
        return self._calls_by_function.get(id(function), [])

    @functools.cached_property
    def _calls_by_function(self) -> dict[int, list[cst.Call]]:
        found: dict[int, list[cst.Call]] = {}
        for call in self.nodes.calls:
            found.setdefault(id(self.function_of(call)), []).append(call)
        return found

    def returns(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        return self._returned.get(id(function), [])

    @functools.cached_property
    def _returned(self) -> dict[int, list[cst.BaseExpression]]:
        """What each function returns, by the function's id."""
        found: dict[int, list[cst.BaseExpression]] = {}
        for r in self.nodes.returns:
            if r.value is not None:
                found.setdefault(id(self.function_of(r)), []).append(r.value)
        return found

    @staticmethod
    def _params(function: cst.FunctionDef) -> list[cst.Param]:
        return [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]

    @staticmethod
    def argument_for(call: cst.Call, function: cst.FunctionDef, param: str) -> cst.BaseExpression | None:
        return ModuleTree.argument_in(call, [p.name.value for p in ModuleTree._params(function)], param)

    @staticmethod
    def argument_in(call: cst.Call, names, param: str) -> cst.BaseExpression | None:
        """The argument of `call` that binds `param` of a function with parameters `names`."""
        names = list(names)
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        offset = 1 if names and names[0] in ("self", "cls") and isinstance(call.func, cst.Attribute) else 0
        positional = [a for a in call.args if a.keyword is None and not a.star]
        index = names.index(param) - offset if param in names else -1
        return positional[index].value if 0 <= index < len(positional) else None


def _leaves(block: cst.IndentedBlock) -> bool:
    """The block's last statement leaves it: `continue`, `break`, `return` or `raise`."""
    last = block.body[-1] if block.body else None
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
    return isinstance(small, (cst.Continue, cst.Break, cst.Return, cst.Raise))


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and everything below it (for one small expression, never a whole module)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def bound_values(facts, expr: cst.CSTNode) -> list[cst.CSTNode]:
    """What `expr` was assigned from: a local or module name's value, or every value given to
    `self.<attr>` in the class (`self.chats = db["chats"]` in `__init__`)."""
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        return [value] if isinstance(value, cst.BaseExpression) else []
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
        klass, attr = facts.class_of(expr), expr.attr.value
        return [
            node.value
            for node in facts.nodes.assigns
            if isinstance(node, cst.Assign)
            and facts.class_of(node) is klass
            and any(
                isinstance(t.target, cst.Attribute)
                and t.target.attr.value == attr
                and isinstance(t.target.value, cst.Name)
                and t.target.value.value in ("self", "cls")
                for t in node.targets
            )
        ]
    return []
