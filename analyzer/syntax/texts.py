"""Resolve an expression to the text it builds, without running the code.

`text_of(rule, expr)` follows what prompt code does at import time: string constants, implicit
concatenation, `+`, `sep.join([...])`, `textwrap.dedent`/`inspect.cleandoc`, `.strip()`,
`.format(...)` templates, f-strings (their literal parts and the texts their fields name), names
bound once (or bound once and then added to in the same block, `p += extra`), class attributes
(`self.SYSTEM`), what a function or method of the module returns for the arguments of the call
(`load("prompts/system.md")` of `def load(path): return open(path).read()`), and data files read
by a literal path (`Path("prompts/system.md").read_text()`, `open(...).read()`, paths built from
`__file__`), relative to the analyzed file's folder. A data file is read, never imported.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import os
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from chatbound.syntax.datafiles import folder_holding, read_data_file
from chatbound.syntax.messages import callee_name
from chatbound.syntax.values import bound_expression, class_attribute, enclosing_class, fallback_of, grown_from

MAX_DEPTH = 12
FILE = "__file__"  # the analyzed file itself, as a path value


@dataclass(frozen=True)
class Text:
    value: str
    node: cst.CSTNode  # where the text is defined: the string, or the call that reads a file
    partial: bool = False  # some parts (f-string fields, unknown operands) are not counted
    file: str = ""  # the data files it was read from, relative to the analyzed file, ", "-joined
    unread: bool = False  # a file the module reads, not read here: a summary's importer reads it (`file`)


@dataclass(frozen=True)
class Frame:
    """The arguments of the call to a helper whose returned text is being resolved: its
    parameters (by id) -> the argument expressions, which resolve in the caller's frame; and
    `imported`, the text another module gives a name this one imports (an f-string's field)."""

    arguments: dict[int, cst.BaseExpression]
    caller: Frame | None = None
    imported: Callable[[cst.BaseExpression], Text | None] | None = None


def _argument(rule, name: cst.Name, frame: Frame | None) -> tuple[cst.BaseExpression, Frame | None] | None:
    """The argument a helper's parameter `name` was given by the call being resolved."""
    if frame is None:
        return None
    scope = rule.get_metadata(ScopeProvider, name, None)
    bindings = scope[name.value] if scope is not None else []
    if len(bindings) != 1 or id(bindings[0].node) not in frame.arguments:
        return None
    return frame.arguments[id(bindings[0].node)], frame.caller


def name_words(name: str) -> list[str]:
    """The lower-case words of an identifier: `SYSTEM_PROMPT`, `systemPrompt` -> system, prompt."""
    return [w for w in re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().split("_") if w]


def _positional(call: cst.Call, index: int = 0) -> cst.BaseExpression | None:
    args = [a for a in call.args if a.keyword is None and not a.star]
    return args[index].value if len(args) > index else None


def _fstring_text(rule, node: cst.FormattedString, depth: int, frame: Frame | None) -> Text | None:
    """An f-string's literal parts (escapes decoded by Python's own parser), with the text of
    each plain field that names one (`f"{BASE}\\n{extra}"`: BASE, and `extra` if known)."""
    try:
        tree = ast.parse("(" + rule.context.module.code_for_node(node) + ")", mode="eval")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree.body, ast.JoinedStr):
        return None
    fields = iter([p for p in node.parts if isinstance(p, cst.FormattedStringExpression)])
    parts: list[Text | None] = []
    for value in tree.body.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(Text(value.value, node))
            continue
        part = next(fields, None)
        plain = isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
        found = text_of(rule, part.expression, depth, frame) if part is not None and plain else None
        if found is None and part is not None and plain and frame is not None and frame.imported is not None:
            found = frame.imported(part.expression)
        parts.append(found)
    return _combine(parts, node) or Text("", node, partial=True)


