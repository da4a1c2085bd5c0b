"""RAG-EXCESSIVE-TOP-K: retrieval that stuffs many chunks into every prompt."""

from __future__ import annotations

import ast
import re

import libcst as cst

from chatbound.analysis.chat import ChatRule
from chatbound.analysis.retrieval import (
    PGVECTOR_LIMIT,
    RERANK_KEEP,
    RETRIEVAL_TRIGGERS,
    VECTOR_STAGE,
    Reach,
    RetrievalFacts,
    counts_asked,
    may_count,
)
from chatbound.analysis.rule import Invalid, Option, Valid
from chatbound.findings import Severity
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.values import Constant, constant
from chatbound.vocabulary.sinks import keyword
from chatbound.vocabulary.summaries import RemoteFunction

DIGITS = re.compile(rb"\d[\d_]*[xXoObB]?")  # an int's digits, or the start of a 0x/0o/0b literal


class RagExcessiveTopK(ChatRule):
    """
    ## What it does
    Flags more retrieved results reaching a model per query than `max-top-k` (default 8): a
    retrieval asks for more (a literal or a constant count) and the analysis follows its
    results, through names, copies, joins, f-strings, message lists and the module's helper
    functions, into a model call, a chain or query engine built from the retriever, or a
    LangChain `|` pipe. Reported where they reach the model, with the retrieval as a related
    location.

    Retrieval calls:

    - `similarity_search*` and `max_marginal_relevance_search` (`k`, not `fetch_k`);
    - `as_retriever(search_kwargs={"k": ...})`, and what the retriever returns when asked
      (`invoke`, `get_relevant_documents`, `retrieve`);
    - LlamaIndex `similarity_top_k` (a query or chat engine reaches its model itself), Chroma
      `n_results`, Pinecone `top_k`, Qdrant and Weaviate `limit`;
    - pgvector queries, `ORDER BY embedding <-> ... LIMIT n`, and the rows fetched;
    - MongoDB Atlas `collection.aggregate(pipeline)` whose `$vectorSearch` stage has a `limit`
      (a later `$limit` or `$match` stage counts as a cut).

    Across modules: a function of another module of the project that returns a retrieval's
    results with no cut on the way (`def similar(v): return list(articles.aggregate(pipeline))`
    in `search.py`), or a retriever, is followed from each call of it (`answer(q, similar(v))`
    in `views.py`); results handed to a function of another module that sends its parameter
    reach that model. Reported where they reach it in the calling module, with the retrieval
    of the other module (and that model call) as related locations.

    Not flagged: results cut before the prompt (a rerank to `top_n` within the limit, a sort
    and `[:5]`, a comprehension with a score threshold, `score_threshold=`, one result), in
    either module, and results that reach no model the analysis shows (a vector-store test
    asking for 1,000, results handed to a module outside the project or to a function that
    sends no parameter).

    ## Why is this bad?
    Every retrieved chunk is pasted into the prompt of every turn. Twenty chunks of a few hundred
    tokens each cost thousands of input tokens per call, most of them irrelevant; they dilute
    the answer and, in a chat, are paid for again on the next turn.

    ## Example
    ```python
    docs = vector_store.similarity_search(question, k=20)
    context = "\\n".join(d.page_content for d in docs)
    answer = llm.invoke(f"Answer from:\\n{context}\\n\\nQuestion: {question}")
    ```
    chatbound reports it where the results enter the prompt:
    ```text
    app.py:3:38: RAG-EXCESSIVE-TOP-K 20 retrieved results per query reach the model here (k=20); every one is pasted into the prompt (max-top-k is 8).
    ```

    ## Use instead
    ```python
    docs = vector_store.similarity_search(question, k=20)
    docs = reranker.compress_documents(docs, question)  # CohereRerank(top_n=4)
    context = "\\n".join(d.page_content for d in docs)
    answer = llm.invoke(f"Answer from:\\n{context}\\n\\nQuestion: {question}")
    ```

    ## Fix
    None automatic: the right count depends on the chunk size and the question.

    ## Frameworks covered
    LangChain vector stores, retrievers and retrieval chains, LlamaIndex retrievers and
    engines, Chroma, Pinecone, Qdrant, Weaviate and pgvector SQL.
    """

    ID = "RAG-EXCESSIVE-TOP-K"
    NAME = "rag-excessive-top-k"
    SEVERITY = Severity.MEDIUM
    SUMMARY = "Retrieval puts more chunks into each prompt than the answer needs."
    TAGS = ("cost", "llm", "rag")
    CROSS_MODULE = True  # results a function of another module returns, or a parameter it sends
    LINKS_IMPORTERS = True  # a file calling such a function needs no retrieval of its own
    OPTIONS = {"max-top-k": Option(int, 8, "Most results per retrieval before a finding.")}
    TRIGGERS = RETRIEVAL_TRIGGERS  # every finding follows the results of one of these calls, keywords or queries

    VALID = [
        # the tuple's other element is what is sent
        "docs = store.similarity_search(question, k=20)\npair = (f'{docs}', question)\nllm.invoke(pair[1])\n",
        "docs = store.similarity_search(question, k=4)\nllm.invoke(f'{docs}')\n",
        "docs = store.max_marginal_relevance_search(question, k=4, fetch_k=40)\nllm.invoke(f'{docs}')\n",
        # a wide first stage cut to a few by a reranker before the prompt
        """
from langchain_cohere import CohereRerank
from langchain.retrievers import ContextualCompressionRetriever
from langchain.chains import RetrievalQA
base = store.as_retriever(search_kwargs={"k": 40})
retriever = ContextualCompressionRetriever(base_compressor=CohereRerank(top_n=5), base_retriever=base)
qa = RetrievalQA.from_chain_type(llm, retriever=retriever)
""",
        "engine = index.as_query_engine(similarity_top_k=25, node_postprocessors=[SentenceTransformerRerank(top_n=3)])",
        # sorted by score and cut to five before the prompt
        "def answer(q):\n"
        "    hits = store.similarity_search_with_score(q, k=40)\n"
        "    best = sorted(hits, key=lambda h: h[1], reverse=True)[:5]\n"
        "    return llm.invoke(f'Context: {best}\\nQ: {q}')\n",
        # a score threshold keeps the relevant few
        "def answer(q):\n"
        "    hits = store.similarity_search_with_relevance_scores(q, k=30)\n"
        "    context = '\\n'.join(d.page_content for d, score in hits if score > 0.8)\n"
        "    return llm.invoke(context)\n",
        # a vector-store test asks for many and never builds a prompt
        "def test_search_returns_everything(store):\n    assert len(store.similarity_search('cats', k=1000)) == 1000\n",
        # results handed to a module the analysis does not see
        "from .prompting import answer_from\n"
        "def answer(q):\n"
        "    return answer_from(q, store.similarity_search(q, k=20))\n",
        # not retrieval: a plain search API with a page size
        "results = github.search(q='langchain', limit=50)",
        "hits = collection.query(query_texts=[q], n_results=K)\nllm.invoke(str(hits))\n",  # K unknown: never guess
        Valid("docs = store.similarity_search(q, k=12)\nllm.invoke(f'{docs}')\n", options={"max-top-k": 12}),
        # MongoDB Atlas: a later stage keeps the best few, or those above a score
        "docs = list(chunks.aggregate([\n"
        "    {'$vectorSearch': {'index': 'chunks', 'path': 'v', 'queryVector': v, 'numCandidates': 200, 'limit': 40}},\n"
        "    {'$limit': 5},\n"
        "]))\nllm.invoke(f'{docs}')\n",
        "pipeline = [{'$vectorSearch': {'path': 'v', 'queryVector': v, 'limit': 40}}, {'$match': {'score': {'$gte': 0.8}}}]\n"
        "llm.invoke(str(list(chunks.aggregate(pipeline))))\n",
    ]
    INVALID = [
        Invalid("docs = store.similarity_search(question, k=20)\nllm.invoke(f'{question} {docs}')\n", 2, 26, 2, 30),
        # the prompt carried by a tuple, and by a record's field, before the call
        Invalid(
            "docs = store.similarity_search(question, k=20)\n"
            "pair = ([{'role': 'user', 'content': f'{docs}'}], 'gpt-4o')\n"
            "llm.invoke(pair[0])\n",
            3,
            12,
            3,
            16,
        ),
        Invalid(
            "from dataclasses import dataclass\n"
            "@dataclass\n"
            "class Job:\n"
            "    prompt: str\n"
            "docs = store.similarity_search(question, k=20)\n"
            "job = Job(f'{question} {docs}')\n"
            "llm.invoke(job.prompt)\n",
            7,
            12,
            7,
            15,
        ),
        Invalid("docs = store.similarity_search(question, 20)\nanswer = llm.invoke(docs)\n", 2, 21, 2, 25),
        # a retriever handed to a chain reaches the chain's model
        Invalid(
            "retriever = store.as_retriever(search_kwargs={'k': 20, 'fetch_k': 50})\n"
            "qa = RetrievalQA.from_chain_type(llm=llm, retriever=retriever)\n",
            2,
            53,
            2,
            62,
        ),
        Invalid(
            "TOP_K = 20\n\n"
            "def answer(q):\n"
            "    docs = store.max_marginal_relevance_search(q, k=TOP_K)\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'{docs}'}])\n",
            5,
            95,
            5,
            99,
        ),
        Invalid(
            "class Bot:\n"
            "    K = 24\n"
            "    def context(self, q):\n"
            "        return '\\n'.join(d.page_content for d in self.store.similarity_search(q, k=self.K))\n"
            "    def ask(self, q):\n"
            "        return self.llm.invoke(self.context(q) + q)\n",
            6,
            32,
            6,
            47,
        ),
        Invalid("engine = index.as_query_engine(similarity_top_k=15)", 1, 32, 1, 51),
        Invalid(
            "hits = collection.query(query_texts=[q], n_results=30)\nllm.invoke(str(hits['documents'][0]))\n",
            2,
            16,
            2,
            20,
        ),
        Invalid(
            "matches = pinecone_index.query(vector=v, top_k=50, include_metadata=True)\n"
            "texts = [m.metadata['text'] for m in matches.matches]\n"
            "llm.invoke('\\n'.join(texts))\n",
            3,
            22,
            3,
            27,
        ),
        Invalid(
            "hits = qdrant.query_points(collection_name='docs', query=v, limit=25)\n"
            "context = ''\n"
            "for point in hits.points:\n"
            "    context += point.payload['text']\n"
            "llm.invoke(context)\n",
            5,
            12,
            5,
            19,
        ),
        Invalid(
            "hits = qdrant.search(collection_name='docs', query_vector=v, limit=25)\nllm.invoke(f'{hits}')\n",
            2,
            15,
            2,
            19,
        ),
        Invalid("res = articles.query.near_text(query='cats', limit=16)\nllm.invoke(f'{res.objects}')\n", 2, 15, 2, 18),
        Invalid(
            "retriever = VectorIndexRetriever(index=index, similarity_top_k=10)\n"
            "engine = RetrieverQueryEngine.from_args(retriever)\n",
            2,
            41,
            2,
            50,
        ),
        Invalid(
            "def context(cur, v):\n"
            '    cur.execute("SELECT text FROM docs ORDER BY embedding <-> %s LIMIT 30", (v,))\n'
            "    rows = cur.fetchall()\n"
            "    return llm.invoke('\\n'.join(r[0] for r in rows))\n",
            4,
            47,
            4,
            51,
        ),
        # a reranker that still keeps too many does not excuse the first stage
        Invalid(
            "base = store.as_retriever(search_kwargs={'k': 30})\n"
            "retriever = ContextualCompressionRetriever(base_compressor=CohereRerank(top_n=20), base_retriever=base)\n"
            "chain = create_retrieval_chain(retriever, combine_docs_chain)\n",
            3,
            32,
            3,
            41,
        ),
        # MongoDB Atlas Vector Search: the stage's limit is how many documents come back
        Invalid(
            "pipeline = [{'$vectorSearch': {'path': 'v', 'queryVector': v, 'limit': 12}}, {'$project': {'text': 1}}]\n"
            "texts = [d['text'] for d in chunks.aggregate(pipeline)]\n"
            "llm.invoke('\\n'.join(texts))\n",
            3,
            22,
            3,
            27,
        ),
        # a cut that still keeps more than the limit
        Invalid("docs = store.similarity_search(q, k=40)[:20]\nllm.invoke(f'{docs}')\n", 2, 15, 2, 19),
    ]

    @classmethod
    def may_report(cls, source: bytes, options: dict) -> bool:
        """A count over the limit is an int written in the file: a literal, a constant's value,
        a LIMIT in a query string (`0x`, `0o`, `0b` literals count as over)."""
        limit = options.get("max-top-k", cls.OPTIONS["max-top-k"].default)
        for match in DIGITS.finditer(source):
            digits = match.group().replace(b"_", b"")
            if not digits.isdigit() or len(digits) > len(str(limit)) or int(digits) > limit:
                return True
        return False

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a `k=` or a `top_k` hold no retrieval call that asks for a count,
        nor a pgvector query with a `LIMIT` or a `$vectorSearch` stage: not worth a LibCST parse
        (nor, for a module another file imports, worth linking that file: `LINKS_IMPORTERS`)."""
        for node in tree.nodes(ast.Call, ast.Constant):
            kind = type(node)
            if kind is ast.Call and may_count(node):
                return True
            if kind is ast.Constant and isinstance(node.value, (str, bytes)):
                text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
                if text == VECTOR_STAGE or PGVECTOR_LIMIT.search(text):
                    return True
        return False

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-top-k")
        # (label, node that sets the count, the count, the retrieval call or query string)
        self.candidates: list[tuple[str, cst.CSTNode, Constant, cst.CSTNode]] = []

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        for label, report_node, found in counts_asked(self, node):
            if found.value > self.limit:
                self.candidates.append((label, report_node, found, node))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        match = PGVECTOR_LIMIT.search(node.value)
        if match and int(match.group(2)) > self.limit:
            self.candidates.append(("LIMIT", node, Constant(int(match.group(2)), "", node), node))

    def _keeps_few(self, call: cst.Call) -> bool:
        """A reranker with a small keep count (class rerankers default to 2-5 when unset)."""
        for name in RERANK_KEEP:
            arg = keyword(call, name)
            if arg is not None:
                found = constant(self, arg.value)
                return found is not None and isinstance(found.value, int) and found.value <= self.limit
        return True

    def leave_Module(self, original_node: cst.Module) -> None:
        project = self.context.project
        imported = project is not None and any(
            f.retrieves is not None and f.retrieves.summary.count > self.limit for f in project.functions.values()
        )
        if not self.candidates and not imported:
            return  # the chat facts are built only where a retrieval asks for too many
        facts = self.chat_facts()
        retrieval = RetrievalFacts(facts, self.limit, self._keeps_few)
        reported: set[int] = set()
        for label, count_node, found, source in self.candidates:
            if isinstance(source, cst.Call):
                reaches = retrieval.reach_of_call(source, found.value)
            else:
                reaches = retrieval.reach_of_query(source, found.value)
            for reach in reaches:
                node = count_node if reach.node is source else reach.node
                if id(node) not in reported:
                    reported.add(id(node))
                    self._report(facts, node, label, count_node, found, reach.count)
        for call, remote in self._imported(facts) if imported else ():
            asked = remote.retrieves.summary
            for reach in retrieval.reach_of_returned(call, asked.count, asked.kind):
                if id(reach.node) not in reported:
                    reported.add(id(reach.node))
                    self._report_imported(facts, reach, call, remote)

    def _imported(self, facts) -> list[tuple[cst.Call, RemoteFunction]]:
        """Calls of another module's functions that return more results than the limit (or a
        retriever asking for them), as the project pass linked them."""
        found = []
        for call in facts.nodes.calls:
            remote = None if facts.callees(call) else facts.imported_function(call)
            if remote is not None and remote.retrieves is not None and remote.retrieves.summary.count > self.limit:
                found.append((call, remote))
        return found

    def _report(
        self, facts, node: cst.CSTNode, label: str, count_node: cst.CSTNode, found: Constant, count: int
    ) -> None:
        origin = f", from {found.source}" if found.source else ""
        related = []
        if node is not count_node:
            related.append(self.related(count_node, f"retrieval asks for {found.value} results here ({label})"))
        if found.source:
            related.append(self.related(found.node, f"{label} is set here"))
        self._finding(facts, node, count, f"{label}={found.value}{origin}", related)

    def _report_imported(self, facts, reach: Reach, call: cst.Call, remote: RemoteFunction) -> None:
        asked = remote.retrieves.summary
        related = [
            self.related(remote.retrieves.place, f"retrieval asks for {asked.count} results here ({asked.label})")
        ]
        if reach.node is not call:
            related.append(self.related(call, f"`{remote.name}()` returns them here"))
        origin = f"{asked.label}={asked.count} in `{remote.name}()` of {remote.path}"
        self._finding(facts, reach.node, reach.count, origin, related)

    def _finding(self, facts, node: cst.CSTNode, count: int, origin: str, related: list) -> None:
        """The finding at `node`; a model call of another module it is handed to is related too."""
        arg = facts.parent(node)
        call = facts.parent(arg) if isinstance(arg, cst.Arg) else None
        elsewhere = facts.sent_elsewhere.get(id(call)) if call is not None else None
        if elsewhere is not None:
            related.append(self.related(elsewhere, "the model call they reach"))
        self.report(
            node,
            f"{count} retrieved results per query reach the model here ({origin}); "
            f"every one is pasted into the prompt (max-top-k is {self.limit}).",
            suggestion="Start at 4 with a score threshold, or retrieve wide and rerank to a few "
            f"(top_n <= {self.limit}) before the prompt.",
            related=related,
        )
