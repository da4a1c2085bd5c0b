"""Trying fixes on one file: each on top of those already kept, always on the original text (the
spans refer to it), kept only when the edited file parses and the same rule no longer flags
the same history in the same scope; otherwise dropped with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chatbound.findings import Edit, Finding
from chatbound.fixes.apply import FileFix, _imported_already, _still_flagged, apply_edits, fixable

if TYPE_CHECKING:  # LibCST loads when a fix is tried: the CLI imports this module on every run
    from chatbound.analysis.rule import Rule


def fix_source(
    source: bytes,
    path: str,
    findings: Sequence[Finding],
    rules: Sequence[type[Rule]],
    options: dict[str, Any],
    unsafe: bool = False,
    directory: str = "",
) -> FileFix:
    """Try the fixes of ``findings`` (one file) in order and keep those that hold."""
    import libcst as cst

    from chatbound.run.pipeline import analyze_source
    from chatbound.syntax.parse import describe_error

    result = FileFix(path)
    try:
        module = cst.parse_module(source)
    except Exception as exc:
        result.error = describe_error(exc, source)
        return result
    result.encoding = module.encoding
    result.original = result.fixed = module.code
    kept: list[Edit] = []
    for finding in (f for f in findings if fixable(f, unsafe)):
        trial = kept + [edit for edit in finding.fix.edits if not edit.path and not _imported_already(edit, kept)]
        try:
            text = apply_edits(module.code, trial)
        except ValueError:
            result.dropped.append((finding, "its edit overlaps another fix"))
            continue
        after = analyze_source(text, path, rules, options, directory=directory)
        if after.error is not None:
            result.dropped.append((finding, f"the edited file does not parse ({after.error.message})"))
        elif _still_flagged(finding, findings, after):
            result.dropped.append((finding, "the edited file is still flagged for the same history"))
        else:
            kept, result.fixed = trial, text
            result.applied.append(finding)
    result.edits = kept
    return result
