"""LangChain's classic memories: objects that keep one conversation, whoever calls them.

Checked against langchain 0.3 (`langchain/memory/__init__.py`, re-exported by langchain-classic
1.0 as `langchain_classic.memory`): each memory class below keeps the turns saved into it (its
`chat_memory`, a buffer or a summary of them) and gives them to every later call of the chain
or agent holding it. A chain or an agent holds one through its `memory` field (`Chain.memory`,
langchain 0.3 chains/base.py; `AgentExecutor` is a chain), so it keeps that conversation too.
Made once for a process, one such object is one conversation for everyone it serves
(`chatbound.analysis.sharing`).
"""

from __future__ import annotations

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