def _combine(parts: list[Text | None], node: cst.CSTNode, separator: str = "") -> Text | None:
    parts = [None if p is not None and p.unread else p for p in parts]
    known = [p for p in parts if p is not None]
    if not known:
        return None
    files = dict.fromkeys(f for p in known if p.file for f in p.file.split(", "))
    return Text(
        separator.join(p.value for p in known),
        node,
        partial=len(known) < len(parts) or any(p.partial for p in known),
        file=", ".join(files),
    )


def text_of(
    rule: cst.BatchableCSTVisitor, node: cst.BaseExpression, depth: int = 0, frame: Frame | None = None
) -> Text | None:
    """The text `node` evaluates to (or its known part), with where it is defined; else None.
    `frame`: the arguments of the helper call whose body `node` is in."""
    if depth > MAX_DEPTH:
        return None
    depth += 1
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return Text(value, node) if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        if isinstance(value, str):
            return Text(value, node)
        # holds an f-string part; implicit concatenation nests to the right: same depth
        left, right = text_of(rule, node.left, depth - 1, frame), text_of(rule, node.right, depth - 1, frame)
        return _combine([left, right], node)
    if isinstance(node, cst.FormattedString):
        return _fstring_text(rule, node, depth, frame)
    if isinstance(node, cst.Name):
        return _name_text(rule, node, depth, frame)
    if isinstance(node, cst.Attribute):
        value = class_attribute(rule, node)  # `self.SYSTEM`, bound once in the class body and never on self
        return text_of(rule, value, depth) if value is not None and not _set_on_self(rule, node) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _combine([text_of(rule, node.left, depth, frame), text_of(rule, node.right, depth, frame)], node)
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        # `given or DEFAULT`: the text given when there is one, else the default the code sends
        given = text_of(rule, node.left, depth, frame)
        return given if given is not None and given.value else text_of(rule, node.right, depth, frame)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        left = text_of(rule, node.left, depth, frame)
        return Text(left.value, left.node, True, left.file) if left else None
    if isinstance(node, cst.Call):
        return _call_text(rule, node, depth, frame)
    return None


def _name_text(rule, node: cst.Name, depth: int, frame: Frame | None) -> Text | None:
    """A name bound once; a helper's parameter (its argument); or a name bound once and then
    added to (`p = BASE`, `p += extra`): the additions in the same block count when all are
    known, else it holds at least BASE."""
    argument = _argument(rule, node, frame)
    if argument is not None:
        return text_of(rule, argument[0], depth, argument[1])
    bound = bound_expression(rule, node)
    if bound is not None:
        return text_of(rule, bound, depth, frame)
    fallback = fallback_of(rule, node)
    if fallback is not None:  # `p = load(); if not p: p = DEFAULT`: what load() gives, the default if empty
        given = text_of(rule, fallback[0], depth, frame)  # unknown here (another module's?): not the default
        if given is None or given.value or given.unread:
            return given
        return text_of(rule, fallback[1], depth, frame)
    grown = grown_from(rule, node)
    inner = text_of(rule, grown, depth, frame) if grown is not None else None
    if inner is None:
        return None
    added = _added_in_block(rule, node, grown)
    parts = [text_of(rule, a, depth, frame) for a in added] if added is not None else [None]
    if all(p is not None for p in parts):
        return _combine([inner, *parts], inner.node)
    return dataclasses.replace(inner, partial=True)


