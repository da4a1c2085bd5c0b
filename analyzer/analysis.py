"""Analyze one file: parse once, one metadata wrapper, every rule in one traversal."""

from __future__ import annotations

import ast
import contextlib
import gc
import re
import symtable
from contextlib import ExitStack
from typing import Any, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from .fixes import attach_fixes
from .findings import FileError, FileResult, Finding, one_line
from .precheck import nesting_problem
from .project.model import Linked
from .projection import attach_projections
from .rule import Rule, RuleContext
from .suppressions import apply_suppressions, bare_warnings, read_suppressions
from .visitors import install as _install_visitor_tables, visit_batched

_install_visitor_tables()


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
            symtable.symtable(source, "<file>", "exec")  # type: ignore[arg-type]  # bytes too
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


TOO_DEEP_TREE = ("nested too deeply to analyze: an expression (a long chain of operators or of implicitly "
                 "joined strings) is deeper than the analyzer's recursion limit; exclude the file if it is generated")


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


def _text(source: bytes | str, module: cst.Module) -> str:
    """The file's text as decoded for the parse (regenerating `module.code` recurses per level)."""
    text = source if isinstance(source, str) else source.decode(module.encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def analyze_source(
    source: bytes | str,
    path: str,
    rules: Sequence[type[Rule]],
    options: dict[str, Any] | None = None,
    directory: str = "",
    project: Linked | None = None,
) -> FileResult:
    """Findings for one file, or an error naming the cause; never raises for bad input.
    `project` is what the project pass linked for it (the functions of other modules it calls)."""
    result = FileResult(path)
    too_deep = nesting_problem(source)  # LibCST's native parser would crash the process
    if too_deep:
        result.error = FileError(path, too_deep)
        return result
    with no_gc():
        return _analyze(source, path, rules, options, directory, result, project)


def _analyze(source, path, rules, options, directory, result: FileResult, project=None) -> FileResult:
    try:
        module = parse(source)
    except Exception as exc:  # one bad file must never stop the run
        result.error = FileError(path, describe_error(exc, source))
        return result
    try:
        context = RuleContext(path=path, module=module, options=dict(options or {}), directory=directory, project=project,
                              source=source)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        if rules:
            visitors = [rule(context) for rule in rules]
            with ExitStack() as stack:
                for visitor in visitors:
                    stack.enter_context(visitor.resolve(wrapper))  # metadata on first use
                visit_batched(module, visitors)
        # post-rule steps: cost projections and fixes for the history findings
        context.findings = attach_fixes(attach_projections(context.findings, module, wrapper, context.options, directory, context.data_files), module, wrapper)
    except RecursionError:  # LibCST's visitors recurse once per level of the tree
        result.error = FileError(path, TOO_DEEP_TREE)
        return result
    except Exception as exc:  # a bug of ours on this file: say so, and go on with the others
        result.error = FileError(path, f"internal error in chatbound's analysis (please report it): {type(exc).__name__}: {one_line(exc)[:200]}")
        return result
    suppressions = read_suppressions(_text(source, module))
    result.warnings = bare_warnings(path, suppressions)
    result.findings = apply_suppressions(context.findings, suppressions)
    result.data_files = context.data_files
    return result
