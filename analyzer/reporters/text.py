"""Human output: `path:line:col: RULE-ID message`, the line with a caret span, the fix."""

from __future__ import annotations

import linecache

import click

from ..findings import Finding, Severity
from ..notebooks import source_line
from ..runner import RunResult

MAX_SHOWN = 160  # characters of a source line shown under a finding
COLOURS = {Severity.HIGH: "red", Severity.MEDIUM: "yellow", Severity.LOW: "blue"}


def _caret(finding: Finding, line: str, colour: bool) -> list[str]:
    number = str(finding.span.line)
    pad = " " * len(number)
    start = finding.span.col - 1
    end = finding.span.end_col - 1 if finding.span.end_line == finding.span.line else len(line)
    if len(line) > MAX_SHOWN:  # a generated or minified line: show its start, clip the carets
        line = line[:MAX_SHOWN] + " ..."
        start, end = min(start, MAX_SHOWN), min(end, MAX_SHOWN)
    carets = "^" * max(1, end - start)
    style = (lambda s: click.style(s, fg=COLOURS[finding.severity], bold=True)) if colour else str
    return [f"{pad} |", f"{number} | {line}", f"{pad} | {' ' * start}{style(carets)}"]


def render_finding(finding: Finding, colour: bool) -> list[str]:
    span = finding.span
    head = f"{finding.path}:{span.where}:"
    rule = finding.rule_id
    if colour:
        head = click.style(head, bold=True)
        rule = click.style(rule, fg=COLOURS[finding.severity], bold=True)
    tag = " [suppressed]" if finding.suppressed is not None else ""
    lines = [f"{head} {rule} {finding.message}{tag}"]
    if span.cell:
        source = source_line(finding.path, span)
    else:
        linecache.checkcache(finding.path)  # the file may have changed since an earlier run in this process
        source = linecache.getline(finding.path, span.line).rstrip("\r\n")
    if source:
        lines += _caret(finding, source.expandtabs(1), colour)
    for related in finding.related:
        lines.append(f"  = note: {finding.path}:{related.span.where}: {related.message}")
    for extra in finding.properties.get("notes", ()):
        lines.append(f"  = note: {extra}")
    if finding.suggestion:
        lines.append(f"  = help: {finding.suggestion}")
    return lines


def summary(result: RunResult) -> str:
    active = result.active
    counts = {s: sum(1 for f in active if f.severity == s) for s in Severity}
    detail = ", ".join(f"{n} {s.label}" for s, n in sorted(counts.items(), reverse=True) if n)
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    if not active:
        text = f"No findings in {files}."
    else:
        text = f"Found {len(active)} finding{'s' if len(active) != 1 else ''} ({detail}) in {files}."
    suppressed = len(result.findings) - len(active)
    if suppressed:
        text += f" {suppressed} suppressed."
    if result.errors:
        text += f" {len(result.errors)} could not be analyzed."
    return text


def render(result: RunResult, findings: list[Finding], colour: bool = False) -> str:
    """The findings; the CLI adds `summary()` unless --quiet."""
    blocks = ["\n".join(render_finding(f, colour)) for f in findings]
    return "\n\n".join(blocks) + "\n" if blocks else ""
