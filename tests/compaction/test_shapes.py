"""bounded_view over the message shapes of every common SDK and framework.

Each shape builds the same small session, hand-computed once:

    [S] U1 A1 U2 C(c1) R(c1) A2 U3 A3         (S only where the shape has a system message)

- last_turns=2 keeps [S] U2 C R A2 U3 A3 (whole turns, the system message first);
- last_events=4: the raw cut lands on C (the 5th of 8 conversation items), moves forward to
  the next turn start, U3: [S] U3 A3, so R never stays without C;
- a leading result whose call is gone is dropped: R(gone) U1 A1 -> U1 A1.

The kept items are the very objects given (checked by identity), never converted.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from conftest import require

from chatbound.compaction import bounded_view


@dataclass
class Obj:
    """A stand-in for an SDK object: attributes only, no mapping access."""

    attrs: dict = field(default_factory=dict)

    def __getattr__(self, name):
        try:
            return self.__dict__["attrs"][name]
        except KeyError:
            raise AttributeError(name) from None


def obj(**attrs):
    return Obj(attrs)


class Bedrock:
    system = None

    def user(text):
        return {"role": "user", "content": [{"text": text}]}

    def assistant(text):
        return {"role": "assistant", "content": [{"text": text}]}

    def call(call_id):
        return {
            "role": "assistant",
            "content": [{"text": "checking"}, {"toolUse": {"toolUseId": call_id, "name": "lookup", "input": {"q": 1}}}],
        }

    def result(call_id):
        return {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": call_id, "content": [{"json": {"v": 42}}], "status": "success"}}],
        }


class CohereV1:
    """Cohere v1 chat_history: calls have no id, a result names its call (here c1 is the tool's name)."""

    def system(text):
        return {"role": "SYSTEM", "message": text}

    def user(text):
        return {"role": "USER", "message": text}

    def assistant(text):
        return {"role": "CHATBOT", "message": text}

    def call(call_id):
        return {"role": "CHATBOT", "message": "", "tool_calls": [{"name": call_id, "parameters": {"q": 1}}]}

    def result(call_id):
        return {
            "role": "TOOL",
            "tool_results": [{"call": {"name": call_id, "parameters": {"q": 1}}, "outputs": [{"v": 42}]}],
        }


class GenaiDicts:
    system = None

    def user(text):
        return {"role": "user", "parts": [{"text": text}]}

    def assistant(text):
        return {"role": "model", "parts": [{"text": text}]}

    def call(call_id):
        return {"role": "model", "parts": [{"functionCall": {"name": call_id, "args": {"q": 1}}}]}

    def result(call_id):
        return {"role": "user", "parts": [{"function_response": {"name": call_id, "response": {"v": 42}}}]}


def _part(text=None, function_call=None, function_response=None):
    return obj(text=text, function_call=function_call, function_response=function_response, thought=None)


class GenaiContent:
    """google-genai ``types.Content`` / ``types.Part``: every unset field is None."""

    system = None

    def user(text):
        return obj(role="user", parts=[_part(text=text)])

    def assistant(text):
        return obj(role="model", parts=[_part(text=text)])

    def call(call_id):
        return obj(role="model", parts=[_part(function_call=obj(id=call_id, name="lookup", args={"q": 1}))])

    def result(call_id):
        return obj(role="user", parts=[_part(function_response=obj(id=call_id, name="lookup", response={"v": 42}))])


class Repeated(Sequence):
    """A proto-plus repeated field (``RepeatedComposite``): a sequence, not a list."""

    def __init__(self, *items):
        self._items = list(items)

    def __getitem__(self, index):
        return self._items[index]

    def __len__(self):
        return len(self._items)


UNSET = obj(name="", args=None, response=None)  # proto-plus answers an unset message field with an empty one


def _proto(role, text="", function_call=UNSET, function_response=UNSET):
    return obj(
        role=role, parts=Repeated(obj(text=text, function_call=function_call, function_response=function_response))
    )


class GenerativeAIProtos:
    """google-generativeai ``protos.Content``: ``parts`` a repeated field, calls without ids."""

    system = None

    def user(text):
        return _proto("user", text)

    def assistant(text):
        return _proto("model", text)

    def call(call_id):
        return _proto("model", function_call=obj(name="lookup", args={"q": 1}))

    def result(call_id):
        return _proto("user", function_response=obj(name="lookup", response={"v": 42}))


class LangChain:
    """BaseMessage: ``.type``, ``.content``, ``.tool_calls`` dicts, ``.tool_call_id``."""

    def system(text):
        return obj(type="system", content=text, name=None)

    def user(text):
        return obj(type="human", content=text, name=None)

    def assistant(text):
        return obj(type="ai", content=text, tool_calls=[], name=None)

    def call(call_id):
        return obj(
            type="AIMessageChunk",
            content="",
            tool_calls=[{"name": "lookup", "args": {"q": 1}, "id": call_id}],
            name=None,
        )

    def result(call_id):
        return obj(type="tool", content="42", tool_call_id=call_id, name=None)


class Role(str, enum.Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class LlamaIndex:
    """ChatMessage: ``.role`` a str enum, tool data in ``.additional_kwargs``."""

    def system(text):
        return obj(role=Role.SYSTEM, content=text, additional_kwargs={})

    def user(text):
        return obj(role=Role.USER, content=text, additional_kwargs={})

    def assistant(text):
        return obj(role=Role.ASSISTANT, content=text, additional_kwargs={})

    def call(call_id):
        function = obj(name="lookup", arguments='{"q": 1}')
        return obj(
            role=Role.ASSISTANT, content=None, additional_kwargs={"tool_calls": [obj(id=call_id, function=function)]}
        )

    def result(call_id):
        return obj(role=Role.TOOL, content="42", additional_kwargs={"tool_call_id": call_id})


class OpenAIReplies:
    """Dicts for what the code writes, SDK reply objects (``ChatCompletionMessage``) appended as is."""

    def system(text):
        return {"role": "system", "content": text}

    def user(text):
        return {"role": "user", "content": text}

    def assistant(text):
        return obj(role="assistant", content=text, tool_calls=None, function_call=None)

    def call(call_id):
        function = obj(name="lookup", arguments='{"q": 1}')
        return obj(
            role="assistant",
            content=None,
            tool_calls=[obj(id=call_id, type="function", function=function)],
            function_call=None,
        )

    def result(call_id):
        return {"role": "tool", "tool_call_id": call_id, "content": "42"}


@dataclass
class FunctionCall:  # autogen_core.FunctionCall
    id: str
    arguments: str
    name: str


class AutoGen:
    """autogen_core.models: ``.type`` names the class; calls and results are in ``.content``."""

    def system(text):
        return obj(type="SystemMessage", content=text)

    def user(text):
        return obj(type="UserMessage", content=text, source="user")

    def assistant(text):
        return obj(type="AssistantMessage", content=text, source="bot", thought=None)

    def call(call_id):
        return obj(
            type="AssistantMessage", content=[FunctionCall(call_id, '{"q": 1}', "lookup")], source="bot", thought=None
        )

    def result(call_id):
        return obj(
            type="FunctionExecutionResultMessage",
            content=[obj(content="42", name="lookup", call_id=call_id, is_error=False)],
        )


class AnthropicBlocks:
    """``{"role": "assistant", "content": response.content}``: SDK block objects inside a dict."""

    system = None

    def user(text):
        return {"role": "user", "content": text}

    def assistant(text):
        return {"role": "assistant", "content": [obj(type="text", text=text)]}

    def call(call_id):
        return {
            "role": "assistant",
            "content": [
                obj(type="text", text="checking"),
                obj(type="tool_use", id=call_id, name="lookup", input={"q": 1}),
            ],
        }

    def result(call_id):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "42"}]}


