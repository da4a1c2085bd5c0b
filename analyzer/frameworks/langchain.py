"""LangChain (classic): memories that keep one conversation, and chains called the old way.

Checked against langchain 0.3 (`langchain/memory/__init__.py`, re-exported by langchain-classic
1.0 as `langchain_classic.memory`): each memory class below keeps the turns saved into it (its
`chat_memory`, a buffer or a summary of them) and gives them to every later call of the chain
or agent holding it. A chain or an agent holds one through its `memory` field (`Chain.memory`,
langchain 0.3 chains/base.py; `AgentExecutor` is a chain), so it keeps that conversation too.
Made once for a process, one such object is one conversation for everyone it serves
(`chatbound.analysis.sharing`).

Chains called the old way, `chain(inputs)`, `chain.run(...)`, `chain.acall(...)`: checked against
langchain 0.3.27 (chains/base.py), `Chain.__call__` and `acall` are deprecated since 0.1.0 and run `invoke` / `ainvoke` on the same inputs; `run` and `arun` pass their
arguments and keywords on as those inputs. So a chain called like a function sends what
`invoke` would (which the shared analysis already reads: `chain.invoke({"chat_history": h})`).
A `ConversationalRetrievalChain` formats every turn of `inputs["chat_history"]` into its
condense-question prompt whenever it is not empty (chains/conversational_retrieval/base.py
`_call`, `_get_chat_history`).

The chain is known by its constructor (`ConversationalRetrievalChain.from_llm(...)`,
`LLMChain(...)`, bound to a name or to `self.<attr>`), never by its name.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import Sink

PACKAGES = ("langchain", "langchain_classic", "langchain_community")
MEMORIES = frozenset(
    """ConversationBufferMemory ConversationStringBufferMemory ConversationBufferWindowMemory
    ConversationTokenBufferMemory ConversationSummaryMemory ConversationSummaryBufferMemory
    ConversationEntityMemory ConversationKGMemory ConversationVectorStoreTokenBufferMemory
    VectorStoreRetrieverMemory ChatMessageHistory""".split()
)
# keywords through which a chain or an agent is given the conversation it keeps
CONVERSATION_KEYWORDS = ("memory",)


def keeps_conversation(qualified: str) -> bool:
    """Whether a call of `qualified` (`langchain.memory.ConversationBufferMemory`) makes an
    object that keeps one conversation."""
    root, _, rest = qualified.partition(".")
    return root in PACKAGES and rest.rpartition(".")[2] in MEMORIES


CHAINS = "langchain.chains."  # what the constructors of the classic chains are imported from
RUNS = frozenset({"run", "arun", "acall"})  # chains/base.py: each hands its inputs to invoke/ainvoke
TRIGGERS = ((re.compile(rb"\blangchain\.chains\b"), re.compile(rb"Chain\b")),)
CALLS = frozenset({"from_llm", "ConversationalRetrievalChain", "LLMChain"})  # a module building one is read


def sink(facts, call: cst.Call) -> Sink | None:
    """`qa({"question": q, "chat_history": h})` or `qa.run(question=q, chat_history=h)` on a chain
    the module builds: what it sends is its inputs."""
    if isinstance(call.func, cst.Attribute) and callee_name(call) in RUNS:
        chain, api = call.func.value, f"langchain.Chain.{callee_name(call)}"
    elif isinstance(call.func, (cst.Name, cst.Attribute)):
        chain, api = call.func, "langchain.Chain.__call__"
    else:
        return None
    if not call.args or not any(c.startswith(CHAINS) for c in facts.client_of(chain)):
        return None
    return Sink(call, api, "langchain", tuple(a.value for a in call.args))
