"""A valid file is never reported as a syntax error because the interpreter running chatbound is
older than its syntax: CPython's parser is the fast first answer, LibCST (which reads every
grammar up to 3.14 whatever the interpreter) the judge, and a file LibCST cannot parse either is
reported with the grammar it tried. The files are tests/data/syntax/ (`.ci/run` runs the CLI over
them on every interpreter from 3.10 to 3.13 it finds)."""

from __future__ import annotations

import json
import shutil
import sys
from importlib.metadata import version

import pytest
from conftest import ROOT
from test_robustness import TOP_K, TRIED, check

CORPUS = ROOT / "tests" / "data" / "syntax"
VALID = sorted(p.name for p in (CORPUS / "valid").glob("*.py"))


def errors_of(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith(("error: ", "warning: "))]


def test_the_corpus_holds_each_newer_syntax():
    assert VALID == [
        "pep695_type_parameters.py",  # 3.12
        "pep696_type_parameter_defaults.py",  # 3.13
        "pep701_fstrings.py",  # 3.12
        "pep750_template_strings.py",  # 3.14
        "pep758_except_without_parentheses.py",  # 3.14
    ]


def test_the_installed_libcst_reads_up_to_python_3_14():
    from chatbound.syntax.parse import grammar

    assert grammar() == f"LibCST {version('libcst')}'s grammar: Python 3.0 to 3.14"


@pytest.mark.parametrize("name", VALID)
def test_a_file_of_newer_syntax_that_no_rule_reads_is_not_an_error(tmp_path, name):
    shutil.copy(CORPUS / "valid" / name, tmp_path / name)
    result = check(tmp_path)
    assert errors_of(result) == []  # before, under 3.11: "error: NAME: syntax error at ..." and exit 2
    assert result.exit_code == 0


@pytest.mark.parametrize("name", VALID)
def test_a_file_of_newer_syntax_is_analyzed_and_its_finding_reported(tmp_path, name):
    source = (CORPUS / "valid" / name).read_text()
    (tmp_path / name).write_text(source + TOP_K)
    line = source.count("\n") + 1
    result = check(tmp_path)
    assert errors_of(result) == []
    assert result.stdout.splitlines()[0].startswith(f"{name}:{line}:53: RAG-EXCESSIVE-TOP-K")
    assert result.exit_code == 1


def test_the_interpreter_alone_is_not_the_judge():
    """What the fix changed: where CPython rejects the file (an interpreter older than 3.12 here),
    LibCST still parses it."""
    from chatbound.syntax.parse import parse_problem, python_syntax_error

    source = (CORPUS / "valid" / "pep750_template_strings.py").read_bytes()
    if sys.version_info < (3, 14):
        assert python_syntax_error(source) is not None
    assert parse_problem(source) is None


def test_a_file_no_grammar_accepts_names_the_grammar_tried(tmp_path):
    shutil.copy(CORPUS / "invalid" / "broken.py", tmp_path / "broken.py")
    result = check(tmp_path)
    if sys.version_info >= (3, 12):  # CPython reads line 1 and points at the bad token, in its words
        expected = f"error: broken.py: syntax error at 2:7: invalid syntax {TRIED}"
    else:  # CPython stops at line 1's `type`: LibCST's complaint (it names the position after the token)
        expected = f"error: broken.py: syntax error at 3:5: expected one of ), *, **, NAME {TRIED}"
    assert errors_of(result) == [expected]
    assert result.exit_code == 2


def test_a_skipped_file_that_does_not_parse_is_still_an_error(tmp_path):
    (tmp_path / "syntax.py").write_text("x = 1\ndef f(:\n    pass\n")
    result = check(tmp_path)
    assert errors_of(result) == [f"error: syntax.py: syntax error at 2:7: invalid syntax {TRIED}"]
    assert result.exit_code == 2


def test_a_notebook_cell_of_newer_syntax_is_checked(tmp_path):
    cells = ["type ModelT = ChatOpenAI | ChatAnthropic\n", TOP_K]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "source": cell, "outputs": []} for cell in cells],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "chat.ipynb").write_text(json.dumps(notebook))
    result = check(tmp_path)
    assert errors_of(result) == []  # before: "warning: chat.ipynb:cell 1: not checked: syntax error at 1:6"
    assert result.stdout.splitlines()[0].startswith("chat.ipynb:cell 2:1:53: RAG-EXCESSIVE-TOP-K")
    assert result.exit_code == 1
