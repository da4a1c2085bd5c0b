"""Flows: model calls (sinks), and whole histories reaching them."""

from __future__ import annotations

import pytest

from chatbound.vocabulary.sinks import sink_of

from .harness import call_named, check


@pytest.mark.parametrize(
    "code, func, api, framework",
    [
        (
            "client.chat.completions.create(model='m', messages=m)",
            "client.chat.completions.create",
            "openai.chat.completions.create",
            "openai",
        ),
        (
            "self.client.beta.chat.completions.parse(model='m', messages=m)",
            "self.client.beta.chat.completions.parse",
            "openai.chat.completions.parse",
            "openai",
        ),
        ("client.responses.create(model='m', input=m)", "client.responses.create", "openai.responses.create", "openai"),
        (
            "claude.messages.stream(model='m', max_tokens=1, messages=m)",
            "claude.messages.stream",
            "anthropic.messages.stream",
            "anthropic",
        ),
        (
            "from litellm import acompletion\nacompletion(model='m', messages=m)",
            "acompletion",
            "litellm.acompletion",
            "litellm",
        ),
        ("import ollama\nollama.chat(model='m', messages=m)", "ollama.chat", "ollama.chat", "ollama"),
        ("llm.ainvoke(m)", "llm.ainvoke", "langchain.ainvoke", "langchain"),
        ("llm.stream_chat(m)", "llm.stream_chat", "llama_index.stream_chat", "llama_index"),
        (
            "client.models.generate_content(model='m', contents=m)",
            "client.models.generate_content",
            "google.genai.models.generate_content",
            "google-genai",
        ),
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


@pytest.mark.parametrize(
    "code", ["Ticket.objects.create(messages=m)", "requests.get(url)", "st.chat_message('user').write(m)"]
)
def test_calls_that_are_not_models_are_not_sinks(code):
    check(code, lambda facts: assert_no_sink(facts))


def assert_no_sink(facts):
    assert all(sink_of(c, facts.qualified) is None for c in facts.nodes.calls)


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
