"""The real CrewAI crew, a recording model: an agent's role, backstory and goal are the system
prompt of every call (what PROMPT-OVERSIZED-SYSTEM measures), and a transcript joined into
`kickoff(inputs=...)` makes each turn's task longer by the turn before; chatbound's fix (the
last 20 lines joined) keeps it flat (the list still keeps every line: only the join changes)."""

from __future__ import annotations

import os

import pytest
from conftest import FIXTURES, require

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # no network at run time
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
crewai = require(
    "crewai",
    reason="crewai is in the test-crewai extra (about 1 GB); .ci/run installs "
    "what this test imports in a virtualenv of its own (tests/requirements/crewai.txt)",
)
from crewai.llms.base_llm import BaseLLM  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.frameworks.crewai import ROLE_PLAYING  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

FIXTURE = "crewai/chat_crew.py"  # the terminal chat, its agent given the recording model
APP = (FIXTURES / FIXTURE).read_text().replace('small hotel.")', 'small hotel.", llm=llm)')
TURNS = 15


class Recording(BaseLLM):
    """Answers every call and keeps the messages each one was sent."""

    sent: list = []

    def call(
        self,
        messages,
        tools=None,
        callbacks=None,
        available_functions=None,
        from_task=None,
        from_agent=None,
        response_model=None,
    ):
        self.sent.append([dict(message) for message in messages])
        return "Thought: I can answer.\nFinal Answer: Certainly."


class Left(Exception):
    """The guest leaves: what the terminal's input() raises after the last question."""


def run(source: str) -> list[list[dict]]:
    """The messages of each model call over TURNS questions typed at the prompt."""
    model = Recording(model="recording", sent=[])
    questions = iter(f"question {turn}" for turn in range(TURNS))

    def guest(prompt: str) -> str:
        question = next(questions, None)
        if question is None:
            raise Left
        return question

    namespace: dict = {"llm": model, "input": guest, "print": lambda *args: None}
    exec(compile(source, FIXTURE, "exec"), namespace)
    with pytest.raises(Left):
        namespace["chat"]()
    return model.sent


def test_the_backstory_is_the_system_prompt_and_the_joined_transcript_grows_until_the_fix():
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    [finding] = analyze_source(APP, FIXTURE, rules).findings
    assert (finding.span.line, finding.fix is not None and finding.fix.safe) == (15, True)
    before = run(APP)
    system = ROLE_PLAYING.format(
        role="Concierge", backstory="You run the front desk of a small hotel.", goal="Answer the guest."
    )
    assert [call[0] for call in before] == [{"role": "system", "content": system, "cache_breakpoint": True}] * TURNS
    guests = [call[1]["content"].count("Guest: ") for call in before]  # each line of the transcript, and the question
    assert guests == [turn + 1 for turn in range(TURNS)]
    after = run(apply_edits(APP, finding.fix.edits))
    assert [call[1]["content"].count("Guest: ") for call in after] == [min(turn, 10) + 1 for turn in range(TURNS)]
