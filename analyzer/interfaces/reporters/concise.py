"""One line per finding, the shape editors' problem matchers parse."""

from __future__ import annotations

from chatbound.findings import Finding
from chatbound.run.runner import RunResult


def line(finding: Finding) -> str:
    return f"{finding.path}:{finding.span.where}: {finding.rule_id} [{finding.severity.label}] {finding.message}"


def render(result: RunResult, findings: list[Finding], colour: bool = False) -> str:
    return "".join(line(f) + "\n" for f in findings)
