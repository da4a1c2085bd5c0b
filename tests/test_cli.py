"""The command line end to end: discovery, exit codes, formats, config, suppressions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT, SARIF_SCHEMA

from chatbound.interfaces.cli import main

BAD_TOP_K = "docs = llm.invoke(store.similarity_search(question, k=20))\n"
GOOD = "docs = llm.invoke(store.similarity_search(question, k=4))\n"


def check(*args, cwd=None):
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd or old)
    try:
        return runner.invoke(main, ["check", *map(str, args)], catch_exceptions=False)
    finally:
        os.chdir(old)


def test_fixtures_exit_1_with_the_retrieval_finding():
    result = check(FIXTURES, "--output-format", "concise")
    assert result.exit_code == 1
    assert "support_assistant/support_service.py:23:117: RAG-EXCESSIVE-TOP-K [medium]" in result.output


def test_text_output_shows_the_line_a_caret_span_and_the_help(write):
    root = write({"app.py": BAD_TOP_K})
    result = check("app.py", cwd=root)
    lines = result.output.splitlines()
    assert lines[0].startswith("app.py:1:53: RAG-EXCESSIVE-TOP-K 20 retrieved results per query reach the model")
    assert lines[2] == "1 | " + BAD_TOP_K.rstrip()
    assert lines[3] == "  | " + " " * 52 + "^^^^"
    assert lines[4].startswith("  = help: Start at 4")
    assert lines[-1] == "Found 1 finding (1 medium) in 1 file."
    assert "\x1b[" not in result.output  # no colour when not a TTY


def test_clean_tree_exits_0(write):
    root = write({"app.py": GOOD})
    result = check(root)
    assert result.exit_code == 0 and "No findings in 1 file." in result.output


def test_syntax_error_gives_one_line_error_and_the_other_file_is_still_reported(write):
    root = write({"broken.py": "def f(:\n    pass\n", "app.py": BAD_TOP_K})
    proc = subprocess.run(
        [sys.executable, "-m", "chatbound", "check", ".", "--output-format", "concise"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    errors = [l for l in proc.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: broken.py: syntax error at 1:")
    assert proc.stdout.startswith("app.py:1:53: RAG-EXCESSIVE-TOP-K")


def test_undecodable_file_is_an_error_not_a_crash(write):
    root = write({"latin.py": b"# -*- coding: ascii -*-\nx = '\xff'\n", "app.py": BAD_TOP_K})
    result = check(".", "--output-format", "concise", cwd=root)
    assert result.exit_code == 2
    assert "latin.py: cannot decode the file" in result.output


def test_missing_path_is_an_error(write):
    root = write({"app.py": GOOD})
    result = check("nope.py", "app.py", cwd=root)
    assert result.exit_code == 2 and "nope.py: no such file or directory" in result.output


def test_fail_on_and_exit_zero(write):
    root = write({"app.py": BAD_TOP_K})
    assert check("--fail-on", "high", cwd=root).exit_code == 0  # the finding is medium
    assert check("--fail-on", "medium", cwd=root).exit_code == 1
    assert check("--exit-zero", cwd=root).exit_code == 0


def test_select_and_ignore_by_id_and_prefix(write):
    root = write({"app.py": BAD_TOP_K})
    assert check("--ignore", "RAG", cwd=root).exit_code == 0
    assert check("--select", "RAG-EXCESSIVE-TOP-K", cwd=root).exit_code == 1
    result = check("--select", "NOPE", cwd=root)
    assert result.exit_code == 2 and "unknown rule or prefix 'NOPE'" in result.output


def test_walk_skips_gitignored_virtualenvs_and_build_dirs(write):
    root = write(
        {
            ".gitignore": "generated/\n",
            "generated/a.py": BAD_TOP_K,
            ".venv/lib/b.py": BAD_TOP_K,
            "node_modules/c.py": BAD_TOP_K,
            "build/d.py": BAD_TOP_K,
            "src/e.py": BAD_TOP_K,
            "src/notes.txt": BAD_TOP_K,
        }
    )
    result = check(".", "--output-format", "concise", cwd=root)
    assert [l.split(":")[0] for l in result.output.splitlines()] == ["src/e.py"]


def test_exclude_and_force_exclude(write):
    root = write({"legacy/a.py": BAD_TOP_K, "src/b.py": BAD_TOP_K})
    result = check(".", "--extend-exclude", "legacy", "--output-format", "concise", cwd=root)
    assert [l.split(":")[0] for l in result.output.splitlines()] == ["src/b.py"]
    # a file named explicitly is checked unless --force-exclude (what pre-commit passes)
    assert check("legacy/a.py", "--extend-exclude", "legacy", cwd=root).exit_code == 1
    assert check("legacy/a.py", "--extend-exclude", "legacy", "--force-exclude", cwd=root).exit_code == 0


def test_pyproject_config_is_found_by_walking_up(write):
    root = write(
        {
            "pyproject.toml": "[tool.chatbound]\nfail-on = 'high'\n[tool.chatbound.options]\nmax-top-k = 25\n",
            "pkg/deep/app.py": BAD_TOP_K,
        }
    )
    result = check("pkg/deep/app.py", cwd=root)
    assert result.exit_code == 0 and "No findings" in result.output


def test_config_per_file_ignores(write):
    root = write(
        {
            "pyproject.toml": "[tool.chatbound.per-file-ignores]\n'tests/*' = ['RAG']\n",
            "tests/test_x.py": BAD_TOP_K,
        }
    )
    assert check(".", cwd=root).exit_code == 0


@pytest.mark.parametrize(
    "table, message",
    [
        ("selec = ['RAG']", "unknown key `selec` in [tool.chatbound]"),
        ("fail-on = 'urgent'", "`fail-on`: unknown severity 'urgent'"),
        ("select = ['MEMORI']", "`select` names unknown rule 'MEMORI'"),
        ("[tool.chatbound.options]\nmax-top-k = 0", "`options.max-top-k` must be a positive integer"),
        ("[tool.chatbound.options]\nmax-topk = 3", "unknown key `options.max-topk`"),
        ("project-max-mb = -1", "`project-max-mb` must be a whole number of megabytes, 0 or more, got -1"),
        ("project-max-mb = true", "`project-max-mb` must be a whole number of megabytes, 0 or more, got True"),
    ],
)
def test_bad_config_is_a_one_line_error_naming_the_key(write, table, message):
    root = write({"pyproject.toml": "[tool.chatbound]\n" + table + "\n", "app.py": GOOD})
    result = check(".", cwd=root)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and message in result.output


PADDING = "# padding\n" * (3 * (1 << 20) // 20)  # 1.5 MB of modules


def test_a_tree_above_project_max_mb_says_so_on_stderr_unless_quiet(write):
    root = write({"app.py": GOOD, "padding.py": PADDING})
    assert check(".", "--project-max-mb", "1", cwd=root).stderr == (
        "note: modules are checked one at a time, not linked through their imports: 1.5 MB of Python modules is "
        "above project-max-mb = 1 (raise it in [tool.chatbound] or with --project-max-mb)\n"
    )
    assert check(".", "--project-max-mb", "1", "-q", cwd=root).stderr == ""
    assert check(".", "--project-max-mb", "2", cwd=root).stderr == ""
    assert check(".", "--project-max-mb", "0", cwd=root).stderr == ""


def test_suppression_comment_on_the_line_or_the_statement_start(write):
    root = write(
        {
            "a.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore[RAG-EXCESSIVE-TOP-K] reviewed: legal corpus\n",
            "b.py": "docs = llm.invoke(store.similarity_search(  # chatbound: ignore[RAG] wide on purpose\n    question, k=20))\n",
            "c.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore[MEMORY-UNBOUNDED-HISTORY]\n",
        }
    )
    result = check(".", "--output-format", "concise", cwd=root)
    assert [l.split(":")[0] for l in result.output.splitlines()] == ["c.py"]
    shown = check(".", "--show-suppressed", "--output-format", "json", cwd=root)
    findings = json.loads(shown.stdout)["findings"]
    assert {(f["path"], f["suppressed"], f["suppression_reason"]) for f in findings} == {
        ("a.py", True, "reviewed: legal corpus"),
        ("b.py", True, "wide on purpose"),
        ("c.py", False, None),
    }


def test_bare_ignore_suppresses_but_warns(write):
    root = write({"a.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore\n"})
    proc = subprocess.run([sys.executable, "-m", "chatbound", "check", "."], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0
    assert "warning: a.py:1: `# chatbound: ignore` without rule ids" in proc.stderr


def test_json_output_matches_its_documented_schema(write):
    root = write({"app.py": "TOP_K = 30\n" + "docs = llm.invoke(store.similarity_search(q, k=TOP_K))\n"})
    result = check(".", "--output-format", "json", cwd=root)
    document = json.loads(result.stdout)
    schema = json.loads((ROOT / "docs" / "json-output.schema.json").read_text())
    jsonschema.validate(document, schema)
    (finding,) = document["findings"]
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (2, 46, 2, 53)
    assert finding["cell"] is None
    assert finding["related"] == [
        {
            "message": "k is set here",
            "path": "app.py",
            "cell": None,
            "line": 1,
            "column": 9,
            "end_line": 1,
            "end_column": 11,
        }
    ]
    assert "TOP_K = 30 (line 1)" in finding["message"]


def test_sarif_validates_against_the_official_schema(write):
    root = write({"app.py": BAD_TOP_K, "broken.py": "def (:\n"})
    result = check(".", "--output-format", "sarif", cwd=root)
    log = json.loads(result.stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    run = log["runs"][0]
    (res,) = run["results"]
    assert res["ruleId"] == "RAG-EXCESSIVE-TOP-K" and res["level"] == "warning"
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "RAG-EXCESSIVE-TOP-K"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 1, "startColumn": 53, "endLine": 1, "endColumn": 57}
    assert res["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "app.py", "uriBaseId": "%SRCROOT%"}
    assert len(res["partialFingerprints"]["chatbound/v1"]) == 32
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "broken.py" in json.dumps(run["invocations"][0]["toolExecutionNotifications"])
    assert "null" not in result.stdout


def test_sarif_of_the_fixtures_validates(tmp_path):
    out = tmp_path / "out.sarif"
    result = check(FIXTURES, "--output-format", "sarif", "--output-file", out)
    assert result.exit_code == 1 and result.output == ""
    jsonschema.validate(json.loads(out.read_text()), json.loads(SARIF_SCHEMA.read_text()))


def test_github_annotations_escape_their_properties(write):
    root = write({"a,b.py": BAD_TOP_K})
    result = check(".", "--output-format", "github", cwd=root)
    assert result.output.startswith(
        "::warning file=a%2Cb.py,line=1,col=53,endLine=1,endColumn=57,title=RAG-EXCESSIVE-TOP-K::20 retrieved results"
    )


def test_statistics_counts_per_rule(write):
    root = write({"a.py": BAD_TOP_K, "b.py": BAD_TOP_K})
    result = check(".", "--statistics", cwd=root)
    assert result.output.split()[:3] == ["2", "RAG-EXCESSIVE-TOP-K", "[medium]"]


def test_fingerprint_survives_edits_above_the_finding(write):
    root = write({"app.py": "def answer(q):\n    return llm.invoke(store.similarity_search(q, k=20))\n"})
    before = json.loads(check(".", "--output-format", "json", cwd=root).stdout)["findings"][0]
    (root / "app.py").write_text("import os\n\n\n" + (root / "app.py").read_text())
    after = json.loads(check(".", "--output-format", "json", cwd=root).stdout)["findings"][0]
    assert after["line"] == before["line"] + 3 and after["fingerprint"] == before["fingerprint"]


def test_rules_and_rule_commands():
    runner = CliRunner()
    listing = runner.invoke(main, ["rules"]).output
    assert any(line.startswith("RAG-EXCESSIVE-TOP-K  ") for line in listing.splitlines()) and "medium" in listing
    doc = runner.invoke(main, ["rule", "rag-excessive-top-k"]).output
    for part in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "max-top-k"):
        assert part in doc
    assert runner.invoke(main, ["rule", "NOPE"]).exit_code == 2


def test_version_and_module_entry_point():
    proc = subprocess.run([sys.executable, "-m", "chatbound", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("chatbound, version ")


def test_config_option_reads_a_named_file(write):
    root = write({"ci.toml": "[tool.chatbound]\nignore = ['RAG']\n", "app.py": BAD_TOP_K})
    assert check(".", "--config", "ci.toml", cwd=root).exit_code == 0
    missing = check(".", "--config", "nope.toml", cwd=root)
    assert missing.exit_code == 2 and "config file nope.toml does not exist" in missing.output


class _Stream:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_tty_and_never_with_no_color(monkeypatch):
    from chatbound.interfaces.cli import _colour

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert _colour(_Stream(True)) is True
    assert _colour(_Stream(False)) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert _colour(_Stream(True)) is False


def test_a_library_warning_is_one_plain_line_on_stderr(write):
    prompt = (
        "SYSTEM_PROMPT = '" + "Answer politely. " * 200 + "'\n"  # sent: a prompt is no finding on its name alone
        "client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': SYSTEM_PROMPT}])\n"
    )
    root = write({"pyproject.toml": "[tool.chatbound]\nencoding = 'no_such_encoding'\n", "app.py": prompt})
    proc = subprocess.run(
        [sys.executable, "-m", "chatbound", "check", ".", "--no-cache"], cwd=root, capture_output=True, text=True
    )
    warnings = [line for line in proc.stderr.splitlines() if "no_such_encoding" in line]
    assert proc.returncode == 1 and len(warnings) == 1
    assert warnings[0].startswith("warning: token encoding 'no_such_encoding' could not be loaded offline")


def test_a_very_long_source_line_is_clipped_under_the_finding(write):
    root = write({"app.py": "docs = llm.invoke(store.similarity_search(question, k=20))" + "  # " + "x" * 500 + "\n"})
    lines = check("app.py", cwd=root).output.splitlines()
    assert lines[2].endswith(" ...") and len(lines[2]) == len("1 | ") + 160 + 4
    assert lines[3] == "  | " + " " * 52 + "^^^^"


HISTORY = "history = []\nwhile True:\n    history.append(input())\n    print(client.chat.completions.create(model='m', messages=history))\n"


def test_the_github_annotations_are_the_shapes_the_output_page_shows(write):
    """docs/output.md shows one annotation per severity (`::error ...` for high); each printed line
    has the shape the page shows for its command, the help after `%0A`."""
    page = (ROOT / "docs" / "output.md").read_text(encoding="utf-8")
    shown = {m[0]: m[1] for m in re.findall(r"`::(\w+) (file=…[^`]*)::message%0Ahelp`", page)}
    root = write({"app.py": HISTORY, "rag.py": BAD_TOP_K})
    printed = check(".", "--output-format", "github", cwd=root).output.splitlines()
    assert {"error", "warning"} <= set(shown) and len(printed) == 2
    for entry in printed:
        command, props, message = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", entry).groups()
        assert re.sub(r"=[^,]*", "=…", props) == re.sub(r"=[^,]*", "=…", shown[command])
        assert "%0A" in message
