"""The real AgentChat team, replayed models: a RoundRobinGroupChat run again without reset()
gives each participant every message of the shared thread, which a participant with the
default context sends whole on each call; a BufferedChatCompletionContext keeps it flat.
chatbound reports the first participant and not the second, and its fix (that buffered context
on the participant) keeps the first one's sends flat too."""

from __future__ import annotations

import asyncio
import textwrap

from conftest import require

require("autogen_agentchat")
require("autogen_ext.models.replay")
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_core.model_context import BufferedChatCompletionContext  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

RUNS = 6


class Recording(ReplayChatCompletionClient):
    def __init__(self, runs: int = RUNS) -> None:
        super().__init__(["A reply."] * runs)
        self.sent: list[int] = []

    async def create(self, messages, **kwargs):
        self.sent.append(len(messages))
        return await super().create(messages, **kwargs)


def _sent() -> tuple[list[int], list[int]]:
    """What the writer (default context) and the critic (buffered) send, run after run."""
    writer_client, critic_client = Recording(), Recording()
    writer = AssistantAgent("writer", model_client=writer_client)
    critic = AssistantAgent(
        "critic", model_client=critic_client, model_context=BufferedChatCompletionContext(buffer_size=6)
    )
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


TEAM = """\
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.teams import RoundRobinGroupChat

writer = AssistantAgent("writer", model_client=writer_client)
critic = AssistantAgent("critic", model_client=critic_client, model_context=critic_context)
desk = RoundRobinGroupChat([writer, critic], termination_condition=MaxMessageTermination(3))


async def handle(request):
    return await desk.run(task=request)
"""
LONG = 12  # runs: 35 messages kept by the last one


def _writer_sends(source: str) -> list[int]:
    writer_client, critic_client = Recording(LONG), Recording(LONG)
    namespace = {
        "writer_client": writer_client,
        "critic_client": critic_client,
        "critic_context": BufferedChatCompletionContext(buffer_size=6),
    }
    exec(compile(source, "desk.py", "exec"), namespace)

    async def serve() -> None:
        for request in range(LONG):
            await namespace["handle"](f"request {request}")

    asyncio.run(serve())
    return writer_client.sent


def test_the_fix_buffers_the_participant_and_its_sends_stay_flat():
    [finding] = analyze_source(TEAM, "desk.py", all_rules(), {}).findings
    assert (finding.span.line, finding.rule_id, finding.fix.safe) == (7, "AGENT-OVERSIZED-HANDOFF", False)
    fixed = apply_edits(TEAM, finding.fix.edits)
    assert (
        'writer = AssistantAgent("writer", model_client=writer_client, '
        "model_context=BufferedChatCompletionContext(buffer_size=20))"
    ) in fixed
    assert _writer_sends(TEAM) == [2 + 3 * run for run in range(LONG)]
    assert _writer_sends(fixed) == [min(2 + 3 * run, 21) for run in range(LONG)]  # system + the last 20
    assert analyze_source(fixed, "desk.py", all_rules(), {}).findings == []
