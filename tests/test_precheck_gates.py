"""The rules' own pre-checks (`may_report` on the bytes, `may_report_tree` on CPython's tree):
they skip files a rule cannot report on, and never hide a finding."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from chatbound.run.config import Settings
from chatbound.run.precheck import rules_for
from chatbound.run.registry import all_rules
from chatbound.run.runner import rules_to_run, run

RULES = {rule.ID: rule for rule in all_rules()}


def _found(result):
    return sorted((f.path, f.span.line, f.span.col, f.rule_id) for f in result.findings)


# A handoff word or a specialist's name, but no call that could hand a conversation over.
NO_HANDOFF_CALL = [
    "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return self.layer(x)\n",
    "def transfer(src, dst):\n    return shutil.copy(src, dst)\n",
    "# the expert.run(task) call lives in jobs.py\nEXPERT = 'billing'\n",
]


def test_files_with_handoff_words_but_no_handoff_call_are_not_parsed():
    rule = RULES["AGENT-OVERSIZED-HANDOFF"]
    for code in NO_HANDOFF_CALL:
        assert rules_for(code.encode(), [rule]) == (rule,), code  # the words are there
        assert rules_to_run(code.encode(), [rule], {}) == ((), True), code
    for code in (
        "result = escalate(history)\n",
        "reply = self.senior_agent.invoke(messages)\n",
        "out = await asyncio.gather(*(w.run(h) for w in workers))\n",
        "r = Runner.run(b, items)\n",
    ):
        assert rules_to_run(code.encode(), [rule], {}) == ((rule,), True), code


def test_the_handoff_fixtures_give_the_same_findings_with_and_without_the_prechecks(monkeypatch):
    folder = FIXTURES / "handoff"
    monkeypatch.chdir(folder)
    settings = Settings(root=folder, select=["AGENT-OVERSIZED-HANDOFF"])
    with_precheck = run([folder], settings)
    assert _found(with_precheck) == _found(run([folder], settings, precheck=False)) and with_precheck.findings


RAG_CODE = {
    "literal.py": "docs = store.similarity_search(q, k=20)\nllm.invoke(f'{docs}')\n",
    "constant.py": "TOP_K = 1_000\ndocs = store.similarity_search(q, k=TOP_K)\nllm.invoke(f'{docs}')\n",
    "hex.py": "docs = store.similarity_search(q, k=0x20)\nllm.invoke(f'{docs}')\n",
    "pgvector.py": 'cur.execute("SELECT t FROM d ORDER BY e <-> %s LIMIT 30", (v,))\nllm.invoke(str(cur.fetchall()))\n',
    "small.py": "docs = store.similarity_search(q, k=4)\nllm.invoke(f'{docs}')\n",
}


@pytest.mark.parametrize("limit", [1, 4, 8, 19, 20, 29, 30, 1000])
def test_the_retrieval_rule_finds_the_same_with_and_without_its_number_precheck(write, monkeypatch, limit):
    root = write(RAG_CODE)
    monkeypatch.chdir(root)
    settings = Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"], options={"max-top-k": limit})
    with_precheck = run([root], settings)
    without = run([root], settings, precheck=False)
    assert _found(with_precheck) == _found(without)
    expected = {"literal.py": 20, "constant.py": 1000, "hex.py": 32, "pgvector.py": 30, "small.py": 4}
    assert {f.path for f in with_precheck.findings} == {path for path, k in expected.items() if k > limit}


def test_a_retrieval_file_without_a_number_over_the_limit_is_not_parsed():
    rule = RULES["RAG-EXCESSIVE-TOP-K"]
    code = b"docs = store.similarity_search(q, k=4)\nretriever = index.as_retriever(similarity_top_k=TOP_K)\n"
    assert rules_for(code, [rule], {"max-top-k": 8}) == ()
    assert rules_for(code, [rule], {"max-top-k": 3}) == (rule,)


SEND = 'r = client.chat.completions.create(model="m", messages=history)\n'


def test_files_with_a_model_call_but_no_count_window_are_not_parsed_for_the_window_rule():
    rule = RULES["MEMORY-WINDOW-SPLITS-TURN"]
    for code in (SEND, "history.append(m)\nhistory.pop()\n" + SEND, "x = history[1:]\ndel history[2]\n" + SEND):
        assert rules_for(code.encode(), [rule]) == (rule,), code  # the model call is there
        assert rules_to_run(code.encode(), [rule], {}) == ((), True), code
    for window in (
        "history[-20:]",
        "del history[:-20]",
        "deque(maxlen=20)",
        "deque([], 20)",
        "trim_messages(history, max_tokens=9)",
        "del (history[:2], x)",
    ):
        code = f"w = {window}\n" if not window.startswith("del") else window + "\n"
        assert rules_to_run((code + SEND).encode(), [rule], {}) == ((rule,), True), window


def test_the_memory_fixtures_give_the_same_window_findings_with_and_without_the_prechecks(monkeypatch):
    folder = FIXTURES / "memory"
    monkeypatch.chdir(folder)
    settings = Settings(root=folder, select=["MEMORY-WINDOW-SPLITS-TURN"])
    with_precheck = run([folder], settings)
    assert _found(with_precheck) == _found(run([folder], settings, precheck=False)) and with_precheck.findings


# A model call's shape in the text (what the memory rule's triggers look for), but no call
# that may chat: a library defining the API, a comment, a payload built for another module.
NO_CHAT_CALL = [
    "def create(self, *, messages, model):\n    return self._post('/chat', body={'messages': messages})\n",
    "# llm.invoke(history) happens in the worker\nhistory = []\nhistory.append(turn)\n",
    "payload = {'messages': history, 'model': 'gpt-4o'}\nhistory.append(reply)\n",
]


def test_files_with_a_model_call_shape_but_no_call_that_may_chat_are_not_parsed():
    rule = RULES["MEMORY-UNBOUNDED-HISTORY"]
    for code in NO_CHAT_CALL:
        assert rules_for(code.encode(), [rule]) == (rule,), code  # the triggers occur
        assert rules_to_run(code.encode(), [rule], {}) == ((), True), code
    for code in (
        "r = client.chat.completions.create(model=m, messages=h)\n",
        "payload = {'messages': h}\ndel h[0]\n",
        "memory = ConversationBufferMemory()\n",
        "out = llm.invoke(state['messages'])\n",
    ):
        assert rules_to_run(code.encode(), [rule], {}) == ((rule,), True), code


# A tool list or a `tools=` in the text, but nothing binds tools to a model or an agent.
NO_TOOL_BINDING = [
    "ALL_TOOLS = [search, lookup, refund, cancel, escalate, translate]\n",
    "def all_tools():\n    return [search, lookup, refund, cancel, escalate, translate]\n",
    "config = dict(tools=registry.values())\nsave(config)\n",
]


def test_files_with_tool_words_but_no_tool_binding_are_not_parsed():
    rule = RULES["TOOLS-ALL-REGISTERED"]
    for code in NO_TOOL_BINDING:
        assert rules_for(code.encode(), [rule]) == (rule,), code
        assert rules_to_run(code.encode(), [rule], {}) == ((), True), code
    for code in (
        "llm = model.bind_tools(all_tools())\n",
        "agent = create_react_agent(model, TOOLS)\n",
        "r = client.chat.completions.create(model=m, messages=h, tools=TOOLS)\n",
        "@agent.tool\ndef search(ctx, q):\n    return q\n",
    ):
        assert rules_to_run(code.encode(), [rule], {}) == ((rule,), True), code