class Responses:
    """OpenAI Responses input items: function calls and outputs are items of their own."""

    def system(text):
        return {"role": "developer", "content": text}

    def user(text):
        return {"role": "user", "content": [{"type": "input_text", "text": text}]}

    def assistant(text):
        return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}

    def call(call_id):
        return {"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": '{"q": 1}'}

    def result(call_id):
        return {"type": "function_call_output", "call_id": call_id, "output": "42"}


class Ollama:
    """Ollama: calls have no id; a tool message names the tool."""

    def system(text):
        return {"role": "system", "content": text}

    def user(text):
        return {"role": "user", "content": text}

    def assistant(text):
        return {"role": "assistant", "content": text}

    def call(call_id):
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": call_id, "arguments": {"q": 1}}}],
        }

    def result(call_id):
        return {"role": "tool", "content": "42", "tool_name": call_id}


class PydanticAI:
    """pydantic_ai.messages: ``ModelRequest`` / ``ModelResponse`` (``kind``) holding typed ``parts``."""

    def system(text):
        return obj(kind="request", parts=[obj(part_kind="system-prompt", content=text)])

    def user(text):
        return obj(kind="request", parts=[obj(part_kind="user-prompt", content=text)], instructions=None)

    def assistant(text):
        return obj(kind="response", parts=[obj(part_kind="text", content=text)])

    def call(call_id):
        return obj(
            kind="response",
            parts=[
                obj(part_kind="text", content="checking"),
                obj(part_kind="tool-call", tool_name="lookup", args={"q": 1}, tool_call_id=call_id),
            ],
        )

    def result(call_id):
        return obj(
            kind="request", parts=[obj(part_kind="tool-return", tool_name="lookup", content="42", tool_call_id=call_id)]
        )


