"""SARIF 2.1.0 built with sarif-om, serialized by schema property names (code scanning ready).

A notebook finding is placed where code scanning can show it: on the line of the notebook's
JSON text that holds the cell's code (code scanning displays an .ipynb file as that text), with
the cell position in the message and in the location's properties. Its fix is left out: a
SARIF replacement there would have to edit JSON string literals, and code scanning applies no
SARIF fixes; `chatbound check --fix` fixes notebooks. A fix that imports the compaction engine
carries the edit of the project's dependency declaration as a second artifact change."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attr
import sarif_om as om

from chatbound.analysis.rule import HOMEPAGE, Rule
from chatbound.findings import Finding, Severity, Span
from chatbound.interfaces import docs
from chatbound.run.notebooks import file_span
from chatbound.run.registry import all_rules
from chatbound.run.runner import RunResult
from chatbound.version import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note"}
PROBLEM_SEVERITY = {Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "recommendation"}
FINGERPRINT_KEY = "chatbound/v1"
ALWAYS_KEPT = {"level"}


def to_json(value: Any) -> Any:
    """sarif-om objects to plain JSON: camelCase keys, no nulls, no default sentinels."""
    if attr.has(type(value)):
        out = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            default = field.default
            if isinstance(default, attr.Factory):  # type: ignore[arg-type]
                default = default.factory()
            if item is None or (item == default and field.name not in ALWAYS_KEPT):
                continue
            out[field.metadata["schema_property_name"]] = to_json(item)
        return out
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _region(span: Span) -> om.Region:
    return om.Region(start_line=span.line, start_column=span.col, end_line=span.end_line, end_column=span.end_col)


def _artifact(path: str) -> om.ArtifactLocation:
    if Path(path).is_absolute():
        return om.ArtifactLocation(uri=Path(path).as_uri())
    return om.ArtifactLocation(uri=Path(path).as_posix(), uri_base_id="%SRCROOT%")


def _location(path: str, span: Span, message: str | None = None, id: int | None = None) -> om.Location:
    cell = {"cell": span.cell, "cellLine": span.line, "cellColumn": span.col} if span.cell else None
    return om.Location(
        id=id,
        message=om.Message(text=message) if message else None,
        physical_location=om.PhysicalLocation(artifact_location=_artifact(path), region=_region(file_span(path, span))),
        properties=cell,
    )


def help_markdown(rule: type[Rule]) -> str:
    """The rule's page without its title, and a link to it: what code scanning shows as help."""
    return f"{docs.body(rule)}\n\nMore: [{rule.ID}]({rule.help_url()})"


def help_text(rule: type[Rule]) -> str:
    """The same help as plain text: headings become `Title:` lines, code is indented."""
    out, in_code = [], False
    for line in help_markdown(rule).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif in_code:
            out.append("    " + line)
        elif line.startswith("## "):
            out.append(line[3:].strip().rstrip(":?").replace("`", "") + ":")
        else:
            out.append(re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 (\2)", line).replace("`", ""))
    return "\n".join(out)


def _descriptor(rule: type[Rule]) -> om.ReportingDescriptor:
    return om.ReportingDescriptor(
        id=rule.ID,
        name=rule.NAME,
        short_description=om.MultiformatMessageString(text=rule.SUMMARY),
        full_description=om.MultiformatMessageString(text=rule.full_description()),
        help=om.MultiformatMessageString(text=help_text(rule), markdown=help_markdown(rule)),
        help_uri=rule.help_url(),
        default_configuration=om.ReportingConfiguration(level=LEVELS[rule.SEVERITY]),
        properties={
            "tags": list(rule.TAGS),
            "precision": rule.PRECISION,
            "problem.severity": PROBLEM_SEVERITY[rule.SEVERITY],
        },
    )


def _fix(finding: Finding) -> list[om.Fix] | None:
    """The fix's edits, one artifact change per file: the finding's own, and the project's
    dependency declaration when the fix imports the engine."""
    if finding.fix is None or finding.span.cell:
        return None
    by_file: dict[str, list[om.Replacement]] = {}
    for edit in finding.fix.edits:
        by_file.setdefault(edit.path or finding.path, []).append(
            om.Replacement(deleted_region=_region(edit.span), inserted_content=om.ArtifactContent(text=edit.text))
        )
    changes = [
        om.ArtifactChange(artifact_location=_artifact(path), replacements=edits) for path, edits in by_file.items()
    ]
    return [om.Fix(description=om.Message(text=finding.fix.description), artifact_changes=changes)]


def _message(finding: Finding) -> str:
    """Message, suggestion, and links `[text](id)` to the related locations (code scanning
    shows a related location only when the message links to it)."""
    text = finding.message + (f" {finding.suggestion}" if finding.suggestion else "")
    if finding.span.cell:
        text = f"Cell {finding.span.cell}, line {finding.span.line}: {text}"
    links = "; ".join(f"[{_escape(r.message)}]({i})" for i, r in enumerate(finding.related, 1))
    return text + (f" See: {links}." if links else "")


def _escape(text: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", text)


def _result(finding: Finding, index: dict[str, int]) -> om.Result:
    text = _message(finding)
    return om.Result(
        rule_id=finding.rule_id,
        rule_index=index[finding.rule_id],
        level=LEVELS[finding.severity],
        message=om.Message(text=text),
        locations=[_location(finding.path, finding.span)],
        related_locations=[
            _location(r.path or finding.path, r.span, r.message, id=i) for i, r in enumerate(finding.related, 1)
        ]
        or None,
        partial_fingerprints={FINGERPRINT_KEY: finding.fingerprint},
        fixes=_fix(finding),
        suppressions=None
        if finding.suppressed is None
        else [om.Suppression(kind="inSource", justification=finding.suppressed or None)],
        properties=finding.properties or None,
    )


def sarif_log(result: RunResult, findings: list[Finding]) -> dict[str, Any]:
    rules = all_rules()
    index = {rule.ID: i for i, rule in enumerate(rules)}
    notifications = [
        om.Notification(
            message=om.Message(text=error.message),
            level="error",
            locations=[om.Location(physical_location=om.PhysicalLocation(artifact_location=_artifact(error.path)))],
        )
        for error in result.errors
    ] + [om.Notification(message=om.Message(text=note), level="note") for note in result.notes]
    run = om.Run(
        tool=om.Tool(
            driver=om.ToolComponent(
                name="chatbound",
                version=__version__,
                semantic_version=__version__,
                information_uri=HOMEPAGE,
                rules=[_descriptor(rule) for rule in rules],
            )
        ),
        original_uri_base_ids={"%SRCROOT%": om.ArtifactLocation(uri=Path.cwd().as_uri() + "/")},
        column_kind="unicodeCodePoints",
        invocations=[
            om.Invocation(
                execution_successful=not result.errors,
                tool_execution_notifications=notifications or None,
            )
        ],
        results=[_result(f, index) for f in findings],
    )
    return to_json(om.SarifLog(version="2.1.0", schema_uri=SCHEMA, runs=[run]))


def render(result: RunResult, findings: list[Finding], colour: bool = False) -> str:
    return json.dumps(sarif_log(result, findings), indent=2) + "\n"
