"""SARIF that code scanning accepts unmodified: every field issue 7 lists, one test each."""

from __future__ import annotations

import json

import jsonschema
from conftest import SARIF_SCHEMA
from test_cli import BAD_TOP_K, check

from chatbound.analysis.rule import Rule
from chatbound.findings import Edit, Finding, Fix, Related, Severity, Span
from chatbound.interfaces.reporters.sarif import help_markdown, help_text, sarif_log
from chatbound.run.runner import RunResult
from chatbound.version import __version__

SCHEMA = json.loads(SARIF_SCHEMA.read_text())
CONSTANT_TOP_K = "TOP_K = 30\ndocs = llm.invoke(store.similarity_search(q, k=TOP_K))\n"


def sarif(root, *args) -> dict:
    result = check(".", "--output-format", "sarif", *args, cwd=root)
    log = json.loads(result.stdout)
    jsonschema.validate(log, SCHEMA)
    return log


def rule_descriptor(log: dict, rule_id: str) -> dict:
    return next(r for r in log["runs"][0]["tool"]["driver"]["rules"] if r["id"] == rule_id)


def test_driver_has_name_version_and_information_uri(write):
    driver = sarif(write({"app.py": BAD_TOP_K}))["runs"][0]["tool"]["driver"]
    assert driver["name"] == "chatbound"
    assert driver["version"] == __version__ and driver["semanticVersion"] == __version__
    assert driver["informationUri"] == "https://github.com/chatbound/chatbound"


def test_every_rule_carries_the_fields_code_scanning_shows(write):
    rule = rule_descriptor(sarif(write({"app.py": BAD_TOP_K})), "RAG-EXCESSIVE-TOP-K")
    assert rule["name"] == "rag-excessive-top-k"
    assert rule["shortDescription"]["text"] == "Retrieval puts more chunks into each prompt than the answer needs."
    full = rule["fullDescription"]["text"]
    assert full.startswith("Flags more retrieved results reaching a model") and len(full) <= 1024
    assert "Every retrieved chunk is pasted into the prompt" in full  # why it costs, after the overview
    assert "\n" not in full and "##" not in full
    assert rule["helpUri"] == "https://github.com/chatbound/chatbound/blob/main/docs/rules/RAG-EXCESSIVE-TOP-K.md"
    assert rule["properties"] == {"tags": ["cost", "llm", "rag"], "precision": "high", "problem.severity": "warning"}
    assert rule["defaultConfiguration"] == {"level": "warning"}


def test_help_markdown_is_the_rule_page_and_help_is_its_plain_text(write):
    rule = rule_descriptor(sarif(write({"app.py": BAD_TOP_K})), "RAG-EXCESSIVE-TOP-K")
    markdown, text = rule["help"]["markdown"], rule["help"]["text"]
    assert markdown.startswith("## What it does\nFlags more retrieved results reaching a model")
    assert "```python\ndocs = vector_store.similarity_search(question, k=20)\ncontext = " in markdown
    assert "- `max-top-k` (default `8`): Most results per retrieval before a finding." in markdown
    assert markdown.endswith(
        "More: [RAG-EXCESSIVE-TOP-K](https://github.com/chatbound/chatbound/blob/main/docs/rules/RAG-EXCESSIVE-TOP-K.md)"
    )
    assert text.startswith("What it does:\nFlags more retrieved results reaching a model")
    assert "\nWhy is this bad:\n" in text
    assert "\n    docs = vector_store.similarity_search(question, k=20)\n" in text
    assert "- max-top-k (default 8): Most results" in text
    for markup in ("```", "## ", "`", "]("):
        assert markup not in text


def test_full_description_of_a_long_rule_is_cut_at_a_word_within_1024_characters():
    class Wordy(Rule):
        __doc__ = "## What it does\n" + "Flags a pattern. " * 100 + "\n## Why is this bad?\nCost.\n"
        ID = "TEST-WORDY"

    text = Wordy.full_description()
    assert len(text) <= 1024 and text.endswith("pattern....")


def test_result_has_rule_index_level_message_location_and_fingerprint(write):
    run = sarif(write({"app.py": BAD_TOP_K}))["runs"][0]
    (result,) = run["results"]
    assert result["ruleId"] == "RAG-EXCESSIVE-TOP-K"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "RAG-EXCESSIVE-TOP-K"
    assert result["level"] == "warning"
    assert result["message"]["text"].startswith("20 retrieved results per query reach the model here (k=20)")
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "app.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 1, "startColumn": 53, "endLine": 1, "endColumn": 57}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    assert run["columnKind"] == "unicodeCodePoints"
    assert set(result["partialFingerprints"]) == {"chatbound/v1"}
    assert "suppressions" not in result and "fixes" not in result


