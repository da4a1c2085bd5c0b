"""Every rule's own VALID and INVALID examples (Fixit's pattern): one test runs them all."""

from __future__ import annotations

import textwrap

import pytest

from chatbound.analysis.rule import Valid
from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

RULES = all_rules()


def _cases(kind: str):
    for rule in RULES:
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.ID}-{kind.lower()}-{i}")


def _run(rule, code: str, options: dict):
    result = analyze_source(textwrap.dedent(code), "example.py", [rule], options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.rule_id == rule.ID]


@pytest.mark.parametrize("rule, example", list(_cases("VALID")))
def test_valid_example_has_no_finding(rule, example):
    example = example if isinstance(example, Valid) else Valid(example)
    assert _run(rule, example.code, example.options) == []


@pytest.mark.parametrize("rule, example", list(_cases("INVALID")))
def test_invalid_example_is_found_at_its_position(rule, example):
    """Start and end pinned: a span that grows or shrinks (to the whole call, to one name) fails."""
    assert example.end_line is not None and example.end_col is not None, "pin where the finding ends too"
    findings = _run(rule, example.code, example.options)
    assert [(f.rule_id, f.span.line, f.span.col, f.span.end_line, f.span.end_col) for f in findings] == [
        (rule.ID, example.line, example.col, example.end_line, example.end_col)
    ]
    assert findings[0].message and findings[0].severity == rule.SEVERITY


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_rule_declares_its_metadata_and_docs(rule):
    assert rule.ID and rule.NAME and rule.SUMMARY and rule.help_url().startswith("https://")
    for title in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert rule.section(title), f"{rule.ID} docs lack '## {title}'"
    assert 0 < len(rule.full_description()) <= 1024
    assert rule.VALID and rule.INVALID


def test_each_rule_module_is_named_for_its_rule_so_ids_are_known_without_importing_them():
    from chatbound.run.registry import rule_ids

    assert rule_ids() == tuple(rule.ID for rule in RULES)
    for rule in RULES:
        assert rule.__module__ == "chatbound.rules." + rule.ID.lower().replace("-", "_")
