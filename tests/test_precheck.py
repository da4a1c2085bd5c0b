"""The textual pre-check: it skips files no rule can report on, and never hides a finding."""

from __future__ import annotations

import pytest

from chatbound.config import Settings
from chatbound.precheck import MAX_NESTING, may_have_findings, nesting_problem, trigger_words
from chatbound.registry import all_rules
from chatbound.rule import Rule
from chatbound.runner import run

from conftest import FIXTURES

FOLDERS = sorted({p.parent for p in FIXTURES.rglob("*.py")})


def _found(result):
    return sorted((f.path, f.span.line, f.span.col, f.rule_id, f.suppressed is None) for f in result.findings)


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(FIXTURES)) for f in FOLDERS])
def test_every_fixture_folder_gives_the_same_findings_with_and_without_the_precheck(folder, monkeypatch):
    monkeypatch.chdir(folder)
    with_precheck = run([folder], Settings(root=folder))
    without = run([folder], Settings(root=folder), precheck=False)
    assert _found(with_precheck) == _found(without)
    assert with_precheck.errors == without.errors


@pytest.mark.parametrize("rule", all_rules(), ids=[r.ID for r in all_rules()])
def test_each_rules_own_invalid_examples_pass_its_precheck(rule):
    words = trigger_words([rule])
    for example in rule.INVALID:
        assert may_have_findings(example.code.encode(), words), example.code


class Plain(Rule):
    ID = "TEST-PLAIN"


class Worded(Rule):
    ID = "TEST-WORDED"
    TRIGGERS = ("similarity_search", "Top_K")


def test_a_rule_without_triggers_makes_every_file_a_candidate():
    words = trigger_words([Worded, Plain])
    assert words is None
    assert may_have_findings(b"print('hello')\n", words)


def test_trigger_words_match_case_insensitively_and_skip_files_without_them():
    words = trigger_words([Worded])
    assert may_have_findings(b"hits = index.query(vector=v, TOP_K=50)\n", words)
    assert may_have_findings(b"docs = store.similarity_search(q, k=20)\n", words)
    assert not may_have_findings(b"import os\nprint(os.getcwd())\n", words)


def test_a_file_without_trigger_words_is_not_parsed(write, monkeypatch):
    root = write({"chat.py": "docs = store.similarity_search(q, k=20)\n", "util.py": "def add(a, b):\n    return a + b\n"})
    monkeypatch.chdir(root)
    result = run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]))
    assert result.parsed == ["chat.py"]
    assert [(f.path, f.rule_id) for f in result.findings] == [("chat.py", "RAG-EXCESSIVE-TOP-K")]
    assert run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]), precheck=False).parsed == ["chat.py", "util.py"]


def test_nesting_deeper_than_python_allows_is_reported_not_parsed():
    assert nesting_problem("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n") == (
        "nested too deeply: 5000 levels of brackets (Python allows 200)"
    )
    assert nesting_problem("f = " + "lambda: " * 5000 + "1\n") == (
        "nested too deeply: more than 200 prefix operators in a row at line 1"
    )
    assert nesting_problem("y = 1\nx = " + "not " * 300 + "y\n").endswith("at line 2")


def test_nesting_within_the_limit_and_brackets_in_strings_and_comments_are_fine():
    deepest = "x = " + "[" * MAX_NESTING + "]" * MAX_NESTING + "\n"
    assert nesting_problem(deepest) is None
    assert nesting_problem("s = '" + "(" * 500 + "'  # " + "[" * 500 + "\n") is None
    assert nesting_problem('s = """\n' + "{" * 500 + '\n"""\n') is None
    assert nesting_problem("line = '-' * 400\n# " + "-" * 400 + "\n") is None


def test_a_file_the_precheck_skips_still_reports_its_syntax_error(write, monkeypatch):
    from chatbound.config import Settings
    from chatbound.runner import run

    root = write({"notes.py": "def helper(:\n    return 1\n", "deep.py": "x = " + "(" * 300 + ")" * 300 + "\n", "ok.py": "x = 1\n"})
    monkeypatch.chdir(root)
    result = run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]))
    assert result.parsed == []  # nothing in these files can hold a retrieval finding
    assert sorted((e.path, e.message.split(":")[0]) for e in result.errors) == [
        ("deep.py", "nested too deeply"), ("notes.py", "syntax error at 1"),
    ]
