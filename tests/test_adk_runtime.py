"""The real Google ADK runner, a recording model: an agent run on one session sends every event of
the session on each call, and chatbound's fix (a run_config loading recent events only) keeps the
send flat while the session still keeps every event. ADK's other bound, include_contents='none',
is flat too and not reported."""

from __future__ import annotations

import asyncio
import logging

import pytest
from conftest import FIXTURES, require

require("google.adk")
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.genai import types  # noqa: E402

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.config import Settings  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402
from chatbound.run.runner import run as check  # noqa: E402

APP = """\
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types


def build(model, contents="default"):
    global runner
    desk = Agent(name="desk", model=model, instruction="Help the customer.", include_contents=contents)
    runner = InMemoryRunner(agent=desk, app_name="desk")
    return runner


async def ask(text):
    content = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id="u", session_id="s", new_message=content):
        pass
"""
TURNS = 30


class Recording(BaseLlm):
    """Answers every call and keeps how many contents each one was sent."""

    sent: list[int] = []

    async def generate_content_async(self, llm_request, stream=False):
        self.sent.append(len(llm_request.contents))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Done.")]))


def run(source: str, contents: str = "default") -> tuple[list[int], int]:
    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    model = Recording(model="recording", sent=[])
    runner = namespace["build"](model, contents)

    async def chat() -> int:
        await runner.session_service.create_session(app_name="desk", user_id="u", session_id="s")
        for turn in range(TURNS):
            await namespace["ask"](f"question {turn}")
        session = await runner.session_service.get_session(app_name="desk", user_id="u", session_id="s")
        return len(session.events)

    logging.disable(logging.WARNING)  # ADK warns that the recording model reports no token usage
    try:
        kept = asyncio.run(chat())
    finally:
        logging.disable(logging.NOTSET)
    return model.sent, kept


def test_a_runner_on_one_session_sends_every_event_and_the_fix_keeps_it_flat(tmp_path):
    (tmp_path / "requirements.txt").write_text("google-adk>=1.27\n")  # the fix needs RunConfig.get_session_config
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    [finding] = analyze_source(APP, "app.py", rules, directory=str(tmp_path)).findings
    assert (finding.span.line, finding.fix is not None, finding.fix.safe) == (9, True, False)
    before, kept_before = run(APP)
    assert before == [2 * turn + 1 for turn in range(TURNS)]  # every earlier question and answer, and the new one
    after, kept_after = run(apply_edits(APP, finding.fix.edits))
    assert max(after) <= 51 and after[-4:] == [after[-1]] * 4
    assert kept_after == kept_before == 2 * TURNS  # the session keeps every event


def test_include_contents_none_is_flat_and_not_reported():
    source = APP.replace("include_contents=contents", 'include_contents="none"')
    rules = [r for r in all_rules() if r.ID == "MEMORY-UNBOUNDED-HISTORY"]
    assert analyze_source(source, "app.py", rules).findings == []
    sent, kept = run(source)
    assert sent == [1] * TURNS and kept == 2 * TURNS


@pytest.mark.parametrize(
    "folder, line, fixed, advice",
    [
        (
            "pinned_new",
            8,
            True,
            "Send each model call the last 50 events of the session (google-adk 1.28.0 from uv.lock;",
        ),
        (
            "pinned_old",
            12,
            False,
            "google-adk 1.22.0 (from poetry.lock) has no `RunConfig.get_session_config` (added "
            "in 1.27.0): configure events compaction on the app",
        ),
        ("unpinned", 12, False, "The project declares no google-adk version; assuming 1.27 or later:"),
    ],
)
def test_the_fix_is_made_only_where_the_project_requires_a_version_that_has_it(folder, line, fixed, advice):
    """RunConfig has no get_session_config before google-adk 1.27.0 and forbids unknown fields:
    the edit would stop the app from starting, so a project that allows an older version gets advice."""
    project = FIXTURES / "adk" / folder
    [finding] = [f for f in check([project], Settings(root=project)).active if f.rule_id == "MEMORY-UNBOUNDED-HISTORY"]
    assert (finding.span.line, finding.fix is not None) == (line, fixed)
    assert finding.suggestion.startswith(advice)
    if fixed:
        assert finding.fix.safe is False and "RunConfig(get_session_config=GetSessionConfig(num_recent_events=50))" in (
            finding.fix.edits[0].text
        )
