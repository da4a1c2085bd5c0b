"""The shared chat facts other rules build on: sinks, storage, whole-history derivation."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from chatbound.chat import ChatRule
from chatbound.findings import Severity
from chatbound.rule import RuleContext
from chatbound.sinks import sink_of


class Capture(ChatRule):
    """Runs a check on the facts while the metadata is live (the facts need it)."""

    ID, NAME, SEVERITY, SUMMARY = "CAPTURE", "capture", Severity.LOW, "test harness"

    def __init__(self, context, check) -> None:
        super().__init__(context)
        self.check = check
        self.checked = False

    def leave_Module(self, original_node: cst.Module) -> None:
        self.check(self.chat_facts())
        self.checked = True


def check(code: str, assertion) -> None:
    module = cst.parse_module(textwrap.dedent(code))
    rule = Capture(RuleContext("t.py", module, {}), assertion)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([rule])
    assert rule.checked


def call_named(facts, text: str) -> cst.Call:
    return next(c for c in facts.nodes.calls if facts.code(c.func) == text)


def arg(call: cst.Call, keyword: str) -> cst.BaseExpression:
    return next(a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword)


@pytest.mark.parametrize(
    "code, func, api, framework",
    [
        ("client.chat.completions.create(model='m', messages=m)", "client.chat.completions.create",
         "openai.chat.completions.create", "openai"),
        ("self.client.beta.chat.completions.parse(model='m', messages=m)", "self.client.beta.chat.completions.parse",
         "openai.chat.completions.parse", "openai"),
        ("client.responses.create(model='m', input=m)", "client.responses.create", "openai.responses.create", "openai"),
        ("claude.messages.stream(model='m', max_tokens=1, messages=m)", "claude.messages.stream",
         "anthropic.messages.stream", "anthropic"),
        ("from litellm import acompletion\nacompletion(model='m', messages=m)", "acompletion", "litellm.acompletion", "litellm"),
        ("import ollama\nollama.chat(model='m', messages=m)", "ollama.chat", "ollama.chat", "ollama"),
        ("llm.ainvoke(m)", "llm.ainvoke", "langchain.ainvoke", "langchain"),
        ("llm.stream_chat(m)", "llm.stream_chat", "llama_index.stream_chat", "llama_index"),
        ("client.models.generate_content(model='m', contents=m)", "client.models.generate_content",
         "google.genai.models.generate_content", "google-genai"),
        ("client.chat.complete(model='m', messages=m)", "client.chat.complete", "mistral.chat.complete", "mistral"),
        ("bedrock.converse(modelId='m', messages=m)", "bedrock.converse", "bedrock.converse", "bedrock"),
        ("from agents import Runner\nRunner.run(agent, m)", "Runner.run", "agents.Runner.run", "agents"),
        ("agent.run_sync(q, message_history=m)", "agent.run_sync", "pydantic_ai.Agent.run_sync", "pydantic_ai"),
    ],
)
def test_sink_of_names_the_api_and_framework(code, func, api, framework):
    def assertion(facts):
        sink = sink_of(call_named(facts, func), facts.qualified)
        assert (sink.api, sink.framework) == (api, framework)

    check(code, assertion)


@pytest.mark.parametrize("code", ["Ticket.objects.create(messages=m)", "requests.get(url)", "st.chat_message('user').write(m)"])
def test_calls_that_are_not_models_are_not_sinks(code):
    check(code, lambda facts: assert_no_sink(facts))


def assert_no_sink(facts):
    assert all(sink_of(c, facts.qualified) is None for c in facts.nodes.calls)


def test_a_local_alias_of_a_session_entry_names_the_same_storage():
    def assertion(facts):
        history = facts.histories["sessions[]"]
        assert history.storage.kind == "entry" and len(history.growth) == 1 and history.unbounded

    check(
        """\
        sessions = {}
        def reply(sid, text):
            history = sessions.setdefault(sid, [])
            history.append({"role": "user", "content": text})
            return client.chat.completions.create(model="m", messages=history)
        """,
        assertion,
    )


@pytest.mark.parametrize(
    "expression, whole",
    [
        ("self.h", True),
        ("[SYSTEM, *self.h, user]", True),
        ("[SYSTEM] + self.h", True),
        ("list(self.h)", True),
        ("self.h.copy()", True),
        ("self.h[1:]", True),
        ("[to_dict(m) for m in self.h]", True),
        ("'\\n'.join(m['content'] for m in self.h)", True),
        ("self.transcript()", True),
        ("self.h[-10:]", False),
        ("[SYSTEM, *self.h[-10:]]", False),
        ("trim_messages(self.h, max_tokens=100)", False),
        ("self.h[-1]['content']", False),
        ("len(self.h)", False),
    ],
)
def test_whole_history_in_tells_whole_histories_from_bounded_views(expression, whole):
    def assertion(facts):
        sent = arg(call_named(facts, "client.chat.completions.create"), "messages")
        assert [u.storage.key for u in facts.whole_history_in(sent)] == (["Bot.h"] if whole else [])

    check(
        f"""\
        class Bot:
            def transcript(self):
                return list(self.h)

            def ask(self, q):
                self.h.append({{"role": "user", "content": q}})
                return client.chat.completions.create(model="m", messages={expression})
        """,
        assertion,
    )


def test_a_history_joined_into_text_is_reported_at_the_history_inside_the_join():
    def assertion(facts):
        (flow,) = facts.flows()
        assert facts.code(flow.use.node) == "self.log" and flow.sink.api == "langchain.invoke"

    check(
        """\
        class Bot:
            def ask(self, q):
                text = "\\n".join(f"{m['role']}: {m['content']}" for m in self.log)
                prompt = f"History:\\n{text}\\nUser: {q}"
                self.log.append({"role": "user", "content": q})
                return llm.invoke(prompt)
        """,
        assertion,
    )


def test_a_list_derived_into_a_local_is_reported_at_the_argument_with_the_derivation_related():
    def assertion(facts):
        (flow,) = facts.flows()
        assert facts.code(flow.use.node) == "msgs" and [facts.code(n) for n in flow.use.via] == ["HISTORY"]

    check(
        """\
        HISTORY = []
        def ask(q):
            msgs = [SYSTEM] + HISTORY
            HISTORY.append({"role": "user", "content": q})
            return client.chat.completions.create(model="m", messages=msgs)
        """,
        assertion,
    )


def test_a_tool_loop_inside_one_request_is_not_a_lasting_history():
    def assertion(facts):
        assert facts.flows() == []

    check(
        """\
        def handle(q):
            messages = [{"role": "user", "content": q}]
            for _ in range(5):
                r = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
                messages.append(r.choices[0].message)
                messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
        """,
        assertion,
    )


def test_a_list_kept_across_a_chat_loop_is_a_lasting_history_with_tool_traffic():
    def assertion(facts):
        (flow,) = facts.flows()
        history = flow.history
        assert history.storage.kind == "loop" and history.tool_traffic and history.system_first and history.unbounded

    check(
        """\
        def main():
            messages = [{"role": "system", "content": "x"}]
            while True:
                messages.append({"role": "user", "content": input()})
                r = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
                messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
        """,
        assertion,
    )


def test_trimming_after_growth_bounds_the_history():
    def assertion(facts):
        assert facts.histories["Bot.h"].trims and not facts.histories["Bot.h"].unbounded

    check(
        """\
        class Bot:
            def ask(self, q):
                self.h.append({"role": "user", "content": q})
                while len(self.h) > 20:
                    self.h.pop(0)
                return client.chat.completions.create(model="m", messages=self.h)
        """,
        assertion,
    )
