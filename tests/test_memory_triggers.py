"""The memory rules' pre-check words (`chatbound.sinks.trigger_words`) never hide a finding."""

from __future__ import annotations

from chatbound.precheck import may_have_findings, trigger_words
from chatbound.sinks import METHODS, SHAPES
from chatbound import sinks

from conftest import FIXTURES


class Words:
    """A rule whose TRIGGERS are the sink words (what the memory rules will declare)."""

    TRIGGERS = tuple(sorted(sinks.trigger_words()))


TRIGGERS = trigger_words([Words])


def test_every_memory_fixture_with_a_finding_holds_a_trigger_word():
    checked = 0
    for expected in FIXTURES.rglob("expected.txt"):
        for raw in expected.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if line.endswith(("MEMORY-UNBOUNDED-HISTORY", "MEMORY-WINDOW-SPLITS-TURN")):
                path = expected.parent / line.split(":", 1)[0]
                assert may_have_findings(path.read_bytes(), TRIGGERS), path
                checked += 1
    assert checked > 60


def test_every_sink_shape_and_method_is_a_trigger():
    calls = [f"x = c.{'.'.join(tail)}(m)" for tail, _, _ in SHAPES] + [f"x = c.{name}(m)" for name in METHODS]
    for call in calls:
        assert may_have_findings(call.encode(), TRIGGERS), call


def test_plain_code_holds_no_trigger_word():
    source = b"import math\n\ndef area(r):\n    return math.pi * r ** 2\n\nTOTALS = []\nTOTALS.append(area(2))\n"
    assert not may_have_findings(source, TRIGGERS)
