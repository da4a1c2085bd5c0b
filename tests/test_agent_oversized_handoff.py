"""AGENT-OVERSIZED-HANDOFF beyond its examples: cross-file transcripts, SDK settings, fan-outs."""

from __future__ import annotations

import textwrap

import pytest

from chatbound.analysis import analyze_source
from chatbound.rules.agent_oversized_handoff import AgentOversizedHandoff

from conftest import FIXTURES


def findings(code: str):
    result = analyze_source(textwrap.dedent(code), "app.py", [AgentOversizedHandoff], {})
    assert result.error is None
    return [(f.span.line, f.span.col) for f in result.findings]


def test_a_transcript_of_another_file_is_not_guessed_from_its_name():
    """escalation.py hands `self.assistant.transcript()` to a specialist that does send it to a
    model, but the transcript's class is in support_service.py: read alone, the module shows a
    receiver and a method named `transcript`, not a conversation."""
    source = (FIXTURES / "support_assistant" / "escalation.py").read_text()
    assert analyze_source(source, "escalation.py", [AgentOversizedHandoff], {}).findings == []


def test_a_module_transcript_handed_to_the_module_specialist_is_named_in_the_message():
    source = (FIXTURES / "support_assistant" / "escalation.py").read_text().replace(
        "class SpecialistClient:",
        "class Assistant:\n"
        "    def __init__(self):\n"
        "        self.conversation = []\n"
        "    def answer(self, question, customer_id):\n"
        "        self.conversation.append({'role': 'user', 'content': question})\n"
        "        return question\n"
        "    def transcript(self):\n"
        "        return list(self.conversation)\n"
        "\n"
        "\n"
        "class SpecialistClient:",
    )
    result = analyze_source(source, "escalation.py", [AgentOversizedHandoff], {})
    [finding] = result.findings
    assert (finding.span.line, finding.span.col) == (47, 16)
    assert "`self.conversation`, as `entire_conversation`" in finding.message
    assert [r.span.line for r in finding.related] == [45]


@pytest.mark.parametrize("config, expected", [
    # the default mapper writes every item into the one message (openai-agents 0.6.0-0.24.0 handoffs/history.py)
    ("RunConfig(nest_handoff_history=True)", [(3, 37)]),
    ("RunConfig(nest_handoff_history=True, handoff_history_mapper=last_turn)", []),
    ("RunConfig(handoff_input_filter=remove_all_tools)", []),
])
def test_run_config_excuses_sdk_handoffs_only_where_it_decides_what_passes(config, expected):
    code = f"""
    from agents import Agent, RunConfig, Runner, handoff
    desk = Agent(name="desk", handoffs=[handoff(billing)])
    async def answer(session, text):
        return await Runner.run(desk, text, session=session, run_config={config})
    """
    assert findings(code) == expected


def test_a_handoff_function_of_another_library_is_not_the_sdk_one():
    assert findings("from mylib import handoff\nh = handoff(billing_agent)\n") == []


@pytest.mark.parametrize(
    "call, expected",
    [
        ("await self.escalate(reason='refund', history=self.history)", [(7, 15)]),
        ("await self.escalate('refund', self.history[:])", [(7, 15)]),
        ("await self.escalate('refund', self.history[-2:])", []),
        ("self.router.route_to('billing', self.history[:])", []),  # a router the module does not show
        ("self.sub_agent.invoke({'messages': list(self.history)})", [(7, 9)]),
        ("self.main_llm.invoke({'messages': list(self.history)})", []),  # the primary model: a memory question
        ("self.specialist.run(summarize(self.history))", []),
    ],
)
def test_handoff_shapes(call, expected):
    code = f"""
    class Chat:
        def __init__(self):
            self.history = []
        async def turn(self, text):
            self.history.append({{"role": "user", "content": text}})
            {call}
        async def escalate(self, reason, history):
            return await self.specialist_llm.ainvoke([("system", reason), *history])
    """
    assert findings(code) == expected


def test_create_task_in_a_loop_gives_every_worker_the_transcript():
    code = """
    import asyncio
    log = []
    async def fan(workers, text):
        log.append({"role": "user", "content": text})
        async with asyncio.TaskGroup() as tg:
            for worker in workers:
                tg.create_task(worker.ainvoke(log))
    """
    assert findings(code) == [(8, 28)]


def test_a_parameter_named_like_a_history_is_no_conversation_by_its_name():
    code = """
    import asyncio
    async def fan(workers, messages):
        async with asyncio.TaskGroup() as tg:
            for worker in workers:
                tg.create_task(worker.ainvoke(messages))
    """
    assert findings(code) == []
