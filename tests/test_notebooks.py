"""Jupyter notebooks: code cells checked as one module, findings placed by cell, fixed in place."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, ROOT, SARIF_SCHEMA, invoke

from chatbound.run.config import Settings
from chatbound.run.notebooks import Notebook, python_lines
from chatbound.run.runner import run

NOTEBOOKS = FIXTURES / "notebooks"
BAD = ROOT / "tests" / "data" / "notebooks"
RULE = "MEMORY-UNBOUNDED-HISTORY"


def code_cell(source: str, **fields) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": source.splitlines(keepends=True),
        **fields,
    }


def notebook(*cells: dict, **metadata) -> str:
    return (
        json.dumps(
            {"cells": list(cells), "metadata": metadata, "nbformat": 4, "nbformat_minor": 5},
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )


CHAT = """history = []


def ask(q):
    history.append({"role": "user", "content": q})
    r = client.chat.completions.create(model="gpt-4o", messages=history)
    history.append({"role": "assistant", "content": r.choices[0].message.content})
    return r
"""
SETUP = "from openai import OpenAI\n\nclient = OpenAI()\n"


@pytest.fixture
def sales(tmp_path):
    """A copy of the unbounded fixture notebook in a folder of its own, which declares the
    notebook's dependencies (where `--fix` declares the engine it imports)."""
    (tmp_path / "requirements.txt").write_text("openai\n")
    return Path(shutil.copy(NOTEBOOKS / "sales_chat.ipynb", tmp_path))


def lines_only_in(text: str, other: str) -> list[str]:
    return [line for line in text.splitlines() if line not in other.splitlines()]


# --- reading cells -----------------------------------------------------------------------------


def test_magics_and_shell_escapes_become_pass_on_their_own_lines():
    text = "%pip install openai\nfiles = !ls\nfor f in files:\n    !wc -l {f}\n    print(f)\nclient?\n%time run()"
    code, replaced = python_lines(text)
    assert code == "pass\nfiles = None\nfor f in files:\n    pass\n    print(f)\npass\npass"
    assert replaced == [0, 1, 3, 5, 6]


def test_percent_and_bang_inside_strings_brackets_and_continuations_stay_python():
    text = 'x = (1\n% 2)\nprompt = """\n%s is\n!important\n"""\ny = 3 \\\n% 2\n!ls\n'
    code, replaced = python_lines(text)
    assert code == 'x = (1\n% 2)\nprompt = """\n%s is\n!important\n"""\ny = 3 \\\n% 2\npass\n'
    assert replaced == [8]


def test_a_magic_continued_with_a_backslash_keeps_every_line():
    code, replaced = python_lines("!pip install \\\n    openai\nx = 1\n")
    assert code == "pass\npass\nx = 1\n"
    assert replaced == [0, 1]


def test_cells_are_numbered_from_one_with_markdown_and_skipped_cells_counted():
    text = notebook(
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
        code_cell("%%bash\nls\n"),
        code_cell("pip install openai\n"),  # automagic
        code_cell("def broken(:\n"),
        code_cell("a = 1\nb = 2"),
        code_cell(""),
        code_cell("c = 3\n"),
        code_cell("history = []  # `history` is an automagic too, but this compiles\n"),
    )
    read = Notebook.parse(text, "n.ipynb")
    assert read.code == "a = 1\nb = 2\nc = 3\nhistory = []  # `history` is an automagic too, but this compiles\n"
    assert read.index.numbers == (5, 7, 8) and read.index.starts == (1, 3, 4)
    assert read.index.warnings == ("n.ipynb:cell 4: not checked: syntax error at 1:12: invalid syntax",)


def test_a_notebook_in_another_language_has_no_code():
    text = notebook(code_cell("x <- c(1, 2)\n"), language_info={"name": "R"})
    assert Notebook.parse(text).code == ""


# --- findings, placed by cell, in every output --------------------------------------------------


