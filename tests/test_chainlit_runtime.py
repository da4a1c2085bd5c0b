"""The real Chainlit chat context, a recording model: a handler sending
`cl.chat_context.to_openai()` sends the whole thread Chainlit keeps for the session, one turn
longer each message; chatbound's fix (`bounded_view(..., last_turns=10)` at the send) keeps it
flat while Chainlit still keeps every message. No server: an HTTP context, whose emitter sends
nothing, stands in for the websocket session."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from types import SimpleNamespace

from conftest import require

# chainlit reads (and on first import writes) `.chainlit/config.toml` under its app root
os.environ.setdefault("CHAINLIT_APP_ROOT", tempfile.mkdtemp(prefix="chainlit-app-"))
cl = require(
    "chainlit",
    reason="chainlit is in the test-chainlit extra (its pins conflict with "
    "google-adk's and autogen-core's): .ci/run installs it into a venv of its own",
)
from chainlit.context import init_http_context  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

APP = """\
import chainlit as cl
from openai import AsyncOpenAI

client = AsyncOpenAI()
SYSTEM = {"role": "system", "content": "You are a friendly cooking assistant."}


@cl.on_message
async def on_message(message: cl.Message):
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=[SYSTEM, *cl.chat_context.to_openai()])
    await cl.Message(content=response.choices[0].message.content).send()
"""
TURNS = 30


class Recording:
    """Stands in for `openai.AsyncOpenAI`: answers every call and keeps how many messages each sent."""

    sent: list[int] = []

    def __init__(self) -> None:
        self.chat = SimpleNamespace(completions=self)

    async def create(self, model, messages):
        self.sent.append(len(messages))
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=f"Answer {len(self.sent)}."))])


def run(source: str, monkeypatch) -> tuple[list[int], int]:
    """Messages sent to the model on each of TURNS turns, and how many Chainlit keeps."""
    monkeypatch.setitem(sys.modules, "openai", SimpleNamespace(AsyncOpenAI=Recording))
    monkeypatch.setattr(Recording, "sent", [])
    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)

    async def chat() -> int:
        init_http_context()
        for turn in range(TURNS):
            question = cl.Message(content=f"question {turn}", type="user_message")
            cl.chat_context.add(question)  # what Chainlit's emitter does with the user's message
            await namespace["on_message"](question)
        return len(cl.chat_context.get())

    return Recording.sent, asyncio.run(chat())


def test_the_thread_chainlit_keeps_is_sent_whole_and_the_fix_keeps_it_flat(monkeypatch):
    [finding] = analyze_source(APP, "app.py", [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]).findings
    assert (finding.span.line, finding.span.col, finding.fix.safe) == (10, 93, True)
    before, kept_before = run(APP, monkeypatch)
    assert before == [2 * turn + 2 for turn in range(TURNS)]  # the system message, every earlier turn, the question
    after, kept_after = run(apply_edits(APP, finding.fix.edits), monkeypatch)
    assert after[:10] == before[:10] and after[-20:] == [20] * 20  # the system message, 9 whole turns and the question
    assert kept_after == kept_before == 2 * TURNS  # Chainlit keeps every message for the UI
