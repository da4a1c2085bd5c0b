"""What a run produces: findings (plain data, picklable), per-file errors and each file's result.

No LibCST here: a re-run served from the cache reads these and nothing heavier."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any


class Severity(enum.IntEnum):
    """Ordered so that `--fail-on medium` means `severity >= MEDIUM`."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected low, medium or high)") from None


@dataclass(frozen=True)
class Span:
    """A source range with 1-based lines and 1-based columns (end column exclusive); in a
    notebook, lines count within `cell`, the notebook's 1-based cell number (0: not a notebook)."""

    line: int
    col: int
    end_line: int
    end_col: int
    cell: int = 0

    @property
    def where(self) -> str:
        """`line:col`, or `cell N:line:col` in a notebook (as ruff prints it)."""
        return f"cell {self.cell}:{self.line}:{self.col}" if self.cell else f"{self.line}:{self.col}"


@dataclass(frozen=True)
class Related:
    """A secondary location: where a history is defined, grown, or handed off; `path` names
    another module (the project model), empty for the finding's own file."""

    span: Span
    message: str
    path: str = ""


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based positions with `text`; `path` names another file
    (the project's dependency declaration), empty for the finding's own file."""

    span: Span
    text: str
    path: str = ""


@dataclass(frozen=True)
class Fix:
    """A ready edit set for one finding; `safe` fixes are applied by `--fix`."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


def fix_command(safe: bool) -> str:
    """The command that applies a fix, as a fixable finding's help names it."""
    return "`--fix`" if safe else "`--fix --unsafe-fixes`"


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: Severity
    message: str
    path: str
    span: Span
    suggestion: str = ""
    related: tuple[Related, ...] = ()
    fingerprint: str = ""
    snippet: str = ""
    scope: str = ""
    statement_line: int = 0
    suppressed: str | None = None
    fix: Fix | None = None
    properties: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.span.cell, self.span.line, self.span.col, self.rule_id)


@dataclass(frozen=True)
class FileError:
    """A file that could not be analyzed: reported in one line, the run goes on."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    warnings: list[str] = field(default_factory=list)
    data_files: list[str] = field(default_factory=list)  # read by rules: a cached result depends on them
    parsed: bool = True  # False: the pre-check skipped the file (only a syntax check ran)
    modules: list[str] = field(default_factory=list)  # other modules the result rests on (the project model)
    project_seconds: float = 0.0  # the project pass's cost for this file in the run that made it
    transient: bool = False  # an outcome of this run, not of the file (its worker died): never cached


def with_fingerprints(findings: list[Finding], path: str) -> list[Finding]:
    """Fingerprint one file's findings by rule, its `path` below the project root (not the
    path shown, which depends on where the run starts), enclosing scope and the flagged code,
    not by line.

    Semgrep's scheme: the same text in the same function keeps its identity when lines
    above it move; an occurrence index separates identical snippets in one scope.
    """
    seen: dict[str, int] = {}
    out = []
    for finding in sorted(findings, key=lambda f: f.sort_key):
        key = "\0".join((finding.rule_id, path, finding.scope, " ".join(finding.snippet.split())))
        index = seen.get(key, 0)
        seen[key] = index + 1
        digest = hashlib.sha256(f"{key}\0{index}".encode()).hexdigest()[:32]
        out.append(replace(finding, fingerprint=digest))
    return out
