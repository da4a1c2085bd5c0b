"""`chatbound verify`: bounds read from the code, simulated, and judged."""

from __future__ import annotations

from pathlib import Path

from conftest import invoke, require

from chatbound.cost.verify import Bound, verify_bound
from chatbound.run.verification import bounds_in

TOOLS_AGENT = """class Agent:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages%s], tools=TOOLS)
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
"""
PLAIN_BOT = """class Bot:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-10:]])
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
"""
RING_WITH_SYSTEM = """from collections import deque

class Kiosk:
    def __init__(self):
        self.turns = deque(maxlen=MAX)
        self.turns.append({"role": "system", "content": "Be brief."})

    def ask(self, text):
        self.turns.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=list(self.turns))
        self.turns.append({"role": "assistant", "content": reply.choices[0].message.content})

MAX = 15
"""


def bounds(code):
    findings, error = bounds_in(code, "app.py", {})
    assert error is None
    return [(f.span.line, f.span.col, f.properties["bound"]) for f in findings]


def test_a_count_slice_over_tool_traffic_is_read_and_fails_with_an_orphaned_tool_result():
    [(line, col, bound)] = bounds(TOOLS_AGENT % "[-20:]")
    assert (line, col) == (4, 83)
    assert bound == Bound("slice", {"last_messages": 20}, system_in_history=False, tool_traffic=True)
    verdict = verify_bound(bound, turns=20)
    assert not verdict.holds
    assert any("the window starts with an orphaned tool result" in p for p in verdict.problems)


def test_a_turn_aware_bounded_view_over_the_same_traffic_holds():
    code = "from chatbound.compaction import bounded_view\n" + (TOOLS_AGENT % "").replace(
        "*self.messages]", "*bounded_view(self.messages, last_turns=8)]"
    )
    [(_, _, bound)] = bounds(code)
    assert bound.kind == "bounded_view" and bound.arguments == {"last_turns": 8}
    verdict = verify_bound(bound, turns=40)
    assert verdict.holds and verdict.problems == []
    # 8 turns of the heaviest rhythm (a turn of 400 + tool rounds of 220 each) stay under 8 * 1,500
    assert 0 < verdict.worst_tokens < 12_000


def test_a_plain_chat_window_with_the_system_prompt_in_front_holds():
    [(_, _, bound)] = bounds(PLAIN_BOT)
    assert bound == Bound("slice", {"last_messages": 10}, system_in_history=False, tool_traffic=False)
    verdict = verify_bound(bound, turns=30)
    # plain turns of 400 tokens: a user message of 222 (its share of a tool turn, 100 of 180, scaled to 400)
    # and a reply of 178. The system prompt (200) + 10 messages: the call after a user message
    # carries 5 user messages and 5 replies: 200 + 5 * 222 + 5 * 178 = 2,200
    assert verdict.holds and verdict.worst_tokens == 2_200


def test_a_ring_buffer_that_holds_the_system_prompt_loses_it():
    [(line, col, bound)] = bounds(RING_WITH_SYSTEM)
    assert (line, col) == (5, 22)
    assert bound == Bound("deque", {"maxlen": 15}, system_in_history=True, tool_traffic=False)
    verdict = verify_bound(bound, turns=20)
    assert verdict.problems == ["turn 8: the window lost the system prompt"]


def test_trim_messages_keeping_the_system_and_starting_on_human_holds_and_without_them_fails():
    good = "trim_messages(history, max_tokens=3000, strategy='last', token_counter=llm, start_on='human', include_system=True)"
    bad = "trim_messages(history, max_tokens=3000, strategy='last', token_counter=llm)"
    template = 'history = [SystemMessage("Be brief.")]\ndef ask(text):\n    history.append({"role": "tool", "content": text})\n    llm.invoke(%s)\n'
    [(_, _, kept)] = bounds(template % good)
    assert kept.arguments == {
        "max_tokens": 3000,
        "strategy": "last",
        "token_counter": "tokens",
        "start_on": "human",
        "include_system": True,
    }
    assert verify_bound(kept, turns=30).holds
    [(_, _, cut)] = bounds(template % bad)
    problems = verify_bound(Bound("trim_messages", cut.arguments, True, True), turns=30).problems
    assert any("lost the system prompt" in p for p in problems)
    assert any("orphaned tool result" in p for p in problems)


def test_a_window_the_session_never_fills_is_no_bound():
    verdict = verify_bound(Bound("slice", {"last_messages": 1000}, False, False), turns=20)
    # plain turns of 400 tokens (user 222 + reply 178) and the 200-token system prompt; turn n's
    # call carries the n - 1 earlier turns and its own user message:
    # turn 10: 200 + 9 * 400 + 222 = 4,022; turn 20: 200 + 19 * 400 + 222 = 8,022
    assert verdict.problems == [
        "still growing at turn 20 (4,022 tokens by turn 10, 8,022 after): the window is never reached"
    ]


def test_unreadable_sizes_and_litellm_trim_messages_are_not_guessed():
    assert bounds(TOOLS_AGENT % "[-n:]") == []
    litellm = "from litellm import trim_messages\nmessages = []\nmessages.append({'role': 'user', 'content': t})\nx = completion(model='m', messages=trim_messages(messages, model='gpt-4o', max_tokens=800))\n"
    assert bounds(litellm) == []


