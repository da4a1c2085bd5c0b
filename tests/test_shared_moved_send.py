"""MEMORY-SHARED-ACROSS-USERS when the send is a function of another module (issue 30): the entry
point hands the one module-level history to `llm.send(client, history)`, which sends its parameter
whole, so every caller's request still carries every conversation. Keyed by who asks, or with one
user at a terminal, it stays clean."""

from __future__ import annotations

import os
from pathlib import Path

from chatbound.run.config import Settings
from chatbound.run.runner import run

LLM = "def send(recv, items, model):\n    return recv.chat.completions.create(model=model, messages=items)\n"
SERVER = (
    "from fastapi import FastAPI\n"
    "from openai import OpenAI\n"
    "\n"
    "import llm\n"
    "\n"
    "app = FastAPI()\n"
    "client = OpenAI()\n"
    "{state}\n"
    "\n"
    "\n"
    "@app.post('/chat')\n"
    "def chat(user_id: str, text: str):\n"
    "    {history}\n"
    "    history.append({'role': 'user', 'content': text})\n"
    "    return llm.send(client, history, model='gpt-4o')\n"
)


def findings(tmp_path: Path, app: str) -> list[tuple[str, str, int, int]]:
    (tmp_path / "llm.py").write_text(LLM, encoding="utf-8")
    (tmp_path / "app.py").write_text(app, encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = run([tmp_path], Settings(root=tmp_path, select=["MEMORY-SHARED-ACROSS-USERS"]))
    finally:
        os.chdir(cwd)
    assert not result.errors
    return [(Path(f.path).name, f.rule_id, f.span.line, f.span.col) for f in result.active]


def server(state: str, history: str) -> str:
    return SERVER.replace("{state}", state).replace("{history}", history)


def test_a_module_history_sent_by_another_module_is_shared(tmp_path):
    app = server("history = []", "global history")
    assert findings(tmp_path, app) == [("app.py", "MEMORY-SHARED-ACROSS-USERS", 15, 29)]


def test_a_history_keyed_by_who_asks_or_one_terminal_user_is_not(tmp_path):
    keyed = server("histories = {}", "history = histories.setdefault(user_id, [])")
    assert findings(tmp_path, keyed) == []
    terminal = (
        "from openai import OpenAI\n\nimport llm\n\nclient = OpenAI()\nhistory = []\nwhile True:\n"
        "    history.append({'role': 'user', 'content': input('> ')})\n"
        "    llm.send(client, history, model='gpt-4o')\n"
    )
    assert findings(tmp_path, terminal) == []