def test_fixture_notebooks_report_by_cell_with_related_places_in_the_cell(monkeypatch):
    monkeypatch.chdir(NOTEBOOKS)
    result = run([NOTEBOOKS], Settings(root=NOTEBOOKS))
    assert result.errors == [] and result.files == 3
    (magics, sales) = result.active
    assert (sales.path, sales.span.where, sales.span.end_line, sales.span.end_col) == (
        "sales_chat.ipynb",
        "cell 3:6:69",
        6,
        76,
    )
    assert [(r.span.where, r.message) for r in sales.related] == [
        ("cell 3:1:1", "`history` is defined here"),
        ("cell 3:5:5", "`history` grows here"),
        ("cell 3:8:5", "`history` grows here"),
    ]
    assert "(cell 3, lines 5, 8)" in sales.message
    assert (magics.path, magics.span.where, magics.rule_id) == ("csv_digest_magics.ipynb", "cell 4:5:74", RULE)
    edits = [(e.span.where, e.text) for e in sales.fix.edits]
    assert edits == [
        ("cell 3:6:69", "bounded_view(history, last_turns=10)"),
        ("cell 2:4:1", "from chatbound.compaction import bounded_view\n"),
    ]


def test_text_and_concise_outputs_name_the_cell_and_show_its_line():
    text = invoke("check", "sales_chat.ipynb", "--no-cache", cwd=NOTEBOOKS).stdout
    assert text.startswith(f"sales_chat.ipynb:cell 3:6:69: {RULE} ")
    assert "6 |     response = client.chat.completions.create(model=MODEL, messages=history)\n" in text
    assert "  |" + " " * 69 + "^^^^^^^\n" in text
    assert "  = note: sales_chat.ipynb:cell 3:5:5: `history` grows here\n" in text
    concise = invoke("check", "sales_chat.ipynb", "--no-cache", "--output-format", "concise", cwd=NOTEBOOKS).stdout
    assert concise.startswith(f"sales_chat.ipynb:cell 3:6:69: {RULE} [high] ")


def test_json_output_carries_the_cell_as_ruff_does():
    out = invoke("check", ".", "--no-cache", "--output-format", "json", cwd=NOTEBOOKS).stdout
    document = json.loads(out)
    jsonschema.validate(document, json.loads((ROOT / "docs" / "json-output.schema.json").read_text()))
    sales = next(f for f in document["findings"] if f["path"] == "sales_chat.ipynb")
    assert (sales["cell"], sales["line"], sales["column"], sales["end_line"], sales["end_column"]) == (3, 6, 69, 6, 76)
    assert sales["related"][1] == {
        "message": "`history` grows here",
        "path": "sales_chat.ipynb",
        "cell": 3,
        "line": 5,
        "column": 5,
        "end_line": 5,
        "end_column": 58,
    }
    assert [(e["cell"], e["line"]) for e in sales["fix"]["edits"]] == [(3, 6), (2, 4)]


