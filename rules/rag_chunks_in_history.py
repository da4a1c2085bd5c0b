"""RAG-CHUNKS-IN-HISTORY: this turn's retrieved chunks stored in a history later turns send again."""

from __future__ import annotations

import libcst as cst

from chatbound.analysis.chat import ChatRule, may_chat_tree
from chatbound.analysis.retrieval import RETRIEVAL_TRIGGERS
from chatbound.analysis.rule import Invalid, Option
from chatbound.analysis.splices import Splice, splices
from chatbound.findings import Severity
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.sinks import triggers


class RagChunksInHistory(ChatRule):
    """
    ## What it does
    Flags a history (an attribute, a module list, a session entry, a stored conversation) that
    grows every turn by a message built from retrieval results (`question + context`, an
    f-string of the chunks, a helper that pastes them into the prompt), where the history is
    then sent to a model, whole or through a window. Reported at the growth site, with the
    retrieval and the send as related locations.

    Chunks given to one call only (a system message built for this call, a prompt list made
    per request) are not stored: no finding. Neither is a reply the model wrote from the
    chunks, nor a history that lives for one request.

    ## Why is this bad?
    Retrieval belongs to this question; memory belongs to the session. Once the chunks are in
    the history, every later turn pays for them again, and for the chunks of every earlier
    question too: the history grows by a few thousand tokens a turn instead of a few hundred,
    and a window keeps fewer real turns. Old chunks also compete with the new ones for the
    model's attention.

    ## Example
    ```python
    history = []

    def ask(question):
        docs = store.similarity_search(question, k=4)
        context = "\\n".join(d.page_content for d in docs)
        history.append({"role": "user", "content": f"{context}\\n\\n{question}"})
        reply = client.chat.completions.create(model="gpt-4o", messages=history)
        history.append({"role": "assistant", "content": reply.choices[0].message.content})
    ```
    chatbound reports it where the chunks are stored:
    ```text
    rag.py:6:5: RAG-CHUNKS-IN-HISTORY The message stored in `history` here is built from the 4 chunks `store.similarity_search(...)` retrieved for this question (line 4), and `history` is sent to a model on every later turn: each stored retrieval adds about 1,000 tokens to every later call (at 250 tokens a chunk), and after 20 such turns about 20,000.
    ```

    ## Use instead
    ```python
    history = []

    def ask(question):
        docs = store.similarity_search(question, k=4)
        context = "\\n".join(d.page_content for d in docs)
        prompt = {"role": "user", "content": f"{context}\\n\\n{question}"}
        reply = client.chat.completions.create(model="gpt-4o", messages=[*history, prompt])
        history.append({"role": "user", "content": question})
        history.append({"role": "assistant", "content": reply.choices[0].message.content})
    ```
    The history keeps the question as asked; this turn's chunks go with this call only.

    ## Fix
    Advice only: which part of the stored message is the question is for the application to
    say. The message names the retrieval and the send; its cost line assumes `chunk-tokens`
    tokens a chunk.
    """

    ID = "RAG-CHUNKS-IN-HISTORY"
    NAME = "rag-chunks-in-history"
    SEVERITY = Severity.MEDIUM
    SUMMARY = "Retrieved chunks are stored in the history, so every later turn pays for them again."
    TAGS = ("cost", "llm", "rag", "memory")
    OPTIONS = {"chunk-tokens": Option(int, 250, "Tokens assumed per retrieved chunk in the cost line.")}
    # a model call (the send a finding needs), or a retrieval: a module of retrieval helpers is summarised
    # for the importers that store what they return
    TRIGGERS = (*triggers(), *RETRIEVAL_TRIGGERS)
    CROSS_MODULE = True

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:  # type: ignore[override]  # the ClassVar hook
        """A finding needs a model call in the file (the send); a module of retrieval helpers only
        offers its results to its importers."""
        return may_chat_tree(tree)

    VALID = [
        # this turn's chunks go with this call only; the history keeps the question
        """
history = []

def ask(question):
    docs = store.similarity_search(question, k=4)
    context = "\\n".join(d.page_content for d in docs)
    messages = [{"role": "system", "content": context}, *history, {"role": "user", "content": question}]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages)
    history.append({"role": "user", "content": question})
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
        # the model's answer written from the chunks is the model's, not the chunks
        """
history = []

def ask(question):
    docs = store.similarity_search(question, k=4)
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": f"{docs} {question}"}])
    history.append({"role": "assistant", "content": answer.choices[0].message.content})
    client.chat.completions.create(model="gpt-4o", messages=history)
""",
        # a list built for one request
        """
def ask(question):
    messages = []
    docs = store.similarity_search(question, k=4)
    messages.append({"role": "user", "content": f"{docs}\\n{question}"})
    return client.chat.completions.create(model="gpt-4o", messages=messages)
""",
    ]
    INVALID = [
        Invalid(
            """
history = []

def ask(question):
    docs = store.similarity_search(question, k=4)
    context = "\\n".join(d.page_content for d in docs)
    history.append({"role": "user", "content": f"{context}\\n\\n{question}"})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
            7,
            5,
            7,
            76,
        ),
        # through a helper that builds the prompt, under a window
        Invalid(
            """
class Bot:
    def __init__(self, retriever):
        self.messages = []
        self.retriever = retriever

    def prompt(self, question, chunks):
        return "Answer from these notes:\\n" + "\\n".join(str(c) for c in chunks) + "\\n\\n" + question

    def ask(self, question):
        chunks = index.query(vector=embed(question), top_k=5)["matches"]
        self.messages.append({"role": "user", "content": self.prompt(question, chunks)})
        reply = client.chat.completions.create(model="gpt-4o", messages=self.messages[-12:])
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
            12,
            9,
            12,
            89,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.may_chat():
            return
        reported: set[int] = set()
        for splice in splices(self.chat_facts()):
            if id(splice.site) not in reported:
                reported.add(id(splice.site))
                self._report(splice)

    def _report(self, splice: Splice) -> None:
        facts = self.chat_facts()
        name = splice.history.storage.label
        retrieval = facts.code(splice.retrieval.func)
        count = splice.count
        chunks = f"the {count} chunks" if count is not None else "the chunks"
        size = (count or 4) * self.option("chunk-tokens")
        message = (
            f"The message stored in `{name}` here is built from {chunks} `{retrieval}(...)` retrieved for this "
            f"question (line {self.span(splice.retrieval).line}), and `{name}` is sent to a model on every later "
            f"turn: each stored retrieval adds about {size:,} tokens to every later call (at "
            f"{self.option('chunk-tokens')} tokens a chunk), and after 20 such turns about {20 * size:,}."
        )
        self.report(
            splice.site,
            message,
            suggestion="Store the question as asked and send this turn's chunks with this call only "
            '(`messages=[*history, {"role": "user", "content": context + question}]`).',
            related=[
                self.related(splice.retrieval, "the chunks are retrieved here"),
                self.related(splice.send, f"`{name}` is sent to the model here"),
            ],
            properties={"history": name, "retrieval": retrieval, "chunks": count},
        )
