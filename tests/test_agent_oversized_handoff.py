"""AGENT-OVERSIZED-HANDOFF beyond its examples: cross-file transcripts, SDK settings, fan-outs."""

from __future__ import annotations

import os
import textwrap

import pytest
from conftest import FIXTURES

from chatbound.rules.agent_oversized_handoff import AgentOversizedHandoff
from chatbound.run.config import Settings
from chatbound.run.pipeline import analyze_source
from chatbound.run.runner import run


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
    source = (
        (FIXTURES / "support_assistant" / "escalation.py")
        .read_text()
        .replace(
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
    )
    result = analyze_source(source, "escalation.py", [AgentOversizedHandoff], {})
    [finding] = result.findings
    assert (finding.span.line, finding.span.col) == (47, 16)
    assert "`self.conversation`, as `entire_conversation`" in finding.message
    assert [r.span.line for r in finding.related] == [45]


@pytest.mark.parametrize(
    "config, expected",
    [
        # the default mapper writes every item into the one message (openai-agents 0.6.0-0.24.0 handoffs/history.py)
        ("RunConfig(nest_handoff_history=True)", [(3, 37)]),
        ("RunConfig(nest_handoff_history=True, handoff_history_mapper=last_turn)", []),
        ("RunConfig(handoff_input_filter=remove_all_tools)", []),
    ],
)
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


HANDOFF = "AGENT-OVERSIZED-HANDOFF"
DESK = """\
from openai import OpenAI

from archive import Archivist

client = OpenAI()


class Desk:
    def __init__(self, archivist: Archivist):
        self.archivist = archivist
        self.messages = []

    def reply(self, text):
        self.messages.append({"role": "user", "content": text})
        answer = client.chat.completions.create(model="m", messages=self.messages[-8:])
        self.messages.append({"role": "assistant", "content": answer.choices[0].message.content})
        self.archivist.forward(self.messages)
"""
WRITES_A_FILE = """\
import json


class Archivist:
    def forward(self, messages):
        open("transcript.json", "w").write(json.dumps(messages))
"""
SENDS_IT = """\
from anthropic import Anthropic

client = Anthropic()


class Archivist:
    def forward(self, messages):
        return client.messages.create(model="m", max_tokens=300, messages=messages)
"""


def handoffs(root, **settings):
    """The run's handoff findings, paths shown relative to `root`."""
    old = os.getcwd()
    os.chdir(root)
    try:
        return [f for f in run([root], Settings(root=root, **settings)).findings if f.rule_id == HANDOFF]
    finally:
        os.chdir(old)


def test_a_receiver_of_another_module_that_reaches_no_model_is_no_handoff(write):
    assert handoffs(write({"desk.py": DESK, "archive.py": WRITES_A_FILE})) == []


def test_a_receiver_of_another_module_that_sends_what_it_is_given_is_a_handoff_named_there(write):
    [finding] = handoffs(write({"desk.py": DESK, "archive.py": SENDS_IT}))
    assert (finding.path, finding.span.line, finding.span.col) == ("desk.py", 17, 9)
    assert [(r.path, r.span.line) for r in finding.related] == [("archive.py", 8)]
    assert "`self.archivist.forward` sends it whole to anthropic.messages.create here" in finding.related[0].message


def test_a_slack_context_passed_to_a_dispatch_of_another_module_is_no_handoff(write):
    """The handlers' dispatch sends a model the event's text: the context dict never reaches it."""
    handlers = (
        "from openai import OpenAI\n"
        "client = OpenAI()\n"
        "class Handlers:\n"
        "    def dispatch(self, event, context):\n"
        "        r = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': event['text']}])\n"
        "        context['say'](r.choices[0].message.content)\n"
    )
    app = (
        "from handlers import Handlers\n"
        "handlers = Handlers()\n"
        "def on_mention(event, context, say):\n"
        "    context['seen'] = context.get('seen', []) + [event['ts']]\n"
        "    handlers.dispatch(event=event, context=context)\n"
    )
    assert handoffs(write({"handlers.py": handlers, "app.py": app})) == []


@pytest.mark.parametrize("select", [[], [HANDOFF]])
def test_both_halves_in_other_modules_are_linked_whichever_rules_run(select):
    """escalations.py holds neither a history nor a model call: the handoff rule alone links it."""
    root = FIXTURES / "handoff"
    found = {(f.path, f.span.line) for f in handoffs(root, select=select) if f.path == "escalations.py"}
    assert found == {("escalations.py", 9)}  # escalate_recent (line 13) hands over last_turns(), a window


OWN_PARTY = """
    import streamlit as st
    from pydantic_ai import Agent

    expert_agent = Agent("openai:gpt-4o")

    if "messages" not in st.session_state:
        st.session_state.messages = []


    async def turn(text):
        async with expert_agent.run_stream(text, message_history=st.session_state.messages) as result:
            answer = await result.get_output()
        st.session_state.messages.extend(result.new_messages())
        return answer
"""


def test_the_conversations_own_agent_is_no_second_agent_whatever_its_name():
    """`expert_agent` is the chat's only party: the history grows with what its own run
    returns and no other model call sends it. MEMORY reports that send; a handoff would rest
    on the word "expert" alone."""
    assert findings(OWN_PARTY) == []


def test_a_specialist_whose_reply_joins_a_conversation_another_model_holds_is_still_handed_it():
    """The front desk's model sends the same history too: the expert is a second agent."""
    code = OWN_PARTY.replace(
        "    async def turn(text):\n",
        '    desk = Agent("openai:gpt-4o-mini")\n\n\n'
        "    async def front(text):\n"
        "        await desk.run(text, message_history=st.session_state.messages)\n\n\n"
        "    async def turn(text):\n",
    )
    assert findings(code) == [(19, 16)]


def test_replies_gathered_in_a_loop_over_the_run_still_come_from_it():
    code = OWN_PARTY.replace(
        "        st.session_state.messages.extend(result.new_messages())\n",
        "        for message in result.new_messages():\n            st.session_state.messages.append(message)\n",
    )
    assert findings(code) == []


def test_a_specialist_node_routed_to_by_a_routing_tool_call_is_reported_at_its_send():
    """routed_desk.py: billing (through the enter_billing node's edge) sends the whole thread; shipping
    gets a brief and returns a trimmed view. The related location is the conditional edge."""
    source = (FIXTURES / "langgraph" / "routed_desk.py").read_text()
    result = analyze_source(source, "routed_desk.py", [AgentOversizedHandoff], {})
    assert [(f.span.line, f.span.col) for f in result.findings] == [(62, 26)]
    assert [(r.span.line, r.span.col) for r in result.findings[0].related] == [(84, 1)]
    direct = source.replace('return "enter_billing"', 'return "billing"')
    assert findings(direct) == [(62, 26)]
    briefed = source.replace('if call["name"] == ToBilling.__name__:\n        return "enter_billing"', "")
    assert findings(briefed) == []  # no route leads to billing
    by_name = source.replace('call["name"] == ToBilling.__name__', 'call.get("kind") == "billing"')
    assert findings(by_name) == []  # a router that does not read the tool call's name


def test_a_routed_specialist_without_a_checkpointer_or_given_a_send_is_no_handoff():
    for name in ("routed_once.py", "routed_briefs.py"):
        source = (FIXTURES / "langgraph" / name).read_text()
        assert analyze_source(source, name, [AgentOversizedHandoff], {}).findings == []


def test_a_workflow_sub_agent_handed_the_whole_context_history_after_a_transfer_is_reported():
    """desk_workflow.py: route reads the chosen desk from PickDesk's tool_kwargs and emits DeskEvent;
    desk sends [system] + the history the start event brought in. Related: the emit, the Context set."""
    source = (FIXTURES / "llama_index_workflows" / "desk_workflow.py").read_text()
    result = analyze_source(source, "desk_workflow.py", [AgentOversizedHandoff], {})
    assert [(f.span.line, f.span.col) for f in result.findings] == [(49, 78)]
    assert [(r.span.line, r.span.col) for r in result.findings[0].related] == [(42, 16), (29, 15)]
    whole = "] + history"
    default_view = source.replace(whole, ", *ChatMemoryBuffer.from_defaults(llm=llm, chat_history=history).get()]")
    assert findings(default_view) == [(49, 130)]  # 0.75 of the model's window is no bound
    small_view = source.replace(
        whole, ", *ChatMemoryBuffer.from_defaults(token_limit=2000, chat_history=history).get()]"
    )
    assert findings(small_view) == []
    assert findings(source.replace(whole, "] + history[-4:]")) == []
    brief = source.replace(whole, ', ChatMessage(role="user", content=await ctx.get("request"))]')
    assert findings(brief) == []
    unpicked = source.replace('calls[0].tool_kwargs["desk"]', '"billing"')
    assert findings(unpicked) == []  # no agent chosen by a transfer tool call


def test_a_workflow_run_once_per_ticket_hands_over_no_earlier_turns():
    source = (FIXTURES / "llama_index_workflows" / "one_shot_desk.py").read_text()
    assert analyze_source(source, "one_shot_desk.py", [AgentOversizedHandoff], {}).findings == []
