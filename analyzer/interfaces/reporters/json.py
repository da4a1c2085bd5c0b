"""Machine output, schema `docs/json-output.schema.json` (bump SCHEMA_VERSION on any change)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from chatbound.findings import Finding, Span
from chatbound.run.runner import RunResult
from chatbound.version import __version__

SCHEMA_VERSION = 4  # 3: related locations name their path (another module, the project model); 4: so do edits


def _span(span: Span) -> dict[str, int | None]:
    """Lines count within `cell` in a notebook (ruff's `cell` field); `cell` is null elsewhere."""
    return {
        "cell": span.cell or None,
        "line": span.line,
        "column": span.col,
        "end_line": span.end_line,
        "end_column": span.end_col,
    }


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "rule_id": finding.rule_id,
        "severity": finding.severity.label,
        "message": finding.message,
        "path": finding.path,
        **_span(finding.span),
        "suggestion": finding.suggestion,
        "related": [{"message": r.message, "path": r.path or finding.path, **_span(r.span)} for r in finding.related],
        "fingerprint": finding.fingerprint,
        "suppressed": finding.suppressed is not None,
        "suppression_reason": finding.suppressed,
        "fix": None
        if finding.fix is None
        else {
            "description": finding.fix.description,
            "safe": finding.fix.safe,
            "edits": [{"text": e.text, "path": e.path or finding.path, **_span(e.span)} for e in finding.fix.edits],
        },
        "properties": finding.properties,
    }


def render(result: RunResult, findings: list[Finding], colour: bool = False) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "chatbound", "version": __version__},
        "files_checked": result.files,
        "findings": [finding_dict(f) for f in findings],
        "errors": [asdict(e) for e in result.errors],
    }
    return json.dumps(document, indent=2, default=str) + "\n"
