"""Adopting chatbound on an existing codebase: baselines and `--add-noqa`."""

from __future__ import annotations

import json
import os
import stat

from test_cli import BAD_TOP_K, check

from chatbound.run.noqa import scan, with_ids

BAD_IN_FUNCTION = "def answer(q):\n    return llm.invoke(store.similarity_search(q, k=20))\n"


def concise(root, *args) -> list[str]:
    return check(".", "--output-format", "concise", *args, cwd=root).output.splitlines()


# --- baselines --------------------------------------------------------------------------


def test_write_baseline_records_findings_sorted_and_versioned(write):
    root = write({"b.py": BAD_TOP_K, "a.py": BAD_IN_FUNCTION, "ok.py": "x = 1\n"})
    result = check(".", "--write-baseline", "chatbound-baseline.json", cwd=root)
    assert result.exit_code == 0 and "Wrote 2 findings to chatbound-baseline.json." in result.output
    document = json.loads((root / "chatbound-baseline.json").read_text())
    assert document["version"] == 1 and document["tool"] == "chatbound"
    assert [(e["path"], e["rule_id"], e["code"]) for e in document["findings"]] == [
        ("a.py", "RAG-EXCESSIVE-TOP-K", "k=20"),
        ("b.py", "RAG-EXCESSIVE-TOP-K", "k=20"),
    ]
    assert all(len(e["fingerprint"]) == 32 for e in document["findings"])
    assert "line" not in document["findings"][0]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(root / "chatbound-baseline.json").st_mode) == 0o666 & ~umask


def test_rewriting_a_baseline_for_the_same_code_changes_no_byte(write):
    root = write({"a.py": BAD_IN_FUNCTION, "b.py": BAD_TOP_K})
    check(".", "--write-baseline", "base.json", cwd=root)
    first = (root / "base.json").read_bytes()
    check(".", "--write-baseline", "base.json", cwd=root)
    assert (root / "base.json").read_bytes() == first


def test_baseline_hides_recorded_findings_even_after_lines_move_and_reports_new_ones(write):
    root = write({"app.py": BAD_IN_FUNCTION})
    check(".", "--write-baseline", "base.json", cwd=root)
    assert check(".", "--baseline", "base.json", cwd=root).exit_code == 0
    (root / "app.py").write_text(
        "import os\n\n\n"
        + BAD_IN_FUNCTION
        + "\n\ndef other(q):\n    return llm.invoke(store.similarity_search(q, k=30))\n"
    )
    assert [l.split(": ")[0] for l in concise(root, "--baseline", "base.json")] == ["app.py:9:50"]
    assert check(".", "--baseline", "base.json", cwd=root).exit_code == 1
    assert len(concise(root)) == 2  # without the baseline both are reported


def test_the_same_code_in_another_function_is_a_new_finding(write):
    root = write({"app.py": BAD_IN_FUNCTION})
    check(".", "--write-baseline", "base.json", cwd=root)
    (root / "app.py").write_text(BAD_IN_FUNCTION + BAD_IN_FUNCTION.replace("answer", "again"))
    assert [l.split(": ")[0] for l in concise(root, "--baseline", "base.json")] == ["app.py:4:50"]


def test_suppressed_findings_are_not_written_to_the_baseline(write):
    root = write({"a.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore[RAG]\n", "b.py": BAD_TOP_K})
    check(".", "--write-baseline", "base.json", cwd=root)
    assert [e["path"] for e in json.loads((root / "base.json").read_text())["findings"]] == ["b.py"]


def test_a_bad_baseline_is_a_one_line_error(write):
    root = write({"a.py": BAD_TOP_K, "old.json": '{"version": 99, "findings": []}', "bad.json": "{"})
    for name, message in (
        ("old.json", "baseline old.json has version 99; this chatbound reads version 1"),
        ("bad.json", "baseline bad.json is not valid JSON"),
        ("none.json", "cannot read baseline none.json"),
    ):
        result = check(".", "--baseline", name, cwd=root)
        assert result.exit_code == 2 and result.output.count("\n") == 1 and message in result.output


def test_baseline_applies_to_sarif_output(write):
    root = write({"a.py": BAD_TOP_K})
    check(".", "--write-baseline", "base.json", cwd=root)
    result = check(".", "--baseline", "base.json", "--output-format", "sarif", cwd=root)
    assert json.loads(result.stdout)["runs"][0]["results"] == []


# --- add-noqa ---------------------------------------------------------------------------


def test_add_noqa_comments_each_finding_and_a_rerun_reports_nothing(write):
    root = write({"a.py": BAD_TOP_K, "b.py": BAD_IN_FUNCTION, "ok.py": "x = 1\n"})
    result = check(".", "--add-noqa", cwd=root)
    assert result.exit_code == 0 and "Added 2 ignore comments to 2 files." in result.output
    assert (root / "a.py").read_text() == BAD_TOP_K.rstrip() + "  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]\n"
    assert (root / "b.py").read_text().splitlines()[1].endswith("k=20))  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]")
    assert (root / "ok.py").read_text() == "x = 1\n"
    rerun = check(".", cwd=root)
    assert rerun.exit_code == 0 and "No findings in 3 files. 2 suppressed." in rerun.output


