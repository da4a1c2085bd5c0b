"""Rewrites that keep a chat program's meaning (and one control that changes it), as LibCST transformers.

Each rewrite takes a project (relative path -> source) and returns the rewritten project and, for
every file it added, the file it was cut from (`Rewritten`), or None where it finds nothing to
change. The sends are found with `chatbound.vocabulary.sinks.sink_of`, the same test the analysis
uses, so a rewrite moves what the analysis calls a model call; what the analysis then answers on
the rewritten code is what the harness checks.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import libcst as cst
from libcst import matchers as m
from libcst.metadata import PositionProvider

from chatbound.syntax.qualified import QualifiedNames
from chatbound.syntax.visitors import parents as syntax_parents
from chatbound.vocabulary.sinks import sink_of

Project = dict[str, str]

# the SDK's namespaces between a client and its method (`client.chat.completions.create`)
NAMESPACES = frozenset(
    {"chat", "completions", "messages", "responses", "models", "aio", "beta", "chats", "threads", "runs"}
)
LIST_KEYWORDS = ("messages", "input", "contents", "chat_history", "message_history", "history", "prompt")


@dataclass
class Rewritten:
    files: Project
    origin: dict[str, str] = field(default_factory=dict)  # an added file -> the file it was cut from
    # a control: each send's span in the original file, (line, column, end line, end column),
    # 1-based, and what the control did there: `bounded`, `left` (only this turn's text given) or
    # `held` (the history kept by a session or a wrapper, not given at the send)
    sends: dict[str, list[tuple[tuple[int, int, int, int], str]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# where the sends are


@dataclass
class Send:
    call: cst.Call
    statement: cst.CSTNode | None  # the statement a new line may go before (None: nowhere safe)
    awaited: bool
    in_class: cst.ClassDef | None


def _sends(module: cst.Module) -> dict[cst.Call, Send]:
    """The module's model calls, by `sink_of` on the names its imports bind (what the analysis
    itself reads: `chatbound.syntax.qualified`), with the parents chatbound's own walk records."""
    names = QualifiedNames(module)
    parents = syntax_parents(module)
    found: dict[cst.Call, Send] = {}

    def qualified(node: cst.CSTNode) -> set[str]:
        return {q.name for q in names.get(node, ())}

    for node in parents:
        if not isinstance(node, cst.Call):
            continue
        try:
            sink = sink_of(node, qualified)
        except Exception:  # noqa: BLE001 - a shape sink_of does not expect is no send to move
            sink = None
        if sink is not None:
            found[node] = Send(node, _statement(node, parents), _awaited(node, parents), _class(node, parents))
    return found


def _awaited(node: cst.CSTNode, parents) -> bool:
    return isinstance(parents.get(node), cst.Await)


def _class(node: cst.CSTNode, parents) -> cst.ClassDef | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, cst.ClassDef):
            return node
    return None


UNSAFE = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.SimpleStatementSuite)


def _statement(node: cst.CSTNode, parents) -> cst.CSTNode | None:
    """The statement that holds `node`, where a line put before it runs just before `node` does."""
    child = node
    while child in parents:
        parent = parents[child]
        if isinstance(parent, (*UNSAFE, cst.Decorator, cst.Param)):
            return None
        if isinstance(parent, cst.SimpleStatementLine):
            return parent
        if isinstance(parent, cst.BaseCompoundStatement):
            if isinstance(parent, cst.While | cst.FunctionDef | cst.ClassDef):
                return None
            if isinstance(parent, cst.If) and isinstance(parents.get(parent), cst.If):
                return None  # an elif's test
            return parent
        child = parent
    return None


def receiver_of(func: cst.BaseExpression) -> tuple[cst.BaseExpression | None, list[str]]:
    """(the client, the names after it): `self.client.chat.completions.create` -> (self.client,
    [chat, completions, create]); a bare function (`completion`) has no client."""
    chain: list[str] = []
    node = func
    while isinstance(node, cst.Attribute):
        chain.insert(0, node.attr.value)
        node = node.value
        if not (isinstance(node, cst.Attribute) and node.attr.value in NAMESPACES):
            return node, chain
    return None, chain


def on(base: cst.BaseExpression, chain: list[str]) -> cst.BaseExpression:
    for name in chain:
        base = cst.Attribute(base, cst.Name(name))
    return base


def root_name(expr: cst.BaseExpression | None) -> str | None:
    while isinstance(expr, cst.Attribute | cst.Subscript | cst.Call):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def list_argument(call: cst.Call) -> int | None:
    """The index of the argument that holds the messages (an agent runner takes the agent first)."""
    for name in LIST_KEYWORDS:
        for i, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == name:
                return i
    first = 1 if m.matches(call.func, m.Attribute(m.Name("Runner"))) else 0
    positional = [i for i, arg in enumerate(call.args) if arg.keyword is None and not arg.star]
    return positional[first] if len(positional) > first else None