def _added_in_block(rule, name: cst.Name, value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """What `name += ...` adds after `name = value`, when every addition stands in the same
    block as that assignment (each runs whenever it does); None when one is elsewhere."""
    scope = rule.get_metadata(ScopeProvider, name, None)
    statement = _statement(rule, value)
    block = rule.get_metadata(ParentNodeProvider, statement, None) if statement is not None else None
    if scope is None or block is None:
        return None
    added = []
    for binding in scope[name.value]:
        parent = rule.get_metadata(ParentNodeProvider, binding.node, None)
        if isinstance(parent, cst.AugAssign):
            line = _statement(rule, parent)
            if line is None or rule.get_metadata(ParentNodeProvider, line, None) is not block:
                return None
            added.append(parent.value)
    return added


def _statement(rule, node: cst.CSTNode | None) -> cst.CSTNode | None:
    while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        node = rule.get_metadata(ParentNodeProvider, node, None)
    return node


def text_root(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
    """The expression a text is built from, through what `text_of` follows that keeps it whole
    (a local, `.format(...)`, `.strip()`, `dedent(...)`, `+ more`, the fallback of `given or
    DEFAULT`): `SYSTEM` of `p = SYSTEM.format(day=d); p += extra`, a constant another module may
    define; and whether the way there filled the text in (`.format(...)`, `+ more`), so that
    the root holds only part of what is sent."""
    filled = False
    for _ in range(MAX_DEPTH):
        if isinstance(node, cst.Name):
            bound = bound_expression(rule, node)
            fallback = fallback_of(rule, node) if bound is None else None
            grown = grown_from(rule, node) if bound is None and fallback is None else None
            filled = filled or grown is not None
            inner = bound or (fallback[0] if fallback is not None else grown)  # what is given, not its stand-in
        elif isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            inner = node.right
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            inner, filled = node.left, True
        elif isinstance(node, cst.Call) and callee_name(node) in ("dedent", "cleandoc"):
            inner = _positional(node)
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and callee_name(node) in ("strip", "lstrip", "rstrip", "format", "format_map")
        ):
            inner = node.func.value
            filled = filled or callee_name(node) in ("format", "format_map")
        else:
            inner = None
        if inner is None:
            return node, filled
        node = inner
    return node, filled


def _call_text(rule: cst.BatchableCSTVisitor, call: cst.Call, depth: int, frame: Frame | None) -> Text | None:
    name = callee_name(call)
    if name in ("dedent", "cleandoc"):
        argument = _positional(call)
        inner = text_of(rule, argument, depth, frame) if argument is not None else None
        if inner is None:
            return None
        value = textwrap.dedent(inner.value) if name == "dedent" else inspect.cleandoc(inner.value)
        return dataclasses.replace(inner, value=value)
    if name in ("read_text", "read"):
        found = _file_text(rule, call, frame)
        if found is not None or name == "read_text":
            return found
    if _reads_environment(call) and len(call.args) == 2:
        return text_of(rule, call.args[1].value, depth, frame)  # the text it runs with unless the variable is set
    helper = _helper(rule, call)
    if helper is not None:
        return _returned_text(rule, call, helper, depth, frame)
    if not isinstance(call.func, cst.Attribute):
        return None
    receiver = call.func.value
    if name in ("strip", "lstrip", "rstrip") and not call.args:
        inner = text_of(rule, receiver, depth, frame)
        return dataclasses.replace(inner, value=getattr(inner.value, name)()) if inner else None
    if name == "replace" and len(call.args) == 2:
        inner = text_of(rule, receiver, depth, frame)
        old, new = (text_of(rule, a.value, depth, frame) for a in call.args)
        if inner is None or old is None or new is None or old.partial or new.partial:
            return None
        return Text(inner.value.replace(old.value, new.value), inner.node, inner.partial, inner.file)
    if name in ("format", "format_map"):
        inner = text_of(rule, receiver, depth, frame)
        return dataclasses.replace(inner, partial=True) if inner else None
    if name == "join" and call.args:
        separator = text_of(rule, receiver, depth, frame)
        items = _positional(call)
        if separator is None or not isinstance(items, (cst.List, cst.Tuple)):
            return None
        parts = [text_of(rule, e.value, depth, frame) if isinstance(e, cst.Element) else None for e in items.elements]
        return _combine(parts, call, separator.value)
    return None


def _reads_environment(call: cst.Call) -> bool:
    """`os.getenv(name, default)`, `os.environ.get(name, default)`."""
    func = call.func
    if callee_name(call) == "getenv":
        return True
    if callee_name(call) != "get" or not isinstance(func, cst.Attribute):
        return False
    owner = func.value
    return (isinstance(owner, cst.Name) and owner.value == "environ") or (
        isinstance(owner, cst.Attribute) and owner.attr.value == "environ"
    )


def _set_on_self(rule, attribute: cst.Attribute) -> bool:
    """Whether a method of the class assigns `self.<attr>` (the instance's own value hides the class's)."""
    klass = enclosing_class(rule, attribute)
    name = attribute.attr.value
    return klass is not None and any(
        isinstance(n, cst.Attribute)
        and n.attr.value == name
        and isinstance(n.value, cst.Name)
        and n.value.value == "self"
        and isinstance(rule.get_metadata(ParentNodeProvider, n, None), (cst.AssignTarget, cst.AugAssign, cst.AnnAssign))
        for n in _all_nodes(klass.body)
    )


def _all_nodes(node: cst.CSTNode):
    for child in node.children:
        yield child
        yield from _all_nodes(child)


# --- what a helper of the module returns ----------------------------------------------------


def _helper(rule, call: cst.Call) -> cst.FunctionDef | None:
    """The function of this module a call runs: `load(...)` bound once to a `def`, or
    `self.load(...)` of a method the enclosing class defines once."""
    func = call.func
    if isinstance(func, cst.Name):
        scope = rule.get_metadata(ScopeProvider, func, None)
        bindings = scope[func.value] if scope is not None else []
        found = bindings[0].node if len(bindings) == 1 else None
        return found if isinstance(found, cst.FunctionDef) else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        klass = enclosing_class(rule, call)
        methods = (
            [s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value]
            if klass is not None
            else []
        )
        return methods[0] if len(methods) == 1 else None
    return None


def returned_text(rule: cst.BatchableCSTVisitor, function: cst.FunctionDef) -> Text | None:
    """The text a function of the module returns when called with no arguments (each parameter
    at its default): `def system_prompt(): return PROMPT`, what an importer may send."""
    return _returned_text(rule, None, function, 1, None)


def _returned_text(
    rule, call: cst.Call | None, helper: cst.FunctionDef, depth: int, frame: Frame | None
) -> Text | None:
    """The text the helper's one `return` gives for the call's arguments (a parameter the call
    leaves out has its default). A text read from a file the call names is defined at the call."""
    args = call.args if call is not None else ()
    if any(a.star for a in args) or helper.asynchronous:
        return None
    params = list(helper.params.posonly_params) + list(helper.params.params)
    if call is not None and isinstance(call.func, cst.Attribute) and params:
        params = params[1:]  # self
    keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None]
    arguments = {}
    for index, param in enumerate([*params, *helper.params.kwonly_params]):
        given = positional[index] if index < len(positional) and param in params else keywords.get(param.name.value)
        given = given if given is not None else param.default
        if given is None:
            return None
        arguments[id(param)] = given
    returns = [n for n in _own_nodes(helper.body) if isinstance(n, cst.Return) and not _gives_nothing(n)]
    if len(returns) != 1:  # `return None` where the file is missing is not the text the app runs with
        return None
    inner = text_of(rule, returns[0].value, depth, Frame(arguments, frame, frame.imported if frame else None))
    if call is None or inner is None or not (inner.file and arguments):
        return inner
    return dataclasses.replace(inner, node=call)