def _json_line_of(path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_sarif_places_a_notebook_finding_on_the_line_of_the_json_text_code_scanning_shows():
    log = json.loads(invoke("check", ".", "--no-cache", "--output-format", "sarif", cwd=NOTEBOOKS).stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    sales = next(
        r
        for r in log["runs"][0]["results"]
        if "sales_chat" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    )
    location = sales["locations"][0]
    line = _json_line_of(NOTEBOOKS / "sales_chat.ipynb", "messages=history)")
    # the JSON line is `    "    response = client...`: four spaces and a quote before the cell's text
    assert location["physicalLocation"]["region"] == {
        "startLine": line,
        "startColumn": 74,
        "endLine": line,
        "endColumn": 81,
    }
    assert location["properties"] == {"cell": 3, "cellLine": 6, "cellColumn": 69}
    assert sales["message"]["text"].startswith("Cell 3, line 6: `history`")
    assert "fixes" not in sales


def test_github_annotation_sits_on_the_json_line_and_names_the_cell():
    out = invoke("check", "sales_chat.ipynb", "--no-cache", "--output-format", "github", cwd=NOTEBOOKS).stdout
    line = _json_line_of(NOTEBOOKS / "sales_chat.ipynb", "messages=history)")
    assert out.startswith(
        f"::error file=sales_chat.ipynb,line={line},col=74,endLine={line},endColumn=81,"
        f"title={RULE}::cell 3:6:69: `history` is"
    )


def test_a_json_position_counts_escapes_and_non_ascii_text_before_it(tmp_path):
    source = 'label = "caf\u00e9 \\"quoted\\""\n' + SETUP + CHAT
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": [code_cell(source)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    read = Notebook.parse(path.read_bytes())
    (finding,) = run([path], Settings(root=tmp_path)).active
    assert finding.span.where == "cell 1:10:65"
    spot = read.file_span(finding.span)
    raw = path.read_text()
    offset = sum(len(line) for line in raw.splitlines(keepends=True)[: spot.line - 1]) + spot.col - 1
    assert raw[offset : offset + 7] == "history" and spot.end_col - spot.col == 7


# --- bad notebooks ----------------------------------------------------------------------------------


def test_a_notebook_that_is_not_json_is_one_error_line_and_the_run_goes_on(tmp_path):
    shutil.copy(BAD / "not_json.ipynb", tmp_path)
    shutil.copy(BAD / "not_a_notebook.ipynb", tmp_path)
    shutil.copy(NOTEBOOKS / "sales_chat.ipynb", tmp_path)
    result = invoke("check", ".", "--output-format", "concise", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: not_a_notebook.ipynb: not a notebook: the JSON has no `cells` list",
        "error: not_json.ipynb: not a notebook: invalid JSON at 6:3: Expecting property name enclosed in double quotes",
    ]
    assert result.stdout.startswith(f"sales_chat.ipynb:cell 3:6:69: {RULE}")


# --- the option, discovery, the cache -------------------------------------------------------------


def test_notebooks_are_found_by_default_and_turned_off_by_flag_or_config(tmp_path):
    shutil.copy(NOTEBOOKS / "sales_chat.ipynb", tmp_path)
    (tmp_path / "app.py").write_text("x = 1\n")
    assert "in 2 files" in invoke("check", ".", "--no-cache", cwd=tmp_path).stdout
    assert invoke("check", ".", "--no-cache", "--no-notebooks", cwd=tmp_path).stdout == "No findings in 1 file.\n"
    (tmp_path / "pyproject.toml").write_text("[tool.chatbound]\nnotebooks = false\n")
    assert invoke("check", ".", "--no-cache", cwd=tmp_path).stdout == "No findings in 1 file.\n"
    assert invoke("check", "sales_chat.ipynb", "--no-cache", cwd=tmp_path).stdout == "No findings in 0 files.\n"
    (tmp_path / "pyproject.toml").write_text("[tool.chatbound]\nnotebooks = 0\n")
    assert "`notebooks` must be true or false, got 0" in invoke("check", ".", cwd=tmp_path).stderr


def test_a_notebook_result_is_cached_by_the_notebook_content(sales):
    settings = Settings(root=sales.parent)
    first = run([sales.parent], settings, cache=True)
    again = run([sales.parent], settings, cache=True)
    assert again.parsed == [] and again.cached == 1
    assert [(f.span.where, f.fix.edits) for f in again.active] == [(f.span.where, f.fix.edits) for f in first.active]
    sales.write_text(sales.read_text().replace("West region grew 14%", "West region grew 15%"))  # an output only
    assert run([sales.parent], settings, cache=True).cached == 0


# --- fixes ---------------------------------------------------------------------------------------------


def test_fix_edits_only_the_cells_it_fixes_and_keeps_every_other_byte(sales):
    before = sales.read_text()
    result = invoke("check", ".", "--fix", "--no-cache", cwd=sales.parent)
    assert result.exit_code == 0 and "Fixed 1 finding." in result.stdout
    after = sales.read_text()
    assert lines_only_in(before, after) == [
        '    "    response = client.chat.completions.create(model=MODEL, messages=history)\\n",'
    ]
    assert lines_only_in(after, before) == [
        '    "from chatbound.compaction import bounded_view\\n",',
        '    "    response = client.chat.completions.create(model=MODEL, messages=bounded_view(history, last_turns=10))\\n",',
    ]
    assert after.endswith("}\n") and len(after.splitlines()) == len(before.splitlines()) + 1
    old, new = json.loads(before), json.loads(after)
    assert old["metadata"] == new["metadata"]
    for cell_before, cell_after in zip(old["cells"], new["cells"], strict=True):
        assert {k: v for k, v in cell_before.items() if k != "source"} == {
            k: v for k, v in cell_after.items() if k != "source"
        }
    ast.parse(Notebook.parse(after).code)
    assert invoke("check", ".", "--no-cache", cwd=sales.parent).stdout == "No findings in 1 file.\n"


def test_fix_around_magics_keeps_them_and_writes_the_source_in_the_files_own_style(tmp_path):
    cells = [
        {
            "cell_type": "code",
            "execution_count": 7,
            "metadata": {"scrolled": True},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": "ok\n"}],
            "source": source,
        }
        for source in ("%pip install openai\n" + SETUP, "!echo start\n" + CHAT + "%time ask('hi')")
    ]
    text = json.dumps(
        {"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells}, indent=2
    )  # no final newline
    path = tmp_path / "n.ipynb"
    path.write_text(text)
    (tmp_path / "requirements.txt").write_text("openai\n")
    assert invoke("check", ".", "--fix", "--no-cache", cwd=tmp_path).exit_code == 0
    fixed = json.loads(path.read_text())
    assert [cell["source"] for cell in fixed["cells"]] == [
        "%pip install openai\nfrom openai import OpenAI\nfrom chatbound.compaction import bounded_view\n\nclient = OpenAI()\n",
        "!echo start\n"
        + CHAT.replace("messages=history", "messages=bounded_view(history, last_turns=10)")
        + "%time ask('hi')",
    ]
    assert path.read_text() == json.dumps({**json.loads(text), "cells": fixed["cells"]}, indent=2)


def test_diff_shows_each_changed_cell_and_writes_nothing(sales):
    before = sales.read_bytes()
    result = invoke("check", ".", "--diff", "--no-cache", cwd=sales.parent)
    assert result.exit_code == 1 and sales.read_bytes() == before
    assert [line for line in result.stdout.splitlines() if line.startswith(("---", "+++", "+", "-", "\\"))] == [
        "--- a/sales_chat.ipynb:cell 2",
        "+++ b/sales_chat.ipynb:cell 2",
        "+from chatbound.compaction import bounded_view",
        "\\ No newline at end of file",
        "--- a/sales_chat.ipynb:cell 3",
        "+++ b/sales_chat.ipynb:cell 3",
        "-    response = client.chat.completions.create(model=MODEL, messages=history)",
        "+    response = client.chat.completions.create(model=MODEL, messages=bounded_view(history, last_turns=10))",
        "\\ No newline at end of file",
        "--- a/requirements.txt",
        "+++ b/requirements.txt",
        "+chatbound-compaction>=0.1.0",
    ]


@pytest.mark.parametrize("name", ["sales_chat_bounded.ipynb", "csv_digest_magics.ipynb"])
def test_fixture_notebooks_read_back_unchanged_when_no_cell_changes(name):
    read = Notebook.parse((NOTEBOOKS / name).read_bytes())
    assert read.with_cells(dict(read.sources)) == read.text


def test_the_language_server_places_a_notebook_finding_on_its_json_text():
    from pygls.workspace import TextDocument

    from chatbound.findings import Span
    from chatbound.interfaces.lsp import to_range

    text = (NOTEBOOKS / "sales_chat.ipynb").read_text()
    place = to_range(Span(6, 69, 6, 76, cell=3), TextDocument("file:///work/sales_chat.ipynb", text))
    line = _json_line_of(NOTEBOOKS / "sales_chat.ipynb", "messages=history)") - 1  # LSP lines count from 0
    assert (place.start.line, place.start.character, place.end.line, place.end.character) == (line, 73, line, 80)


def test_add_noqa_comments_the_cell_line_and_the_finding_is_then_suppressed(sales):
    before = sales.read_text()
    result = invoke("check", ".", "--add-noqa", "--no-cache", cwd=sales.parent)
    assert result.exit_code == 0 and "Added 1 ignore comment to 1 file." in result.stderr
    assert lines_only_in(sales.read_text(), before) == [
        '    "    response = client.chat.completions.create(model=MODEL, messages=history)'
        '  # chatbound: ignore[MEMORY-UNBOUNDED-HISTORY]\\n",'
    ]
    assert invoke("check", ".", "--no-cache", cwd=sales.parent).stdout == "No findings in 1 file. 1 suppressed.\n"


def test_a_warning_on_a_line_and_the_cost_table_name_the_cell(tmp_path):
    chat = CHAT.replace("history = []", "history = []  # chatbound: ignore")
    (tmp_path / "n.ipynb").write_text(notebook(code_cell(SETUP), code_cell(chat)))
    checked = invoke("check", ".", "--no-cache", cwd=tmp_path)
    assert "warning: n.ipynb:cell 2:1: `# chatbound: ignore` without rule ids" in checked.stderr
    assert (
        invoke("cost", ".", cwd=tmp_path)
        .stdout.splitlines()[2]
        .startswith("n.ipynb:cell 2:6:65  MEMORY-UNBOUNDED-HISTORY")
    )


def test_outputs_count_neither_against_the_size_limit_nor_in_the_pre_check(tmp_path):
    plot = {"data": {"image/png": "iVBORw0KGgo" * 300_000}, "metadata": {}, "output_type": "display_data"}  # 3.3 MB
    quiet = code_cell(
        "import math\nprint(math.pi)\n",
        outputs=[
            plot,
            {"name": "stdout", "output_type": "stream", "text": "history.append(x) client.chat.completions.create\n"},
        ],
    )
    (tmp_path / "plots.ipynb").write_text(notebook(quiet))
    result = run([tmp_path], Settings(root=tmp_path))
    assert (result.errors, result.files, result.parsed) == ([], 1, [])  # read, and not worth a parse: no chat code


def test_two_fixes_below_different_imports_add_the_import_once_above_both(tmp_path):
    later = CHAT.replace("history", "log").replace("def ask", "def note")
    (tmp_path / "n.ipynb").write_text(
        notebook(code_cell(SETUP), code_cell(CHAT), code_cell("import json\n"), code_cell(later))
    )
    (tmp_path / "requirements.txt").write_text("openai\n")
    assert "Fixed 2 findings." in invoke("check", ".", "--fix", "--no-cache", cwd=tmp_path).stdout
    sources = ["".join(cell["source"]) for cell in json.loads((tmp_path / "n.ipynb").read_text())["cells"]]
    assert (
        sources[0] == "from openai import OpenAI\nfrom chatbound.compaction import bounded_view\n\nclient = OpenAI()\n"
    )
    assert sources[2] == "import json\n" and "bounded_view(log, last_turns=10)" in sources[3]


def test_an_editor_syncing_a_notebook_gets_each_finding_on_its_cell(tmp_path):
    from test_lsp import TIMEOUT, Client, lsp_range

    client = Client(tmp_path)
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        uri = (tmp_path / "chat.ipynb").as_uri()
        texts = ["# Chat", "%pip install openai\n" + SETUP, CHAT]
        cells = [f"vscode-notebook-cell:{tmp_path}/chat.ipynb#C{n}" for n in range(3)]
        client.notify(
            "notebookDocument/didOpen",
            {
                "notebookDocument": {
                    "uri": uri,
                    "notebookType": "jupyter-notebook",
                    "version": 1,
                    "cells": [{"kind": 1 if n == 0 else 2, "document": cell} for n, cell in enumerate(cells)],
                },
                "cellTextDocuments": [
                    {"uri": cell, "languageId": "markdown" if n == 0 else "python", "version": 1, "text": text}
                    for n, (cell, text) in enumerate(zip(cells, texts))
                ],
            },
        )
        assert client.diagnostics(cells[0])["diagnostics"] == []
        assert client.diagnostics(cells[1])["diagnostics"] == []
        (finding,) = client.diagnostics(cells[2])["diagnostics"]
        assert (finding["code"], finding["range"]) == (RULE, lsp_range(5, 64, 5, 71))
        assert finding["relatedInformation"][1] == {
            "location": {"uri": cells[2], "range": lsp_range(4, 4, 4, 50)},
            "message": "`history` grows here",
        }
        fix, ignore = client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": cells[2]},
                "range": lsp_range(5, 66, 5, 66),
                "context": {"diagnostics": [finding]},
            },
        )
        assert fix["edit"]["changes"] == {  # the import goes into the cell that imports OpenAI, below the magic
            cells[2]: [{"range": lsp_range(5, 64, 5, 71), "newText": "bounded_view(history, last_turns=10)"}],
            cells[1]: [{"range": lsp_range(2, 0, 2, 0), "newText": "from chatbound.compaction import bounded_view\n"}],
        }
        assert ignore["edit"]["changes"] == {
            cells[2]: [
                {
                    "range": lsp_range(5, 0, 5, 72),
                    "newText": (
                        '    r = client.chat.completions.create(model="gpt-4o", messages=history)  # chatbound: ignore['
                        + RULE
                        + "]"
                    ),
                }
            ]
        }
        bounded = CHAT.replace("messages=history", "messages=history[-20:]")
        client.notify(
            "notebookDocument/didChange",
            {
                "notebookDocument": {"uri": uri, "version": 2},
                "change": {
                    "cells": {
                        "textContent": [{"document": {"uri": cells[2], "version": 2}, "changes": [{"text": bounded}]}]
                    }
                },
            },
        )
        assert client.diagnostics(cells[2])["diagnostics"] == []  # published after the pause, on the edited cell
        client.notify(
            "notebookDocument/didClose",
            {"notebookDocument": {"uri": uri}, "cellTextDocuments": [{"uri": cell} for cell in cells]},
        )
        assert client.diagnostics(cells[2])["diagnostics"] == []
        assert client.request("shutdown") is None
        client.notify("exit")
        assert client.proc.wait(timeout=TIMEOUT) == 0
    finally:
        client.close()
