"""The real AutoGen AgentChat, a replayed model: an AssistantAgent kept between runs sends its
whole context every run, and chatbound's fix (a BufferedChatCompletionContext) keeps the send
flat while the agent's context still holds every message."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.replay")
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

from chatbound.analysis import analyze_source  # noqa: E402
from chatbound.apply import apply_edits  # noqa: E402
from chatbound.registry import all_rules  # noqa: E402

APP = '''\
from autogen_agentchat.agents import AssistantAgent


def build(model_client):
    global tutor
    tutor = AssistantAgent("tutor", model_client=model_client, system_message="Explain step by step.")
    return tutor


async def ask(question):
    return await tutor.run(task=question)
'''
TURNS = 15


class Recording(ReplayChatCompletionClient):
    def __init__(self) -> None:
        super().__init__(["An answer."] * TURNS)
        self.sent: list[int] = []

    async def create(self, messages, **kwargs):
        self.sent.append(len(messages))
        return await super().create(messages, **kwargs)


def run(source: str) -> tuple[list[int], int]:
    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    client = Recording()
    agent = namespace["build"](client)

    async def chat() -> None:
        for turn in range(TURNS):
            await namespace["ask"](f"question {turn}")

    asyncio.run(chat())
    stored = asyncio.run(agent.save_state())["llm_context"]["messages"]
    return client.sent, len(stored)


def test_a_kept_agent_sends_its_whole_context_and_the_fix_keeps_it_flat():
    result = analyze_source(APP, "app.py", [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"])
    [finding] = result.findings
    assert (finding.span.line, finding.fix is not None and finding.fix.safe) == (6, True)
    before, kept_before = run(APP)
    assert before == [2 * turn + 2 for turn in range(TURNS)]  # system + every earlier exchange + the question
    after, kept_after = run(apply_edits(APP, finding.fix.edits))
    assert max(after) <= 21 and after[-4:] == [21] * 4
    assert kept_after == kept_before == 2 * TURNS  # the context still holds every message
