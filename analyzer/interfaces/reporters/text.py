"""Human output: `path:line:col: RULE-ID message`, the line with a caret span, the fix."""

from __future__ import annotations

import linecache
from dataclasses import replace

import click

from chatbound.findings import Finding, Severity
from chatbound.run.notebooks import source_line
from chatbound.run.runner import RunResult

MAX_SHOWN = 160  # characters of a source line shown under a finding
MAX_SPAN_LINES = 8  # lines of a multi-line span shown; a longer one loses its middle
COLOURS = {Severity.HIGH: "red", Severity.MEDIUM: "yellow", Severity.LOW: "blue"}


def _source(finding: Finding, number: int) -> str:
    """Line ``number`` of the finding's file (or cell), tabs shown as one space."""
    if finding.span.cell:
        return source_line(finding.path, replace(finding.span, line=number)).expandtabs(1)
    return linecache.getline(finding.path, number).rstrip("\r\n").expandtabs(1)


def _shown_lines(span) -> list[int | None]:
    """The lines of a span to show, None where the middle of a long span is left out."""
    numbers = list(range(span.line, span.end_line + 1))
    if len(numbers) <= MAX_SPAN_LINES:
        return numbers
    return [*numbers[: MAX_SPAN_LINES - 3], None, *numbers[-2:]]


def _caret(finding: Finding, colour: bool) -> list[str]:
    """The span's lines, each marked under the part the span covers (as rustc and ruff mark a
    multi-line span: every line, not only the first)."""
    span = finding.span
    width = len(str(span.end_line))
    pad = " " * width
    style = (lambda s: click.style(s, fg=COLOURS[finding.severity], bold=True)) if colour else str
    out = [f"{pad} |"]
    for number in _shown_lines(span):
        if number is None:
            out.append("...")
            continue
        line = _source(finding, number)
        start = span.col - 1 if number == span.line else len(line) - len(line.lstrip())
        end = span.end_col - 1 if number == span.end_line else len(line)
        if len(line) > MAX_SHOWN:  # a generated or minified line: show its start, clip the carets
            line = line[:MAX_SHOWN] + " ..."
            start, end = min(start, MAX_SHOWN), min(end, MAX_SHOWN)
        out.append(f"{number:>{width}} | {line}".rstrip())
        if line.strip() or number == span.line:
            out.append(f"{pad} | {' ' * start}{style('^' * max(1, end - start))}")
    return out


def render_finding(finding: Finding, colour: bool) -> list[str]:
    span = finding.span
    head = f"{finding.path}:{span.where}:"
    rule = finding.rule_id
    if colour:
        head = click.style(head, bold=True)
        rule = click.style(rule, fg=COLOURS[finding.severity], bold=True)
    tag = " [suppressed]" if finding.suppressed is not None else ""
    lines = [f"{head} {rule} {finding.message}{tag}"]
    if not span.cell:
        linecache.checkcache(finding.path)  # the file may have changed since an earlier run in this process
    if _source(finding, span.line):
        lines += _caret(finding, colour)
    for related in finding.related:
        lines.append(f"  = note: {related.path or finding.path}:{related.span.where}: {related.message}")
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
