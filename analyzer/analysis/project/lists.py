"""The lists a module keeps for the life of the process and only declares (`history = []` in
`config.py`), read on CPython's tree: an importer that grows one and sends it (`from config
import history`) keeps one conversation for every caller. A list its own module reads again
(grows, trims, clears or rebinds it) is left out: the importer would not see what bounds it."""

from __future__ import annotations

import ast
import re

from chatbound.findings import Span
from chatbound.syntax.parse import no_gc, python_tree

EMPTY_LIST = re.compile(rb"^[A-Za-z_]\w*[ \t]*(?::[^=\n]*)?=[ \t]*(?:\[[ \t]*\]|list\([ \t]*\))", re.M)


def module_lists(source: bytes) -> dict[str, Span]:
    """Top-level names bound to a new empty list (`[]`, `list()`) and named nowhere else in
    the module, by where each is bound."""
    if EMPTY_LIST.search(source) is None:
        return {}
    with no_gc():
        tree = python_tree(source)
        if isinstance(tree, str):
            return {}
        found: dict[str, Span] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                target, value = statement.target, statement.value
            else:
                continue
            if isinstance(target, ast.Name) and _empty_list(value):
                start = target.col_offset + 1
                found[target.id] = Span(statement.lineno, start, statement.lineno, start + len(target.id))
        named: dict[str, int] = {}
        for node in ast.walk(tree) if found else ():
            if isinstance(node, ast.Name) and node.id in found:
                named[node.id] = named.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    named[name] = named.get(name, 0) + 2  # rebound in a function
        del tree
    return {name: span for name, span in found.items() if named.get(name) == 1}


def _empty_list(value: ast.expr) -> bool:
    if isinstance(value, ast.List):
        return not value.elts
    return (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" and not value.args
    )
