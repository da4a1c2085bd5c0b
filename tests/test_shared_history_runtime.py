"""MEMORY-SHARED-ACROSS-USERS on a real FastAPI app, driven by its TestClient: two users ask in
turn, and the second user's model call carries the first user's question before the fix (the
finding) and not after (the rule's advice applied: the history keyed by the caller)."""

from __future__ import annotations

import importlib.util
import sys

from conftest import FIXTURES
from fastapi.testclient import TestClient

from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

BEFORE = (FIXTURES / "shared_history" / "support_api.py").read_text()
AFTER = BEFORE.replace(
    'transcript = [{"role": "system", "content": "You answer questions about orders."}]',
    "histories: dict[str, list] = {}",
).replace(
    '    transcript.append({"role": "user", "content": question})\n',
    '    transcript = histories.setdefault(session_id, [{"role": "system", "content": "You answer questions about orders."}])\n'
    '    transcript.append({"role": "user", "content": question})\n',
)


class FakeModel:
    """Stands in for the OpenAI client: records the messages of every call, answers 'ok N'."""

    def __init__(self):
        self.sent: list[list[dict]] = []
        self.chat = self
        self.completions = self

    def create(self, model, messages):
        self.sent.append([dict(m) for m in messages])
        reply = type("Message", (), {"content": f"ok {len(self.sent)}"})
        return type("Reply", (), {"choices": [type("Choice", (), {"message": reply})]})


def _serve(source: str, tmp_path, monkeypatch) -> tuple[TestClient, FakeModel]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    path = tmp_path / "support_api.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"support_api_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    model = FakeModel()
    module.client = model
    return TestClient(module.app), model


def _two_users(client: TestClient) -> None:
    assert client.post("/support", params={"session_id": "ann", "question": "Where is order 41?"}).status_code == 200
    assert client.post("/support", params={"session_id": "bob", "question": "Cancel my order."}).status_code == 200


def _shared(source: str):
    result = analyze_source(source, "support_api.py", all_rules(), {})
    return [(f.span.line, f.span.col) for f in result.findings if f.rule_id == "MEMORY-SHARED-ACROSS-USERS"]


def test_before_the_fix_the_second_user_sends_the_first_users_question(tmp_path, monkeypatch):
    client, model = _serve(BEFORE, tmp_path, monkeypatch)
    _two_users(client)
    bob = model.sent[1]
    assert {"role": "user", "content": "Where is order 41?"} in bob  # ann's question, in bob's call
    assert {"role": "assistant", "content": "ok 1"} in bob  # and the answer she got
    assert _shared(BEFORE) == [(14, 74)]


def test_after_the_fix_each_user_sends_only_their_own_conversation(tmp_path, monkeypatch):
    client, model = _serve(AFTER, tmp_path, monkeypatch)
    _two_users(client)
    ann, bob = model.sent
    assert [m["content"] for m in bob] == ["You answer questions about orders.", "Cancel my order."]
    assert [m["content"] for m in ann] == ["You answer questions about orders.", "Where is order 41?"]
    assert _shared(AFTER) == []
