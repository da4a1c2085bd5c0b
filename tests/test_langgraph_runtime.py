"""The real LangGraph, a fake model: the state a checkpointed graph sends grows every turn, and
chatbound's fix (`trim_messages` at the node's send, a trimming `pre_model_hook`) keeps it flat
while the thread still stores every message."""

from __future__ import annotations

import warnings

import pytest
from conftest import require

require("langgraph")
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langgraph.checkpoint.memory import MemorySaver  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

NODE_APP = """\
from langgraph.graph import START, MessagesState, StateGraph


def build(llm, saver):
    def chatbot(state: MessagesState):
        return {"messages": [llm.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chatbot", chatbot)
    builder.add_edge(START, "chatbot")
    return builder.compile(checkpointer=saver)
"""
AGENT_APP = """\
from langgraph.prebuilt import create_react_agent


def build(llm, saver):
    return create_react_agent(llm, [], checkpointer=saver)
"""
TURNS = 12
WORDS = "the customer asks about the invoice again " * 40  # ~400 tokens a message


def fixed(source: str) -> str:
    result = analyze_source(source, "app.py", [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"])
    assert [f.rule_id for f in result.findings] == ["MEMORY-UNBOUNDED-HISTORY"]
    fix = result.findings[0].fix
    assert fix is not None and fix.safe
    return apply_edits(source, fix.edits)


def run(source: str) -> tuple[list[int], int]:
    """Tokens sent to the model on each turn of one thread, and the messages the thread keeps."""
    sent: list[int] = []

    def model(messages) -> AIMessage:
        messages = getattr(messages, "messages", None) or getattr(messages, "to_messages", lambda: messages)()
        sent.append(count_tokens_approximately(messages))
        return AIMessage(content=WORDS)

    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        graph = namespace["build"](RunnableLambda(model), MemorySaver())
    config = {"configurable": {"thread_id": "one"}}
    for turn in range(TURNS):
        graph.invoke({"messages": [("user", f"turn {turn}: {WORDS}")]}, config)
    return sent, len(graph.get_state(config).values["messages"])


@pytest.mark.parametrize("source", [NODE_APP, AGENT_APP], ids=["node", "create_react_agent"])
def test_checkpointed_state_grows_every_turn_and_the_fix_keeps_it_flat(source):
    before, kept_before = run(source)
    assert all(later > earlier for earlier, later in zip(before, before[1:]))  # the whole thread, every turn
    assert before[-1] > 8000
    after, kept_after = run(fixed(source))
    assert max(after) <= 4000 and max(after[4:]) - min(after[4:]) < 10  # flat once the window is full
    assert kept_after == kept_before == 2 * TURNS  # the thread still stores every message


FUNCTIONAL_APP = """\
from langgraph.func import entrypoint, task
from langgraph.graph import add_messages


def build(llm, saver):
    @task
    def call_model(messages):
        return llm.invoke(messages)

    @entrypoint(checkpointer=saver)
    def workflow(entry, *, previous=None):
        thread = add_messages(previous or [], entry)
        reply = call_model(thread).result()
        return entrypoint.final(value=reply, save=add_messages(thread, reply))

    return workflow
"""


def test_a_functional_workflow_resends_what_it_saved_and_the_fix_keeps_it_flat():
    """`previous` is what the last run on the thread saved (langgraph 1.2.24 func/__init__.py):
    the workflow sends it all each turn; trim_messages at the send keeps the send flat while
    each run still saves the whole thread."""

    def run_functional(source: str) -> tuple[list[int], int]:
        sent: list[int] = []

        def model(messages) -> AIMessage:
            sent.append(count_tokens_approximately(messages))
            return AIMessage(content=WORDS)

        namespace: dict = {}
        exec(compile(source, "app.py", "exec"), namespace)
        saver = MemorySaver()
        workflow = namespace["build"](RunnableLambda(model), saver)
        config = {"configurable": {"thread_id": "one"}}
        for turn in range(TURNS):
            workflow.invoke([("user", f"turn {turn}: {WORDS}")], config)
        return sent, len(saver.get(config)["channel_values"]["__previous__"])  # what the next run gets as `previous`

    before, kept_before = run_functional(FUNCTIONAL_APP)
    assert all(later > earlier for earlier, later in zip(before, before[1:]))
    assert before[-1] > 8000
    after, kept_after = run_functional(fixed(FUNCTIONAL_APP))
    assert max(after) <= 4000 and max(after[4:]) - min(after[4:]) < 10
    assert kept_after == kept_before == 2 * TURNS