def imported_names(module: cst.Module) -> dict[str, cst.SimpleStatementLine]:
    """Top-level names bound by an import -> the import statement (reduced to that name)."""
    found: dict[str, cst.SimpleStatementLine] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import | cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.asname.name if alias.asname else alias.name
                    name = cst.Module([]).code_for_node(bound).split(".")[0]
                    one = small.with_changes(names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
                    found[name] = cst.SimpleStatementLine([one])
    return found


def _after_imports(module: cst.Module, lines: list[cst.BaseStatement]) -> cst.Module:
    """`lines` put after the module's docstring, `__future__` imports and top-level imports."""
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Import | cst.ImportFrom) or (i == 0 and m.matches(s, m.Expr(m.SimpleString())))
            for s in stmt.body
        ):
            at = i + 1
        elif isinstance(stmt, cst.If) and m.matches(stmt.test, m.Name("TYPE_CHECKING")):
            at = i + 1
        else:
            break
    return module.with_changes(body=[*body[:at], *lines, *body[at:]])


def parse_statements(code: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(code).body)


def _with_pending(base: type[cst.CSTTransformer]):
    """A transformer that may put lines before a statement it is inside (`self.before[stmt]`)."""

    class Pending(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.before: dict[cst.CSTNode, list[cst.BaseStatement]] = {}

        def on_leave(self, original_node, updated_node):
            result = super().on_leave(original_node, updated_node)
            lines = self.before.pop(original_node, None)
            if lines and isinstance(result, cst.BaseStatement):
                return cst.FlattenSentinel([*lines, result])
            return result

    return Pending


class SendTransformer(_with_pending(cst.CSTTransformer)):  # type: ignore[misc]
    """Visits each send of a module (`self.sends`); subclasses answer `send(original, updated, send)`."""

    def __init__(self, sends: dict[cst.Call, Send], module: cst.Module) -> None:
        super().__init__()
        self.sends = sends
        self.module = module
        self.count = 0
        self.changed = 0
        self.top: list[cst.BaseStatement] = []  # lines the module needs after its imports

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        send = self.sends.get(original_node)
        if send is None:
            return updated_node
        result = self.send(original_node, updated_node, send)
        if result is not updated_node:
            self.changed += 1
            self.count += 1
        return result

    def send(self, original: cst.Call, updated: cst.Call, send: Send) -> cst.BaseExpression:
        raise NotImplementedError

    def put_before(self, send: Send, code: str) -> bool:
        if send.statement is None:
            return False
        self.before.setdefault(send.statement, []).extend(parse_statements(code))
        return True


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _per_file(
    project: Project, rewrite: Callable[[str, str, Project], tuple[str, dict[str, str]] | None]
) -> Rewritten | None:
    out = dict(project)
    origin: dict[str, str] = {}
    changed = False
    for path, source in sorted(project.items()):
        if not path.endswith(".py"):
            continue
        try:
            result = rewrite(path, source, project)
        except cst.ParserSyntaxError:
            result = None
        if result is None:
            continue
        new_source, added = result
        if new_source == source and not added:
            continue
        compile(new_source, path, "exec")  # a rewrite must leave valid Python
        out[path] = new_source
        for added_path, added_source in added.items():
            compile(added_source, added_path, "exec")
            out[added_path] = added_source
            origin[added_path] = path
        changed = True
    return Rewritten(out, origin) if changed else None


@functools.lru_cache(maxsize=256)
def parsed(source: str) -> cst.Module:
    """A file's tree, parsed once for every rewrite (LibCST trees are immutable: each rewrite
    makes its own new tree from it)."""
    return cst.parse_module(source)


@functools.lru_cache(maxsize=256)
def _wrapped(source: str) -> tuple[cst.Module, dict[cst.Call, Send]]:
    """The tree and its sends, found once per file for all the rewrites that move a send."""
    module = parsed(source)
    return module, _sends(module)


def _sibling(path: str, project: Project, stem: str) -> tuple[str, str, str]:
    """(the path of a new module beside `path`, the import statement that reaches it)."""
    folder = PurePosixPath(path).parent
    name = f"{stem}_{PurePosixPath(path).stem}"
    new = str(folder / f"{name}.py") if str(folder) != "." else f"{name}.py"
    package = (str(folder / "__init__.py") if str(folder) != "." else "__init__.py") in project
    return new, (f"from . import {name}" if package else f"import {name}"), name


# ---------------------------------------------------------------------------------------------
# extract the send


def _imports_for(module: cst.Module, names: set[str]) -> list[cst.BaseStatement]:
    imports = imported_names(module)
    return [imports[name] for name in sorted(names) if name in imports]


class ExtractSend(SendTransformer):
    """The send moves into a function (`function`), a method (`method`) or a forwarding
    wrapper (`forward`) of a new module beside this one."""

    def __init__(self, sends, module, style: str, module_name: str) -> None:
        super().__init__(sends, module)
        self.style = style
        self.module_name = module_name
        self.defs: list[str] = []
        self.needs: set[str] = set()
        self.imports = imported_names(module)

    def send(self, original: cst.Call, updated: cst.Call, send: Send) -> cst.BaseExpression:
        func = updated.func
        receiver, chain = receiver_of(func)
        if isinstance(func, cst.Name):
            chain = [func.value]
        root = root_name(receiver) if receiver is not None else None
        if receiver is None or (root in self.imports and root == _code(receiver)):
            # an SDK function or a module's (`completion`, `ollama.chat`, `Runner.run`): moved whole
            inner_func = func
            self.needs |= {root_name(func) or ""}
            receiver = None
        else:
            inner_func = None
        index = self.count
        name = f"send_{index}"
        target = cst.Attribute(cst.Name(self.module_name), cst.Name(name))
        prefix = "async " if send.awaited else ""
        wait = "await " if send.awaited else ""
        if self.style == "forward":
            params, inner_args = "*args, **kwargs", "*args, **kwargs"
            call_func = _code(inner_func) if inner_func is not None else _code(on(cst.Name("recv"), chain))
            head = "recv, " if receiver is not None else ""
            self.defs.append(
                f"@retry\n{prefix}def {name}({head}{params}):\n    return {wait}{call_func}({inner_args})\n"
            )
            args = ([cst.Arg(receiver)] if receiver is not None else []) + list(updated.args)
            return updated.with_changes(func=target, args=_commas(args))
        at = list_argument(updated)
        if at is None:
            return updated
        params: list[str] = []
        inner: list[str] = []
        outer: list[cst.Arg] = []
        listed = updated.args[at]
        positional = 0
        for i, arg in enumerate(updated.args):
            if i == at:
                inner.append(f"{arg.keyword.value}=items" if arg.keyword else "items")
            elif arg.star == "*":
                params.append("*args")
                inner.append("*args")
                outer.append(arg)
            elif arg.star == "**":
                params.append("**kwargs")
                inner.append("**kwargs")
                outer.append(arg)
            elif arg.keyword is not None:
                params.append(arg.keyword.value)
                inner.append(f"{arg.keyword.value}={arg.keyword.value}")
                outer.append(arg)
            else:
                params.append(f"a{positional}")
                inner.append(f"a{positional}")
                outer.append(arg)
                positional += 1
        # the parameters: named ones, then *args, then **kwargs (the call site passes its own in its order)
        params = [p for p in params if not p.startswith("*")] + sorted(set(p for p in params if p.startswith("*")))[
            ::-1
        ]
        item = cst.Arg(listed.value)
        if self.style == "function":
            head = ["recv"] if receiver is not None else []
            call_func = _code(inner_func) if inner_func is not None else _code(on(cst.Name("recv"), chain))
            self.defs.append(
                f"{prefix}def {name}({', '.join([*head, 'items', *params])}):\n"
                f"    return {wait}{call_func}({', '.join(inner)})\n"
            )
            args = ([cst.Arg(receiver)] if receiver is not None else []) + [item, *outer]
            return updated.with_changes(func=target, args=_commas(args))
        # a method of a class there, which keeps the client
        call_func = _code(inner_func) if inner_func is not None else _code(on(cst.parse_expression("self.recv"), chain))
        self.defs.append(
            f"    {prefix}def {name}({', '.join(['self', 'items', *params])}):\n"
            f"        return {wait}{call_func}({', '.join(inner)})\n"
        )
        made = cst.Call(
            cst.Attribute(cst.Name(self.module_name), cst.Name("Transport")),
            [cst.Arg(receiver)] if receiver is not None else [],
        )
        return updated.with_changes(func=cst.Attribute(made, cst.Name(name)), args=_commas([item, *outer]))

    def new_module(self) -> str:
        head = "".join(_code(s) for s in _imports_for(self.module, self.needs - {""}))
        if self.style == "forward":
            retry = (
                "import functools\n\n\n"
                "def retry(fn):\n"
                "    @functools.wraps(fn)\n"
                "    def wrapper(*args, **kwargs):\n"
                "        return fn(*args, **kwargs)\n\n"
                "    return wrapper\n\n\n"
            )
            return retry + head + "\n\n" + "\n\n".join(self.defs)
        if self.style == "function":
            return head + "\n\n" + "\n\n".join(self.defs)
        return (
            head
            + "\n\nclass Transport:\n    def __init__(self, recv=None):\n        self.recv = recv\n\n"
            + "\n".join(self.defs)
        )


def _commas(args: list[cst.Arg]) -> list[cst.Arg]:
    return [_parenthesized(a).with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]


def _parenthesized(arg: cst.Arg) -> cst.Arg:
    """A bare generator argument (`f(x for x in y)`) needs its own brackets beside another."""
    if isinstance(arg.value, cst.GeneratorExp) and not arg.value.lpar:
        return arg.with_changes(value=arg.value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
    return arg


def extract_send(style: str) -> Callable[[Project], Rewritten | None]:
    def rewrite(project: Project) -> Rewritten | None:
        def one(path: str, source: str, project: Project):
            tree, sends = _wrapped(source)
            if not sends:
                return None
            new_path, statement, name = _sibling(path, project, "transport")
            transformer = ExtractSend(sends, tree, style, name)
            module = tree.visit(transformer)
            if not transformer.changed:
                return None
            module = _after_imports(module, parse_statements(statement + "\n"))
            return module.code, {new_path: transformer.new_module()}

        return _per_file(project, one)

    return rewrite


# ---------------------------------------------------------------------------------------------
# alias and carry: a line before the send


class BeforeSend(SendTransformer):
    def __init__(self, sends, module, kind: str) -> None:
        super().__init__(sends, module)
        self.kind = kind

    def send(self, original: cst.Call, updated: cst.Call, send: Send) -> cst.BaseExpression:
        n = self.count
        func = updated.func
        if self.kind == "alias-method":
            if not self.put_before(send, f"send_{n} = {_code(func)}"):
                return updated
            return updated.with_changes(func=cst.Name(f"send_{n}"))
        if self.kind == "alias-client":
            receiver, chain = receiver_of(func)
            if receiver is None or not self.put_before(send, f"recv_{n} = {_code(receiver)}"):
                return updated
            return updated.with_changes(func=on(cst.Name(f"recv_{n}"), chain))
        at = list_argument(updated)
        if at is None:
            return updated
        arg = updated.args[at]
        value = _code(arg.value)
        if self.kind == "carry-kwargs":
            if arg.keyword is None or not self.put_before(send, f"kw_{n} = {{{arg.keyword.value!r}: {value}}}"):
                return updated
            args = [a for i, a in enumerate(updated.args) if i != at] + [cst.Arg(cst.Name(f"kw_{n}"), star="**")]
            return updated.with_changes(args=_commas(args))
        line, new = {
            "alias-list": (f"seq_{n} = {value}", f"seq_{n}"),
            "carry-dict": (f"box_{n} = {{'items': {value}}}", f"box_{n}['items']"),
            "carry-tuple": (f"pair_{n} = ({value}, None)", f"pair_{n}[0]"),
            "carry-dataclass": (f"box_{n} = _Carried({value})", f"box_{n}.items"),
        }[self.kind]
        if not self.put_before(send, line):
            return updated
        args = list(updated.args)
        args[at] = arg.with_changes(value=cst.parse_expression(new))
        return updated.with_changes(args=args)


CARRIED = "import dataclasses\n\n\n@dataclasses.dataclass\nclass _Carried:\n    items: object\n"


def before_send(kind: str) -> Callable[[Project], Rewritten | None]:
    def rewrite(project: Project) -> Rewritten | None:
        def one(path: str, source: str, project: Project):
            tree, sends = _wrapped(source)
            if not sends:
                return None
            transformer = BeforeSend(sends, tree, kind)
            module = tree.visit(transformer)
            if not transformer.changed:
                return None
            if kind == "carry-dataclass":
                module = _after_imports(module, parse_statements(CARRIED))
            return module.code, {}

        return _per_file(project, one)

    return rewrite


# ---------------------------------------------------------------------------------------------
# bound it (the control): the list cut at the send, through a helper


BOUNDS = {
    "slice": "def recent(items):\n    return items[-20:]\n",
    "trim_messages": (
        "from langchain_core.messages import trim_messages\n\n\n"
        "def recent(items):\n"
        "    return trim_messages(items, max_tokens=2000, token_counter=len, strategy='last')\n"
    ),
    "bounded_view": (
        "from chatbound.compaction import bounded_view\n\n\n"
        "def recent(items):\n"
        "    return bounded_view(items, last_turns=10)\n"
    ),
}


# the history is kept by the service or by a wrapper, not given at the send: nothing there to bound
HELD_ELSEWHERE = ("session", "previous_response_id", "conversation", "config")


def _this_turn_only(value: cst.BaseExpression) -> bool:
    """A constant text, a dict of inputs or a list written out with no history spread in it: what
    this turn adds, not the history (bounding it changes nothing). An f-string may hold the history."""
    if isinstance(value, cst.List):
        return not any(isinstance(e, cst.StarredElement) for e in value.elements)
    return isinstance(value, cst.SimpleString | cst.Dict | cst.Integer)


def _url(value: cst.BaseExpression) -> bool:
    """`f"{base}/api/generate"`: an HTTP call's address (its messages are in the payload)."""
    if not isinstance(value, cst.FormattedString):
        return False
    text = "".join(p.value for p in value.parts if isinstance(p, cst.FormattedStringText))
    return "/" in text and " " not in text


class _PayloadMessages(cst.CSTTransformer):
    """Wraps the value of a `"messages"`-like entry of a request payload (`json={...}`)."""

    def __init__(self) -> None:
        self.wrapped = False

    def leave_DictElement(self, original_node: cst.DictElement, updated_node: cst.DictElement) -> cst.DictElement:
        key = updated_node.key
        if self.wrapped or not (isinstance(key, cst.SimpleString) and key.evaluated_value in LIST_KEYWORDS):
            return updated_node
        self.wrapped = True
        return updated_node.with_changes(value=cst.Call(cst.Name("recent"), [cst.Arg(updated_node.value)]))


class BoundSend(SendTransformer):
    def __init__(self, sends, module, positions) -> None:
        super().__init__(sends, module)
        self.positions = positions
        self.done: list[tuple[tuple[int, int, int, int], str]] = []

    def send(self, original: cst.Call, updated: cst.Call, send: Send) -> cst.BaseExpression:
        at = self.positions[original]
        span = (at.start.line, at.start.column + 1, at.end.line, at.end.column + 1)
        if any(a.keyword is not None and a.keyword.value in HELD_ELSEWHERE for a in updated.args):
            self.done.append((span, "held"))
            return updated
        result = self.bounded(updated)
        self.done.append((span, "left" if result is updated else "bounded"))
        return result

    def bounded(self, updated: cst.Call) -> cst.BaseExpression:
        at = list_argument(updated)
        args = list(updated.args)
        if at is not None and not isinstance(args[at].value, cst.SimpleString | cst.Name) and not _url(args[at].value):
            if _this_turn_only(args[at].value):
                return updated
            args[at] = args[at].with_changes(value=cst.Call(cst.Name("recent"), [cst.Arg(args[at].value)]))
            return updated.with_changes(args=args)
        if at is not None and isinstance(args[at].value, cst.Name) and not args[at].value.value.isupper():
            args[at] = args[at].with_changes(value=cst.Call(cst.Name("recent"), [cst.Arg(args[at].value)]))
            return updated.with_changes(args=args)
        payload = _PayloadMessages()  # an HTTP request: the URL first, the messages in its payload
        changed = updated.visit(payload)
        return changed if payload.wrapped else updated


def bound(helper: str) -> Callable[[Project], Rewritten | None]:
    def rewrite(project: Project) -> Rewritten | None:
        done: dict[str, list[tuple[tuple[int, int, int, int], str]]] = {}

        def one(path: str, source: str, project: Project):
            tree, sends = _wrapped(source)
            if not sends:
                return None
            positions = cst.MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
            transformer = BoundSend(sends, tree, positions)
            module = tree.visit(transformer)
            done[path] = transformer.done
            if not transformer.changed:
                return None
            return _after_imports(module, parse_statements(BOUNDS[helper])).code, {}

        rewritten = _per_file(project, one)
        if rewritten is not None:
            rewritten.sends = done
        return rewritten

    return rewrite


# ---------------------------------------------------------------------------------------------
# extract the growth


GROWTH = ("append", "extend")


class ExtractGrowth(_with_pending(cst.CSTTransformer)):  # type: ignore[misc]
    def __init__(self, style: str) -> None:
        super().__init__()
        self.style = style
        self.classes: list[list[str]] = []  # methods to add to each open class
        self.used: set[str] = set()
        self.changed = 0

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append([])

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        methods = self.classes.pop()
        if not methods or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        added = [s for code in methods for s in cst.parse_module(code).body]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*updated_node.body.body, *added]))

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.Expr:
        call = updated_node.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in GROWTH
            and len(call.args) == 1
            and call.args[0].keyword is None
            and not call.args[0].star
        ):
            return updated_node
        verb = call.func.attr.value
        seq = call.func.value
        if self.style == "function":
            self.used.add(verb)
            self.changed += 1
            return updated_node.with_changes(
                value=cst.Call(cst.Name(f"_{verb}_to"), _commas([cst.Arg(seq), cst.Arg(call.args[0].value)]))
            )
        if not (self.classes and m.matches(seq, m.Attribute(m.Name("self"), m.Name()))):
            return updated_node
        attr = seq.attr.value
        name = f"_{verb}_{attr}"
        if name not in self.used:
            self.used.add(name)
            self.classes[-1].append(f"def {name}(self, item):\n    self.{attr}.{verb}(item)\n")
        self.changed += 1
        return updated_node.with_changes(
            value=cst.Call(cst.parse_expression(f"self.{name}"), [cst.Arg(call.args[0].value)])
        )


