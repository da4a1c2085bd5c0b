"""The real OpenAI Agents SDK runner, a recording model: an agent run on one SQLiteSession sends
every item of the session on each call, and chatbound's fix (the session's own
`SessionSettings(limit=...)`) keeps the send flat while the session still keeps every item; a
Streamlit page running the agent on the chat it keeps sends the whole chat, and the fix
(`bounded_view` of the chat at the send) keeps it flat while the page still shows every message."""

from __future__ import annotations

import asyncio
import importlib
import runpy
import shutil
import sys
from types import SimpleNamespace

from conftest import FIXTURES, invoke, require

require("agents")
from agents import set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseOutputMessage, ResponseOutputText  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

APP = """\
from agents import Agent, Runner, SQLiteSession


def build(model):
    global desk, session
    desk = Agent(name="desk", instructions="Help the customer.", model=model)
    session = SQLiteSession("customer-1")


async def ask(text):
    result = await Runner.run(desk, text, session=session)
    return result.final_output
"""
TURNS = 30
set_tracing_disabled(True)  # no trace export: the tests run without network


class Recording(Model):
    """Answers every call and keeps how many input items each one was sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    async def get_response(
        self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
    ):
        self.sent.append(1 if isinstance(input, str) else len(input))
        text = ResponseOutputText(type="output_text", text="Done.", annotations=[])
        message = ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # the runner here never streams
        raise NotImplementedError


def run(source: str) -> tuple[list[int], int]:
    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    model = Recording()
    namespace["build"](model)

    async def chat() -> int:
        for turn in range(TURNS):
            await namespace["ask"](f"question {turn}")
        session = namespace["session"]
        session.session_settings = None  # read back everything the session keeps
        return len(await session.get_items())

    return model.sent, asyncio.run(chat())


def test_a_session_without_a_limit_sends_every_item_and_the_fix_keeps_it_flat():
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    [finding] = analyze_source(APP, "app.py", rules).findings
    assert (finding.rule_id, finding.span.line, finding.span.col) == (
        "MEMORY-UNBOUNDED-HISTORY",
        7,
        15,
    )  # at the session it keeps
    before, kept_before = run(APP)
    assert before == [2 * turn + 1 for turn in range(TURNS)]  # every earlier question and answer, and the new one
    fixed = apply_edits(APP, finding.fix.edits)
    assert "SessionSettings(limit=40)" in fixed
    after, kept_after = run(fixed)
    assert max(after) <= 41 and after[-4:] == [after[-1]] * 4
    assert kept_after == kept_before == 2 * TURNS  # the session keeps every item


def test_a_session_with_a_limit_is_flat_and_not_reported():
    source = APP.replace(
        'SQLiteSession("customer-1")', 'SQLiteSession("customer-1", session_settings=SessionSettings(limit=10))'
    )
    source = source.replace(
        "import Agent, Runner, SQLiteSession", "import Agent, Runner, SessionSettings, SQLiteSession"
    )
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    assert analyze_source(source, "app.py", rules).findings == []
    sent, kept = run(source)
    assert max(sent) <= 11 and kept == 2 * TURNS


TRIP = FIXTURES / "frameworks_project" / "streamlit_trip"  # a Streamlit page running the planner of trip_agents.py


class SessionState(dict):
    """Streamlit's `st.session_state`: a dict read and written as attributes, kept across reruns."""

    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def rerun_page(page, monkeypatch) -> tuple[list[int], int]:
    """Streamlit reruns the whole page on each message: TURNS reruns, each with a new question,
    on one session state; the page's imported modules stay loaded between reruns, as there."""
    state = SessionState()
    questions = iter(f"question {turn}" for turn in range(TURNS))
    shown = SimpleNamespace(write=lambda text: None)
    streamlit = SimpleNamespace(
        session_state=state, chat_input=lambda prompt: next(questions), chat_message=lambda role: shown
    )
    monkeypatch.setitem(sys.modules, "streamlit", streamlit)
    monkeypatch.syspath_prepend(str(page.parent))
    monkeypatch.delitem(sys.modules, "trip_agents", raising=False)
    model = Recording()
    importlib.import_module("trip_agents").planner.model = model
    for _ in range(TURNS):
        runpy.run_path(str(page))
    return model.sent, len(state.chat)


def test_a_streamlit_chat_sent_to_the_runner_grows_and_the_fix_keeps_it_flat(tmp_path, monkeypatch):
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    [finding] = analyze_source((TRIP / "app.py").read_text(), "app.py", rules).findings
    assert (finding.span.line, finding.span.col) == (15, 46)  # the chat the page keeps, sent as the run's input
    shutil.copytree(TRIP, tmp_path, dirs_exist_ok=True)
    (tmp_path / "requirements.txt").write_text("openai-agents>=0.24\nstreamlit\n")
    before, kept_before = rerun_page(tmp_path / "app.py", monkeypatch)
    assert before == [2 * turn + 1 for turn in range(TURNS)]  # every earlier question and answer, and the new one

    fixed = invoke("check", "--fix", "--select", "MEMORY", ".", cwd=tmp_path)
    assert fixed.exit_code == 0 and "Fixed 1 finding." in fixed.output
    assert (
        "Runner.run(planner, bounded_view(st.session_state.chat, last_turns=10))" in (tmp_path / "app.py").read_text()
    )
    assert (tmp_path / "requirements.txt").read_text().endswith("chatbound-compaction>=0.1.0\n")
    assert invoke("check", "--select", "MEMORY", ".", cwd=tmp_path).exit_code == 0  # the bounded send is not reported
    after, kept_after = rerun_page(tmp_path / "app.py", monkeypatch)  # the fixed page starts and runs
    assert after[:10] == before[:10] and after[-20:] == [19] * 20  # 9 whole turns and the question
    assert kept_after == kept_before == 2 * TURNS  # the page still shows every message
