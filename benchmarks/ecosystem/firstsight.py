"""First-sight batches of the ecosystem check: applications a person read and labelled before
chatbound ever ran on them, and the score of chatbound's findings against those labels.

judged.toml judges findings after they are reported, so its recall only knows the misses
someone happened to notice. A batch writes down every expected defect first: its recall
counts every one, and a finding nobody wrote down is wrong at first sight. The first scored
run is frozen into the batch file and never moves; later runs are scored beside it.

Pure functions over plain data, so the scoring is tested without a network or snapshots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from judged import Finding, finding_lines

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

TOLERANCE = 3  # lines either side of a labelled range: the labeller and the rule may point at neighbouring lines
COUNTED = {"expected": "right", "borderline": "borderline", "wrong": "wrong"}  # a finding's match -> its Score count


@dataclass(frozen=True)
class Entry:
    """A place the labeller wrote down before the run: an expected defect, or a borderline one."""

    project: str
    rule: str
    path: str
    lines: tuple[int, int]
    reason: str

    def matches(self, finding: Finding) -> bool:
        """Same project and rule, and the finding's lines, or the lines of a place its report
        names (its related locations: the prompt's definition in another module, the growth
        where the history is kept), reach the labelled range in the labelled file, give or take
        TOLERANCE. The labeller writes down where the defect is (for a system prompt, where its
        text is defined); a report that sends the reader there has found it. Entries name no
        notebook cell: a notebook's entry is written [1, 99999] and so matches a finding in any
        of its cells."""
        first, last = self.lines
        places = [(finding.path, finding.line, max(finding.line, finding.end_line)), *finding.related]
        return (finding.project, finding.rule) == (self.project, self.rule) and any(
            path == self.path and line <= last + TOLERANCE and end >= first - TOLERANCE for path, line, end in places
        )


@dataclass
class Score:
    expected: int = 0  # expected entries
    matched: int = 0  # expected entries a finding matched (one finding each)
    right: int = 0  # findings matching an expected entry
    wrong: int = 0  # findings matching no entry
    borderline: int = 0  # findings matching only a borderline entry: in neither figure

    @property
    def precision(self) -> float | None:
        scored = self.right + self.wrong
        return self.right / scored if scored else None

    @property
    def recall(self) -> float | None:
        return self.matched / self.expected if self.expected else None


@dataclass
class Batch:
    info: dict  # the [batch] table
    expected: list[Entry] = field(default_factory=list)
    borderline: list[Entry] = field(default_factory=list)
    first_sight: dict = field(default_factory=dict)  # the frozen [first_sight] table; {} until frozen


@dataclass
class Result:
    scores: dict[str, Score]  # per rule
    total: Score
    marks: list[tuple[Finding, str]]  # each finding with its match: expected, borderline or wrong
    missed: list[Entry]  # expected entries no finding matched


def load(path: Path) -> Batch:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    projects = {p["name"] for p in data.get("project", [])}
    expected, borderline = (_entries(path, data.get(kind, []), projects) for kind in ("expected", "borderline"))
    return Batch(data["batch"], expected, borderline, data.get("first_sight", {}))


def score(batch: Batch, findings: list[Finding], projects_run: set[str]) -> Result:
    """Score the findings of the projects in `projects_run` against the batch's entries.

    A finding matching an expected entry is right; matching only a borderline entry, it is left
    out of both figures; matching none, it is wrong. For recall each expected entry is matched
    by at most one finding and each finding matches at most one entry, so one finding never
    counts for two defects. A second finding on an already matched defect (the same history
    reported where it grows and where it is sent) is still right for precision: it points at a
    defect the labeller wrote down. Entries of projects that did not run are left out.
    """
    expected = [e for e in batch.expected if e.project in projects_run]
    borderline = [e for e in batch.borderline if e.project in projects_run]
    findings = sorted(findings, key=_order)
    marks = [(f, _match(f, expected, borderline)) for f in findings]
    paired = _pair(expected, findings)
    scores: dict[str, Score] = {}
    for index, entry in enumerate(expected):
        rule = scores.setdefault(entry.rule, Score())
        rule.expected += 1
        rule.matched += index in paired
    for finding, match in marks:
        rule = scores.setdefault(finding.rule, Score())
        setattr(rule, COUNTED[match], getattr(rule, COUNTED[match]) + 1)
    scores = dict(sorted(scores.items()))
    missed = [e for i, e in enumerate(expected) if i not in paired]
    return Result(scores, _sum(scores.values()), marks, missed)


def dumps(result: Result, run: dict[str, str]) -> str:
    """TOML text of the `[first_sight]` table: the run, its figures per rule and overall, and each
    finding with its match; strings JSON-quoted (a valid TOML basic string)."""
    lines = ["[first_sight]", *(f"{k} = {json.dumps(v)}" for k, v in sorted(run.items()))]
    for rule, figures in result.scores.items():
        lines += ["", f"[first_sight.rule.{json.dumps(rule)}]", *_figures(figures)]
    lines += ["", "[first_sight.all]", *_figures(result.total)]
    for f, match in result.marks:
        lines += [
            "",
            "[[first_sight.finding]]",
            *finding_lines(f),
            f"match = {json.dumps(match)}",
        ]
    return "\n".join(lines) + "\n"


def freeze(path: Path, result: Result, run: dict[str, str]) -> None:
    """Append the first sight to the batch file: appended as text, so the hand-written part stays
    byte for byte; refused when the file already holds one (the first-sight figures never move)."""
    if load(path).first_sight:
        raise ValueError(f"{path} already holds its first sight: its figures never move")
    with path.open("a", encoding="utf-8", newline="\n") as batch_file:
        batch_file.write("\n" + dumps(result, run))  # a blank line, or the end of an unfinished last line


def frozen_scores(first_sight: dict) -> tuple[dict[str, Score], Score]:
    """The frozen figures per rule and overall, as counts (the figures follow from them)."""
    names = [f.name for f in fields(Score)]
    scores = {rule: Score(*(counts[n] for n in names)) for rule, counts in first_sight.get("rule", {}).items()}
    return scores, Score(*(first_sight["all"][n] for n in names))


def since(first_sight: dict, marks: list[tuple[Finding, str]], projects_run: set[str]):
    """(appeared, vanished): the findings, each with its match, that the current run reports and
    the first sight did not, and those the first sight reported and the current run of the same
    project no longer does. Keyed by chatbound's fingerprint, as in judged.toml."""
    then = {f.key: (f, m) for f, m in _frozen_marks(first_sight) if f.project in projects_run}
    now = {f.key: (f, m) for f, m in marks}
    appeared = [now[k] for k in now if k not in then]
    vanished = [then[k] for k in then if k not in now]
    return sorted(appeared, key=lambda fm: _order(fm[0])), sorted(vanished, key=lambda fm: _order(fm[0]))


