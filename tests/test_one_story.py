"""One story in every output: for every finding of the fixture folders that has a fix, the help
that text, JSON, SARIF and the language server show names the edits `--fix` makes (the same
expressions on the same lines), and the edits SARIF and the editor carry, applied to the files
as they are, give what `--fix` writes: the module and the dependency declaration.

The help is read back with a pattern and the edits applied here by hand, in 1-based
(SARIF) and 0-based UTF-16 (LSP) positions, not with chatbound's own applier. Notebook findings
are left to test_notebooks.py: SARIF carries no fix for them and their edits live in cells."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, invoke
from pygls.workspace import TextDocument

from chatbound.interfaces.lsp import diagnostic, fix_action, in_document
from chatbound.run.config import load_settings
from chatbound.run.fixing import fix_findings
from chatbound.run.registry import select_rules
from chatbound.run.runner import check_source, rule_options, run

# `writes `NEW` in place of `OLD` (line 15)`, `inserts `A` then `B` (line 6)`, `removes `OLD` (line 3)`
EDIT = re.compile(r"(writes|inserts|removes) ((?:`[^`]*`(?: then )?)+)(?: in place of (`[^`]*`))? \(line (\d+)\)")
DECLARES = re.compile(r"also declares `([^`]*)` in .* \(([^():]+):(\d+)\)\.$")


@pytest.fixture(scope="module")
def fixed_tree(tmp_path_factory):
    """The fixture folders copied (so nothing is written into the checkout), checked once."""
    root = Path(shutil.copytree(FIXTURES, tmp_path_factory.mktemp("story") / "fixtures"))
    outputs = {
        kind: invoke("check", "--output-format", kind, ".", cwd=root).output for kind in ("json", "sarif", "text")
    }
    return root, outputs


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _apply(text: str, edits: list[tuple[int, int, int, int, str]], base: int) -> str:
    """``edits`` (line, column, end line, end column, new text) made on ``text``; lines and
    columns count from ``base``, columns in UTF-16 units."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(line: int, column: int) -> int:
        start = starts[line - base] if line - base < len(starts) else len(text)
        units, at = column - base, start
        while units > 0:
            units -= 2 if ord(text[at]) > 0xFFFF else 1
            at += 1
        return at

    out = text
    ordered = sorted(
        enumerate(edits), key=lambda e: (e[1][0], e[1][1], e[0]), reverse=True
    )  # insertions keep their order
    for _, (line, column, end_line, end_column, new) in ordered:
        out = out[: offset(line, column)] + new + out[offset(end_line, end_column) :]
    return out


def _fixable(root: Path, monkeypatch):
    monkeypatch.chdir(root)
    settings = load_settings([Path(".")])
    result = run([Path(".")], settings)
    return settings, [f for f in result.active if f.fix is not None and not f.span.cell]