def extract_growth(style: str) -> Callable[[Project], Rewritten | None]:
    def rewrite(project: Project) -> Rewritten | None:
        def one(path: str, source: str, project: Project):
            module = parsed(source)
            transformer = ExtractGrowth(style)
            module = module.visit(transformer)
            if not transformer.changed:
                return None
            if style == "function":
                helpers = "".join(
                    f"def _{verb}_to(seq, item):\n    seq.{verb}(item)\n\n\n" for verb in sorted(transformer.used)
                )
                module = _after_imports(module, parse_statements(helpers))
            return module.code, {}

        return _per_file(project, one)

    return rewrite


# ---------------------------------------------------------------------------------------------
# reorder: keywords become positional where the signature allows, and positional ones keywords


# the first parameter of the model calls whose signature takes it positionally
FIRST_PARAMETER = {
    "invoke": "input",
    "ainvoke": "input",
    "stream": "input",
    "astream": "input",
    "batch": "inputs",
    "abatch": "inputs",
    "stream_chat": "messages",
    "astream_chat": "messages",
    "achat": "messages",
}


@dataclass
class Signature:
    names: list[str]  # positional-or-keyword parameters, in order (self left out)


def _signatures(module: cst.Module) -> dict[str, Signature]:
    found: dict[str, Signature] = {}
    clash: set[str] = set()

    class Collect(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.depth += 1

        def leave_ClassDef(self, node: cst.ClassDef) -> None:
            self.depth -= 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            params = [p.name.value for p in node.params.params]
            if self.depth and params and params[0] in ("self", "cls"):
                if any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators
                ):
                    pass
                else:
                    params = params[1:]
            name = node.name.value
            if node.params.posonly_params or name in found:
                clash.add(name)
            found[name] = Signature(params)

    module.visit(Collect())
    return {k: v for k, v in found.items() if k not in clash}