def test_add_noqa_merges_with_an_existing_ignore_and_keeps_other_comments(write):
    root = write(
        {
            "a.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore[MEMORY-UNBOUNDED-HISTORY] kept on purpose\n",
            "b.py": BAD_TOP_K.rstrip() + "  # type: ignore[attr-defined]\n",
        }
    )
    check(".", "--add-noqa", cwd=root)
    assert (root / "a.py").read_text() == (
        BAD_TOP_K.rstrip() + "  # chatbound: ignore[MEMORY-UNBOUNDED-HISTORY, RAG-EXCESSIVE-TOP-K] kept on purpose\n"
    )
    assert (root / "b.py").read_text() == (
        BAD_TOP_K.rstrip() + "  # type: ignore[attr-defined]  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]\n"
    )
    assert check(".", cwd=root).exit_code == 0


def test_add_noqa_uses_the_statement_line_when_the_reported_line_ends_in_a_string(write):
    source = 'answer = llm.invoke(f"""{store.similarity_search(q, k=20)}\n    Answer briefly.""")\n'
    statement = 'answer = llm.invoke(\n    f"""{store.similarity_search(q, k=20)}\n    Answer briefly.""",\n)\n'
    root = write({"string_first.py": source, "statement.py": statement})
    assert [l.split(": ")[0] for l in concise(root)] == ["statement.py:2:37", "string_first.py:1:53"]
    result = check(".", "--add-noqa", cwd=root)
    # string_first.py: the statement's first line ends inside the string; nothing can go there
    assert "string_first.py:1: no line of the statement can hold a comment" in result.output
    assert (root / "string_first.py").read_text() == source
    assert (root / "statement.py").read_text().splitlines()[
        0
    ] == "answer = llm.invoke(  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]"
    assert [l.split(": ")[0] for l in concise(root)] == ["string_first.py:1:53"]


def test_add_noqa_keeps_permissions_crlf_and_the_coding_cookie(write):
    source = "# -*- coding: latin-1 -*-\r\n# caf\xe9\x0c\r\n\x0c\r\n" + BAD_TOP_K.replace("\n", "\r\n")
    root = write({"a.py": source.encode("latin-1")})
    os.chmod(root / "a.py", 0o751)
    check(".", "--add-noqa", cwd=root)
    data = (root / "a.py").read_bytes()
    assert data == (source.replace("k=20))\r\n", "k=20))  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]\r\n")).encode(
        "latin-1"
    )
    assert stat.S_IMODE(os.stat(root / "a.py").st_mode) == 0o751
    assert [p.name for p in root.iterdir() if p.name != ".chatbound_cache"] == ["a.py"]  # no temp file left behind


def test_lines_that_end_in_a_string_or_a_continuation_cannot_hold_a_comment():
    lines = scan('x = """a\nb""" + \\\n  y  # c\n')
    assert lines.commentable == {3} and lines.comments == {3: 5}


def test_with_ids_merges_without_duplicates_and_appends_otherwise():
    line = "f()  # chatbound: ignore[RAG-EXCESSIVE-TOP-K] why"
    assert with_ids(line, {"RAG-EXCESSIVE-TOP-K"}, 5) == line
    assert with_ids("f()  # noqa", {"B", "A"}, 5) == "f()  # noqa  # chatbound: ignore[A, B]"
    assert with_ids('f("# chatbound: ignore[X]")', {"A"}, None) == 'f("# chatbound: ignore[X]")  # chatbound: ignore[A]'


def test_a_baseline_written_at_the_root_holds_when_the_check_starts_in_a_subfolder(write):
    root = write({"pyproject.toml": "[tool.chatbound]\n", "app/chat.py": BAD_IN_FUNCTION, "app/rag.py": BAD_TOP_K})
    check(".", "--write-baseline", "base.json", cwd=root)
    from_root = json.loads(check(".", "--output-format", "json", cwd=root).output)
    from_app = json.loads(check(".", "--output-format", "json", cwd=root / "app").output)
    # shown paths follow the working directory; identities do not
    assert sorted(f["path"] for f in from_root["findings"]) == ["app/chat.py", "app/rag.py"]
    assert sorted(f["path"] for f in from_app["findings"]) == ["chat.py", "rag.py"]
    assert sorted(f["fingerprint"] for f in from_root["findings"]) == sorted(
        f["fingerprint"] for f in from_app["findings"]
    )
    result = check(".", "--baseline", "../base.json", "--output-format", "concise", cwd=root / "app")
    assert result.exit_code == 0 and "RAG-EXCESSIVE-TOP-K" not in result.output


def test_add_noqa_counts_one_comment_and_one_file_in_the_singular(write):
    root = write({"a.py": "docs = llm.invoke(store.similarity_search(question, k=20))\n"})
    result = check(".", "--add-noqa", cwd=root)
    assert result.exit_code == 0 and "Added 1 ignore comment to 1 file." in result.output


def test_a_baseline_written_from_a_subfolder_records_paths_relative_to_the_project_root(write):
    """docs/configuration.md: the paths in baselines are relative to the project root."""
    root = write({"pyproject.toml": "[tool.chatbound]\n", "src/app/rag.py": BAD_TOP_K})
    check(".", "--write-baseline", "base.json", cwd=root / "src")
    document = json.loads((root / "src" / "base.json").read_text())
    assert [entry["path"] for entry in document["findings"]] == ["src/app/rag.py"]
    assert check("src", "--baseline", "src/base.json", cwd=root).exit_code == 0
