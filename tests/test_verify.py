"""`chatbound verify`: bounds read from the code, simulated, and judged."""

from __future__ import annotations



import pytest

from chatbound.verify import Bound, bounds_in, verify_bound

from conftest import invoke

TOOLS_AGENT = '''class Agent:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages%s], tools=TOOLS)
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
'''
PLAIN_BOT = '''class Bot:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-10:]])
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
'''
RING_WITH_SYSTEM = '''from collections import deque

class Kiosk:
    def __init__(self):
        self.turns = deque(maxlen=MAX)
        self.turns.append({"role": "system", "content": "Be brief."})

    def ask(self, text):
        self.turns.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=list(self.turns))
        self.turns.append({"role": "assistant", "content": reply.choices[0].message.content})

MAX = 15
'''


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
    # the system prompt (200) + 10 messages: the call after a user message carries
    # 5 user messages (100) and 5 replies (80): 200 + 500 + 400 = 1,100
    assert verdict.holds and verdict.worst_tokens == 1_100


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
    assert kept.arguments == {"max_tokens": 3000, "strategy": "last", "token_counter": "tokens",
                              "start_on": "human", "include_system": True}
    assert verify_bound(kept, turns=30).holds
    [(_, _, cut)] = bounds(template % bad)
    problems = verify_bound(Bound("trim_messages", cut.arguments, True, True), turns=30).problems
    assert any("lost the system prompt" in p for p in problems)
    assert any("orphaned tool result" in p for p in problems)


def test_a_window_the_session_never_fills_is_no_bound():
    verdict = verify_bound(Bound("slice", {"last_messages": 1000}, False, False), turns=20)
    # plain turns of 180 tokens (user 100 + reply 80) and the 200-token system prompt; turn n's
    # call carries the n - 1 earlier turns and its own user message:
    # turn 10: 200 + 9 * 180 + 100 = 1,920; turn 20: 200 + 19 * 180 + 100 = 3,720
    assert verdict.problems == [
        "still growing at turn 20 (1,920 tokens by turn 10, 3,720 after): the window is never reached"
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
    langchain = pytest.importorskip("langchain_core.messages")
    from chatbound.compaction import to_openai
    from chatbound.projection import system_message
    from chatbound.compaction.tokens import get_encoder
    from chatbound.verify import _trim, _turn

    count = get_encoder()
    history = to_openai([system_message(20, count)])
    for n, batches in enumerate([(1,), (), (2,), (1, 1), ()], 1):
        history += to_openai([m for step in _turn(n, batches, 100, count) for m in step])
    for budget in range(2, len(history) + 1):
        for start_on, include_system in ((None, False), ("human", False), ("human", True), (None, True)):
            arguments = {"max_tokens": budget, "strategy": "last", "token_counter": "len",
                         "start_on": start_on, "include_system": include_system}
            ours = [(m["role"], m.get("tool_call_id")) for m in _trim(history, arguments, len)]
            theirs = langchain.trim_messages(
                history, max_tokens=budget, token_counter=len, strategy="last",
                start_on=start_on, include_system=include_system,
            )
            roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
            assert ours == [(roles[m.type], getattr(m, "tool_call_id", None)) for m in theirs], (budget, start_on, include_system)