SHAPES = [
    Bedrock,
    CohereV1,
    GenaiDicts,
    GenaiContent,
    GenerativeAIProtos,
    LangChain,
    LlamaIndex,
    OpenAIReplies,
    AutoGen,
    AnthropicBlocks,
    Responses,
    Ollama,
    PydanticAI,
]


def session(shape):
    head = [shape.system("sys")] if shape.system else []
    return head + [
        shape.user("u1"),
        shape.assistant("a1"),
        shape.user("u2"),
        shape.call("c1"),
        shape.result("c1"),
        shape.assistant("a2"),
        shape.user("u3"),
        shape.assistant("a3"),
    ]


def same(view, expected):
    assert [id(item) for item in view] == [id(item) for item in expected]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_last_turns_keeps_the_system_message_and_whole_turns_with_their_tool_loop(shape):
    history = session(shape)
    s = 1 if shape.system else 0
    u1, a1, u2, c, r, a2, u3, a3 = history[s:]
    same(bounded_view(history, last_turns=2), history[:s] + [u2, c, r, a2, u3, a3])
    same(bounded_view(history, last_turns=3), history)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_a_cut_on_the_tool_call_moves_to_the_next_turn(shape):
    history = session(shape)
    s = 1 if shape.system else 0
    same(bounded_view(history, last_events=4), history[:s] + history[-2:])


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_an_orphan_result_is_dropped(shape):
    orphan, u1, a1 = shape.result("gone"), shape.user("u1"), shape.assistant("a1")
    same(bounded_view([orphan, u1, a1], last_turns=5), [u1, a1])


def test_a_tool_result_never_counts_as_a_user_turn():
    # Bedrock and genai send tool results with the user role: the turn still starts at u2
    for shape in (Bedrock, GenaiDicts, AnthropicBlocks, GenerativeAIProtos):
        history = session(shape)
        same(bounded_view(history, last_turns=1), history[-2:])
        same(bounded_view(history, last_turns=2), history[2:])


