"""GitHub Actions workflow commands: annotations on the pull request's diff.

A notebook finding is annotated on the line of the notebook's JSON text holding the cell's
code (the diff of an .ipynb file is a diff of that text), its message starting with the cell
position (`cell 3:5:9: ...`)."""

from __future__ import annotations

from chatbound.findings import Finding, Severity
from chatbound.run.notebooks import file_span
from chatbound.run.runner import RunResult

LEVELS = {Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def line(finding: Finding) -> str:
    s = file_span(finding.path, finding.span)
    props = ",".join(
        f"{key}={_property(str(value))}"
        for key, value in (
            ("file", finding.path),
            ("line", s.line),
            ("col", s.col),
            ("endLine", s.end_line),
            ("endColumn", s.end_col),
            ("title", finding.rule_id),
        )
    )
    message = finding.message + (f"\n{finding.suggestion}" if finding.suggestion else "")
    if finding.span.cell:
        message = f"{finding.span.where}: {message}"
    return f"::{LEVELS[finding.severity]} {props}::{_data(message)}"


def render(result: RunResult, findings: list[Finding], colour: bool = False) -> str:
    lines = [line(f) for f in findings]
    lines += [f"::error file={_property(e.path)},title=chatbound::{_data(e.message)}" for e in result.errors]
    return "".join(entry + "\n" for entry in lines)
