"""A LangGraph state class may hold more than annotated fields: a method, a nested class, an
`if`. Those bodies are blocks, not statements to read fields from (a crash on real graphs)."""

from chatbound.run.pipeline import analyze_source

STATE_WITH_A_METHOD = """\
from typing import Annotated, TypedDict
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages

llm = ChatOpenAI()


class State(TypedDict):
    messages: Annotated[list, add_messages]

    def describe(self):
        return "chat state"


def chatbot(state: State):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(State)
builder.add_node("chatbot", chatbot)
graph = builder.compile(checkpointer=MemorySaver())
"""


def test_a_state_class_with_a_method_is_read_and_its_history_found():
    from chatbound.run.registry import select_rules

    result = analyze_source(STATE_WITH_A_METHOD, "state.py", select_rules(("MEMORY-UNBOUNDED-HISTORY",), ()))
    assert [(f.rule_id, f.span.line, f.span.col) for f in result.findings] == [("MEMORY-UNBOUNDED-HISTORY", 18, 37)]
    assert result.error is None
