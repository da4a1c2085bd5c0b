"""RAG-EXCESSIVE-TOP-K: retrieval that stuffs many chunks into every prompt."""

from __future__ import annotations

import re

import libcst as cst

from chatbound.findings import Severity
from chatbound.messages import callee_name
from chatbound.rule import Invalid, Option, Rule, Valid
from chatbound.values import Constant, constant

# callee name -> (keyword, position of that argument when passed positionally, or None)
COUNT_ARGUMENT = {
    "similarity_search": ("k", 1),
    "asimilarity_search": ("k", 1),
    "similarity_search_with_score": ("k", 1),
    "asimilarity_search_with_score": ("k", 1),
    "similarity_search_with_relevance_scores": ("k", 1),
    "asimilarity_search_with_relevance_scores": ("k", 1),
    "similarity_search_by_vector": ("k", 1),
    "asimilarity_search_by_vector": ("k", 1),
    "max_marginal_relevance_search": ("k", 1),
    "amax_marginal_relevance_search": ("k", 1),
    "max_marginal_relevance_search_by_vector": ("k", 1),
    "query_points": ("limit", None),  # Qdrant
    "near_text": ("limit", None),  # Weaviate v4 collection.query.*
    "near_vector": ("limit", None),
    "hybrid": ("limit", None),
    "with_limit": ("limit", 0),  # Weaviate v3 query builder
}
# Keywords that mean "results per query" wherever they appear on a retrieval-shaped call.
ANYWHERE = ("similarity_top_k",)
RETRIEVAL_NAME = re.compile(r"retriev|search|query|vector|index", re.I)
RESULT_COUNT = ("top_k", "n_results")  # Pinecone, Haystack, LlamaIndex; Chroma
RERANK_NAME = re.compile(r"rerank", re.I)
RERANK_KEEP = ("top_n", "top_k", "k")
DIGITS = re.compile(rb"\d[\d_]*[xXoObB]?")  # an int's digits, or the start of a 0x/0o/0b literal
PGVECTOR_LIMIT = re.compile(r"(<->|<=>|<#>|<\+>).*?\bLIMIT\s+(\d+)", re.I | re.S)


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _count_args(call: cst.Call) -> list[tuple[str, cst.CSTNode, cst.BaseExpression]]:
    """(label, node to report, value expression) for every result-count argument of a call."""
    name = callee_name(call)
    found = []
    if name in COUNT_ARGUMENT:
        keyword, position = COUNT_ARGUMENT[name]
        arg = _keyword(call, keyword)
        if arg is None and position is not None:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            arg = positional[position] if len(positional) > position else None
        if arg is not None and (name != "hybrid" or _keyword(call, "query") is not None):
            found.append((keyword, arg, arg.value))
    if name == "search" and _keyword(call, "collection_name") is not None:  # Qdrant
        arg = _keyword(call, "limit")
        if arg is not None:
            found.append(("limit", arg, arg.value))
    for keyword in ANYWHERE:
        arg = _keyword(call, keyword)
        if arg is not None:
            found.append((keyword, arg, arg.value))
    if RETRIEVAL_NAME.search(name):
        for keyword in RESULT_COUNT:
            arg = _keyword(call, keyword)
            if arg is not None:
                found.append((keyword, arg, arg.value))
    search_kwargs = _keyword(call, "search_kwargs")
    if name == "as_retriever" and search_kwargs is not None and isinstance(search_kwargs.value, cst.Dict):
        for element in search_kwargs.value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                if element.key.evaluated_value == "k":
                    found.append(("search_kwargs['k']", element, element.value))
    return found


