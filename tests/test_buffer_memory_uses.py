"""A chat memory's finding names where the module adds to that memory and reads it whole (the
places a reader goes to bound it), and no other memory's."""

import textwrap

from chatbound.rules.memory_unbounded_history import MemoryUnboundedHistory
from chatbound.run.pipeline import analyze_source

CODE = textwrap.dedent(
    """\
    from langchain.memory import ConversationBufferMemory
    from langchain_openai import ChatOpenAI

    store = {}
    notes = {}
    llm = ChatOpenAI()


    def start(session_id):
        store[session_id] = ConversationBufferMemory(return_messages=True)


    def reply(session_id, text):
        memory = store[session_id]
        history = memory.load_memory_variables({})["history"]
        answer = llm.invoke([*history, ("user", text)])
        memory.save_context({"input": text}, {"output": answer.content})
        notes[session_id].save_context({"input": text}, {"output": "noted"})
        return answer.content
    """
)


def test_the_memory_finding_names_its_growth_and_its_whole_read():
    [finding] = analyze_source(CODE, "app.py", [MemoryUnboundedHistory]).findings
    assert (finding.rule_id, finding.span.line, finding.span.col) == ("MEMORY-UNBOUNDED-HISTORY", 10, 25)
    assert [(r.span.line, r.span.col, r.message) for r in finding.related] == [
        (15, 15, "all of it is read back here"),
        (17, 5, "the memory grows here"),
    ]
