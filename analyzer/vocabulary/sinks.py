"""Which calls send a conversation to a model: `sink_of(call, qualified)` answers.

A sink is resolved by the qualified name LibCST gives the callee where imports allow it
(`from litellm import completion`, `import ollama`), and by the shape of the call otherwise
(`<anything>.chat.completions.create(...)`, `<anything>.messages.create(...)`,
`<llm>.invoke(...)`). `Sink.content` holds the argument values that carry conversation
(every argument except settings such as `model=`, `tools=`, `temperature=`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class Sink:
    call: cst.Call
    api: str  # "openai.chat.completions.create", "langchain.invoke", ...
    framework: str  # "openai", "anthropic", "litellm", "langchain", ...
    content: tuple[cst.BaseExpression, ...]


SETTINGS = frozenset(
    """model model_id modelId tools tool_choice functions function_call temperature top_p top_k
    max_tokens max_output_tokens max_completion_tokens response_format text_format stream n stop
    seed timeout extra_headers extra_body extra_query metadata user store reasoning truncation
    previous_response_id conversation config inferenceConfig toolConfig guardrailConfig
    output_type settings model_settings run_config session context hooks max_turns
    parallel_tool_calls presence_penalty frequency_penalty logprobs api_key base_url
    callbacks tags run_name""".split()
)
# tail of the callee's dotted name -> (framework, api). Streaming variants are sinks like the
# calls they stream: they send the same messages (checked in each SDK's source at the version
# noted; `create(stream=True)` is `create`).
SHAPES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("chat", "completions", "create"), "openai", "openai.chat.completions.create"),
    (("chat", "completions", "parse"), "openai", "openai.chat.completions.parse"),
    (("chat", "completions", "stream"), "openai", "openai.chat.completions.stream"),  # openai 3.57.0
    (("completions", "create"), "openai", "openai.completions.create"),
    (("ChatCompletion", "create"), "openai", "openai.ChatCompletion.create"),  # openai<1.0
    (("ChatCompletion", "acreate"), "openai", "openai.ChatCompletion.create"),
    (("responses", "create"), "openai", "openai.responses.create"),
    (("responses", "parse"), "openai", "openai.responses.parse"),
    (("responses", "stream"), "openai", "openai.responses.stream"),  # openai 3.57.0
    (("messages", "create"), "anthropic", "anthropic.messages.create"),
    (("messages", "stream"), "anthropic", "anthropic.messages.stream"),  # anthropic 2.14.0 (beta.messages too)
    (("chat", "complete"), "mistral", "mistral.chat.complete"),
    (("chat", "complete_async"), "mistral", "mistral.chat.complete"),
    (("chat", "stream"), "mistral", "mistral.chat.stream"),  # mistralai 3.7.0 client/chat.py
    (("chat", "stream_async"), "mistral", "mistral.chat.stream"),  # mistralai 3.7.0
    (("models", "generate_content"), "google-genai", "google.genai.models.generate_content"),
    # google-genai 3.6.1 models.py, sync and client.aio
    (("models", "generate_content_stream"), "google-genai", "google.genai.models.generate_content"),
    (("chats", "create"), "google-genai", "google.genai.chats.create"),
)
# last name of the callee -> (framework, api); any receiver
METHODS = {
    "invoke": "langchain",
    "ainvoke": "langchain",
    "stream": "langchain",
    "astream": "langchain",
    "astream_events": "langchain",
    "astream_log": "langchain",  # langchain-core 1.8.4 Runnable
    "batch": "langchain",
    "abatch": "langchain",
    "predict_messages": "langchain",
    "achat": "llama_index",
    "stream_chat": "llama_index",
    "astream_chat": "llama_index",
    "generate_content": "google",
    "generate_content_async": "google",
    "start_chat": "google",
    "converse": "bedrock",
    "converse_stream": "bedrock",  # boto3 bedrock-runtime
    "invoke_model": "bedrock",
    "invoke_model_with_response_stream": "bedrock",
    "acompletion": "litellm",  # litellm 1.110.2 main.py: acompletion, completion(stream=True)
    "chat_completion": "huggingface",
    "text_generation": "huggingface",
    "get_chat_message_content": "semantic_kernel",
    "get_chat_message_contents": "semantic_kernel",
    "get_streaming_chat_message_content": "semantic_kernel",
    "get_streaming_chat_message_contents": "semantic_kernel",
}
# packages whose import names the framework of `pkg.chat(...)`, `pkg.completion(...)`
PACKAGES = (
    "openai",
    "anthropic",
    "litellm",
    "ollama",
    "cohere",
    "mistralai",
    "llama_index",
    "langchain",
    "google",
    "boto3",
    "semantic_kernel",
    "agents",
    "pydantic_ai",
    "groq",
)
# `chat` and its stream: ollama 0.6.3 `chat(stream=True)`; cohere 7.3.1 `chat_stream` (v1:
# message=, chat_history=; v2: messages=); mistralai 0.4.2 `MistralClient.chat_stream(messages)`
CHATS = ("chat", "chat_stream")
AGENT_RUNS = ("run", "run_sync", "run_streamed", "run_stream", "iter")
MESSAGE_KEYWORDS = ("messages", "chat_history", "message_history", "contents", "history")
# methods that are model calls only on a client of this package (`llm.complete(prompt)`)
CLIENT_METHODS = {
    "create": "autogen",
    "create_stream": "autogen",
    "complete": "llama_index",
    "acomplete": "llama_index",
    "stream_complete": "llama_index",
    "astream_complete": "llama_index",
    # langchain 0.3.27: `initialize_agent(...)` returns an AgentExecutor (agents/initialize.py:99);
    # its `run(x)` is Chain.run, which runs it on {"input": x} (chains/base.py prep_inputs), and
    # the agent's prompt formats that input into the text it sends (agents/mrkl/prompt.py)
    "run": "langchain.agents",
}
# every callee name a sink below the SHAPES can have
# calls that run the function they are given, with the arguments after it, in a worker thread
# or an executor: `await asyncio.to_thread(ollama.chat, model=m, messages=h)` is that model call.
# callee name -> the index of the function among the arguments (Python 3.9+ asyncio.to_thread,
# loop.run_in_executor(executor, f, *args), anyio.to_thread.run_sync, starlette/fastapi
# run_in_threadpool, concurrent.futures Executor.submit)
DEFERRED = {"to_thread": 0, "run_in_executor": 1, "run_sync": 0, "run_in_threadpool": 0, "submit": 0}

CALLEE_NAMES = frozenset(
    {"generate", *CHATS, "completion", "acompletion", "text_completion", "post", *AGENT_RUNS, *METHODS, *DEFERRED}
)


def _names(names: Iterable[str]) -> bytes:
    return b"|".join(re.escape(n).encode() for n in sorted(set(names), key=len, reverse=True))


def triggers() -> tuple[re.Pattern[bytes], ...]:
    """Code shapes one of which every file with a model call or a chat memory holds (the memory
    rules' pre-check), derived from the tables above so that they cannot drift: each mirrors
    what `sink_of` (or a chat memory) needs before it can answer."""
    call = rb"[\s)]*\("
    receivers = {tail[-2] for tail, _, _ in SHAPES}
    verbs = {tail[-1] for tail, _, _ in SHAPES}
    methods = {*METHODS, "send_message", "send_message_stream"}  # and a kept chat's send
    anywhere = {*CHATS, "completion", "acompletion", "text_completion"}  # chat(), completion()
    by_package: dict[str, list[str]] = {}
    for method, package in CLIENT_METHODS.items():
        by_package.setdefault(package, []).append(method)
    return (
        re.compile(rb"(?:%s)[\s)]*\.\s*(?:%s)\b" % (_names(receivers), _names(verbs))),  # c.chat.completions.create
        re.compile(rb"\.\s*(?:%s)%s" % (_names(methods), call)),  # llm.invoke(...), m.generate_content(...)
        # a wrapper handing on everything to a method of its parameter: recv.run(*args, **kwargs)
        re.compile(rb"(?<!self)\.\s*(?:%s)%s\s*\*{1,2}\w+\s*(?:,\s*\*\*\w+\s*)?\)" % (_names(CALLEE_NAMES), call)),
        re.compile(rb"\b(?:%s)%s" % (_names(anywhere), call)),  # completion(...), ollama.chat(...)
        # post(json={"messages": ...}), run(q, **{"message_history": h})
        re.compile(rb"[\"'](?:messages|contents|prompt|message_history)[\"']\s*:"),
        re.compile(rb"\bollama\b"),  # ollama.generate(...)
        re.compile(
            rb"\bRunner[\s)]*\.|\bmessage_history\s*="
        ),  # Runner.run(agent, ...), agent.run(q, message_history=h)
        *(  # a client known by its package: AutoGen's create, LlamaIndex's complete, an Agents SDK run
            (re.compile(rb"\b%s" % package.encode()), re.compile(rb"\.\s*(?:%s)%s" % (_names(names), call)))
            for package, names in (*by_package.items(), ("agents", AGENT_RUNS))
        ),
        re.compile(rb"(?:Memory|Session|History|Chain)%s|\btrim_messages\b" % call),  # chat memories
    )


def dotted(expr: cst.BaseExpression) -> list[str]:
    """`self.client.chat.completions.create` -> ['self', 'client', 'chat', ...]; calls become '()'."""
    parts: list[str] = []
    while True:
        if isinstance(expr, cst.Attribute):
            parts.append(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Call):
            parts.append("()")
            expr = expr.func
        elif isinstance(expr, cst.Name):
            parts.append(expr.value)
            return parts[::-1]
        else:
            parts.append("?")
            return parts[::-1]


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def entry(expr: cst.BaseExpression | None, name: str, bound) -> cst.BaseExpression | None:
    """The value under the string key `name` of the dict literal `expr` is, or that a name is
    bound to (`bound`: the name's last binding): `config={"configurable": {"thread_id": t}}`."""
    if isinstance(expr, cst.Name):
        expr = bound(expr)
    if not isinstance(expr, cst.Dict):
        return None
    for element in expr.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            if element.key.evaluated_value == name:
                return element.value
    return None


def positional(call: cst.Call, index: int) -> cst.Arg | None:
    args = [a for a in call.args if a.keyword is None and not a.star]
    return args[index] if len(args) > index else None


# classes imported by name whose `create` takes OpenAI's messages: `from openai import ChatCompletion`
# (openai<1.0), `from fireworks.client import ChatCompletion` (fireworks-ai 0.14.0 README: "very similar
# to OpenAI's API", `ChatCompletion.create(model=..., messages=[...])`)
IMPORTED_CLASSES = frozenset({"openai.ChatCompletion", "fireworks.client.ChatCompletion"})


def _imported_class(call: cst.Call, qualified: Callable[[cst.CSTNode], set[str]]) -> str:
    """`fireworks.client.ChatCompletion` of `ChatCompletion.create(...)` when `ChatCompletion` was
    imported by name from a chat SDK; "" otherwise."""
    if not isinstance(call.func, cst.Attribute):
        return ""
    return min(qualified(call.func.value) & IMPORTED_CLASSES, default="")


def _spread(call: cst.Call, value_of: ValueOf | None) -> bool:
    """`chat(*args, **kwargs)` inside `def call(*args, **kwargs)`: a wrapper passing on whatever
    its callers give it, messages included (a dict spread built in reach is read as its keywords)."""
    return value_of is not None and any(
        a.star and isinstance(a.value, cst.Name) and isinstance(value_of(a.value), cst.Param) for a in call.args
    )


def _content(call: cst.Call) -> tuple[cst.BaseExpression, ...]:
    return tuple(a.value for a in call.args if a.keyword is None or a.keyword.value not in SETTINGS)


def _package(names: Iterable[str]) -> str:
    for name in names:
        root = name.split(".", 1)[0]
        if root in PACKAGES:
            return {"mistralai": "mistral", "boto3": "bedrock", "google": "google-genai"}.get(root, root)
    return ""


# Paths of the model APIs a conversation is POSTed to over raw HTTP, with the key of the JSON
# body that carries it (each API's reference): OpenAI `POST /v1/chat/completions` and the
# servers that copy it (Groq, Azure, vLLM, Ollama's `/v1/...`), `messages`; Anthropic
# `POST /v1/messages`, `messages`; Gemini `POST /v1beta/{model}:generateContent` and
# `:streamGenerateContent`, `contents`; Ollama `POST /api/chat`, `messages`.
CHAT_ENDPOINTS = (
    ("/chat/completions", "messages"),
    ("/v1/messages", "messages"),
    (":generateContent", "contents"),
    (":streamGenerateContent", "contents"),
    ("/api/chat", "messages"),
)
# what only a text generation request carries beside its `messages`: a chat server's body
# (llama.cpp's server, text-generation-webui, vLLM) may leave the model to the server
SAMPLING_KEYS = {"max_tokens", "max_new_tokens", "temperature", "top_p", "top_k", "n_predict"}
ValueOf = Callable[[cst.Name], "cst.CSTNode | None"]


def _bound(expr: cst.BaseExpression | None, value_of: ValueOf | None) -> cst.CSTNode | None:
    """`expr`, or the value the name `expr` was last bound to."""
    if isinstance(expr, cst.Name) and value_of is not None:
        return value_of(expr)
    return expr


def _text(expr: cst.CSTNode | None, value_of: ValueOf | None) -> str:
    """The literal text of a URL: a string, an f-string's literal parts, `BASE + "/path"`,
    each through a name bound to it."""
    expr = _bound(expr, value_of)
    if isinstance(expr, cst.SimpleString):
        return str(expr.evaluated_value)
    if isinstance(expr, cst.FormattedString):
        return "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in expr.parts)
    if isinstance(expr, cst.ConcatenatedString):
        return _text(expr.left, value_of) + _text(expr.right, value_of)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _text(expr.left, value_of) + _text(expr.right, value_of)
    return ""


def _body(call: cst.Call, value_of: ValueOf | None) -> dict[str, cst.BaseExpression]:
    """The posted JSON body's literal keys and values: `json={...}`, `json=payload` or
    `data=json.dumps(payload)` with `payload = {...}`."""
    arg = keyword(call, "json")
    value = arg.value if arg is not None else None
    if value is None and (data := keyword(call, "data")) is not None:
        if isinstance(data.value, cst.Call) and dotted(data.value.func)[-1] == "dumps" and data.value.args:
            value = data.value.args[0].value
    value = _bound(value, value_of)
    if not isinstance(value, cst.Dict):
        return {}
    return {
        str(e.key.evaluated_value): e.value
        for e in value.elements
        if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
    }


def _posted_chat(call: cst.Call, value_of: ValueOf | None) -> tuple[cst.BaseExpression, ...]:
    """What a raw HTTP POST sends a model as conversation: the body's value under the key of
    the chat endpoint its URL names, or (any URL) under `messages`/`contents`/`prompt` of a
    body that also names a `model`, as chat APIs' bodies do. () when it is no chat call."""
    body = _body(call, value_of)
    url = keyword(call, "url") or positional(call, 0)
    path = _text(url.value, value_of) if url is not None else ""
    keys = [key for endpoint, key in CHAT_ENDPOINTS if endpoint in path]
    if not keys and "model" in body:
        keys = ["messages", "contents", "prompt"]
    elif not keys and SAMPLING_KEYS & body.keys():  # a local server's body may name no model
        keys = ["messages"]
    return tuple(body[key] for key in keys if key in body)


def _deferred(call: cst.Call, index: int, qualified, value_of: ValueOf | None) -> Sink | None:
    """`asyncio.to_thread(f, *args, **kwargs)`: the model call `f(*args, **kwargs)` it runs, reported here."""
    args = list(call.args)
    if len(args) <= index or any(a.keyword is not None or a.star for a in args[: index + 1]):
        return None
    inner = sink_of(call.with_changes(func=args[index].value, args=args[index + 1 :]), qualified, value_of)
    return Sink(call, inner.api, inner.framework, inner.content) if inner is not None else None


def sink_of(
    call: cst.Call, qualified: Callable[[cst.CSTNode], set[str]], value_of: ValueOf | None = None
) -> Sink | None:
    """The model call `call` is, or None. `qualified(node)` gives LibCST's qualified names;
    `value_of(name)`, when given, the value a name was last bound to (a raw HTTP call's URL
    and body are often kept in locals or constants)."""
    parts = dotted(call.func)
    last = parts[-1]
    if last in DEFERRED and (deferred := _deferred(call, DEFERRED[last], qualified, value_of)) is not None:
        return deferred  # `agent.run_sync(q)` is no deferred call: it goes on below
    for tail, framework, api in SHAPES:
        if tuple(parts[-len(tail) :]) == tail and len(parts) > len(tail):
            if api == "google.genai.chats.create" and keyword(call, "history") is None:
                return None
            return Sink(call, api, framework, _content(call))
        if tuple(parts) == tail and (imported := _imported_class(call, qualified)):
            return Sink(call, f"{imported}.{tail[-1]}", framework, _content(call))
    if last not in CALLEE_NAMES:  # no sink below: spare the qualified-name pass over the tree
        return None
    names = qualified(call.func)
    package = _package(names)
    if last == "post" and (posted := _posted_chat(call, value_of)):
        return Sink(call, "http.post", "http", posted)
    if last == "generate" and package == "ollama":
        return Sink(call, "ollama.generate", "ollama", _content(call))
    if last in ("completion", "acompletion", "text_completion") and (
        package == "litellm" or "litellm" in parts or keyword(call, "messages") is not None
    ):
        return Sink(call, f"litellm.{last}", "litellm", _content(call))
    if last in CHATS and (package or keyword(call, "messages") or keyword(call, "chat_history") or len(parts) > 1):
        if package in ("", "llama_index") and not (
            keyword(call, "messages") or keyword(call, "chat_history") or _spread(call, value_of)
        ):
            package = "llama_index"  # llm.chat(messages): positional messages
        if (
            not any(keyword(call, k) for k in MESSAGE_KEYWORDS)
            and positional(call, 0) is None
            and not _spread(call, value_of)
        ):
            return None
        if not package and keyword(call, "message") and keyword(call, "chat_history"):
            package = "cohere"  # cohere v1: chat(message=..., chat_history=...)
        receiver = parts[-2] if len(parts) > 1 and parts[-2] not in ("()", "?") else ""
        api = f"{package}.{last}" if package else f"{receiver or 'model'}.{last}"  # as the code spells it
        return Sink(call, api, package or "chat", _content(call))
    if last in AGENT_RUNS and len(parts) > 1:
        if keyword(call, "message_history") is not None:
            return Sink(call, f"pydantic_ai.Agent.{last}", "pydantic_ai", _content(call))
        if parts[-2] == "Runner" or package == "agents":
            return Sink(call, f"agents.Runner.{last}", "agents", _content(call)[1:] or _content(call))
        return None
    if last in METHODS and len(parts) > 1:
        framework = METHODS[last] if METHODS[last] != "google" else "google-genai"
        if last in ("invoke", "ainvoke") and keyword(call, "messages") is not None and framework == "langchain":
            return Sink(call, f"semantic_kernel.{last}", "semantic_kernel", _content(call))
        return Sink(call, f"{framework}.{last}", framework, _content(call))
    return None


MESSAGE_ARGUMENTS = ("messages", "input", "contents", "chat_history", "message_history", "history", "prompt")


def message_arguments(sink: Sink) -> list[cst.BaseExpression]:
    """The argument that holds the messages (`messages=`, `input=`, `contents=`, first arg)."""
    for name in MESSAGE_ARGUMENTS:
        arg = keyword(sink.call, name)
        if arg is not None:
            return [arg.value]
    return list(sink.content[:1])
