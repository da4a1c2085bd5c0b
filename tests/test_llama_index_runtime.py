"""The real LlamaIndex FunctionAgent, a recording mock LLM: a chat continued on one memory is
token-limited by default, so what each call sends grows for a few turns and then stays at the
memory's limit while the memory keeps every message; chatbound reports none of these apps.

llama-index-core 0.14.25: a `FunctionAgent` whose run has no memory in its `Context` makes
`ChatMemoryBuffer.from_defaults(llm=...)` (agent/workflow/base_agent.py `_init_context`), whose
limit is 0.75 of the LLM's context window (memory/chat_memory_buffer.py; the mock LLM declares
3,900 tokens, so 2,925); `Memory.from_defaults()` flushes the oldest messages past 0.7 of 30,000
tokens (memory/memory.py `_manage_queue`). A `Context` reused across runs keeps its buffer only
where the buffer serializes: with pydantic 2.14 it does not (simple_chat_store.py's serializer
passes `info` where pydantic now wants an index key), llama-index-workflows 2.26.1 drops the
`memory` key between runs and each run starts a new buffer, so that app is checked for the
bound alone."""

from __future__ import annotations

import asyncio

from conftest import invoke, require

require("llama_index.core.agent.workflow")
from llama_index.core.llms import ChatMessage  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402
from llama_index.core.utils import get_tokenizer  # noqa: E402

APP = """\
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.workflow import Context


def build(llm):
    global agent, kept
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="Help the customer.")
    kept = {kept}


async def ask(text):
    response = await agent.run(text, {given}=kept)
    return str(response)
"""
BUFFER_LIMIT = 2925  # 0.75 of the mock LLM's 3,900-token context window
MEMORY_LIMIT = 21000  # 0.7 of Memory's 30,000 tokens
TURNS = 12


def run(source: str, words: int) -> tuple[list[int], list[int], object]:
    """Messages and tokens (the memory's own tokenizer, over what it holds: every message but
    the system prompt) sent on each of TURNS turns of `words`-word questions and answers, and
    the app's namespace."""
    count = get_tokenizer()
    messages: list[int] = []
    tokens: list[int] = []

    def reply(sent, **kwargs):
        chat = [m for m in sent if m.role.value != "system"]
        messages.append(len(chat))
        tokens.append(len(count(" ".join(str(m.content) for m in chat))))
        return ChatMessage(role="assistant", content="answer" + " word" * words)

    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    namespace["build"](MockFunctionCallingLLM(response_generator=reply))

    async def chat() -> None:
        for turn in range(TURNS):
            await namespace["ask"](f"question {turn}" + " word" * words)

    asyncio.run(chat())
    return messages, tokens, namespace


def not_reported(source: str, tmp_path) -> bool:
    (tmp_path / "app.py").write_text(source)
    result = invoke("check", "--select", "MEMORY", "app.py", cwd=tmp_path)
    return result.exit_code == 0 and "MEMORY-" not in result.output


def test_a_reused_context_sends_at_most_the_default_buffer_and_is_not_reported(tmp_path):
    source = APP.format(kept="Context(agent)", given="ctx")
    messages, tokens, _ = run(source, 250)
    assert messages[0] == 1 and max(tokens) <= BUFFER_LIMIT
    assert not_reported(source, tmp_path)


def test_the_default_buffer_kept_across_runs_grows_to_its_limit_then_stays_flat(tmp_path):
    source = APP.format(kept="ChatMemoryBuffer.from_defaults(llm=llm)", given="memory")
    messages, tokens, namespace = run(source, 250)
    assert messages[:4] == [1, 3, 5, 7]  # every earlier question and answer, and the new question
    assert tokens[:4] == sorted(set(tokens[:4])) and max(tokens) <= BUFFER_LIMIT
    assert messages[-6:] == [messages[-1]] * 6 and tokens[-6:] == [tokens[-1]] * 6  # flat at the limit
    assert tokens[-1] > BUFFER_LIMIT - 2 * 260  # within one turn of it: the limit is what stops the growth
    assert len(namespace["kept"].get_all()) == 2 * TURNS  # the buffer keeps every message
    assert not_reported(source, tmp_path)


def test_memory_flushes_past_its_default_limit_and_is_not_reported(tmp_path):
    source = APP.format(kept='Memory.from_defaults(session_id="customer-1")', given="memory")
    messages, tokens, namespace = run(source, 1500)
    assert messages[:4] == [1, 3, 5, 7]
    assert max(tokens) <= MEMORY_LIMIT and max(tokens[-4:]) > MEMORY_LIMIT - 2 * 3000  # flushed in 3,000-token steps
    assert len(namespace["kept"].get_all()) == 2 * TURNS  # flushed messages are archived, not deleted
    assert not_reported(source, tmp_path)
