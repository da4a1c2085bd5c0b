"""The text output marks a span on every line it covers, as rustc and ruff do."""

from __future__ import annotations

from chatbound.findings import Finding, Severity, Span
from chatbound.interfaces.reporters.text import render_finding

CODE = (
    "def ask(text):\n"
    "    reply = client.chat.completions.create(\n"
    "        model=MODEL,\n"
    "\n"
    "        messages=history,\n"
    "    )\n"
)


def _finding(path, span: Span) -> Finding:
    return Finding("MEMORY-UNBOUNDED-HISTORY", Severity.HIGH, "sent whole.", str(path), span)


def test_a_multi_line_span_is_marked_on_each_line_it_covers(tmp_path):
    (tmp_path / "bot.py").write_text(CODE)
    lines = render_finding(_finding(tmp_path / "bot.py", Span(2, 13, 6, 6)), colour=False)
    assert lines[1:] == [
        "  |",
        "2 |     reply = client.chat.completions.create(",
        "  |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "3 |         model=MODEL,",
        "  |         ^^^^^^^^^^^^",
        "4 |",
        "5 |         messages=history,",
        "  |         ^^^^^^^^^^^^^^^^^",
        "6 |     )",
        "  |     ^",
    ]


def test_a_one_line_span_is_marked_under_its_columns_only(tmp_path):
    (tmp_path / "bot.py").write_text(CODE)
    lines = render_finding(_finding(tmp_path / "bot.py", Span(5, 18, 5, 25)), colour=False)
    assert lines[1:] == ["  |", "5 |         messages=history,", "  |                  ^^^^^^^"]


def test_a_long_span_loses_its_middle_lines_not_its_ends(tmp_path):
    body = "".join(f"    step{n}()\n" for n in range(1, 13))
    (tmp_path / "long.py").write_text("def run():\n" + body)
    lines = render_finding(_finding(tmp_path / "long.py", Span(2, 5, 13, 12)), colour=False)
    assert lines[1:] == [
        "   |",
        " 2 |     step1()",
        "   |     ^^^^^^^",
        " 3 |     step2()",
        "   |     ^^^^^^^",
        " 4 |     step3()",
        "   |     ^^^^^^^",
        " 5 |     step4()",
        "   |     ^^^^^^^",
        " 6 |     step5()",
        "   |     ^^^^^^^",
        "...",
        "12 |     step11()",
        "   |     ^^^^^^^^",
        "13 |     step12()",
        "   |     ^^^^^^^",
    ]