def test_related_locations_have_ids_that_the_message_links_to(write):
    (result,) = sarif(write({"app.py": CONSTANT_TOP_K}))["runs"][0]["results"]
    assert result["relatedLocations"] == [
        {
            "id": 1,
            "message": {"text": "k is set here"},
            "physicalLocation": {
                "artifactLocation": {"uri": "app.py", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 1, "startColumn": 9, "endLine": 1, "endColumn": 11},
            },
        }
    ]
    assert result["message"]["text"].endswith(" See: [k is set here](1).")


def test_partial_fingerprint_survives_lines_added_above(write):
    root = write({"app.py": "def answer(q):\n    return llm.invoke(store.similarity_search(q, k=20))\n"})
    (before,) = sarif(root)["runs"][0]["results"]
    (root / "app.py").write_text("import os\n\n\n" + (root / "app.py").read_text())
    (after,) = sarif(root)["runs"][0]["results"]
    assert after["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert after["partialFingerprints"] == before["partialFingerprints"]


def test_suppressed_findings_are_results_with_an_in_source_suppression_only_when_asked(write):
    root = write({"app.py": BAD_TOP_K.rstrip() + "  # chatbound: ignore[RAG-EXCESSIVE-TOP-K] legal corpus\n"})
    assert sarif(root)["runs"][0]["results"] == []
    (result,) = sarif(root, "--show-suppressed")["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource", "justification": "legal corpus"}]


def test_a_finding_with_a_fix_becomes_a_sarif_fix_with_its_replacements():
    span = Span(3, 5, 3, 19)
    finding = Finding(
        rule_id="RAG-EXCESSIVE-TOP-K",
        severity=Severity.MEDIUM,
        message="m",
        path="src/app.py",
        span=span,
        related=(Related(Span(1, 1, 1, 6), "defined here"),),
        fingerprint="f" * 32,
        fix=Fix("Keep the last 20 messages", (Edit(span, "history[-20:]"), Edit(Span(9, 1, 9, 1), "import x\n"))),
    )
    log = sarif_log(RunResult(findings=[finding], files=1), [finding])
    jsonschema.validate(log, SCHEMA)
    (fix,) = log["runs"][0]["results"][0]["fixes"]
    assert fix == {
        "description": {"text": "Keep the last 20 messages"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": "src/app.py", "uriBaseId": "%SRCROOT%"},
                "replacements": [
                    {
                        "deletedRegion": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 19},
                        "insertedContent": {"text": "history[-20:]"},
                    },
                    {
                        "deletedRegion": {"startLine": 9, "startColumn": 1, "endLine": 9, "endColumn": 1},
                        "insertedContent": {"text": "import x\n"},
                    },
                ],
            }
        ],
    }


def test_files_that_could_not_be_analyzed_are_error_notifications(write):
    root = write({"app.py": BAD_TOP_K, "broken.py": "def (:\n"})
    (invocation,) = sarif(root)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"].startswith("syntax error at 1:")
    assert note["locations"] == [
        {"physicalLocation": {"artifactLocation": {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}}}
    ]


def test_a_tree_checked_module_by_module_is_a_note_notification(write):
    root = write({"app.py": "x = 1\n", "padding.py": "# padding\n" * (3 * (1 << 20) // 20)})
    (invocation,) = sarif(root, "--project-max-mb", "1")["runs"][0]["invocations"]
    assert invocation == {
        "executionSuccessful": True,
        "toolExecutionNotifications": [
            {
                "level": "note",
                "message": {
                    "text": "modules are checked one at a time, not linked through their imports: "
                    "1.5 MB of Python modules is above project-max-mb = 1 (raise it in "
                    "[tool.chatbound] or with --project-max-mb)"
                },
            }
        ],
    }


def test_a_clean_run_is_successful_with_no_notifications(write):
    run = sarif(write({"app.py": "x = 1\n"}))["runs"][0]
    assert run["invocations"] == [{"executionSuccessful": True}] and run["results"] == []


def test_help_texts_are_built_from_the_rule_docstring_only():
    from chatbound.run.registry import all_rules

    for rule in all_rules():
        assert help_markdown(rule).startswith(rule.doc())
        assert help_text(rule).startswith("What it does:")