class RagExcessiveTopK(Rule):
    """
    ## What it does
    Flags a retrieval call that asks for more results per query than `max-top-k` (default 8),
    when the count is a literal or a constant.

    Retrieval calls:

    - `similarity_search*` and `max_marginal_relevance_search` (`k`, not `fetch_k`);
    - `as_retriever(search_kwargs={"k": ...})`;
    - LlamaIndex `similarity_top_k`, Chroma `n_results`, Pinecone `top_k`, Qdrant and
      Weaviate `limit`;
    - pgvector queries, `ORDER BY embedding <-> ... LIMIT n`.

    Not flagged: a wide first stage whose results a reranker cuts to a few (`top_n` within the
    limit).

    ## Why is this bad?
    Every retrieved chunk is pasted into the prompt of every turn. Twenty chunks of a few hundred
    tokens each cost thousands of input tokens per call, most of them irrelevant; they dilute
    the answer and, in a chat, are paid for again on the next turn.

    ## Example
    ```python
    docs = vector_store.similarity_search(question, k=20)
    ```

    ## Use instead
    ```python
    docs = vector_store.similarity_search_with_relevance_scores(question, k=4, score_threshold=0.75)
    # or retrieve wide and rerank to a few before the prompt:
    reranker = CohereRerank(top_n=4)
    ```

    ## Fix
    None automatic: the right count depends on the chunk size and the question.

    ## Frameworks covered
    LangChain vector stores and retrievers, LlamaIndex, Chroma, Pinecone, Qdrant, Weaviate and
    pgvector SQL.
    """

    ID = "RAG-EXCESSIVE-TOP-K"
    NAME = "rag-excessive-top-k"
    SEVERITY = Severity.MEDIUM
    SUMMARY = "Retrieval puts more chunks into each prompt than the answer needs."
    TAGS = ("cost", "llm", "rag")
    OPTIONS = {"max-top-k": Option(int, 8, "Most results per retrieval before a finding.")}
    # Every finding sits on one of these calls or keywords, or in a pgvector query string.
    TRIGGERS = (
        # similarity_search*, max_marginal_relevance_search* (and their a- twins) called
        re.compile(rb"(?:similarity_search|max_marginal_relevance_search)\w*[\s)]*\("),
        re.compile(rb"\b(?:%s)[\s)]*\(" % b"|".join(
            name.encode() for name in (*COUNT_ARGUMENT, "as_retriever") if "search" not in name
        )),
        re.compile(rb"\b(?:%s)\s*=" % b"|".join(k.encode() for k in (*ANYWHERE, *RESULT_COUNT, "collection_name"))),
        re.compile(rb"<->|<=>|<#>|<\+>"),
    )

    VALID = [
        "docs = store.similarity_search(question, k=4)",
        "docs = store.max_marginal_relevance_search(question, k=4, fetch_k=40)",
        "retriever = store.as_retriever(search_kwargs={'k': 5})",
        # a wide first stage cut to a few by a reranker before the prompt
        """
from langchain_cohere import CohereRerank
from langchain.retrievers import ContextualCompressionRetriever
base = store.as_retriever(search_kwargs={"k": 40})
retriever = ContextualCompressionRetriever(base_compressor=CohereRerank(top_n=5), base_retriever=base)
""",
        "engine = index.as_query_engine(similarity_top_k=25, node_postprocessors=[SentenceTransformerRerank(top_n=3)])",
        # not retrieval: a plain search API with a page size
        "results = github.search(q='langchain', limit=50)",
        "hits = collection.query(query_texts=[q], n_results=K)",  # K unknown: never guess
        Valid("docs = store.similarity_search(q, k=12)", options={"max-top-k": 12}),
    ]
    INVALID = [
        Invalid("docs = store.similarity_search(question, k=20)", 1, 42, 1, 46),
        Invalid("docs = store.similarity_search(question, 20)", 1, 42),
        Invalid("retriever = store.as_retriever(search_kwargs={'k': 20, 'fetch_k': 50})", 1, 47),
        Invalid("TOP_K = 20\n\ndef answer(q):\n    return store.max_marginal_relevance_search(q, k=TOP_K)\n", 4, 51),
        Invalid(
            "class Bot:\n    K = 24\n    def ask(self, q):\n        return self.store.similarity_search(q, k=self.K)\n",
            4, 48,
        ),
        Invalid("engine = index.as_query_engine(similarity_top_k=15)", 1, 32),
        Invalid("hits = collection.query(query_texts=[q], n_results=30)", 1, 42),
        Invalid("matches = pinecone_index.query(vector=v, top_k=50, include_metadata=True)", 1, 42),
        Invalid("hits = qdrant.query_points(collection_name='docs', query=v, limit=25)", 1, 61),
        Invalid("hits = qdrant.search(collection_name='docs', query_vector=v, limit=25)", 1, 62),
        Invalid("res = articles.query.near_text(query='cats', limit=16)", 1, 46),
        Invalid("retriever = VectorIndexRetriever(index=index, similarity_top_k=10)", 1, 47),
        Invalid('cur.execute("SELECT text FROM docs ORDER BY embedding <-> %s LIMIT 30", (v,))', 1, 13),
        # a reranker that still keeps too many does not excuse the first stage
        Invalid("base = store.as_retriever(search_kwargs={'k': 30})\nrr = CohereRerank(top_n=20)\n", 1, 42),
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

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-top-k")
        self.candidates: list[tuple[str, cst.CSTNode, Constant]] = []
        self.reranked = False

    def visit_Call(self, node: cst.Call) -> None:
        if RERANK_NAME.search(callee_name(node)) and self._keeps_few(node):
            self.reranked = True
        for label, report_node, value in _count_args(node):
            found = constant(self, value)
            if found is not None and isinstance(found.value, int) and found.value > self.limit:
                self.candidates.append((label, report_node, found))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        match = PGVECTOR_LIMIT.search(node.value)
        if match and int(match.group(2)) > self.limit:
            self.candidates.append(("LIMIT", node, Constant(int(match.group(2)), "", node)))

    def _keeps_few(self, call: cst.Call) -> bool:
        """A reranker with a small keep count (class rerankers default to 2-5 when unset)."""
        for keyword in RERANK_KEEP:
            arg = _keyword(call, keyword)
            if arg is not None:
                found = constant(self, arg.value)
                return found is not None and isinstance(found.value, int) and found.value <= self.limit
        return callee_name(call)[:1].isupper()

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.reranked:
            return
        for label, node, found in self.candidates:
            origin = f", from {found.source}" if found.source else ""
            self.report(
                node,
                f"Retrieval asks for {found.value} results per query ({label}={found.value}{origin}); "
                f"every one is pasted into the prompt (max-top-k is {self.limit}).",
                suggestion="Start at 4 with a score threshold, or retrieve wide and rerank to a few "
                f"(top_n <= {self.limit}) before the prompt.",
                related=[self.related(found.node, f"{label} is set here")] if found.source else [],
            )