def _gives_nothing(node: cst.Return) -> bool:
    return node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None")


def _own_nodes(node: cst.CSTNode):
    """The nodes of a function's body, not those of the functions and classes it defines."""
    for child in node.children:
        yield child
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _own_nodes(child)


# --- data files read by a literal path ----------------------------------------------------


def _file_text(rule: cst.BatchableCSTVisitor, call: cst.Call, frame: Frame | None) -> Text | None:
    """`<path>.read_text()`, `open(<path>).read()`, or `f.read()` inside `with open(<path>) as f`.
    Where the module's folder is not known (a summary, keyed by the module's text alone), the
    path is kept for the importer to read."""
    if not isinstance(call.func, cst.Attribute):
        return None
    receiver = call.func.value
    if call.func.attr.value == "read_text":
        relative = path_of(rule, receiver, frame=frame)
    else:
        opened = _opened(rule, receiver)
        relative = path_of(rule, opened, frame=frame) if opened is not None else None
    if relative is None or relative == FILE:
        return None
    if not rule.context.directory:
        return Text("", call, file=relative, unread=True)
    directory = folder_holding(rule.context.directory, relative)
    value = read_data_file(directory, relative)
    rule.context.data_files.append(os.path.normpath(os.path.join(directory, relative)))
    if directory != rule.context.directory:
        relative = os.path.relpath(os.path.join(directory, relative), rule.context.directory).replace(os.sep, "/")
    return Text(value, call, file=relative) if value is not None else None


