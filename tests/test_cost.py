"""`chatbound cost`: the table, the terminal chart and the SVG, numbers worked out by hand."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

from conftest import FIXTURES, invoke

from chatbound.compaction.tokens import count_tokens
from chatbound.cost.projection import project
from chatbound.cost.tables import Costed, chart
from chatbound.findings import Finding, Severity, Span


def cost(*args, cwd):
    return invoke("cost", *args, cwd=cwd)


def row(output: str, location: str) -> list[str]:
    line = next(l for l in output.splitlines() if l.startswith(location))
    return line.split()


def system_tokens() -> int:
    """The support assistant's system prompt (imported from prompts.py) as the engine counts it."""
    namespace: dict = {}
    exec((FIXTURES / "support_assistant" / "prompts.py").read_text(), namespace)
    return count_tokens("System: " + namespace["SYSTEM_PROMPT"])


def test_cost_table_for_the_support_assistant_with_prices_and_an_svg(tmp_path):
    shutil.copytree(FIXTURES / "support_assistant", tmp_path / "app")
    result = cost(".", "--price-in", "2", "--plot", tmp_path / "growth.svg", cwd=tmp_path / "app")
    assert result.exit_code == 0
    s = system_tokens()
    assert s == 513
    # 50 turns of 400 after a 513-token system prompt: 513 + 20,000 at turn 50, and
    # 50 * 513 + 400 * 1275 = 25,650 + 510,000 = 535,650 in all; bounded: 513 + 4,000 + a
    # 400-token summary = 4,913 at turn 50 and 25,650 + 198,000 = 223,650 in all;
    # 535,650 / 223,650 = 2.395; at $2/Mtok: $1.0713 and $0.4473
    assert row(result.output, "support_service.py:23:70") == [
        "support_service.py:23:70",
        "MEMORY-UNBOUNDED-HISTORY",
        "20,513",
        "4,913",
        "535,650",
        "223,650",
        "2.4x",
        "$1.07",
        "$0.45",
    ]
    # the escalation hands support_service.py's conversation (linked) to a specialist whose
    # messages carry no system prompt: 400 * 50 = 20,000 at turn 50, 400 * 1275 = 510,000 in all
    assert row(result.output, "escalation.py:37:16") == [
        "escalation.py:37:16",
        "AGENT-OVERSIZED-HANDOFF",
        "20,000",
        "4,400",
        "510,000",
        "198,000",
        "2.58x",
        "$1.02",
        "$0.40",
    ]
    assert "# as written  o last 10 turns + summary  . last 10 turns" in result.output
    svg = ET.parse(tmp_path / "growth.svg").getroot()
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert [len(l.get("points").split()) for l in lines] == [50, 50, 50]
    top_of_written = lines[0].get("points").split()[-1]
    assert top_of_written.endswith(",40.0")  # the last as-written point is the top of the plot
    assert svg.find("{http://www.w3.org/2000/svg}text").text == "Tokens sent per turn: support_service.py:23:70"


def test_turns_and_turn_tokens_options(tmp_path):
    shutil.copytree(FIXTURES / "support_assistant", tmp_path / "app")
    result = cost(".", "--turns", "12", "--turn-tokens", "100", cwd=tmp_path / "app")
    # as written 513 + 100 n: 1,713 at turn 12, 12 * 513 + 100 * 78 = 13,956; bounded: 5,500 for
    # turns 1-10, then 1,000 + 100 summary twice, + 12 * 513 = 13,856; 13,956 / 13,856 = 1.007
    assert row(result.output, "support_service.py:23:70")[2:] == ["1,713", "1,613", "13,956", "13,856", "1.01x"]
    assert "12 turns of 100 tokens" in result.output


def test_no_findings_says_so(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    result = cost(".", cwd=tmp_path)
    assert result.exit_code == 0 and result.output.strip() == "No history findings to cost."


def test_terminal_chart_marks_each_series():
    finding = Finding("MEMORY-UNBOUNDED-HISTORY", Severity.HIGH, "m", "a.py", Span(3, 5, 3, 9))
    text = chart(Costed(finding, project(turns=4, turn_tokens=100, window_turns=2)), height=4)
    # as written 100, 200, 300, 400; window of 2 turns: 100, 200, 200, 200; + summary: 100, 200, 300, 300
    assert text.splitlines()[:5] == [
        "tokens sent per turn, a.py:3:5",
        "400 |   #",
        "    |  #o",
        "    | #..",
        "  0 |#   ",
    ]
    assert text.splitlines()[-1] == "# as written  o last 2 turns + summary  . last 2 turns"