def test_every_fix_tells_the_same_story_in_text_json_sarif_and_the_editor(fixed_tree, monkeypatch):
    root, outputs = fixed_tree
    settings, findings = _fixable(root, monkeypatch)
    assert len(findings) >= 100  # the fixtures' fixable findings: a test over none proves nothing
    shown = {(f["path"], f["line"], f["column"], f["rule_id"]): f for f in json.loads(outputs["json"])["findings"]}
    sarif = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
            r["ruleId"],
        ): r
        for r in json.loads(outputs["sarif"])["runs"][0]["results"]
    }
    rules, options = select_rules(settings.select, settings.ignore), rule_options(settings)
    declared, unseen = 0, []
    for finding in findings:
        key = (finding.path, finding.span.line, finding.span.col, finding.rule_id)
        where = f"{finding.path}:{finding.span.where}"
        report = fix_findings([finding], rules, options, unsafe=True, write=False, roots=[root], project=root)
        assert report.applied == 1 and not report.errors, where
        written = {file.path: file for file in report.files}
        original = written[finding.path].original

        # JSON and text show the same help; it names every edit of the module as --fix makes it
        help_text = shown[key]["suggestion"]
        assert f"  = help: {help_text}" in outputs["text"].splitlines(), where
        said = EDIT.findall(help_text)
        made = [e for e in finding.fix.edits if not e.path]
        assert len(said) == len(made), where
        for (verb, new, old, line), edit in zip(said, made):
            parts = re.findall(r"`([^`]*)`", new)
            assert " ".join(parts) == _one_line(edit.text), where
            assert int(line) == edit.span.line + (verb == "inserts" and edit.text.startswith("\n")), where
            if old:
                spanned = "\n".join(original.splitlines()[edit.span.line - 1 :])[edit.span.col - 1 :]
                assert _one_line(spanned).startswith(_one_line(old.strip("`"))[:40]), where  # a call may span lines
            for part in parts:  # what the help quotes is in the file --fix writes
                assert part in _one_line(written[finding.path].fixed), where

        # SARIF: the same help in the message; its replacements give what --fix writes, every file
        result = sarif[key]
        assert help_text in result["message"]["text"], where
        for change in result["fixes"][0]["artifactChanges"]:
            path = change["artifactLocation"]["uri"]
            edits = [
                (
                    r["deletedRegion"]["startLine"],
                    r["deletedRegion"]["startColumn"],
                    r["deletedRegion"]["endLine"],
                    r["deletedRegion"]["endColumn"],
                    r["insertedContent"]["text"],
                )
                for r in change["replacements"]
            ]
            assert _apply(written[path].original, edits, base=1) == written[path].fixed, (where, path)
        assert {c["artifactLocation"]["uri"] for c in result["fixes"][0]["artifactChanges"]} == set(written), where

        # the dependency: named in the help exactly where --fix declares it
        declaration = DECLARES.search(help_text)
        assert bool(declaration) == (len(written) == 2), where
        if declaration:
            declared += 1
            requirement, path, line = declaration.groups()
            added = [n for n, text in enumerate(written[path].fixed.splitlines(), 1) if requirement in text]
            assert added == [int(line)] and requirement not in written[path].original, where

        # the language server: the diagnostic carries the help, the quick fix what --fix writes
        source = Path(finding.path).read_text(encoding="utf-8")
        document = TextDocument(Path(finding.path).resolve().as_uri(), source)
        live = next(
            (
                f
                for f in check_source(source, Path(finding.path), settings).findings
                if (f.span, f.rule_id) == (finding.span, finding.rule_id)
            ),
            None,
        )
        if live is None:
            unseen.append(finding.path)
            continue
        diag = diagnostic(live, in_document(document))
        assert diag.message == f"{finding.message}\n{help_text}", where
        action = fix_action(live, in_document(document), diag)
        for uri, text_edits in action.edit.changes.items():
            path = Path(uri.removeprefix("file://")).relative_to(root.resolve()).as_posix()
            edits = [
                (e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text)
                for e in text_edits
            ]
            assert _apply(written[path].original, edits, base=0) == written[path].fixed, (where, path)
        assert len(action.edit.changes) == len(written), where

    assert declared >= 1  # fixtures/apps/helpdesk declares what its fix imports
    assert unseen == []  # the server links the file through its imports as the run does


def test_the_help_desk_help_names_the_expression_the_fix_writes_not_the_stored_history(fixed_tree):
    """The counterexample of issue 15: the help said `bounded_view(conversations[customer], ...)`
    while the fix wrote `bounded_view(history, ...)`."""
    _, outputs = fixed_tree
    finding = next(f for f in json.loads(outputs["json"])["findings"] if f["path"] == "apps/helpdesk/helpdesk.py")
    assert finding["suggestion"] == (
        "Send bounded_view(history, last_turns=10); the stored history is unchanged. `--fix` writes "
        "`bounded_view(history, last_turns=10)` in place of `history` (line 15) and inserts "
        "`from chatbound.compaction import bounded_view` (line 6). `--fix` also declares "
        "`chatbound-compaction>=0.1.0` in apps/helpdesk/requirements.txt (apps/helpdesk/requirements.txt:2)."
    )
    assert "conversations[customer]" not in finding["suggestion"]
    assert finding["fix"]["edits"][2] == {
        "text": "chatbound-compaction>=0.1.0\n",
        "path": "apps/helpdesk/requirements.txt",
        "cell": None,
        "line": 2,
        "column": 1,
        "end_line": 2,
        "end_column": 1,
    }
