"""A history carried through a container before the send (issue 30): a dict entry, a tuple item, a
dataclass field or `**kwargs` built in reach is what was put there, so the finding stays where the
list is read back; a container written to between, or a read of another key, follows nothing."""

from __future__ import annotations

from chatbound.rules.memory_shared_across_users import MemorySharedAcrossUsers
from chatbound.rules.memory_unbounded_history import MemoryUnboundedHistory
from chatbound.rules.memory_window_splits_turn import MemoryWindowSplitsTurn
from chatbound.run.pipeline import analyze_source

HEAD = (
    "import dataclasses\n"
    "from openai import OpenAI\n"
    "\n"
    "client = OpenAI()\n"
    "history = []\n"
    "\n"
    "\n"
    "@dataclasses.dataclass\n"
    "class Box:\n"
    "    items: object\n"
    "    note: str = ''\n"
    "\n"
    "\n"
    "def turn(q):\n"
    "    history.append({'role': 'user', 'content': q})\n"
)


def findings(source: str, rules=(MemoryUnboundedHistory,)) -> list[tuple[str, int, int]]:
    result = analyze_source(source, "bot.py", list(rules))
    assert result.error is None
    return [(f.rule_id, f.span.line, f.span.col) for f in result.findings]


def send(body: str, argument: str) -> str:
    return HEAD + body + f"    return client.chat.completions.create(model='m', messages={argument})\n"


def test_a_history_read_back_from_a_dict_a_tuple_or_a_dataclass_is_sent():
    assert findings(send("    box = {'items': history}\n", "box['items']")) == [("MEMORY-UNBOUNDED-HISTORY", 17, 63)]
    assert findings(send("    pair = (history, None)\n", "pair[0]")) == [("MEMORY-UNBOUNDED-HISTORY", 17, 63)]
    assert findings(send("    box = Box(history)\n", "box.items")) == [("MEMORY-UNBOUNDED-HISTORY", 17, 63)]
    assert findings(send("    box = Box(note='x', items=history)\n", "box.items")) == [
        ("MEMORY-UNBOUNDED-HISTORY", 17, 63)
    ]


OLLAMA = "import ollama\n\nhistory = []\n\n\ndef turn(q):\n    history.append({'role': 'user', 'content': q})\n"


def test_a_history_spread_as_keywords_is_sent():
    source = HEAD + "    kw = {'messages': history}\n    return client.chat.completions.create(model='m', **kw)\n"
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 17, 56)]
    # a call that is a model call only by its keywords (`ollama.chat(messages=...)`) is one through them too,
    # reported where the history is put in
    spread = OLLAMA + "    kw = {'messages': history}\n    return ollama.chat(model='m', **kw)\n"
    assert findings(spread) == [("MEMORY-UNBOUNDED-HISTORY", 8, 23)]


def test_another_key_or_a_container_written_between_carries_nothing():
    assert findings(send("    box = {'items': [], 'all': history}\n", "box['items']")) == []
    assert findings(send("    pair = (history, [])\n", "pair[1]")) == []
    assert findings(send("    box = Box([], note=str(history))\n", "box.items")) == []
    assert findings(send("    box = {'items': history}\n    box['items'] = []\n", "box['items']")) == []
    assert findings(send("    box = {'items': history}\n    box.update(items=[])\n", "box['items']")) == []
    assert findings(send("    box = Box(history)\n    box.items = []\n", "box.items")) == []
    spread = OLLAMA + "    kw = {'messages': history}\n    kw.clear()\n    return ollama.chat(model='m', **kw)\n"
    assert findings(spread) == []


def test_a_shared_history_carried_in_a_dict_is_still_shared():
    source = (
        "from fastapi import FastAPI\nfrom openai import OpenAI\n\napp = FastAPI()\nclient = OpenAI()\nhistory = []\n\n\n"
        "@app.post('/chat')\ndef chat(user_id: str, text: str):\n"
        "    history.append({'role': 'user', 'content': text})\n"
        "    box = {'items': history}\n"
        "    return client.chat.completions.create(model='m', messages=box['items'])\n"
    )
    assert findings(source, (MemorySharedAcrossUsers,)) == [("MEMORY-SHARED-ACROSS-USERS", 13, 63)]


def test_a_count_window_in_a_dataclass_field_is_the_window_sent():
    source = (
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass Box:\n    items: object\n\n\n"
        "class Desk:\n    def __init__(self):\n        self.history = [{'role': 'system', 'content': 'Be brief.'}]\n\n"
        "    def ask(self, text):\n"
        "        self.history.append({'role': 'user', 'content': text})\n"
        "        box = Box(self.history[-10:])\n"
        "        return self.client.chat.completions.create(model='m', messages=box.items)\n"
    )
    assert findings(source, (MemoryWindowSplitsTurn,)) == [("MEMORY-WINDOW-SPLITS-TURN", 15, 19)]
    other = source.replace("box = Box(self.history[-10:])", "box = Box(str(self.history[-10:]))")
    assert findings(other, (MemoryWindowSplitsTurn,)) == []