def test_bedrock_token_budget_counts_the_tool_blocks():
    # "User: u3" 8 + "Assistant: a3" 13 = 21; the turn before it renders its call and result in full:
    # "User: u2" 8, 'Assistant: checking [tool calls: lookup({"q": 1})]' 50,
    # 'Tool [responses: lookup → {"v": 42}]' 36, "Assistant: a2" 13 = 107
    history = session(Bedrock)
    same(bounded_view(history, max_tokens=21 + 106, estimator=len), history[-2:])
    same(bounded_view(history, max_tokens=21 + 107, estimator=len), history[2:])


def test_unset_proto_fields_are_no_calls():
    # google.generativeai's protos answer an unset field with an empty message, not None
    empty = obj(name="", id="", args=None, response=None)
    history = [
        obj(role=role, parts=[_part(text=text, function_call=empty, function_response=empty)])
        for role, text in (("user", "u1"), ("model", "a1"), ("user", "u2"), ("model", "a2"))
    ]
    same(bounded_view(history, last_turns=1), history[2:])


def _request(*parts):
    return {
        "kind": "request",
        "parts": [dict(zip(("part_kind", "content", "tool_name", "tool_call_id"), part)) for part in parts],
    }


def _response(*parts):
    return {
        "kind": "response",
        "parts": [dict(zip(("part_kind", "content", "tool_name", "tool_call_id"), part)) for part in parts],
    }


def test_pydantic_ai_first_request_holds_the_system_prompt_and_stays():
    # Pydantic AI sends its system prompt only with an empty history: it lives in the first
    # request, next to the first question, and is pinned with it and the reply to it (what comes
    # before the first turn start stays). A retry without a tool is
    # feedback inside the run of u2, no turn of its own; built-in tool parts answer themselves.
    history = [
        _request(("system-prompt", "sys"), ("user-prompt", "u1")),
        _response(("text", "a1")),
        _request(("user-prompt", "u2")),
        _response(("text", "not json")),
        _request(("retry-prompt", "give json")),
        _response(
            ("builtin-tool-call", None, "web_search", "b1"),
            ("builtin-tool-return", "hits", "web_search", "b1"),
            ("tool-call", None, "lookup", "c1"),
        ),
        _request(("tool-return", "42", "lookup", "c1")),
        _response(("text", "a2")),
        _request(("user-prompt", "u3")),
        _response(("text", "a3")),
    ]
    same(bounded_view(history, last_turns=1), [history[0], history[1], *history[-2:]])
    same(bounded_view(history, last_turns=2), history)
    same(bounded_view(history[6:], last_turns=5), history[7:])  # the tool return whose call is gone is dropped
    # a request with no chat parts (instructions only) belongs to the turn it is in
    bare = {"kind": "request", "parts": [{"part_kind": "instruction", "content": "be brief"}]}
    tail = [*history[8:10], bare, _request(("user-prompt", "u4")), _response(("text", "a4"))]
    same(bounded_view(tail, last_turns=1), tail[-2:])
    same(bounded_view(tail, last_turns=2), tail)


def test_real_pydantic_ai_messages_when_installed():
    messages = require("pydantic_ai.messages")
    history = [
        messages.ModelRequest(parts=[messages.SystemPromptPart("sys"), messages.UserPromptPart("u1")]),
        messages.ModelResponse(parts=[messages.ToolCallPart("lookup", {"q": 1}, tool_call_id="c1")]),
        messages.ModelRequest(parts=[messages.ToolReturnPart("lookup", "42", tool_call_id="c1")]),
        messages.ModelResponse(parts=[messages.TextPart("a1")]),
        messages.ModelRequest(parts=[messages.UserPromptPart("u2")]),
        messages.ModelResponse(parts=[messages.TextPart("a2")]),
        messages.ModelRequest(parts=[messages.UserPromptPart("u3")]),
        messages.ModelResponse(parts=[messages.TextPart("a3")]),
    ]
    same(bounded_view(history, last_turns=1), [*history[:4], *history[-2:]])
    same(bounded_view(history, last_turns=2), history)