class Reorder(cst.CSTTransformer):
    def __init__(self, signatures: dict[str, Signature], sends: dict[cst.Call, Send]) -> None:
        self.signatures = signatures
        self.sends = sends
        self.changed = 0

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        args = list(updated_node.args)
        if any(a.star for a in args):
            return updated_node
        func = updated_node.func
        name = (
            func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        )
        own = self.signatures.get(name) if name else None
        if own is not None and (isinstance(func, cst.Name) or m.matches(func, m.Attribute(m.Name("self")))):
            names = own.names
        elif original_node in self.sends and name in FIRST_PARAMETER and isinstance(func, cst.Attribute):
            names = [FIRST_PARAMETER[name]]
        else:
            return updated_node
        positional = [a for a in args if a.keyword is None]
        if positional:
            if len(positional) > len(names):
                return updated_node
            new = [
                a.with_changes(
                    keyword=cst.Name(names[i]),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                )
                if a.keyword is None
                else a
                for i, a in enumerate(args)
            ]
        else:
            new, i = [], 0
            for a in args:
                if i < len(names) and len(new) == i and a.keyword is not None and a.keyword.value == names[i]:
                    new.append(a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
                    i += 1
                else:
                    new.append(a)
            if i == 0:
                return updated_node
            # keywords that followed stay keywords, after the positional ones
        self.changed += 1
        return updated_node.with_changes(args=new)


def reorder(project: Project) -> Rewritten | None:
    def one(path: str, source: str, project: Project):
        tree, sends = _wrapped(source)
        transformer = Reorder(_signatures(tree), sends)
        module = tree.visit(transformer)
        return (module.code, {}) if transformer.changed else None

    return _per_file(project, one)


# ---------------------------------------------------------------------------------------------
# rename: every name the program binds with a chat word in it becomes a neutral one


CHAT_WORDS = re.compile(
    r"hist|mess|msg|chat|conv|dialog|turn|transcript|memor|prompt|client|llm|model|assist|repl|sess|context|"
    r"agent|openai|anthropic|claude|gpt|complet|respon|answer|ask|question|thread|tool|retriev|doc|rag|system|"
    r"user|bot|talk|say|query|search|knowledge|store|recall|remember|note|log|send|call|speak|ai|lm|gen",
    re.IGNORECASE,
)
KEEP = frozenset(dir(builtins)) | {"self", "cls"}
# module-level names a framework looks up by their spelling (ADK loads `agent.root_agent`)
FRAMEWORK_NAMES = frozenset({"root_agent"})


def _named_in_data(project: Project) -> set[str]:
    """Names a project's data files point at (`"./graph.py:graph"` in langgraph.json, `app.main:app`
    in pyproject.toml): loaded by their spelling, so they keep it."""
    return {
        name
        for path, text in project.items()
        if not path.endswith(".py")
        for name in re.findall(r"[\w.]:([A-Za-z_]\w*)\b", text)
    }


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _Names(cst.CSTVisitor):
    """What the project binds and what it must leave alone."""

    def __init__(self, local_modules: set[str]) -> None:
        self.local_modules = local_modules
        self.names: set[str] = set()  # every Name identifier seen
        self.frozen: set[str] = set()  # identifiers that must keep their spelling
        self.self_attrs: set[str] = set()  # attributes read or written on self
        self.other_attrs: set[str] = set()  # attributes read on anything else
        self.callables: set[str] = set()  # functions and classes the project defines
        self.methods: set[str] = set()  # functions defined in a class
        self.module_attrs: set[str] = set()  # attributes read on a module of the project (`llm.chat`)
        self.classes: list[bool] = []  # open classes: True when one of its bases is not the project's
        self.bound: set[str] = set()  # names the program itself binds (a def, a class, a parameter, a target)
        self.self_bound: set[str] = set()  # attributes the program sets on self or cls
        self.params_of: dict[str, set[str]] = {}  # a function's or method's name -> its parameters
        self.library: set[str] = set()  # names bound by an import of a library (not of the project)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def _binds(self, target: cst.BaseExpression) -> None:
        """The names (and self attributes) an assignment target binds, through tuples and stars."""
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, cst.Attribute) and m.matches(target.value, m.Name("self") | m.Name("cls")):
            self.self_bound.add(target.attr.value)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._binds(element.value)
        elif isinstance(target, cst.StarredElement):
            self._binds(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._binds(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._binds(node.target)
        if self.classes and isinstance(node.target, cst.Name):
            self.frozen.add(node.target.value)  # a field: keys, schemas and constructors name it

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._binds(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._binds(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._binds(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._binds(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._binds(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._binds(node.name.name)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound.add(node.name.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if m.matches(node.value, m.Name("self") | m.Name("cls")):
            self.self_attrs.add(node.attr.value)
        else:
            self.other_attrs.add(node.attr.value)
            if root_name(node.value) in self.local_modules:
                self.module_attrs.add(node.attr.value)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted_name = _code(alias.name)
            self.frozen.update(dotted_name.split("."))
            if dotted_name.split(".")[0] not in self.local_modules:
                bound = _code(alias.asname.name) if alias.asname else dotted_name.split(".")[0]
                self.frozen.add(bound)
                self.library.add(bound)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        source = _code(node.module) if node.module else ""
        self.frozen.update(source.split("."))
        local = bool(node.relative) or source.split(".")[0] in self.local_modules
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if not local:
                self.frozen.add(_code(alias.name))
                if alias.asname:
                    self.frozen.add(_code(alias.asname.name))
                self.library.add(_code(alias.asname.name) if alias.asname else _code(alias.name))
            elif _code(alias.name) in self.local_modules:  # a module of the package
                self.frozen.add(_code(alias.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.callables.add(node.name.value)
        self.bound.add(node.name.value)
        foreign = any(not m.matches(b.value, m.Name()) or b.keyword is not None for b in node.bases) or bool(node.bases)
        self.classes.append(foreign)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.callables.add(node.name.value)
        self.bound.add(node.name.value)
        self.params_of.setdefault(node.name.value, set()).update(
            p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        )
        if self.classes:
            self.self_bound.add(node.name.value)
        if self.classes:
            self.methods.add(node.name.value)
        if self.classes and self.classes[-1]:  # it may override the base's
            self.frozen.add(node.name.value)
        if node.decorators or (self.classes and self.classes[-1]):  # a framework may call it by its names
            for param in (*node.params.params, *node.params.kwonly_params):
                self.frozen.add(param.name.value)


class _Rename(cst.CSTTransformer):
    def __init__(self, names: dict[str, str], attrs: dict[str, str], seen: _Names) -> None:
        self.names = names
        self.attrs = attrs
        self.seen = seen

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.names.get(updated_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        # the Name visit renamed `attr` as a name: undo unless it is an attribute to rename
        attr = original_node.attr.value
        if m.matches(original_node.value, m.Name("self") | m.Name("cls")) and attr in self.attrs:
            return updated_node.with_changes(attr=cst.Name(self.attrs[attr]))
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if original_node.keyword is None:
            return updated_node
        return updated_node.with_changes(keyword=original_node.keyword)

    def _callee(self, func: cst.BaseExpression) -> str | None:
        """The project's function or method a call runs, as far as its spelling tells: a name the
        program defines (not one a library import binds), or a method reached on anything but a
        library's module or object (`co.chat(...)` on an imported client is the library's)."""
        seen = self.seen
        if isinstance(func, cst.Name):
            return func.value if func.value in seen.callables and func.value not in seen.library else None
        if isinstance(func, cst.Attribute):
            root = root_name(func.value)
            if root is None or root in seen.library:
                return None
            return func.attr.value if func.attr.value in seen.callables else None
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        name = self._callee(original_node.func)
        if name is None and _code(original_node.func) in ("partial", "functools.partial") and original_node.args:
            name = self._callee(original_node.args[0].value)  # `partial(node, agent=...)` names node's parameters
        if name is None:
            return updated_node
        params = self.seen.params_of.get(name, set())
        args = [
            a.with_changes(keyword=cst.Name(self.names[a.keyword.value]))
            if a.keyword is not None and a.keyword.value in self.names and a.keyword.value in params
            else a
            for a in updated_node.args
        ]
        return updated_node.with_changes(args=args)

    def leave_ImportAlias(self, original_node: cst.ImportAlias, updated_node: cst.ImportAlias) -> cst.ImportAlias:
        return updated_node  # names imported from the project's own modules follow their definitions

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        return updated_node.with_changes(module=original_node.module)

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        return original_node


def rename(project: Project) -> Rewritten | None:
    modules: dict[str, cst.Module] = {}
    for path, source in project.items():
        if path.endswith(".py"):
            try:
                modules[path] = parsed(source)
            except cst.ParserSyntaxError:
                continue
    local = {PurePosixPath(p).stem for p in modules} | {part for p in modules for part in PurePosixPath(p).parts[:-1]}
    seen = _Names(local)
    for module in modules.values():
        module.visit(seen)
    taken = seen.names | seen.self_attrs | seen.other_attrs
    free = (f"v{i}" for i in range(10_000) if f"v{i}" not in taken)
    neutral: dict[str, str] = {}
    for name in sorted(seen.names | seen.self_attrs):
        if CHAT_WORDS.search(name) and name not in KEEP and not _is_dunder(name):
            neutral[name] = next(free)
    frozen = seen.frozen | FRAMEWORK_NAMES | _named_in_data(project)
    # only what the program itself binds: a name it reads but never binds comes from a library
    # (a star import, a snippet's context) and keeps its spelling
    names = {k: v for k, v in neutral.items() if k not in frozen and k in seen.bound}
    attrs = {
        k: v
        for k, v in neutral.items()
        if k in seen.self_bound and k in seen.self_attrs and k not in seen.other_attrs and k not in frozen
    }
    # a function or method reached as an attribute (self.x, module.x, obj.x) is an attribute and a
    # name at once: both or neither, and never when reached on anything but self
    both = {
        k
        for k in seen.callables
        if (k in seen.self_attrs and (k in names) != (k in attrs))
        or (k in seen.methods and k in seen.other_attrs)
        or k in seen.module_attrs
    }
    for k in both:
        names.pop(k, None)
        attrs.pop(k, None)
    if not names and not attrs:
        return None
    out = dict(project)
    for path, module in modules.items():
        new = module.visit(_Rename(names, attrs, seen)).code
        compile(new, path, "exec")
        out[path] = new
    return Rewritten(out) if out != project else None


# ---------------------------------------------------------------------------------------------

REWRITES: dict[str, Callable[[Project], Rewritten | None]] = {
    "rename": rename,
    "send-function": extract_send("function"),
    "send-method": extract_send("method"),
    "send-forwarding": extract_send("forward"),
    "growth-function": extract_growth("function"),
    "growth-method": extract_growth("method"),
    "alias-method": before_send("alias-method"),
    "alias-client": before_send("alias-client"),
    "alias-list": before_send("alias-list"),
    "carry-dict": before_send("carry-dict"),
    "carry-dataclass": before_send("carry-dataclass"),
    "carry-tuple": before_send("carry-tuple"),
    "carry-kwargs": before_send("carry-kwargs"),
    "reorder": reorder,
}
CONTROLS: dict[str, Callable[[Project], Rewritten | None]] = {
    "bound-slice": bound("slice"),
    "bound-trim_messages": bound("trim_messages"),
    "bound-bounded_view": bound("bounded_view"),
}