def _opened(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The path argument of the `open(...)` that `node` is, or that `with ... as node` bound."""
    if isinstance(node, cst.Call) and callee_name(node) == "open":
        return _positional(node)
    if isinstance(node, cst.Name):
        for parent in _ancestors(rule, node):
            if isinstance(parent, cst.With):
                for item in parent.items:
                    if (
                        item.asname is not None
                        and isinstance(item.asname.name, cst.Name)
                        and item.asname.name.value == node.value
                    ):
                        return _opened(rule, item.item)
    return None


def _ancestors(rule: cst.BatchableCSTVisitor, node: cst.CSTNode):
    while node is not None:
        node = rule.get_metadata(ParentNodeProvider, node, None)
        if node is not None:
            yield node


def path_of(
    rule: cst.BatchableCSTVisitor, node: cst.BaseExpression, depth: int = 0, frame: Frame | None = None
) -> str | None:
    """A path expression as a POSIX path relative to the analyzed file's folder, FILE for the
    file itself; None when any part is not a literal. `frame`: as for `text_of`."""
    if depth > MAX_DEPTH:
        return None
    depth += 1
    if isinstance(node, cst.Name):
        if node.value == "__file__":
            return FILE
        argument = _argument(rule, node, frame)
        if argument is not None:
            return path_of(rule, argument[0], depth, argument[1])
        bound = bound_expression(rule, node)
        return path_of(rule, bound, depth, frame) if bound is not None else None
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) and value and not os.path.isabs(value) else None
    if isinstance(node, cst.FormattedString):  # f"prompts/chatbot_{version}.md" with `version` known
        text = _fstring_text(rule, node, depth, frame)
        value = text.value if text is not None and not text.partial else ""
        return value if value and not os.path.isabs(value) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _joined(path_of(rule, node.left, depth, frame), path_of(rule, node.right, depth, frame))
    if isinstance(node, cst.Attribute) and node.attr.value == "parent":
        return _parent(path_of(rule, node.value, depth, frame))
    if not isinstance(node, cst.Call):
        return None
    name = callee_name(node)
    args = [path_of(rule, a.value, depth, frame) for a in node.args if a.keyword is None and not a.star]
    if name in ("Path", "PurePath", "PosixPath") and args:
        return args[0] if len(args) == 1 else _joined(*args)
    if name == "join" and args:  # os.path.join
        return _joined(*args)
    if name in ("resolve", "absolute", "abspath", "realpath", "expanduser"):
        inner = node.func.value if isinstance(node.func, cst.Attribute) and not args else _positional(node)
        return path_of(rule, inner, depth, frame) if inner is not None else None
    if name == "dirname" and len(args) == 1:
        return _parent(args[0])
    if name == "with_name" and isinstance(node.func, cst.Attribute) and len(args) == 1:
        return _joined(_parent(path_of(rule, node.func.value, depth, frame)), args[0])
    if name == "joinpath" and isinstance(node.func, cst.Attribute) and args:
        return _joined(path_of(rule, node.func.value, depth, frame), *args)
    return None


def _joined(*parts: str | None) -> str | None:
    if any(p is None for p in parts) or FILE in parts[1:]:
        return None
    if parts[0] == FILE:
        return None  # a path below the file itself is no file
    return os.path.normpath(os.path.join(*parts)).replace(os.sep, "/")


def _parent(path: str | None) -> str | None:
    if path is None:
        return None
    if path == FILE:
        return "."
    return os.path.normpath(os.path.join(path, "..")).replace(os.sep, "/")
