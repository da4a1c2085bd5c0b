"""Cost projections against numbers worked out by hand.

The representative turn is sized to exactly `turn-tokens` (checked with the token counter
itself, message by message), so every projected number is arithmetic on T (turn tokens),
S (system tokens), N (turns) and W (window turns), done by hand below.
"""

from __future__ import annotations

import json

import libcst as cst

from chatbound.analysis.rule import Rule
from chatbound.compaction import event_text
from chatbound.compaction.tokens import count_tokens
from chatbound.cost.projection import project, representative_turn
from chatbound.findings import Severity
from chatbound.interfaces.reporters import json as json_reporter
from chatbound.interfaces.reporters import sarif as sarif_reporter
from chatbound.run.pipeline import analyze_source
from chatbound.run.runner import RunResult


class SendsHistory(Rule):
    """Flags `messages=[..., *history, ...]` for the projection tests."""

    ID = "MEMORY-UNBOUNDED-HISTORY"
    NAME = "test-unbounded"
    SEVERITY = Severity.HIGH
    SUMMARY = "test stand-in"

    def visit_StarredElement(self, node: cst.StarredElement) -> None:
        self.report(node.value, "sent whole", properties={"history": "history", "framework": "openai"})


def test_the_representative_turn_is_a_user_message_a_tool_call_its_result_and_a_reply():
    turn = representative_turn(1, 400, count_tokens)
    assert [m.role for m in turn] == ["user", "assistant", "tool", "assistant"]
    assert turn[1].tool_calls[0].id == turn[2].tool_call_id
    assert [count_tokens(event_text(m)) for m in turn] == [100, 40, 180, 80]


def test_fifty_turns_of_400_tokens_without_a_system_prompt():
    p = project(turns=50, turn_tokens=400).properties()
    # as written, turn n sends n * 400: 50 * 400 at turn 50; 400 * (1 + ... + 50) = 400 * 1275 over the session
    assert p["as_written"] == {"last_turn": 20_000, "session": 510_000}
    # last 10 turns: 400 * (1 + ... + 10) = 22,000 for turns 1-10, then 40 turns of 4,000 = 160,000
    assert p["window"] == {"last_turn": 4_000, "session": 182_000, "ratio": 2.8}  # 510,000 / 182,000 = 2.802
    # plus a one-turn (400-token) summary from turn 11 on: 40 * 400 = 16,000 more
    assert p["window_summary"] == {"last_turn": 4_400, "session": 198_000, "ratio": 2.58}  # 510/198 = 2.576
    assert (p["turns"], p["turn_tokens"], p["system_tokens"], p["window_turns"]) == (50, 400, 0, 10)


def test_a_small_session_with_a_system_prompt_keeps_the_prompt_in_every_view():
    p = project(turns=12, turn_tokens=100, system_tokens=30, window_turns=10)
    # as written: 30 + 100 n for n = 1..12
    assert p.as_written == (130, 230, 330, 430, 530, 630, 730, 830, 930, 1030, 1130, 1230)
    assert sum(p.as_written) == 12 * 30 + 100 * 78 == 8_160
    # window: grows to 30 + 1000, then stays (turns 11 and 12 keep 10 turns)
    assert p.window[-3:] == (1030, 1030, 1030)
    assert sum(p.window) == 10 * 30 + 100 * 55 + 2 * 1030 == 7_860
    # window + summary: the summary turn (100) joins from turn 11 on
    assert p.window_summary[-3:] == (1030, 1130, 1130)
    assert sum(p.window_summary) == 7_860 + 2 * 100 == 8_060


def test_a_window_larger_than_the_session_changes_nothing():
    p = project(turns=5, turn_tokens=200, window_turns=10)
    assert p.as_written == p.window == p.window_summary == (200, 400, 600, 800, 1000)
    assert p.ratio("window") == 1.0


SEND = """SYSTEM = "You answer billing questions for Acme in two sentences."
history = []

def answer(question):
    return client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "system", "content": SYSTEM}, *history, {"role": "user", "content": question}],
    )
"""


def test_findings_carry_the_projection_with_the_system_prompt_the_send_shows():
    result = analyze_source(SEND, "app.py", [SendsHistory], {"turn-tokens": 400})
    (finding,) = result.findings
    system = count_tokens("System: You answer billing questions for Acme in two sentences.")
    p = finding.properties["projection"]
    assert p["system_tokens"] == system
    assert p["as_written"] == {"last_turn": system + 20_000, "session": 50 * system + 510_000}
    assert p["window_summary"]["last_turn"] == system + 4_400
    assert finding.properties["notes"] == [
        f"cost: turn 50 sends {system + 20_000:,} tokens, {50 * system + 510_000:,} over the session; "
        f"last 10 turns + summary: {system + 4_400:,} and {50 * system + 198_000:,} "
        f"({round((50 * system + 510_000) / (50 * system + 198_000), 2)}x less; "
        f"plain window {round((50 * system + 510_000) / (50 * system + 182_000), 2)}x)"
    ]
    # the rule's own facts stay
    assert finding.properties["history"] == "history"


def test_turn_tokens_option_sizes_the_turn():
    result = analyze_source("send(messages=[*history])\n", "app.py", [SendsHistory], {"turn-tokens": 100})
    p = result.findings[0].properties["projection"]
    assert p["system_tokens"] == 0 and p["as_written"]["last_turn"] == 5_000


def test_json_and_sarif_carry_the_projection(monkeypatch):
    monkeypatch.setattr(sarif_reporter, "all_rules", lambda: (SendsHistory,))
    result = analyze_source("send(messages=[*history])\n", "app.py", [SendsHistory], {"turn-tokens": 400})
    run = RunResult(findings=result.findings, files=1)
    document = json.loads(json_reporter.render(run, run.findings))
    assert document["findings"][0]["properties"]["projection"]["as_written"]["session"] == 510_000
    sarif = sarif_reporter.sarif_log(run, run.findings)
    assert sarif["runs"][0]["results"][0]["properties"]["projection"]["window"]["last_turn"] == 4_000


def test_other_rules_get_no_projection():
    class Other(SendsHistory):
        ID = "RAG-EXCESSIVE-TOP-K"

    result = analyze_source("send(messages=[*history])\n", "app.py", [Other], {})
    assert "projection" not in result.findings[0].properties


def test_a_system_prompt_imported_from_a_sibling_module_is_counted_and_recorded(tmp_path):
    (tmp_path / "prompts.py").write_text('SYSTEM = "You are the billing desk of Acme."\n')
    code = 'from .prompts import SYSTEM as PROMPT\nsend(messages=[{"role": "system", "content": PROMPT}, *history])\n'
    result = analyze_source(code, "app.py", [SendsHistory], {"turn-tokens": 400}, directory=str(tmp_path))
    p = result.findings[0].properties["projection"]
    assert p["system_tokens"] == count_tokens("System: You are the billing desk of Acme.")
    assert result.data_files == [str(tmp_path / "prompts.py")]
    unreadable = analyze_source(code, "app.py", [SendsHistory], {"turn-tokens": 400}, directory=str(tmp_path / "nope"))
    assert unreadable.findings[0].properties["projection"]["system_tokens"] == 0
