"""MEMORY-WINDOW-SPLITS-TURN reads the window sent through the local or container it is held in
(issue 30): a window that puts the system message back in front is pinned wherever it is built,
one that does not is reported at its slice."""

from __future__ import annotations

from chatbound.rules.memory_window_splits_turn import MemoryWindowSplitsTurn
from chatbound.run.pipeline import analyze_source

DESK = (
    "class Desk:\n"
    "    def __init__(self):\n"
    "        self.messages = [{'role': 'system', 'content': 'Be brief.'}]\n"
    "\n"
    "    def ask(self, text):\n"
    "        self.messages.append({'role': 'user', 'content': text})\n"
    "        {held}\n"
    "        return self.client.chat.completions.create(model='gpt-4o', messages={sent})\n"
)


def findings(held: str, sent: str) -> list[tuple[str, int, int]]:
    result = analyze_source(DESK.replace("{held}", held).replace("{sent}", sent), "desk.py", [MemoryWindowSplitsTurn])
    assert result.error is None
    return [(f.rule_id, f.span.line, f.span.col) for f in result.findings]


def test_a_pinned_window_held_in_a_local_or_a_dict_is_pinned():
    assert findings("window = [self.messages[0], *self.messages[-10:]]", "window") == []
    assert findings("box = {'items': [self.messages[0], *self.messages[-10:]]}", "box['items']") == []
    assert findings("head = self.messages[:1] + self.messages[-10:]\n        window = head", "window") == []


def test_an_unpinned_window_held_in_a_local_is_reported_at_its_slice():
    assert findings("window = [*self.messages[-10:]]", "window") == [("MEMORY-WINDOW-SPLITS-TURN", 7, 20)]
    # the head of another list is no head of this one
    other = "window = [self.notes[0], *self.messages[-10:]]"
    assert findings(other, "window") == [("MEMORY-WINDOW-SPLITS-TURN", 7, 35)]
