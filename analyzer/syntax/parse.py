"""Parsing one file: CPython's tree (the fast first answer), LibCST's module (what the rules
read), and a one-line cause for a file that could not be parsed or analyzed."""

from __future__ import annotations

import ast
import contextlib
import gc
import re
import symtable

import libcst as cst

from chatbound.findings import one_line


def python_tree(source: bytes | str) -> ast.Module | str:
    """CPython's tree of the file, or its complaint: the stdlib parser, 30-50x faster than
    LibCST, feeds the rules' `may_report_tree`. Call it under `no_gc()`, and drop the tree
    before leaving."""
    try:
        return compile(source, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return _complaint(exc)


def python_syntax_error(source: bytes | str) -> str | None:
    """CPython's own complaint about the file, or None: its parser and symbol table, which
    build no Python objects (a fifth cheaper than the tree), for the files the pre-check does
    not parse with LibCST."""
    try:
        with no_gc():
            symtable.symtable(source, "<file>", "exec")  # bytes too
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return _complaint(exc)
    return None


def _complaint(exc: Exception) -> str:
    if isinstance(exc, SyntaxError):
        if "codec can't decode" in exc.msg:  # as analyze_source says it for a parsed file
            return f"cannot decode the file: {one_line(exc.msg)}"
        if exc.lineno:
            return f"syntax error at {exc.lineno}:{exc.offset or 1}: {one_line(exc.msg)}"
        return f"syntax error: {one_line(exc.msg)}"
    if isinstance(exc, ValueError):  # NUL bytes, bad encodings
        return f"cannot read as Python: {one_line(exc)}"
    return "nested too deeply to parse (recursion limit reached)"


def _syntax_error(exc: cst.ParserSyntaxError, source: bytes | str) -> str:
    """CPython's own message where it has one (it names Python 2 prints), else LibCST's."""
    python = python_syntax_error(source)
    if python is not None and python.startswith("syntax error at"):
        return python
    match = re.search(r"error at (\d+):(\d+): (.*)", exc.message, re.S)
    if match:
        line, col, detail = match.groups()
        detail = one_line(detail)
        return f"syntax error at {line}:{int(col) + 1}: {detail[:120] + '...' if len(detail) > 120 else detail}"
    return f"syntax error: {one_line(exc.message)}"


def describe_error(exc: BaseException, source: bytes | str = b"") -> str:
    """A one-line cause for a file that could not be analyzed."""
    if isinstance(exc, cst.ParserSyntaxError):
        return _syntax_error(exc, source)
    if isinstance(exc, UnicodeError):
        return f"cannot decode the file: {one_line(exc)}"
    if isinstance(exc, RecursionError):
        return "nested too deeply to parse (recursion limit reached)"
    if isinstance(exc, MemoryError):
        return "too large to analyze (out of memory)"
    return f"internal error while analyzing: {type(exc).__name__}: {one_line(exc)}"


TOO_DEEP_TREE = (
    "nested too deeply to analyze: an expression (a long chain of operators or of implicitly "
    "joined strings) is deeper than the analyzer's recursion limit; exclude the file if it is generated"
)


def parse(source: bytes | str) -> cst.Module:
    """`libcst.parse_module` without its per-node validation: every node's `__post_init__`
    checks invariants a tree straight from LibCST's own parser always holds (a tenth of the
    parse; LibCST's source notes the same). Nodes built later, by the fixes, are checked."""
    check = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _unchecked
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = check


def _unchecked(self) -> None:
    pass


@contextlib.contextmanager
def no_gc():
    """The cyclic collector off while one file is parsed and analyzed: a tree is a million
    acyclic objects, and each collection would walk them all again (a tenth of the analysis).
    What garbage the file left is collected after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
