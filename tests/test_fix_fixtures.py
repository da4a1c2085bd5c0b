"""`check --fix` and `--diff` on a copy of every fixture folder (never on fixtures/ itself).

Done when: every MEMORY positive with a safe fix is fixed; the fixed file parses, changes only
the send (and gains one import), so the stored list and its appends are untouched, and the
history is no longer flagged; `--diff` shows the same change; negatives are byte-identical.
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import libcst as cst
import pytest

from chatbound.apply import fix_run
from chatbound.config import Settings
from chatbound.runner import run

from conftest import FIXTURES, invoke

RULE = "MEMORY-UNBOUNDED-HISTORY"
IMPORT = "from chatbound.compaction import bounded_view"


FOLDERS = sorted(p.parent for p in FIXTURES.rglob("expected.txt") if "MEMORY-" in p.read_text())


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory):
    """The MEMORY fixture folders copied twice. In the second: the findings and the `--diff`
    report (a cached run), then `check --fix` (which reads the unchanged files from that
    cache). The first copy stays as it was, to compare."""
    base = tmp_path_factory.mktemp("fix")
    before, after = base / "before", base / "after"
    for folder in FOLDERS:
        shutil.copytree(folder, before / folder.relative_to(FIXTURES))
        shutil.copytree(folder, after / folder.relative_to(FIXTURES))
    old = os.getcwd()
    os.chdir(after)
    try:
        settings = Settings(root=after, select=[RULE])
        result = run([Path(".")], settings, cache=True)
        _, diff = fix_run(result, settings, [Path(".")], unsafe=False, write=False)
    finally:
        os.chdir(old)
    findings = [f for f in result.active if f.rule_id == RULE]
    assert _sources(after) == _sources(before)  # --diff wrote nothing
    fixed = invoke("check", "--fix", "--select", RULE, ".", cwd=after)
    return findings, before, after, fixed, diff.diff()


def _sources(root):
    """Every file below ``root`` but the result cache."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".chatbound_cache" not in p.parts
    }


def test_every_safe_fix_is_applied_and_only_those_files_change(fixed_copy):
    findings, before, after, fixed, _ = fixed_copy
    output = fixed.output
    safe = {f.path for f in findings if f.fix is not None and f.fix.safe}
    old, new = _sources(before), _sources(after)
    changed = {path for path in old if old[path] != new[path]}
    assert changed == safe
    assert len(safe) >= 10
    assert "not applied" not in output
    assert set(new) == set(old)  # no temporary files left behind


def test_fixed_files_parse_change_only_the_send_and_are_no_longer_flagged(fixed_copy):
    findings, before, after, _, _ = fixed_copy
    # bounded_view fixes; the framework memories' own edits are checked in test_memory_fixes.py
    fixed = [f for f in findings if f.fix is not None and f.fix.safe and any("bounded_view(" in e.text for e in f.fix.edits)]
    for path in {f.path for f in fixed}:
        old = (before / path).read_text()
        new = (after / path).read_text()
        cst.parse_module(new)
        send_lines = {old.splitlines()[line - 1] for f in fixed if f.path == path
                      for line in range(f.span.line, f.span.end_line + 1)}
        diff = list(difflib.ndiff(old.splitlines(), new.splitlines()))
        removed = {l[2:] for l in diff if l.startswith("- ")}
        added = [l[2:] for l in diff if l.startswith("+ ")]
        assert removed <= send_lines, path  # growth (append/extend) lines are untouched
        assert added.count(IMPORT) == 1 and len(added) == len(removed) + 1, path
        assert all("bounded_view(" in line for line in added if line != IMPORT), path
    old_cwd = os.getcwd()
    os.chdir(after)
    try:
        rechecked = run([Path(".")], Settings(root=after, select=[RULE]), cache=True).active
    finally:
        os.chdir(old_cwd)
    still = {(f.path, f.properties.get("history")) for f in rechecked if f.rule_id == RULE}
    assert not still & {(f.path, f.properties.get("history")) for f in fixed}


def test_support_assistant_fix_is_exactly_the_wrapped_send_and_the_import(fixed_copy):
    _, before, after, _, _ = fixed_copy
    path = "support_assistant/support_service.py"
    tools = "from .tools import TOOL_FUNCTIONS, _schema, api_usage, list_seats, lookup_invoice, open_ticket, refund, reset_sso, start_export\n"
    expected = (before / path).read_text().replace(tools, tools + IMPORT + "\n").replace("*self.conversation,", "*bounded_view(self.conversation, last_turns=10),")
    assert (after / path).read_text() == expected


def test_diff_shows_the_same_change_and_writes_nothing(fixed_copy):
    _, before, after, _, diff = fixed_copy
    expected = "".join(
        "".join(difflib.unified_diff(
            (before / path).read_text().splitlines(keepends=True),
            (after / path).read_text().splitlines(keepends=True),
            f"a/{path}", f"b/{path}",
        ))
        for path in _sources(before)
    )
    assert expected and sorted(diff.split("--- a/")) == sorted(expected.split("--- a/"))
    assert _sources(before) == {path: (FIXTURES / path).read_bytes() for path in _sources(before)}


def test_the_run_still_exits_1_when_unfixable_findings_are_left(fixed_copy):
    findings, _, _, fixed, _ = fixed_copy
    assert any(f.fix is None for f in findings)
    assert fixed.exit_code == 1
    last = fixed.output.splitlines()[-1]
    assert "Fixed " in last and "findings" in last
