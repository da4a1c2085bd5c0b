"""The real AutoGen AgentChat, a replayed model: an AssistantAgent kept between runs sends its
whole context every run, and chatbound's fix (a BufferedChatCompletionContext) keeps the send
flat while the agent's context still holds every message. An agent rebuilt on every request
from the state the previous request saved (`save_state()` holds the whole model context,
`load_state()` puts it back) sends every earlier turn too; one started from a fixed state
each time sends the same few messages: chatbound reports the first and not the second."""

from __future__ import annotations

import asyncio

from conftest import require

require("autogen_agentchat")
require("autogen_ext.models.replay")
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

APP = """\
from autogen_agentchat.agents import AssistantAgent


def build(model_client):
    global tutor
    tutor = AssistantAgent("tutor", model_client=model_client, system_message="Explain step by step.")
    return tutor


async def ask(question):
    return await tutor.run(task=question)
"""
SAVED_APP = """\
from autogen_agentchat.agents import AssistantAgent

saved = {}


async def load_agent(client, primed):
    agent = AssistantAgent("assistant", model_client=client)
    await agent.load_state(saved.get("state", primed))
    return agent


async def chat(client, primed, text):
    agent = await load_agent(client, primed)
    await agent.run(task=text)
    if SAVE:
        saved["state"] = await agent.save_state()
"""
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


def sent(save: bool) -> list[int]:
    namespace: dict = {"SAVE": save}
    exec(compile(SAVED_APP, "app.py", "exec"), namespace)
    client = Recording()

    async def requests() -> None:
        primed = await AssistantAgent("assistant", model_client=client).save_state()
        for turn in range(TURNS):
            await namespace["chat"](client, primed, f"question {turn}")

    asyncio.run(requests())
    return client.sent


def findings(source: str) -> list[int]:
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    return [f.span.line for f in analyze_source(source, "app.py", rules).findings]


def test_an_agent_reloaded_from_the_saved_state_resends_every_turn_and_is_reported():
    assert sent(save=True) == [2 * turn + 2 for turn in range(TURNS)]  # system + every earlier exchange + the question
    assert findings(SAVED_APP.replace("if SAVE:\n        ", "")) == [7]


def test_an_agent_started_from_a_fixed_state_sends_the_same_and_is_not_reported():
    assert sent(save=False) == [2] * TURNS
    assert findings(SAVED_APP.replace('    if SAVE:\n        saved["state"] = await agent.save_state()\n', "")) == []
