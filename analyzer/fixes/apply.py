"""Applying edits to one file's text: what fixing a file did (`FileFix`), the edits made in one
pass (identical edits once, overlaps refused), and whether a fix still leaves its finding.
Nothing here parses or analyses: the run tries each fix (`chatbound.run.trial`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from chatbound.findings import Edit, FileResult, Finding


@dataclass
class FileFix:
    """What fixing one file did: the text before and after, the findings fixed and dropped."""

    path: str
    original: str = ""
    fixed: str = ""
    applied: list[Finding] = field(default_factory=list)
    dropped: list[tuple[Finding, str]] = field(default_factory=list)
    error: str = ""
    encoding: str = "utf-8"  # LibCST's: "utf-8-sig" writes the BOM back
    edits: list[Edit] = field(default_factory=list)  # those of the fixes kept, as made

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def diff(self) -> str:
        """A unified diff that `git apply` and `patch` read, a last line without its newline
        marked as git marks it."""
        import difflib  # loaded where a diff is made: `fix_summary` is on every text report's path

        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            f"a/{self.path}",
            f"b/{self.path}",
        )
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines
        )

    def data(self) -> bytes:
        return self.fixed.encode(self.encoding)


def fixable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and finding.suppressed is None and (finding.fix.safe or unsafe)


def apply_edits(code: str, edits: Iterable[Edit]) -> str:
    """``code`` with every edit made; identical edits count once, insertions at one place keep
    their order, overlapping edits raise."""
    from chatbound.fixes.edits import source_lines  # LibCST loads where a fix is made, not on every run

    starts = [0]
    for line in source_lines(code):
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[min(line, len(starts)) - 1] + col - 1

    spans = sorted(
        dict.fromkeys(
            (offset(e.span.line, e.span.col), offset(e.span.end_line, e.span.end_col), e.text) for e in edits
        ),
        key=lambda item: (item[0], item[1]),
    )
    out, position = [], 0
    for start, end, text in spans:
        if start < position:
            raise ValueError("edits overlap")
        out += [code[position:start], text]
        position = end
    return "".join(out) + code[position:]


def _imported_already(edit: Edit, kept: Sequence[Edit]) -> bool:
    """An import a kept fix already inserts: fixes are tried top down, so that one sits above
    this fix's use too (an import is placed above its use: `fixes.import_edit`)."""
    inserts = edit.span.line == edit.span.end_line and edit.span.col == edit.span.end_col
    return inserts and edit.text.startswith(("from ", "import ")) and any(k.text == edit.text for k in kept)


def _key(finding: Finding) -> tuple:
    return (finding.rule_id, finding.scope, str(finding.properties.get("history", "")))


def _still_flagged(finding: Finding, before: Sequence[Finding], after: FileResult) -> bool:
    """The same rule still flags the same history in the same scope as often as before."""
    key = _key(finding)
    was = Counter(_key(f) for f in before if f.suppressed is None)[key]
    now = Counter(_key(f) for f in after.findings if f.suppressed is None)[key]
    return now >= was
