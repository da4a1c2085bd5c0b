"""Analyze one file: parse once, one metadata wrapper, every rule in one traversal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from chatbound import frameworks
from chatbound.analysis.rule import Rule, RuleContext
from chatbound.cost.projection import attach_projections
from chatbound.findings import FileError, FileResult, one_line
from chatbound.fixes.wrap import attach_fixes
from chatbound.run.suppressions import apply_suppressions, bare_warnings, read_suppressions
from chatbound.syntax.bytescan import nesting_problem
from chatbound.syntax.parse import TOO_DEEP_TREE, describe_error, no_gc, parse
from chatbound.syntax.visitors import install as _install_visitor_tables
from chatbound.syntax.visitors import visit_batched
from chatbound.vocabulary.summaries import Linked

_install_visitor_tables()


class Cancelled(BaseException):
    """The caller no longer wants this file's findings (the editor's buffer changed since the
    analysis began). A BaseException, so that the guard around the analysis, which turns a bug
    of ours into one file's error, lets it through."""


def _never() -> bool:
    return False


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
    cancelled: Callable[[], bool] = _never,
) -> FileResult:
    """Findings for one file, or an error naming the cause; never raises for bad input.
    `project` is what the project pass linked for it (the functions of other modules it calls).
    `cancelled` is asked between the steps (parse, rules, projections, fixes): when it says
    yes, `Cancelled` is raised."""
    result = FileResult(path)
    too_deep = nesting_problem(source)  # LibCST's native parser would crash the process
    if too_deep:
        result.error = FileError(path, too_deep)
        return result
    with no_gc():
        return _analyze(source, path, rules, options, directory, result, project, cancelled)


def _analyze(source, path, rules, options, directory, result: FileResult, project, cancelled) -> FileResult:
    def step() -> None:
        if cancelled():
            raise Cancelled(path)

    try:
        module = parse(source)
    except Exception as exc:  # one bad file must never stop the run
        result.error = FileError(path, describe_error(exc, source))
        return result
    try:
        step()
        context = RuleContext(
            path=path, module=module, options=dict(options or {}), directory=directory, project=project, source=source
        )
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        if rules:
            visitors = [rule(context) for rule in rules]
            with ExitStack() as stack:
                for visitor in visitors:
                    stack.enter_context(visitor.resolve(wrapper))  # metadata on first use
                visit_batched(module, visitors)
        # post-rule steps: cost projections and fixes for the history findings
        step()
        projected = attach_projections(
            context.findings, module, wrapper, context.options, directory, context.data_files
        )
        step()
        context.findings = attach_fixes(projected, module, wrapper, frameworks)
        step()
    except RecursionError:  # LibCST's visitors recurse once per level of the tree
        result.error = FileError(path, TOO_DEEP_TREE)
        return result
    except Exception as exc:  # a bug of ours on this file: say so, and go on with the others
        result.error = FileError(
            path,
            f"internal error in chatbound's analysis (please report it): {type(exc).__name__}: {one_line(exc)[:200]}",
        )
        return result
    suppressions = read_suppressions(_text(source, module))
    result.warnings = bare_warnings(path, suppressions)
    result.findings = apply_suppressions(context.findings, suppressions)
    result.data_files = context.data_files
    return result
