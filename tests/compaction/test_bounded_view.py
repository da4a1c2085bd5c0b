"""bounded_view over plain OpenAI and Anthropic lists, and the adapters."""

import copy
import json

import pytest
from conftest import require

from chatbound.compaction import (
    Message,
    ToolCall,
    bounded_view,
    from_anthropic,
    from_openai,
    to_anthropic,
    to_openai,
)

SYSTEM = {"role": "system", "content": "sys"}


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def call(call_id):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
    }


def result(call_id, text):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


HISTORY = [
    SYSTEM,
    user("u1"),
    assistant("a1"),
    user("u2"),
    call("c1"),
    result("c1", "t1"),
    assistant("a2"),
    user("u3"),
    assistant("a3"),
]


def test_last_turns_keeps_the_system_message_and_whole_turns():
    assert bounded_view(HISTORY, last_turns=2) == [SYSTEM, *HISTORY[3:]]


def test_last_events_never_keeps_a_tool_result_without_its_call():
    # the raw cut (last 4 events) lands on the tool result; the view starts at the next turn
    assert bounded_view(HISTORY, last_events=4) == [SYSTEM, user("u3"), assistant("a3")]


def test_max_tokens_counts_the_system_message_first():
    # "System: sys" 11, "User: u3" 8, "Assistant: a3" 13
    assert bounded_view(HISTORY, max_tokens=11 + 8 + 13, estimator=len) == [SYSTEM, user("u3"), assistant("a3")]
    plain = [user("u1"), assistant("a1"), user("u2"), assistant("a2")]  # 42 tokens
    assert bounded_view([SYSTEM, *plain], max_tokens=45, estimator=len) == [SYSTEM, *plain[2:]]
    assert bounded_view(plain, max_tokens=45, estimator=len) == plain


def test_several_limits_apply_together():
    assert bounded_view(HISTORY, last_turns=3, last_events=2) == [SYSTEM, user("u3"), assistant("a3")]


def test_the_input_is_never_mutated_and_the_result_is_a_new_list():
    history = copy.deepcopy(HISTORY)
    view = bounded_view(history, last_turns=10)
    assert view == history and view is not history
    bounded_view(history, last_turns=1)
    assert history == HISTORY


def test_a_leading_orphan_tool_result_is_dropped():
    assert bounded_view([result("gone", "t0"), user("u1"), assistant("a1")], last_turns=5) == [
        user("u1"),
        assistant("a1"),
    ]


@pytest.mark.parametrize(
    "arguments, name",
    [
        ({"last_turns": 0}, "last_turns"),
        ({"last_events": -2}, "last_events"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"last_turns": True}, "last_turns"),
        ({}, "last_turns"),
    ],
)
def test_invalid_arguments_are_named(arguments, name):
    with pytest.raises(ValueError, match=name):
        bounded_view(HISTORY, **arguments)


def test_an_unknown_role_is_rejected():
    with pytest.raises(ValueError, match="role"):
        bounded_view([{"role": "robot", "content": "x"}], last_turns=1)


ANTHROPIC = [
    user("u1"),
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": 1}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]},
    assistant("a1"),
    user("u2"),
    assistant("a2"),
]


def test_anthropic_tool_results_do_not_start_a_turn():
    assert bounded_view(ANTHROPIC, last_events=4) == ANTHROPIC[4:]
    assert bounded_view(ANTHROPIC, last_turns=2) == ANTHROPIC


def test_from_openai_reads_calls_results_and_tool_names():
    assert from_openai(HISTORY[3:7]) == [
        Message("user", "u2"),
        Message("assistant", "", (ToolCall("c1", "lookup", "{}"),)),
        Message("tool", "t1", tool_call_id="c1", name="lookup"),
        Message("assistant", "a2"),
    ]


def test_openai_round_trip():
    assert to_openai(from_openai(HISTORY)) == HISTORY


def test_from_anthropic_splits_tool_results_and_takes_the_system_parameter():
    messages = from_anthropic(ANTHROPIC[:3], system="sys")
    assert messages == [
        Message("system", "sys"),
        Message("user", "u1"),
        Message("assistant", "checking", (ToolCall("t1", "lookup", json.dumps({"q": 1})),)),
        Message("tool", "42", tool_call_id="t1", name="lookup"),
    ]


def test_anthropic_round_trip_groups_results_into_one_user_message():
    two = [
        Message("assistant", "", (ToolCall("a", "f", '{"x": 1}'), ToolCall("b", "g", "{}"))),
        Message("tool", "ra", tool_call_id="a", name="f"),
        Message("tool", "rb", tool_call_id="b", name="g"),
    ]
    system, messages = to_anthropic([Message("system", "sys"), *two])
    assert system == "sys"
    assert messages[1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "ra"},
            {"type": "tool_result", "tool_use_id": "b", "content": "rb"},
        ],
    }
    assert from_anthropic(messages, system=system) == [Message("system", "sys"), *two]


def test_langchain_round_trip_when_langchain_core_is_installed():
    require("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from chatbound.compaction.adapters import from_langchain, to_langchain

    messages = from_openai(HISTORY)
    converted = to_langchain(messages)
    assert [type(m) for m in converted[3:7]] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert converted[4].tool_calls[0]["id"] == "c1"
    assert from_langchain(converted) == messages
