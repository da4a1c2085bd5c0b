"""The real smolagents with a fake model: `run(..., reset=False)` sends every step of every
earlier run again, and the bound the advice names (a step callback that prunes the memory)
keeps the send flat. chatbound reports the first and not the second."""

from __future__ import annotations

import textwrap

from conftest import require

require("smolagents")
from smolagents import ChatMessage, Model, ToolCallingAgent  # noqa: E402
from smolagents.models import ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole  # noqa: E402

from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

RUNS = 6


class Answering(Model):
    """Answers every request with the final_answer tool, recording how many messages it got."""

    def __init__(self) -> None:
        super().__init__(model_id="fake")
        self.sent: list[int] = []

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        self.sent.append(len(messages))
        call = ChatMessageToolCall(
            id="c",
            type="function",
            function=ChatMessageToolCallFunction(name="final_answer", arguments={"answer": "ok"}),
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def keep_recent(step, agent) -> None:
    agent.memory.steps[:] = agent.memory.steps[-4:]


def _sent(**options) -> list[int]:
    model = Answering()
    agent = ToolCallingAgent(tools=[], model=model, verbosity_level=-1, **options)
    for turn in range(RUNS):
        agent.run(f"question {turn}", reset=False)
    return model.sent


def _findings(code: str) -> list[tuple[int, str]]:
    result = analyze_source(textwrap.dedent(code), "chat.py", all_rules(), {})
    return [(f.span.line, f.rule_id) for f in result.findings]


CHAT = """
from smolagents import ToolCallingAgent
agent = ToolCallingAgent(tools=[], model=model{options})
while True:
    print(agent.run(input(), reset=False))
"""


def test_reset_false_sends_every_earlier_run_again_and_is_reported():
    sent = _sent()
    assert sent == [2 + 4 * turn for turn in range(RUNS)]  # system + task, then 4 more messages a run
    assert _findings(CHAT.format(options="")) == [(5, "MEMORY-UNBOUNDED-HISTORY")]


def test_a_pruning_step_callback_keeps_the_send_flat_and_is_not_reported():
    sent = _sent(step_callbacks=[keep_recent])
    assert max(sent) <= 13 and sent[-1] == sent[-2]
    assert _findings(CHAT.format(options=", step_callbacks=[keep_recent]")) == []
