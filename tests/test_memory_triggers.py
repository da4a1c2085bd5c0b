"""The memory rules' pre-check shapes (`chatbound.vocabulary.sinks.triggers`) never hide a finding."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from chatbound.rules.memory_unbounded_history import MemoryUnboundedHistory
from chatbound.rules.memory_window_splits_turn import MemoryWindowSplitsTurn
from chatbound.run.precheck import rules_for
from chatbound.run.project import may_import_chat
from chatbound.vocabulary.sinks import AGENT_RUNS, CLIENT_METHODS, METHODS, SHAPES

SINKS = [MemoryUnboundedHistory]
WINDOWS = [MemoryWindowSplitsTurn]
CROSS = {rule.ID for rule in (*SINKS, *WINDOWS) if rule.CROSS_MODULE}


def test_every_memory_fixture_with_a_finding_passes_its_rules_precheck():
    checked = 0
    for expected in FIXTURES.rglob("expected.txt"):
        for raw in expected.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            for rule_id, words in (("MEMORY-UNBOUNDED-HISTORY", SINKS), ("MEMORY-WINDOW-SPLITS-TURN", WINDOWS)):
                if line.endswith(rule_id):
                    path = expected.parent / line.split(":", 1)[0]
                    # or the runner links it and runs the cross-module rules (a history it grows,
                    # sent by an imported function): routes.py of stores/streaming_route
                    source = path.read_bytes()
                    assert rules_for(source, words) or (rule_id in CROSS and may_import_chat(source)), path
                    checked += 1
    assert checked > 60


def test_every_sink_shape_method_and_client_method_is_a_trigger():
    calls = [f"x = c.{'.'.join(tail)}(m)" for tail, _, _ in SHAPES] + [f"x = c.{name}(m)" for name in METHODS]
    calls += [f"import {package}\nx = c.{name}(\n  m)" for name, package in CLIENT_METHODS.items()]
    calls += [f"from agents import Runner as R\nx = R.{name}(a, q)" for name in AGENT_RUNS]
    calls += [
        "r = completion(model=m, messages=h)",
        "r = ollama.generate(model=m, prompt=p)",
        "r = requests.post(u, json={'model': m, 'messages': h})",
        "body = {\"contents\": c}\nr = httpx.post(f'{API}/{m}:generateContent', json=body)",
        "r = agent.run(q, message_history=h)",
        "memory = ConversationBufferMemory()",
        "s = SQLiteSession('x')",
        "w = trim_messages(h)",
    ]
    for call in calls:
        assert rules_for(call.encode(), SINKS), call


@pytest.mark.parametrize(
    "source",
    [
        "import math\n\ndef area(r):\n    return math.pi * r ** 2\n\nTOTALS = []\nTOTALS.append(area(2))\n",
        # the words of a chat without the shape of a model call
        "# keep the chat history and the session memory small\nhistory = load_history(session)\nprint(history[-5:])\n",
        "def create(parts):\n    return iter(parts)\n\nrunner = Runner()\nrunner.run(create(x))\n",
        "client.create(bucket='b')\n",  # create() of a client that is not a model's
    ],
)
def test_plain_code_and_near_misses_hold_no_trigger(source):
    assert not rules_for(source.encode(), SINKS)
    assert not rules_for(source.encode(), WINDOWS)


def test_a_window_needs_messages_it_could_cut():
    window = "h = h[-20:]\n"
    assert not rules_for(window.encode(), WINDOWS)
    assert rules_for((window + "h.append({'role': 'tool', 'content': r})\n").encode(), WINDOWS)
    assert rules_for((b"h = [SystemMessage(content=s)]\ndel h[:-20]\n"), WINDOWS)
    assert not rules_for((b"h = [SystemMessage(content=s)]\n"), WINDOWS)