def verify(*args, cwd):
    return invoke("verify", *args, cwd=cwd)


def test_verify_command_exits_1_when_a_bound_fails_and_0_when_all_hold(write):
    root = write({"agent.py": TOOLS_AGENT % "[-20:]", "bot.py": PLAIN_BOT})
    failing = verify(".", "--turns", "20", cwd=root)
    assert failing.exit_code == 1
    lines = failing.output.splitlines()
    assert lines[0].startswith("agent.py:4:83: self.messages[-20:] [slice(last_messages=20)] FAILS: worst ")
    assert lines[1].startswith("bot.py:4:83: self.messages[-10:] [slice(last_messages=10)] holds: worst ")
    assert lines[-1] == "Verified 2 bounds: 1 hold, 1 fail."
    passing = verify("bot.py", "--turns", "20", cwd=root)
    assert passing.exit_code == 0 and passing.output.splitlines()[-1] == "Verified 1 bound: 1 hold, 0 fail."


def test_the_trim_messages_emulation_matches_langchain_by_message_count():
    langchain = require("langchain_core.messages")
    from chatbound.compaction import to_openai
    from chatbound.compaction.tokens import get_encoder
    from chatbound.cost.projection import system_message
    from chatbound.cost.verify import _trim, _turn

    count = get_encoder()
    history = to_openai([system_message(20, count)])
    for n, batches in enumerate([(1,), (), (2,), (1, 1), ()], 1):
        history += to_openai([m for step in _turn(n, batches, 100, count) for m in step])
    for budget in range(2, len(history) + 1):
        for start_on, include_system in ((None, False), ("human", False), ("human", True), (None, True)):
            arguments = {
                "max_tokens": budget,
                "strategy": "last",
                "token_counter": "len",
                "start_on": start_on,
                "include_system": include_system,
            }
            ours = [(m["role"], m.get("tool_call_id")) for m in _trim(history, arguments, len)]
            theirs = langchain.trim_messages(
                history,
                max_tokens=budget,
                token_counter=len,
                strategy="last",
                start_on=start_on,
                include_system=include_system,
            )
            roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
            assert ours == [(roles[m.type], getattr(m, "tool_call_id", None)) for m in theirs], (
                budget,
                start_on,
                include_system,
            )


def test_cost_and_verify_state_their_turn_model_and_agree_on_the_same_window(tmp_path):
    """`chatbound cost` on the help desk as written and `chatbound verify` on it fixed (its send
    wrapped in `bounded_view(history, last_turns=10)`): the same 10-turn window gives the same
    tokens in both, and each output says how its count differs from the other's."""
    import json
    import shutil

    from conftest import FIXTURES

    written, fixed = (
        Path(shutil.copytree(FIXTURES / "apps" / "helpdesk", tmp_path / name)) for name in ("as_written", "fixed")
    )
    assert invoke("check", "--fix", ".", cwd=fixed).exit_code == 0
    costed = invoke("cost", ".", cwd=written).output
    model = "50 turns of 400 tokens (a user message, one tool call and its result, a reply; cl100k_base)"
    assert f"{model}, after the system prompt each send shows (0 tokens)" in costed
    assert "`chatbound verify` counts what one model call sends (before the turn's reply" in costed
    projection = json.loads(invoke("check", "--output-format", "json", ".", cwd=written).output)["findings"][0][
        "properties"
    ]["projection"]
    assert projection["window"]["last_turn"] == 4_000  # 10 turns of 400, no system prompt at the send

    verified = invoke("verify", ".", cwd=fixed).output.splitlines()
    # the most one call sends: the 200-token prompt verify assumes when the send shows none, 9
    # earlier plain turns of 400 and the user message of 222: 4,022; at the end of turn 50 in
    # cost's session: the last 10 whole turns, 4,000, cost's plain window
    assert verified[0] == (
        "helpdesk.py:16:74: bounded_view(history, last_turns=10) [bounded_view(last_turns=10)] holds: worst 4,022 "
        "tokens per call; 4,000 at the end of turn 50 as `chatbound cost` counts"
    )
    assert f"The second count is `chatbound cost`'s: {model} after the system prompt the send shows" in verified[1]
    assert "worst = the most one model call sends (the turn's reply is not yet in it)" in verified[1]


def test_verify_counts_the_system_prompt_the_send_shows_as_cost_does(write):
    root = write(
        {
            "app.py": (
                "from chatbound.compaction import bounded_view\n"
                f"SYSTEM = '{'Be brief. ' * 100}'\n"
                "history = []\n"
                "def ask(q):\n"
                "    history.append({'role': 'user', 'content': q})\n"
                "    r = client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': SYSTEM}, "
                "*bounded_view(history, last_turns=10)])\n"
                "    history.append({'role': 'assistant', 'content': r.choices[0].message.content})\n"
            )
        }
    )
    [finding], _ = bounds_in((root / "app.py").read_text(), "app.py", {})
    system = finding.properties["bound"].send_system_tokens
    assert system > 200  # "System: " and 100 times "Be brief. ", counted as cost counts it
    verdict = verify_bound(finding.properties["bound"], turns=20)
    assert verdict.worst_tokens == system + 9 * 400 + 222
    assert verdict.cost_tokens == system + 10 * 400
