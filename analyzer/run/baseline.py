"""Baselines: record today's findings, then report only new ones.

Matched by fingerprint (rule, path, enclosing scope and the flagged code), never by line,
so a finding keeps its place in the baseline when code above it moves. The file is JSON,
versioned, sorted and free of timestamps, so rewriting it for the same code changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from chatbound.findings import Finding
from chatbound.fixes.atomic import write_atomic
from chatbound.run.runner import project_path

VERSION = 1


class BaselineError(Exception):
    """A baseline that cannot be read: reported in one line, exit code 2."""


def baseline_document(findings: list[Finding], root: Path) -> dict:
    """The findings' entries, each path below the project ``root`` (as the fingerprint is), so
    the file is the same from wherever the run starts."""
    entries = sorted(
        {
            (project_path(Path(f.path), root), f.rule_id, f.fingerprint, " ".join(f.snippet.split())[:120])
            for f in findings
        }
    )
    return {
        "version": VERSION,
        "tool": "chatbound",
        "findings": [
            {"path": path, "rule_id": rule_id, "fingerprint": fingerprint, "code": code}
            for path, rule_id, fingerprint, code in entries
        ],
    }


def write_baseline(path: Path, findings: list[Finding], root: Path) -> None:
    """The active findings, one entry each, written atomically."""
    text = json.dumps(baseline_document([f for f in findings if f.suppressed is None], root), indent=2) + "\n"
    write_atomic(path, text.encode("utf-8"))


def read_baseline(path: Path) -> set[str]:
    """The fingerprints a baseline file records."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"baseline {path} is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        found = document.get("version") if isinstance(document, dict) else None
        raise BaselineError(f"baseline {path} has version {found!r}; this chatbound reads version {VERSION}")
    entries = document.get("findings")
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries
    ):
        raise BaselineError(f"baseline {path}: `findings` must be a list of objects with a `fingerprint`")
    return {e["fingerprint"] for e in entries}


def new_findings(findings: list[Finding], baseline: set[str]) -> list[Finding]:
    """The findings whose fingerprint the baseline does not record."""
    return [f for f in findings if f.fingerprint not in baseline]
