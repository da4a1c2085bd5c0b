"""Every fixture folder's findings equal its hand-written `expected.txt`: the same multiset of
(path, line, column, rule), so a finding that moves, doubles or disappears fails, and an
expectation that names no rule chatbound has, or holds no column, fails too.

Each line of `expected.txt` is `file:LINE:COL RULE-ID` (a notebook's `file:cell N:LINE:COL`),
then an optional `# comment`. The columns were added by reading each finding's source line by
hand: the column is where the expression the rule's page says it reports starts (the history
at the send, the window, the call that hands over, the tools given, the prompt's text)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import FIXTURES, invoke

from chatbound.run.config import Settings
from chatbound.run.registry import all_rules
from chatbound.run.runner import run

FOLDERS = sorted(p.parent for p in FIXTURES.rglob("expected.txt"))
IMPLEMENTED = {rule.ID for rule in all_rules()}
EXPECTATION = re.compile(r"(?P<where>.+?):(?P<line>\d+):(?P<col>\d+) (?P<rule>[A-Z][A-Z-]+)")
ARTICLE = {  # the rule ids of the article whose support assistant fixtures/support_assistant ports
    "AGENT-OVERSIZED-HANDOFF",
    "MEMORY-UNBOUNDED-HISTORY",
    "PROMPT-OVERSIZED-SYSTEM",
    "RAG-EXCESSIVE-TOP-K",
    "TOOLS-ALL-REGISTERED",
}


def parse(text: str, name: str = "expected.txt") -> Counter:
    """The multiset of (path, line, column, rule) a folder's `expected.txt` holds."""
    found: Counter = Counter()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = EXPECTATION.fullmatch(line)
        assert match, f"{name}:{number}: not `file:LINE:COL RULE-ID`: {raw!r}"
        assert match["rule"] in IMPLEMENTED, f"{name}:{number}: no rule {match['rule']!r}"
        found[(match["where"], int(match["line"]), int(match["col"]), match["rule"])] += 1
    return found


def expected(folder) -> Counter:
    return parse((folder / "expected.txt").read_text(), str((folder / "expected.txt").relative_to(FIXTURES)))


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(FIXTURES)) for f in FOLDERS])
def test_fixture_findings_match_expectations(folder, monkeypatch):
    monkeypatch.chdir(folder)
    result = run([folder], Settings(root=folder))
    assert result.errors == []
    found = Counter(
        (f.path + (f":cell {f.span.cell}" if f.span.cell else ""), f.span.line, f.span.col, f.rule_id)
        for f in result.active
    )
    assert found == expected(folder)


@pytest.mark.parametrize(
    "text, error",
    [
        ("a.py:3:5 RAG-EXCESSIVE-TOPK\n", "no rule 'RAG-EXCESSIVE-TOPK'"),
        ("a.py:3 RAG-EXCESSIVE-TOP-K  # no column\n", "not `file:LINE:COL RULE-ID`"),
        ("a.py:3:5\n", "not `file:LINE:COL RULE-ID`"),
    ],
)
def test_an_expectation_naming_no_rule_or_no_column_fails(text, error):
    with pytest.raises(AssertionError, match=re.escape(error)):
        parse("# a comment\n" + text)


def test_expectations_are_counted_so_a_missing_one_of_two_is_noticed():
    two = "t.py:15:15 AGENT-OVERSIZED-HANDOFF\nt.py:15:15 AGENT-OVERSIZED-HANDOFF  # twice\n"
    assert parse(two) == Counter({("t.py", 15, 15, "AGENT-OVERSIZED-HANDOFF"): 2})
    assert parse(two) != parse(two.splitlines()[0])
    assert parse("nb.ipynb:cell 2:9:37 MEMORY-UNBOUNDED-HISTORY\n") == Counter(
        {("nb.ipynb:cell 2", 9, 37, "MEMORY-UNBOUNDED-HISTORY"): 1}
    )


def test_the_support_assistant_reports_every_rule_of_the_article_from_the_command_line():
    """`chatbound check fixtures/support_assistant`, as the README's quick start runs it: it exits 1
    and prints each expected finding, the article's five rules among them."""
    folder = FIXTURES / "support_assistant"
    result = invoke("check", "--output-format", "concise", ".", cwd=folder)
    assert result.exit_code == 1, result.output
    printed = Counter()
    for line in result.output.splitlines():
        match = re.match(r"(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<rule>[A-Z-]+) \[", line)
        if match:
            printed[(match["path"], int(match["line"]), int(match["col"]), match["rule"])] += 1
    assert printed == expected(folder)
    assert {rule for _, _, _, rule in printed} == ARTICLE
