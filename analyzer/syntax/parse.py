"""Parsing one file: CPython's tree (the fast first answer), LibCST's module (what the rules
read), and a one-line cause for a file that could not be parsed or analyzed."""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
import re
import symtable

import libcst as cst

from chatbound.findings import one_line
from chatbound.syntax.bytescan import nesting_problem


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
    build no Python objects (a fifth cheaper than the tree). A fast first answer, never the
    judge: the running interpreter rejects syntax newer than itself (a 3.12 `type` statement
    under 3.11), so a complaint is confirmed by `parse_problem` before it is reported."""
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


def parse_problem(source: bytes | str) -> str | None:
    """Why LibCST cannot parse the file, or None: the judge of whether a file parses, since
    it reads every grammar up to `grammar()` whatever the interpreter. A file nested deeper
    than LibCST's native parser survives is not handed to it."""
    too_deep = nesting_problem(source)
    if too_deep:
        return too_deep
    with no_gc():
        try:
            parse(source)
        except Exception as exc:  # noqa: BLE001 - any failure is the file's cause, described
            return describe_error(exc, source)
    return None


def syntax_problem(source: bytes | str) -> str | None:
    """Why a file no rule reads does not parse, or None, as cheaply as can be told: CPython's
    parser and symbol table first; a complaint of its parser is confirmed by LibCST
    (`parse_problem`), while one of its symbol table (a duplicate argument) is about code the
    interpreter's own grammar read, and holds in every version."""
    python = python_syntax_error(source)
    if python is None:
        return None
    with no_gc():
        parsed = not isinstance(python_tree(source), str)
    return python if parsed else parse_problem(source)


# Newest first: a Python version, and code only its grammar (and later ones) accepts.
_GRAMMAR_PROBES = (
    ("3.14", ("t'{x}'\n", "try:\n    pass\nexcept A, B:\n    pass\n")),  # PEP 750, PEP 758
    ("3.13", ("def f[T = int](): pass\n",)),  # PEP 696
    ("3.12", ("type X = int\n", "def f[T](x: T): pass\n", "f'{'a'}'\n")),  # PEP 695, PEP 701
    ("3.11", ("try:\n    pass\nexcept* A:\n    pass\n",)),  # PEP 654
    ("3.10", ("match x:\n    case 1:\n        pass\n",)),  # PEP 634
)


@functools.cache
def grammar() -> str:
    """The grammar LibCST parsed with, as an error line names it: the installed LibCST's
    version and the newest Python whose syntax it reads, found by parsing a sample of each
    version's new syntax (LibCST 1.9.0 reads 3.0 to 3.14; its native parser ignores the
    running interpreter and `PartialParserConfig.python_version`)."""
    from importlib.metadata import PackageNotFoundError, version

    newest = "3.9"
    for python, samples in reversed(_GRAMMAR_PROBES):
        try:
            for sample in samples:
                cst.parse_module(sample)
        except cst.ParserSyntaxError:
            break
        newest = python
    try:
        name = f"LibCST {version('libcst')}"
    except PackageNotFoundError:  # pragma: no cover - libcst imported from a source tree
        name = "LibCST"
    return f"{name}'s grammar: Python 3.0 to {newest}"


def _syntax_error(exc: cst.ParserSyntaxError, source: bytes | str) -> str:
    """LibCST's complaint, naming the grammar it tried; in CPython's words (it names Python 2
    prints, and points at the bad token) where CPython rejects the same place: LibCST's native
    parser names the position after the token it could not take, often on the next line. A
    CPython complaint about an earlier line is about syntax newer than the interpreter."""
    tried = f" (tried {grammar()})"
    python = python_syntax_error(source)
    match = re.search(r"error at (\d+):(\d+): (.*)", exc.message, re.S)
    if match:
        line, col, detail = match.groups()
        at = re.match(r"syntax error at (\d+):", python or "")
        if at and int(at.group(1)) >= int(line) - 1:
            return f"{python}{tried}"
        detail = one_line(detail)
        return f"syntax error at {line}:{int(col) + 1}: {detail[:120] + '...' if len(detail) > 120 else detail}{tried}"
    if python is not None and python.startswith("syntax error at"):
        return python + tried
    return f"syntax error: {one_line(exc.message)}{tried}"


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
