"""A raw HTTP POST to a model's chat endpoint is a model call: a history kept on an object and
posted whole in the JSON body is a finding at the history, whichever client posts it (requests,
httpx, aiohttp; sync and async) and however the URL and the body are spelled (a literal, an
f-string, a constant, a local). The endpoints and body keys are in chatbound.vocabulary.sinks.CHAT_ENDPOINTS."""

from __future__ import annotations

import pytest
from test_streaming_sinks import bot, findings

# (lines before the class, the post that sends `HISTORY`)
POSTS = {
    "requests, literal URL": (
        "import requests",
        "requests.post('https://api.openai.com/v1/chat/completions', json={'messages': HISTORY})",
    ),
    "httpx, URL constant": (
        "import httpx\nURL = 'https://api.anthropic.com/v1/messages'",
        "httpx.post(URL, json={'max_tokens': 99, 'messages': HISTORY})",
    ),
    "httpx.AsyncClient, url= keyword": (
        "import httpx\nhttp = httpx.AsyncClient()",
        "await http.post(url='http://localhost:11434/api/chat', json={'messages': HISTORY})",
    ),
    "aiohttp, data=json.dumps": (
        "import aiohttp, json\nsession = aiohttp.ClientSession()",
        "await session.post('http://localhost:11434/api/chat', data=json.dumps({'messages': HISTORY}))",
    ),
    "requests, an endpoint in an f-string": (
        "import requests\nAPI = 'https://generativelanguage.googleapis.com/v1beta'",
        "requests.post(f'{API}/models/gemini-2.0-flash:generateContent', json={'contents': HISTORY})",
    ),
    "requests, a base URL plus the path": (
        "import requests\nBASE = 'https://llm.internal'",
        "requests.post(BASE + '/v1/chat/completions', json={'messages': HISTORY})",
    ),
}


@pytest.mark.parametrize("setup, post", POSTS.values(), ids=list(POSTS))
def test_a_history_posted_whole_to_a_chat_endpoint_is_a_finding(setup, post):
    source = bot(setup, post, "self.history")
    column = source.splitlines()[9].index("self.history") + 1
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 10, column)]


@pytest.mark.parametrize("setup, post", POSTS.values(), ids=list(POSTS))
def test_a_bounded_view_posted_to_a_chat_endpoint_is_not(setup, post):
    assert findings(bot(setup, post, "self.history[-10:]")) == []


def test_a_body_bound_to_a_local_is_read_where_it_is_bound():
    source = (
        "import httpx\n"
        "URL = 'https://api.groq.com/openai/v1/chat/completions'\n"
        "turns = []\n"
        "def ask(q):\n"
        "    turns.append({'role': 'user', 'content': q})\n"
        "    payload = {'temperature': 0, 'messages': turns}\n"
        "    return httpx.post(URL, json=payload)\n"
    )
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 6, 46)]


def test_a_body_naming_a_model_is_a_chat_call_at_any_url():
    source = bot(
        "import requests\nURL = os.environ['LLM_URL']",
        "requests.post(URL, json={'model': 'local', 'messages': HISTORY})",
        "self.history",
    )
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 10, 73)]


def test_a_body_with_sampling_settings_is_a_chat_call_at_any_url():
    """A local chat server's body (text-generation-webui, llama.cpp) may name no model: its
    `max_tokens` or `temperature` beside `messages` still says it asks a model for a reply."""
    source = bot(
        "import httpx\nURL = os.environ['LLM_URL']",
        "httpx.post(URL, json={'mode': 'instruct', 'messages': HISTORY, 'max_tokens': 200})",
        "self.history",
    )
    assert findings(source) == [("MEMORY-UNBOUNDED-HISTORY", 10, 72)]


@pytest.mark.parametrize(
    "setup, post",
    [
        # the conversation under a key the endpoint does not read (OpenAI's embeddings take `input`)
        (
            "import requests",
            "requests.post('https://api.openai.com/v1/embeddings', json={'model': 'e', 'input': HISTORY})",
        ),
        # a chat endpoint, but the history is under a key no chat API reads
        (
            "import httpx",
            "httpx.post('https://api.openai.com/v1/chat/completions', json={'messages': [q], 'metadata': HISTORY})",
        ),
        # a service that is no model, a body that names none
        ("import httpx", "httpx.post('https://hooks.example/archive', json={'messages': HISTORY})"),
        # sampling settings, but the history under a key no chat body reads
        ("import httpx", "httpx.post('https://hooks.example/x', json={'temperature': 0, 'log': HISTORY})"),
    ],
    ids=["embeddings endpoint", "history under another key", "archive service", "sampling, another key"],
)
def test_a_post_that_is_no_chat_call_is_not_a_finding(setup, post):
    assert findings(bot(setup, post, "self.history")) == []