def test_langchain_tuples_keep_whole_turns():
    history = [("system", "sys"), ("human", "u1"), ("ai", "a1"), ("user", "u2"), ("assistant", "a2")]
    same(bounded_view(history, last_turns=1), [history[0], *history[3:]])


TEXT = [
    "System: narrate",
    "Player: I open the door",
    "Narrator: It creaks.",
    "AI: more?",
    "I look around",
    "assistant: a dark hall",
]


def test_text_a_user_line_starts_a_turn_and_assistant_lines_follow_it():
    # turns: [Player..., Narrator..., AI...] and [I look around, assistant...]; "System:" is pinned
    same(bounded_view(TEXT, last_turns=1), [TEXT[0], TEXT[4], TEXT[5]])
    same(bounded_view(TEXT, last_turns=2), TEXT)
    same(bounded_view(TEXT, last_events=3), [TEXT[0], TEXT[4], TEXT[5]])
    assert "\n".join(bounded_view(TEXT, last_turns=1)) == "System: narrate\nI look around\nassistant: a dark hall"


def test_text_lines_without_a_speaker_are_each_a_turn():
    findings = [f"Clause {n}: liability cap missing" for n in range(1, 13)]
    assert bounded_view(findings, last_turns=10) == findings[2:]


def test_speaker_pairs_are_read_like_labelled_lines():
    log = [("Crew", "status?"), ("Captain Reyes", "green"), ("Crew", "orders?"), ("Bot", "hold")]
    same(bounded_view(log, last_turns=2), log[1:])  # "Captain Reyes" is no assistant name: a turn of its own
    same(bounded_view(log, last_turns=1), log[2:])


@pytest.mark.parametrize(
    "history, says",
    [
        ([{"author": "ana", "text": "looks good"}], r"item 0: .*keys \['author', 'text'\]"),
        ([{"role": "user", "content": "u1"}, 42], "item 1: .*int"),
        ([{"role": "user", "content": "u1"}, obj(kind="x")], "item 1: .*Obj"),
        ([{"role": "robot", "content": "x"}], "unknown role 'robot'"),
        ([obj(type="remove", id="m1")], "item 0"),
        ("User: hi\nAssistant: hello", "not a str"),
        ({"role": "user", "content": "hi"}, "not a dict"),
    ],
)
def test_unknown_shapes_raise_a_clear_error(history, says):
    with pytest.raises(ValueError, match=says):
        bounded_view(history, last_turns=1)


def test_real_langchain_messages_when_installed():
    messages = require("langchain_core.messages")
    history = [
        messages.SystemMessage("sys"),
        messages.HumanMessage("u1"),
        messages.AIMessage("", tool_calls=[{"id": "c1", "name": "lookup", "args": {}}]),
        messages.ToolMessage("42", tool_call_id="c1"),
        messages.AIMessage("a1"),
        messages.HumanMessage("u2"),
        messages.AIMessage("a2"),
    ]
    same(bounded_view(history, last_turns=1), [history[0], *history[-2:]])
    same(bounded_view(history[3:], last_turns=5), history[4:])


def test_real_llamaindex_messages_when_installed():
    llms = require("llama_index.core.llms")
    history = [
        llms.ChatMessage(role="system", content="sys"),
        llms.ChatMessage(role="user", content="u1"),
        llms.ChatMessage(role="assistant", content="a1"),
        llms.ChatMessage(role="user", content="u2"),
        llms.ChatMessage(role="tool", content="42", additional_kwargs={"tool_call_id": "gone"}),
    ]
    same(bounded_view(history, last_turns=1), [history[0], history[3]])


def test_real_openai_reply_objects_when_installed():
    chat = require("openai.types.chat")
    reply = chat.ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
        }
    )
    history = [
        {"role": "user", "content": "u1"},
        reply,
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "user", "content": "u2"},
    ]
    same(bounded_view(history, last_events=2), history[3:])
    same(bounded_view(history, last_turns=2), history)
