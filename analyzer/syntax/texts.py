"""Resolve an expression to the text it builds, without running the code.

`text_of(rule, expr)` follows what prompt code does at import time: string constants, implicit
concatenation, `+`, `sep.join([...])`, `textwrap.dedent`/`inspect.cleandoc`, `.strip()`,
`.format(...)` templates, f-strings (their literal parts), names bound once, and data files
read by a literal path (`Path("prompts/system.md").read_text()`, `open(...).read()`, paths built
from `__file__`), relative to the analyzed file's folder. A data file is read, never imported.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import textwrap
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider

from chatbound.syntax.messages import callee_name
from chatbound.syntax.values import bound_expression, grown_from

MAX_DEPTH = 12
MAX_FILE_BYTES = 1_000_000
FILE = "__file__"  # the analyzed file itself, as a path value


@dataclass(frozen=True)
class Text:
    value: str
    node: cst.CSTNode  # where the text is defined: the string, or the call that reads a file
    partial: bool = False  # some parts (f-string fields, unknown operands) are not counted
    file: str = ""  # the data file it was read from, relative to the analyzed file


def name_words(name: str) -> list[str]:
    """The lower-case words of an identifier: `SYSTEM_PROMPT`, `systemPrompt` -> system, prompt."""
    return [w for w in re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().split("_") if w]


def _positional(call: cst.Call, index: int = 0) -> cst.BaseExpression | None:
    args = [a for a in call.args if a.keyword is None and not a.star]
    return args[index].value if len(args) > index else None


def _fstring_literal(rule: cst.BatchableCSTVisitor, node: cst.FormattedString) -> str | None:
    """The literal parts of an f-string, escapes decoded (Python's own parser does it)."""
    try:
        tree = ast.parse("(" + rule.context.module.code_for_node(node) + ")", mode="eval")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree.body, ast.JoinedStr):
        return None
    return "".join(v.value for v in tree.body.values if isinstance(v, ast.Constant) and isinstance(v.value, str))


def _combine(parts: list[Text | None], node: cst.CSTNode, separator: str = "") -> Text | None:
    known = [p for p in parts if p is not None]
    if not known:
        return None
    files = {p.file for p in known if p.file}
    return Text(
        separator.join(p.value for p in known),
        node,
        partial=len(known) < len(parts) or any(p.partial for p in known),
        file=next(iter(files)) if len(files) == 1 else "",
    )


def text_of(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression, depth: int = 0) -> Text | None:
    """The text `node` evaluates to (or its known part), with where it is defined; else None."""
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
        return _combine([text_of(rule, node.left, depth - 1), text_of(rule, node.right, depth - 1)], node)
    if isinstance(node, cst.FormattedString):
        value = _fstring_literal(rule, node)
        partial = any(isinstance(p, cst.FormattedStringExpression) for p in node.parts)
        return Text(value, node, partial) if value is not None else None
    if isinstance(node, cst.Name):
        bound = bound_expression(rule, node)
        if bound is not None:
            return text_of(rule, bound, depth)
        grown = grown_from(rule, node)  # `p = BASE`, then `p += extra`: at least BASE
        inner = text_of(rule, grown, depth) if grown is not None else None
        return Text(inner.value, inner.node, True, inner.file) if inner else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _combine([text_of(rule, node.left, depth), text_of(rule, node.right, depth)], node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        left = text_of(rule, node.left, depth)
        return Text(left.value, left.node, True, left.file) if left else None
    if isinstance(node, cst.Call):
        return _call_text(rule, node, depth)
    return None


def text_root(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression) -> cst.BaseExpression:
    """The expression a text is built from, through what `text_of` follows that keeps it whole
    (a local, `.format(...)`, `.strip()`, `dedent(...)`, `+ more`): `SYSTEM` of
    `p = SYSTEM.format(day=d); p += extra`, a constant another module may define."""
    for _ in range(MAX_DEPTH):
        if isinstance(node, cst.Name):
            inner = bound_expression(rule, node) or grown_from(rule, node)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            inner = node.left
        elif isinstance(node, cst.Call) and callee_name(node) in ("dedent", "cleandoc"):
            inner = _positional(node)
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and callee_name(node) in ("strip", "lstrip", "rstrip", "format", "format_map")
        ):
            inner = node.func.value
        else:
            inner = None
        if inner is None:
            return node
        node = inner
    return node


