"""Bounds read by dataflow, both ways: a size test of something else bounds nothing, a local
rebound to a window before the send is bounded, and a slice that only drops a fixed few says so."""

from __future__ import annotations

from chatbound.rules.memory_unbounded_history import MemoryUnboundedHistory
from chatbound.run.pipeline import analyze_source

HEAD = "from openai import OpenAI\n\nclient = OpenAI()\nhistory = []\n\n\ndef turn(q):\n"
SEND = (
    "    history.append({'role': 'user', 'content': q})\n"
    "    reply = client.chat.completions.create(model='m', messages=history)\n"
    "    history.append({'role': 'assistant', 'content': reply.choices[0].message.content})\n"
    "    return reply\n"
)


def findings(source: str) -> list[tuple[int, int]]:
    result = analyze_source(source, "bot.py", [MemoryUnboundedHistory])
    assert result.error is None
    return [(f.span.line, f.span.col) for f in result.findings]


def test_a_clear_under_a_test_of_the_users_text_bounds_nothing():
    source = HEAD + "    if q == 'clear' or len(q) == 0:\n        history.clear()\n        return ''\n" + SEND
    assert findings(source) == [(12, 64)]


def test_a_reset_under_a_test_of_the_users_text_bounds_nothing():
    source = HEAD + "    global history\n    if len(q) == 0:\n        history = []\n        return ''\n" + SEND
    assert findings(source) == [(13, 64)]


def test_a_clear_or_reset_under_a_size_test_of_the_history_bounds_it():
    cleared = HEAD + "    if q == 'clear' or len(history) > 40:\n        history.clear()\n" + SEND
    reset = HEAD + "    global history\n    if len(history) > 40:\n        history = []\n" + SEND
    assert findings(cleared) == [] and findings(reset) == []


def test_a_local_rebound_to_a_window_just_before_the_send_is_bounded():
    source = (
        "from openai import OpenAI\n\nclient = OpenAI()\nsessions = {}\n\n\n"
        "def turn(sid, q):\n"
        "    h = sessions.setdefault(sid, [])\n"
        "    h.append({'role': 'user', 'content': q})\n"
        "    h = h[-10:]\n"
        "    reply = client.chat.completions.create(model='m', messages=h)\n"
        "    sessions[sid].append({'role': 'assistant', 'content': reply.choices[0].message.content})\n"
        "    return reply\n"
    )
    assert findings(source) == []
    assert findings(source.replace("    h = h[-10:]\n", "    h = h[1:]\n")) == [(11, 64)]  # a copy: still whole


def test_a_slice_that_does_not_bound_says_so():
    source = HEAD + SEND.replace("messages=history)", "messages=history[2:])")
    result = analyze_source(source, "bot.py", [MemoryUnboundedHistory])
    [finding] = result.findings
    assert (finding.span.line, finding.span.col) == (9, 64)
    assert "as `history[2:]`, a slice that drops a fixed few items and still grows with the session" in finding.message


def test_dropping_one_message_a_turn_while_a_turn_adds_two_bounds_nothing():
    """`if len(h) >= 25: del h[0]` then a user and an assistant message: one more each turn."""
    deleted = HEAD + "    if len(history) >= 25:\n        del history[0]\n" + SEND
    popped = HEAD + "    if len(history) >= 25:\n        history.pop(0)\n" + SEND
    assert findings(deleted) == [(11, 64)] and findings(popped) == [(11, 64)]


def test_dropping_as_many_as_a_turn_adds_or_until_under_the_limit_bounds_it():
    twice = HEAD + "    if len(history) >= 25:\n        history.pop(0)\n        history.pop(0)\n" + SEND
    until = HEAD + "    while len(history) >= 25:\n        del history[0]\n" + SEND
    assert findings(twice) == [] and findings(until) == []