def _entries(path: Path, tables: list[dict], projects: set[str]) -> list[Entry]:
    entries = [Entry(t["project"], t["rule"], t["path"], tuple(t["lines"]), t.get("reason", "")) for t in tables]
    for e in entries:
        if e.project not in projects:
            raise ValueError(
                f"{path}: {e.project} {e.rule} {e.path}: the project is not in the batch's [[project]] list"
            )
        if len(e.lines) != 2 or not 1 <= e.lines[0] <= e.lines[1]:
            raise ValueError(f"{path}: {e.project} {e.rule} {e.path}: lines must be [first, last], got {list(e.lines)}")
    return entries


def _match(finding: Finding, expected: list[Entry], borderline: list[Entry]) -> str:
    if any(e.matches(finding) for e in expected):
        return "expected"
    return "borderline" if any(e.matches(finding) for e in borderline) else "wrong"


def _pair(entries: list[Entry], findings: list[Finding]) -> set[int]:
    """The indexes of the entries matched when each entry takes at most one finding and each
    finding at most one entry, as many as possible (augmenting paths: a finding near two
    entries goes to the one no other finding can take)."""
    candidates = [[i for i, f in enumerate(findings) if e.matches(f)] for e in entries]
    owner: dict[int, int] = {}  # finding index -> entry index

    def take(entry: int, seen: set[int]) -> bool:
        for finding in candidates[entry]:
            if finding not in seen:
                seen.add(finding)
                if finding not in owner or take(owner[finding], seen):
                    owner[finding] = entry
                    return True
        return False

    for entry in range(len(entries)):
        take(entry, set())
    return set(owner.values())


def _frozen_marks(first_sight: dict) -> list[tuple[Finding, str]]:
    return [
        (
            Finding(
                f["project"],
                f["rule"],
                f["path"],
                f["line"],
                f["fingerprint"],
                f["end_line"],
                f["message"],
                cell=f.get("cell", 0),
            ),
            f["match"],
        )
        for f in first_sight.get("finding", [])
    ]


def _figures(figures: Score) -> list[str]:
    counts = [f"{f.name} = {getattr(figures, f.name)}" for f in fields(Score)]
    rates = [
        f"{name} = {round(value, 4)}"
        for name in ("precision", "recall")
        if (value := getattr(figures, name)) is not None
    ]
    return counts + rates


def _sum(scores) -> Score:
    scores = list(scores)
    return Score(*(sum(getattr(s, f.name) for s in scores) for f in fields(Score)))


def _order(f: Finding) -> tuple:
    return (f.project, f.path, f.cell, f.line, f.rule, f.fingerprint)
