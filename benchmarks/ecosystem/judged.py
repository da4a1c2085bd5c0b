"""The judged file of the ecosystem check: what each real project's findings were judged to be.

A finding is keyed by project, rule, path (below the project root) and chatbound's
fingerprint, so it keeps its verdict while lines above it move. A known miss is a place a
rule should fire and does not, keyed by project, rule, path and line; a finding of that rule
whose lines cover the miss's line catches it.

Pure functions over plain data, so the comparison is tested without a network or snapshots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

VERDICTS = ("right", "wrong")


@dataclass(frozen=True)
class Finding:
    project: str
    rule: str
    path: str
    line: int
    fingerprint: str
    end_line: int = 0
    message: str = ""
    verdict: str = ""  # "right", "wrong" or "" (not judged yet)
    reason: str = ""
    cell: int = 0  # a notebook's code cell (lines count within it); 0 in a module
    related: tuple[tuple[str, int, int], ...] = ()  # (path, line, end line) of each place the report names

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.project, self.rule, self.path, self.fingerprint)

    def covers(self, miss: Miss) -> bool:
        return (self.project, self.rule, self.path, self.cell) == (miss.project, miss.rule, miss.path, miss.cell) and (
            self.line <= miss.line <= max(self.line, self.end_line)
        )


@dataclass(frozen=True)
class Miss:
    project: str
    rule: str
    path: str
    line: int
    reason: str
    cell: int = 0


@dataclass
class Judged:
    findings: list[Finding] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)
    run: dict[str, str] = field(default_factory=dict)


@dataclass
class RuleScore:
    right: int = 0
    wrong: int = 0
    unknown: int = 0
    misses: int = 0  # known misses no current finding catches

    @property
    def precision(self) -> float | None:
        judged = self.right + self.wrong
        return self.right / judged if judged else None

    @property
    def recall(self) -> float | None:
        found_or_missed = self.right + self.misses
        return self.right / found_or_missed if found_or_missed else None


@dataclass
class Comparison:
    scores: dict[str, RuleScore]
    appeared: list[Finding]  # current findings the judged file does not hold
    vanished: list[Finding]  # judged findings the current run no longer reports
    unjudged: list[Finding]  # current findings with no verdict (new ones included)
    caught: list[tuple[Miss, Finding]]  # known misses a current finding now covers


def load(path: Path) -> Judged:
    if not path.exists():
        return Judged()
    data = tomllib.loads(path.read_text())
    findings = [
        Finding(
            project=f["project"],
            rule=f["rule"],
            path=f["path"],
            line=f["line"],
            fingerprint=f["fingerprint"],
            end_line=f.get("end_line", 0),
            message=f.get("message", ""),
            verdict=f.get("verdict", ""),
            reason=f.get("reason", ""),
            cell=f.get("cell", 0),
        )
        for f in data.get("finding", [])
    ]
    bad = [f for f in findings if f.verdict not in ("", *VERDICTS)]
    if bad:
        raise ValueError(f"{path}: verdict must be right, wrong or empty: {bad[0].key}")
    misses = [
        Miss(m["project"], m["rule"], m["path"], m["line"], m["reason"], m.get("cell", 0)) for m in data.get("miss", [])
    ]
    return Judged(findings, misses, dict(data.get("run", {})))


def compare(
    judged: Judged, current: list[Finding], projects_run: set[str], unchecked: frozenset[tuple[str, str]] = frozenset()
) -> Comparison:
    """Score `current` (the findings of the projects in `projects_run`) against `judged`.

    Projects that did not run (no snapshot, a crash) and files chatbound reported it could not
    check (`unchecked`: (project, path)) are left out on both sides, so their recorded findings
    do not show up as vanished.
    """
    recorded = {f.key: f for f in judged.findings if _checked(f, projects_run, unchecked)}
    now = {f.key: f for f in current}
    scored = [_with_verdict(f, recorded[key]) if key in recorded else f for key, f in now.items()]

    scores: dict[str, RuleScore] = {}
    for finding in scored:
        score = scores.setdefault(finding.rule, RuleScore())
        if finding.verdict == "right":
            score.right += 1
        elif finding.verdict == "wrong":
            score.wrong += 1
        else:
            score.unknown += 1
    caught = []
    for miss in judged.misses:
        if not _checked(miss, projects_run, unchecked):
            continue
        catcher = next((f for f in scored if f.covers(miss)), None)
        if catcher:
            caught.append((miss, catcher))
        else:
            scores.setdefault(miss.rule, RuleScore()).misses += 1
    return Comparison(
        scores=dict(sorted(scores.items())),
        appeared=sorted((f for k, f in now.items() if k not in recorded), key=_order),
        vanished=sorted((f for k, f in recorded.items() if k not in now), key=_order),
        unjudged=sorted((f for f in scored if not f.verdict), key=_order),
        caught=caught,
    )


def record(
    judged: Judged,
    current: list[Finding],
    projects_run: set[str],
    run: dict[str, str],
    unchecked: frozenset[tuple[str, str]] = frozenset(),
) -> Judged:
    """The new judged file: the current findings, keeping the verdict and reason of each one
    still reported; findings of projects that did not run, or of files chatbound could not
    check, stay as they were."""
    recorded = {f.key: f for f in judged.findings}
    kept = [f for f in judged.findings if not _checked(f, projects_run, unchecked)]
    fresh = [_with_verdict(f, recorded[f.key]) if f.key in recorded else f for f in current]
    return Judged(sorted(kept + fresh, key=_order), list(judged.misses), run)


def dumps(judged: Judged) -> str:
    """TOML text of `judged`: one table per finding and per miss, strings JSON-quoted (a
    valid TOML basic string)."""
    lines = [
        "# Judged findings of the ecosystem check (see README.md). Written by `run.py --record`,",
        "# which keeps the verdict and reason of every finding still reported; edit verdicts by hand.",
        "",
        "[run]",
        *(f"{k} = {json.dumps(v)}" for k, v in sorted(judged.run.items())),
    ]
    for f in judged.findings:
        lines += [
            "",
            "[[finding]]",
            *finding_lines(f),
            f"verdict = {json.dumps(f.verdict)}",
            f"reason = {json.dumps(f.reason)}",
        ]
    for m in sorted(judged.misses, key=lambda m: (m.project, m.path, m.cell, m.line, m.rule)):
        lines += [
            "",
            "[[miss]]",
            f"project = {json.dumps(m.project)}",
            f"rule = {json.dumps(m.rule)}",
            f"path = {json.dumps(m.path)}",
            *_cell(m.cell),
            f"line = {m.line}",
            f"reason = {json.dumps(m.reason)}",
        ]
    return "\n".join(lines) + "\n"


def _checked(item: Finding | Miss, projects_run: set[str], unchecked: frozenset[tuple[str, str]]) -> bool:
    return item.project in projects_run and (item.project, item.path) not in unchecked


def _with_verdict(current: Finding, recorded: Finding) -> Finding:
    return replace(current, verdict=recorded.verdict, reason=recorded.reason)


def _cell(cell: int) -> list[str]:
    return [f"cell = {cell}"] if cell else []


def finding_lines(f: Finding) -> list[str]:
    """What names a finding, as TOML lines: the same in judged.toml and in a batch's first sight."""
    return [
        f"project = {json.dumps(f.project)}",
        f"rule = {json.dumps(f.rule)}",
        f"path = {json.dumps(f.path)}",
        *_cell(f.cell),
        f"line = {f.line}",
        f"end_line = {f.end_line}",
        f"fingerprint = {json.dumps(f.fingerprint)}",
        f"message = {json.dumps(f.message)}",
    ]


def _order(f: Finding) -> tuple:
    return (f.project, f.path, f.cell, f.line, f.rule, f.fingerprint)
