"""The real AgentChat team, replayed models: a RoundRobinGroupChat run again without reset()
gives each participant every message of the shared thread, which a participant with the
default context sends whole on each call; a BufferedChatCompletionContext keeps it flat.
chatbound reports the first participant and not the second."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.replay")
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_core.model_context import BufferedChatCompletionContext  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

from chatbound.analysis import analyze_source  # noqa: E402
from chatbound.registry import all_rules  # noqa: E402

RUNS = 6


class Recording(ReplayChatCompletionClient):
    def __init__(self) -> None:
        super().__init__(["A reply."] * RUNS)
        self.sent: list[int] = []

    async def create(self, messages, **kwargs):
        self.sent.append(len(messages))
        return await super().create(messages, **kwargs)


def _sent() -> tuple[list[int], list[int]]:
    """What the writer (default context) and the critic (buffered) send, run after run."""
    writer_client, critic_client = Recording(), Recording()
    writer = AssistantAgent("writer", model_client=writer_client)
    critic = AssistantAgent("critic", model_client=critic_client,
                            model_context=BufferedChatCompletionContext(buffer_size=6))
    team = RoundRobinGroupChat([writer, critic], termination_condition=MaxMessageTermination(3))

    async def serve() -> None:
        for request in range(RUNS):
            await team.run(task=f"request {request}")

    asyncio.run(serve())
    return writer_client.sent, critic_client.sent


DESK = """
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.model_context import BufferedChatCompletionContext
writer = AssistantAgent("writer", model_client=client)
critic = AssistantAgent("critic", model_client=client, model_context=BufferedChatCompletionContext(buffer_size=6))
desk = RoundRobinGroupChat([writer, critic])
async def handle(request):
    return await desk.run(task=request)
"""


def test_a_kept_team_gives_each_participant_the_whole_thread():
    writer, critic = _sent()
    assert writer == [2 + 3 * run for run in range(RUNS)]  # system + every message of every earlier run + the task
    assert critic[-3:] == [7] * 3  # system + the last six
    result = analyze_source(textwrap.dedent(DESK), "desk.py", all_rules(), {})
    assert [(f.span.line, f.span.col, f.rule_id) for f in result.findings] == [(7, 29, "AGENT-OVERSIZED-HANDOFF")]