def _call_text(rule: cst.BatchableCSTVisitor, call: cst.Call, depth: int) -> Text | None:
    name = callee_name(call)
    if name in ("dedent", "cleandoc"):
        argument = _positional(call)
        inner = text_of(rule, argument, depth) if argument is not None else None
        if inner is None:
            return None
        value = textwrap.dedent(inner.value) if name == "dedent" else inspect.cleandoc(inner.value)
        return Text(value, inner.node, inner.partial, inner.file)
    if name in ("read_text", "read"):
        return _file_text(rule, call)
    if not isinstance(call.func, cst.Attribute):
        return None
    receiver = call.func.value
    if name in ("strip", "lstrip", "rstrip") and not call.args:
        inner = text_of(rule, receiver, depth)
        return Text(getattr(inner.value, name)(), inner.node, inner.partial, inner.file) if inner else None
    if name in ("format", "format_map"):
        inner = text_of(rule, receiver, depth)
        return Text(inner.value, inner.node, True, inner.file) if inner else None
    if name == "join" and call.args:
        separator = text_of(rule, receiver, depth)
        items = _positional(call)
        if separator is None or not isinstance(items, (cst.List, cst.Tuple)):
            return None
        parts = [text_of(rule, e.value, depth) if isinstance(e, cst.Element) else None for e in items.elements]
        return _combine(parts, call, separator.value)
    return None


# --- data files read by a literal path ----------------------------------------------------


def _file_text(rule: cst.BatchableCSTVisitor, call: cst.Call) -> Text | None:
    """`<path>.read_text()`, `open(<path>).read()`, or `f.read()` inside `with open(<path>) as f`."""
    if not isinstance(call.func, cst.Attribute) or not rule.context.directory:
        return None
    receiver = call.func.value
    if call.func.attr.value == "read_text":
        relative = path_of(rule, receiver)
    else:
        opened = _opened(rule, receiver)
        relative = path_of(rule, opened) if opened is not None else None
    if relative is None or relative == FILE:
        return None
    value = read_data_file(rule.context.directory, relative)
    rule.context.data_files.append(os.path.normpath(os.path.join(rule.context.directory, relative)))
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


def path_of(rule: cst.BatchableCSTVisitor, node: cst.BaseExpression, depth: int = 0) -> str | None:
    """A path expression as a POSIX path relative to the analyzed file's folder, FILE for the
    file itself; None when any part is not a literal."""
    if depth > MAX_DEPTH:
        return None
    depth += 1
    if isinstance(node, cst.Name):
        if node.value == "__file__":
            return FILE
        bound = bound_expression(rule, node)
        return path_of(rule, bound, depth) if bound is not None else None
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) and value and not os.path.isabs(value) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _joined(path_of(rule, node.left, depth), path_of(rule, node.right, depth))
    if isinstance(node, cst.Attribute) and node.attr.value == "parent":
        return _parent(path_of(rule, node.value, depth))
    if not isinstance(node, cst.Call):
        return None
    name = callee_name(node)
    args = [path_of(rule, a.value, depth) for a in node.args if a.keyword is None and not a.star]
    if name in ("Path", "PurePath", "PosixPath") and args:
        return args[0] if len(args) == 1 else _joined(*args)
    if name == "join" and args:  # os.path.join
        return _joined(*args)
    if name in ("resolve", "absolute", "abspath", "realpath", "expanduser"):
        inner = node.func.value if isinstance(node.func, cst.Attribute) and not args else _positional(node)
        return path_of(rule, inner, depth) if inner is not None else None
    if name == "dirname" and len(args) == 1:
        return _parent(args[0])
    if name == "with_name" and isinstance(node.func, cst.Attribute) and len(args) == 1:
        return _joined(_parent(path_of(rule, node.func.value, depth)), args[0])
    if name == "joinpath" and isinstance(node.func, cst.Attribute) and args:
        return _joined(path_of(rule, node.func.value, depth), *args)
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


def read_data_file(directory: str, relative: str) -> str | None:
    """The text of a small data file next to the analyzed file; None when it cannot be read."""
    path = os.path.normpath(os.path.join(directory, relative))
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
