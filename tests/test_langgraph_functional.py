"""LangGraph's functional API: a checkpointed `@entrypoint` whose `previous` is the thread."""

from __future__ import annotations

import textwrap

import pytest

from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

MEMORY = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]

CHAT = """
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.func import entrypoint
    from langgraph.graph import add_messages


    @entrypoint(checkpointer=InMemorySaver())
    def chat(entry, *, previous=None):
        thread = add_messages(previous or [], entry)
        reply = llm.invoke(thread)
        return entrypoint.final(value=reply, save=add_messages(thread, reply))
"""


def findings(code: str):
    result = analyze_source(textwrap.dedent(code), "app.py", MEMORY, {})
    assert result.error is None
    return [(f.rule_id, f.span.line, f.span.col) for f in result.findings]


def test_the_thread_a_run_saves_and_sends_is_reported_at_the_send_with_the_save_related():
    result = analyze_source(textwrap.dedent(CHAT), "app.py", MEMORY, {})
    [finding] = result.findings
    assert (finding.rule_id, finding.span.line, finding.span.col) == ("MEMORY-UNBOUNDED-HISTORY", 10, 24)
    assert "`thread` holds `previous`" in finding.message and "workflow `chat`" in finding.message
    assert [(r.span.line, r.span.col) for r in finding.related] == [(11, 47)]
    assert finding.fix is not None and finding.fix.safe  # trim_messages at the send; the save stays whole


@pytest.mark.parametrize(
    "before, after",
    [
        ("thread = add_messages(previous or [], entry)", "thread = (previous or []) + entry"),
        ("thread = add_messages(previous or [], entry)", "thread = [*previous, *entry]"),
        ("from langgraph.func import entrypoint", "from langgraph.func import entrypoint as workflow_entry"),
    ],
)
def test_other_spellings_of_the_same_thread(before, after):
    code = CHAT.replace(before, after)
    if "workflow_entry" in after:
        code = code.replace("@entrypoint(", "@workflow_entry(").replace("entrypoint.final", "workflow_entry.final")
    assert findings(code) == [("MEMORY-UNBOUNDED-HISTORY", 10, 24)]


@pytest.mark.parametrize(
    "before, after",
    [
        ("@entrypoint(checkpointer=InMemorySaver())", "@entrypoint()"),  # nothing kept between runs
        ("@entrypoint(checkpointer=InMemorySaver())", "@entrypoint(checkpointer=None)"),
        ("reply = llm.invoke(thread)", "reply = llm.invoke(trim_messages(thread, max_tokens=2000, token_counter=len))"),
        ("reply = llm.invoke(thread)", "reply = llm.invoke(thread[-12:])"),
        ("save=add_messages(thread, reply))", "save=add_messages(thread, reply)[-20:])"),  # what comes back is bounded
        ("reply = llm.invoke(thread)", "reply = llm.invoke(entry)"),  # only the new turn is sent
        ("save=add_messages(thread, reply))", "save=previous)"),  # the saved value never grows
    ],
)
def test_bounded_or_unkept_threads_are_not_reported(before, after):
    assert before in CHAT
    assert findings(CHAT.replace(before, after)) == []
