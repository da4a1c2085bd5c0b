"""Every fixture folder's findings equal its hand-written `expected.txt` (rules that exist)."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES, invoke

from chatbound.run.config import Settings
from chatbound.run.registry import all_rules
from chatbound.run.runner import run

FOLDERS = sorted(p.parent for p in FIXTURES.rglob("expected.txt"))
IMPLEMENTED = {rule.ID for rule in all_rules()}


def expected(folder) -> set[tuple[str, int, str]]:
    found = set()
    for raw in (folder / "expected.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            location, rule_id = line.rsplit(None, 1)  # a notebook's location is `file:cell N:LINE`
            path, number = location.rsplit(":", 1)
            if rule_id in IMPLEMENTED:
                found.add((path, int(number), rule_id))
    return found


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(FIXTURES)) for f in FOLDERS])
def test_fixture_findings_match_expectations(folder, monkeypatch):
    monkeypatch.chdir(folder)
    result = run([folder], Settings(root=folder))
    assert result.errors == []
    found = {(f.path + (f":cell {f.span.cell}" if f.span.cell else ""), f.span.line, f.rule_id) for f in result.active}
    assert found == expected(folder)


ARTICLE = {  # the rule ids of the article whose support assistant fixtures/support_assistant ports
    "AGENT-OVERSIZED-HANDOFF",
    "MEMORY-UNBOUNDED-HISTORY",
    "PROMPT-OVERSIZED-SYSTEM",
    "RAG-EXCESSIVE-TOP-K",
    "TOOLS-ALL-REGISTERED",
}


def test_the_support_assistant_reports_every_rule_of_the_article_from_the_command_line():
    """`chatbound check fixtures/support_assistant`, as the README's quick start runs it: it exits 1
    and prints each expected finding, the article's five rules among them."""
    folder = FIXTURES / "support_assistant"
    result = invoke("check", "--output-format", "concise", ".", cwd=folder)
    assert result.exit_code == 1, result.output
    printed = set()
    for line in result.output.splitlines():
        match = re.match(r"(?P<path>[^:\s]+):(?P<line>\d+):\d+: (?P<rule>[A-Z-]+) \[", line)
        if match:
            printed.add((match["path"], int(match["line"]), match["rule"]))
    assert printed == expected(folder)
    assert {rule for _, _, rule in printed} == ARTICLE
