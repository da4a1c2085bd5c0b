"""Every fixture folder's findings equal its hand-written `expected.txt` (rules that exist)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

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


def test_support_assistant_reports_every_implemented_rule_of_the_article():
    ids = {rule_id for _, _, rule_id in expected(FIXTURES / "support_assistant")}
    assert "RAG-EXCESSIVE-TOP-K" in ids and ids <= IMPLEMENTED
