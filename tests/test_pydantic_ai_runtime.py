"""The real Pydantic AI with a FunctionModel: `history = result.all_messages()` fed back as the
next run's message_history sends the whole conversation every run, and a ProcessHistory
capability (2.x; history_processors= in 1.x) keeps the send flat. chatbound reports the first
and not the second."""

from __future__ import annotations

import textwrap

from conftest import require

require("pydantic_ai.capabilities")
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402

from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

TURNS = 8
CHAT = """
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
agent = Agent(model{options})
def main():
    history = []
    while True:
        result = agent.run_sync(input(), message_history=history)
        history = result.all_messages()
"""


def _sent(**options) -> list[int]:
    sent: list[int] = []

    def reply(messages, info):
        sent.append(len(messages))
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(reply), **options)
    history: list = []
    for turn in range(TURNS):
        result = agent.run_sync(f"question {turn}", message_history=history)
        history = result.all_messages()
    return sent


def _findings(code: str) -> list[tuple[int, str]]:
    result = analyze_source(textwrap.dedent(code), "chat.py", all_rules(), {})
    return [(f.span.line, f.rule_id) for f in result.findings]


def test_all_messages_fed_back_grows_every_run_and_is_reported():
    assert _sent() == [1 + 2 * turn for turn in range(TURNS)]
    assert _findings(CHAT.format(options="")) == [(8, "MEMORY-UNBOUNDED-HISTORY")]


def test_a_history_processor_keeps_the_send_flat_and_is_not_reported():
    sent = _sent(capabilities=[ProcessHistory(lambda messages: messages[-3:])])
    assert sent[2:] == [3] * (TURNS - 2)
    assert _findings(CHAT.format(options=", capabilities=[ProcessHistory(keep_recent)]")) == []
