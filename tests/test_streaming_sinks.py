"""Streaming variants of every SDK's chat call are sinks like the calls they stream: a history
sent whole through one is a finding, the same history sent through a bounded view is not, and
the pre-check lets every such file through (each call checked in the SDK's source, versions in
chatbound.vocabulary.sinks)."""

from __future__ import annotations

import pytest

from chatbound.run.pipeline import analyze_source
from chatbound.run.precheck import rules_for
from chatbound.run.registry import all_rules

# (setup lines, the call with `HISTORY` where the messages go)
STREAMS = {
    "openai chat.completions.stream": (
        "from openai import OpenAI\nclient = OpenAI()",
        "client.chat.completions.stream(model='m', messages=HISTORY)",
    ),
    "openai beta chat.completions.stream": (
        "from openai import OpenAI\nclient = OpenAI()",
        "client.beta.chat.completions.stream(model='m', messages=HISTORY)",
    ),
    "openai create(stream=True)": (
        "from openai import OpenAI\nclient = OpenAI()",
        "client.chat.completions.create(model='m', messages=HISTORY, stream=True)",
    ),
    "openai responses.stream": (
        "from openai import OpenAI\nclient = OpenAI()",
        "client.responses.stream(model='m', input=HISTORY)",
    ),
    "anthropic messages.stream": (
        "import anthropic\nclient = anthropic.Anthropic()",
        "client.messages.stream(model='m', max_tokens=512, messages=HISTORY)",
    ),
    "cohere v1 chat_stream": ("import cohere\nco = cohere.Client()", "co.chat_stream(message=q, chat_history=HISTORY)"),
    "cohere v2 chat_stream": (
        "import cohere\nco = cohere.ClientV2()",
        "co.chat_stream(model='command-a', messages=HISTORY)",
    ),
    "google-genai generate_content_stream": (
        "from google import genai\nclient = genai.Client()",
        "client.models.generate_content_stream(model='m', contents=HISTORY)",
    ),
    "google-genai aio generate_content_stream": (
        "from google import genai\nclient = genai.Client()",
        "client.aio.models.generate_content_stream(model='m', contents=HISTORY)",
    ),
    "litellm completion(stream=True)": (
        "import litellm",
        "litellm.completion(model='m', messages=HISTORY, stream=True)",
    ),
    "litellm acompletion imported": (
        "from litellm import acompletion",
        "acompletion(model='m', messages=HISTORY, stream=True)",
    ),
    "mistral chat.stream": (
        "from mistralai import Mistral\nclient = Mistral()",
        "client.chat.stream(model='m', messages=HISTORY)",
    ),
    "mistral chat.stream_async": (
        "from mistralai import Mistral\nclient = Mistral()",
        "client.chat.stream_async(model='m', messages=HISTORY)",
    ),
    "mistral<1 chat_stream": (
        "from mistralai.client import MistralClient\nclient = MistralClient()",
        "client.chat_stream(model='m', messages=HISTORY)",
    ),
    "bedrock converse_stream": (
        "import boto3\nclient = boto3.client('bedrock-runtime')",
        "client.converse_stream(modelId='m', messages=HISTORY)",
    ),
    "ollama chat(stream=True)": ("import ollama", "ollama.chat(model='m', messages=HISTORY, stream=True)"),
    "ollama AsyncClient chat(stream=True)": (
        "from ollama import AsyncClient\nclient = AsyncClient()",
        "client.chat(model='m', messages=HISTORY, stream=True)",
    ),
    "huggingface chat_completion(stream=True)": (
        "from huggingface_hub import InferenceClient\nclient = InferenceClient()",
        "client.chat_completion(HISTORY, stream=True)",
    ),
    "langchain stream": ("from langchain_openai import ChatOpenAI\nllm = ChatOpenAI()", "llm.stream(HISTORY)"),
    "langchain astream_events": (
        "from langchain_openai import ChatOpenAI\nllm = ChatOpenAI()",
        "llm.astream_events(HISTORY, version='v2')",
    ),
    "llama_index stream_chat": (
        "from llama_index.llms.openai import OpenAI\nllm = OpenAI()",
        "llm.stream_chat(HISTORY)",
    ),
}


def bot(setup: str, call: str, history: str) -> str:
    """A bot that keeps its history on the object and streams each reply (the call on line 10)."""
    return (
        f"{setup}\n" + "\n" * (2 - setup.count("\n")) + "class Bot:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "\n"
        "    async def reply(self, q):\n"
        "        self.history.append({'role': 'user', 'content': q})\n"
        f"        stream = {call.replace('HISTORY', history)}\n"
        "        return stream\n"
    )


def findings(source: str) -> list[tuple[str, int, int]]:
    rules = rules_for(source.encode(), all_rules())  # what the pre-check lets through
    result = analyze_source(source, "bot.py", rules)
    assert result.error is None
    return [(f.rule_id, f.span.line, f.span.col) for f in result.findings]


@pytest.mark.parametrize("setup, call", STREAMS.values(), ids=list(STREAMS))
def test_a_whole_history_sent_through_a_stream_is_a_finding(setup, call):
    source = bot(setup, call, "self.history")
    assert source.splitlines()[9].startswith("        stream = ")
    column = source.splitlines()[9].index("self.history") + 1
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 10, column)]


@pytest.mark.parametrize("setup, call", STREAMS.values(), ids=list(STREAMS))
def test_a_bounded_view_sent_through_a_stream_is_not(setup, call):
    setup = "from chatbound.compaction import bounded_view\n" + setup
    assert findings(bot(setup, call, "bounded_view(self.history, last_turns=10)")) == []


def test_a_kept_google_chat_streamed_per_session_is_a_finding():
    source = (
        "from google import genai\n"
        "client = genai.Client()\n"
        "chats = {}\n"
        "\n"
        "def reply(sid, q):\n"
        "    if sid not in chats:\n"
        "        chats[sid] = client.chats.create(model='gemini-2.5-flash')\n"
        "    for chunk in chats[sid].send_message_stream(q):\n"
        "        yield chunk.text\n"
    )
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 7, 22)]
