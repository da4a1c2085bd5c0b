"""RAG-EXCESSIVE-TOP-K across modules: a function of one module returns retrieval results
(`chatbound.analysis.project.summary`), another module puts them into a prompt."""

from __future__ import annotations

import pytest

from chatbound.analysis.project.summary import summarize
from chatbound.findings import Span
from chatbound.run.config import Settings
from chatbound.run.runner import run
from chatbound.vocabulary.summaries import RetrievalSummary

SEARCH = (
    "def similar(v):\n"
    "    pipeline = [{'$vectorSearch': {'path': 'v', 'queryVector': v, 'limit': 12}}, {'$project': {'body': 1}}]\n"
    "    return [hit['body'] for hit in articles.aggregate(pipeline)]\n"
)
LLM = (
    "def answer(question, passages):\n"
    "    context = '\\n'.join(passages)\n"
    "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'{context} {question}'}])\n"
)


def findings(write, monkeypatch, files: dict[str, str], **options):
    root = write({"llm.py": LLM, **files})
    monkeypatch.chdir(root)
    return run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"], options=options)).findings


def at(found) -> list[tuple[str, int, int]]:
    return [(f.path, f.span.line, f.span.col) for f in found]


def test_summary_records_the_results_a_function_returns_whole():
    summary = summarize(SEARCH.encode())
    assert summary.functions["similar"].retrieves == RetrievalSummary(
        12, "$vectorSearch limit", "results", Span(2, 67, 2, 78)
    )


def test_summary_records_a_retriever_a_function_returns():
    summary = summarize(b"def retriever():\n    return store.as_retriever(search_kwargs={'k': 16})\n")
    assert summary.functions["retriever"].retrieves == RetrievalSummary(
        16, "search_kwargs['k']", "retriever", Span(2, 46, 2, 53)
    )


ASKS_HERE = (
    "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'{docs} {q}'}])\n"
)


@pytest.mark.parametrize(
    "views, expected",
    [
        # handed to a function of a third module that sends its parameter (the file shows no
        # model call or retrieval of its own: it is linked for what search.py returns)
        (
            "from search import similar\nfrom llm import answer\ndef ask(q, v):\n    found = similar(v)\n"
            "    return answer(q, found)\n",
            [(5, 22)],
        ),
        # put into this module's own prompt
        ("from search import similar\ndef ask(q, v):\n    docs = '\\n'.join(similar(v))\n" + ASKS_HERE, [(4, 95)]),
        # through the module's name and an alias
        (
            "import search\nfrom llm import answer as reply_to\ndef ask(q, v):\n    return reply_to(q, search.similar(v))\n",
            [(4, 24)],
        ),
        # the importer cuts before the prompt
        (
            "from search import similar\nfrom llm import answer\ndef ask(q, v):\n    return answer(q, similar(v)[:4])\n",
            [],
        ),
        ("from search import similar\ndef ask(q, v):\n    docs = similar(v)[0]\n" + ASKS_HERE, []),
        # the importer never builds a prompt
        ("from search import similar\ndef count(v):\n    return len(similar(v))\n", []),
        (
            "from search import similar\nfrom llm import answer\ndef ask(q, v):\n    similar(v)\n    return answer(q, [])\n",
            [],
        ),
    ],
)
def test_results_returned_by_another_module_are_followed_to_the_model(write, monkeypatch, views, expected):
    found = findings(write, monkeypatch, {"search.py": SEARCH, "views.py": views})
    assert at(found) == [("views.py", line, col) for line, col in expected]


@pytest.mark.parametrize(
    "returned, reported",
    [
        ("    return store.similarity_search(q, k=20)\n", True),
        ("    docs = store.similarity_search(q, k=20)\n    return list(docs)\n", True),
        # cut in the helper before it returns
        ("    return store.similarity_search(q, k=20)[:4]\n", False),
        (
            "    docs = store.similarity_search(q, k=20)\n    return CohereRerank(top_n=3).compress_documents(docs, q)\n",
            False,
        ),
        (
            "    hits = store.similarity_search_with_relevance_scores(q, k=20)\n    return [d for d, s in hits if s > 0.8]\n",
            False,
        ),
        ("    return store.similarity_search(q, k=20, score_threshold=0.8)\n", False),
        (
            "    pipeline = [{'$vectorSearch': {'path': 'v', 'queryVector': q, 'limit': 20}}, {'$limit': 4}]\n"
            "    return list(chunks.aggregate(pipeline))\n",
            False,
        ),
        # no more than max-top-k
        ("    return store.similarity_search(q, k=5)\n", False),
        # a helper named for a search that returns no retrieval's results
        ("    return db.documents.find({'q': q}).limit(20)\n", False),
    ],
)
def test_a_cut_in_the_function_that_retrieves_is_no_finding(write, monkeypatch, returned, reported):
    views = "from search import search_documents\ndef ask(q):\n    docs = search_documents(q)\n" + ASKS_HERE
    found = findings(write, monkeypatch, {"search.py": "def search_documents(q):\n" + returned, "views.py": views})
    assert at(found) == ([("views.py", 4, 95)] if reported else [])


@pytest.mark.parametrize("limit, reported", [(11, True), (12, False)])
def test_max_top_k_is_applied_where_the_results_arrive(write, monkeypatch, limit, reported):
    views = "from search import similar\ndef ask(q, v):\n    docs = similar(v)\n" + ASKS_HERE
    found = findings(write, monkeypatch, {"search.py": SEARCH, "views.py": views}, **{"max-top-k": limit})
    assert at(found) == ([("views.py", 4, 95)] if reported else [])


def test_the_finding_names_the_retrieval_the_call_and_the_model_call(write, monkeypatch):
    views = "from search import similar\nfrom llm import answer\ndef ask(q, v):\n    found = similar(v)\n    return answer(q, found)\n"
    [finding] = findings(write, monkeypatch, {"search.py": SEARCH, "views.py": views})
    assert finding.message == (
        "12 retrieved results per query reach the model here ($vectorSearch limit=12 in `similar()` of search.py); "
        "every one is pasted into the prompt (max-top-k is 8)."
    )
    assert [(r.path, r.span.line, r.span.col, r.message) for r in finding.related] == [
        ("search.py", 2, 67, "retrieval asks for 12 results here ($vectorSearch limit)"),
        ("", 4, 13, "`similar()` returns them here"),
        ("llm.py", 3, 12, "the model call they reach"),
    ]


def test_a_retriever_returned_by_another_module_reaches_the_chain_it_is_given_to(write, monkeypatch):
    files = {
        "search.py": "def retriever():\n    return store.as_retriever(search_kwargs={'k': 16})\n",
        "views.py": "from search import retriever\nqa = RetrievalQA.from_chain_type(llm, retriever=retriever())\n",
    }
    found = findings(write, monkeypatch, files)
    assert at(found) == [("views.py", 2, 49)]
    assert [(r.path, r.span.line, r.span.col) for r in found[0].related] == [("search.py", 2, 46)]
