"""Reading the chat items of the common SDKs and frameworks as ``Message``s, duck-typed.

``bounded_view`` never converts what it keeps; it only needs to know, for each item, its
role and the tool calls it makes or answers. An item is read as the first of these it is:

- a dict or an object with a ``role`` (OpenAI and its SDK reply objects, Anthropic, Mistral,
  Ollama, Groq, Hugging Face, Gradio "messages", Cohere v1 ``USER``/``CHATBOT`` with
  ``message``, ``tool_calls`` and ``tool_results``, Cohere v2, Bedrock Converse blocks
  ``text``/``toolUse``/``toolResult``, google-genai ``Content`` and its dicts with ``parts``,
  LlamaIndex ``ChatMessage`` whose role is an enum, google-generativeai's proto-plus
  ``Content``, whose ``parts`` is a repeated field, not a list);
- a dict or an object with a ``type``: LangChain messages (``human``, ``ai``, ``system``,
  ``tool``), AutoGen-core messages (``UserMessage``, ``AssistantMessage``,
  ``FunctionExecutionResultMessage``...), OpenAI Responses items (``function_call``,
  ``function_call_output``, ``reasoning``);
- a dict or an object with a ``kind`` "request" or "response" and ``parts``: Pydantic AI
  ``ModelRequest`` / ``ModelResponse`` (and their dumped dicts). A request is read by its
  parts: ``system-prompt`` a system message (so the first request, which holds the system
  prompt Pydantic AI sends only with an empty history, stays pinned, with the reply to the
  question it also holds), ``user-prompt`` a user message,
  a part with a ``tool_call_id`` and ``tool_name`` a tool result, a retry without a tool a
  tool message answering no call (feedback inside a run, never a turn start); a response is
  an assistant message with its ``text`` parts and ``tool-call`` parts as calls (built-in
  tool parts answer themselves and are skipped);
- a ``(role, content)`` pair whose role is one of the role names above (LangChain's tuples);
- text: a string, or a ``(speaker, text)`` pair. A text whose speaker is an assistant's
  (``Assistant:``, ``AI:``, ``Bot:``, ``Chatbot:``, ``Model:``, ``Agent:``, ``Narrator:``,
  any case) is an assistant message, ``System:`` a system message, and any other text is a
  user message: it starts a turn. So ``last_turns=N`` keeps at most N user texts with the
  assistant texts that follow them.

Anything else raises ``ValueError`` naming the item: a guess could drop what must be sent.
A call without an id (Cohere v1, Ollama, genai, legacy ``function_call``) is matched to its
result by the tool's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from .messages import Message, ToolCall

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
# AutoGen-core message classes (their ``type`` field).
_AUTOGEN = {
    "SystemMessage": "system",
    "UserMessage": "user",
    "AssistantMessage": "assistant",
    "FunctionExecutionResultMessage": "tool",
}
# OpenAI Responses input items that are not messages.
_RESPONSES = {"function_call": "assistant", "function_call_output": "tool", "reasoning": "assistant"}
_TEXT_BLOCKS = ("text", "input_text", "output_text")
_ASSISTANT_SPEAKERS = ("assistant", "ai", "bot", "chatbot", "model", "agent", "narrator")
_SPEAKER = re.compile(r"\s*([A-Za-z][\w .'-]{0,30}?)\s*:")


def field(item, name: str):
    """``item[name]`` of a mapping, ``item.name`` of an object, else None."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def read_item(item, tool_names: dict) -> list:
    """The messages one chat item holds; records the tool names of the calls it makes."""
    if isinstance(item, str):
        return [_text_message(None, item)]
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        role = _ROLES.get(item[0].lower())
        if role is None and isinstance(item[1], str):
            return [_text_message(item[0], item[1])]
        if role is not None:
            return _messages(role, item[1], [], [], None, tool_names)
    if field(item, "kind") in ("request", "response") and isinstance(field(item, "parts"), (list, tuple)):
        return _pydantic_ai(item, tool_names)
    role = _role_of(item)
    if role is None:
        raise ValueError(f"messages: cannot read {_describe(item)} as a chat message")
    kind = field(item, "type")
    if kind in ("function_call", "function_call_output"):
        call_id = field(item, "call_id")
        if kind == "function_call":
            return _messages(
                role,
                None,
                [ToolCall(call_id, field(item, "name"), _json(field(item, "arguments")))],
                [],
                None,
                tool_names,
            )
        return _messages(role, None, [], [(call_id, text_of(field(item, "output")))], None, tool_names)
    if kind == "FunctionExecutionResultMessage":  # AutoGen: content is the list of results
        results = [(field(r, "call_id"), text_of(field(r, "content"))) for r in field(item, "content") or ()]
        return _messages(role, None, [], results, None, tool_names)
    content = field(item, "content")
    if content is None:
        content = field(item, "message") if isinstance(field(item, "message"), str) else field(item, "parts")
    calls = _calls(item) + _block_calls(content)
    results = _results(item, role, content)
    return _messages(role, content, calls, results, field(item, "name"), tool_names)


def _pydantic_ai(item, tool_names: dict) -> list:
    """The messages of a Pydantic AI ModelRequest or ModelResponse, read by its parts."""
    parts = field(item, "parts")
    if field(item, "kind") == "response":
        calls = [
            ToolCall(field(p, "tool_call_id"), field(p, "tool_name"), _json(field(p, "args")))
            for p in parts
            if field(p, "part_kind") == "tool-call" and isinstance(field(p, "tool_name"), str)
        ]
        text = "\n".join(field(p, "content") or "" for p in parts if field(p, "part_kind") == "text")
        return _messages("assistant", text, calls, [], None, tool_names)
    found = []
    for part in parts:
        kind = field(part, "part_kind")
        if kind == "system-prompt":
            found.append(Message("system", text_of(field(part, "content"))))
        elif kind == "user-prompt":
            found.append(Message("user", text_of(field(part, "content"))))
        elif isinstance(kind, str) and "builtin" not in kind and isinstance(field(part, "tool_name"), str):
            call_id = field(part, "tool_call_id")
            found.append(
                Message("tool", _json(field(part, "content")), tool_call_id=call_id, name=tool_names.get(call_id))
            )
        elif kind in ("retry-prompt", "retry-feedback"):
            found.append(Message("tool", _json(field(part, "content"))))  # answers no call
    found.sort(key=lambda message: message.role != "system")
    return found or [Message("tool", "")]  # instructions or deltas only: part of the turn it is in


def _role_of(item):
    role = field(item, "role")
    role = getattr(role, "value", role)  # LlamaIndex MessageRole
    if isinstance(role, str):
        return _ROLES.get(role.lower()) or _unknown_role(role)
    kind = field(item, "type")
    if isinstance(kind, str):
        kind = kind.removesuffix("MessageChunk").lower() if kind.endswith("MessageChunk") else kind
        return _ROLES.get(kind) or _AUTOGEN.get(kind) or _RESPONSES.get(kind)
    return None


def _unknown_role(role: str):
    raise ValueError(f"messages: unknown role {role!r}")


def _messages(role, content, calls, results, name, tool_names) -> list:
    tool_names.update((call.id, call.name) for call in calls)
    text = text_of(content)
    if results:
        found = [Message("tool", out, tool_call_id=call_id, name=tool_names.get(call_id)) for call_id, out in results]
        return found + ([Message(role, text)] if text and role != "tool" else [])
    return [Message(role, text, tuple(calls), name=name if isinstance(name, str) else None)]


def _calls(item) -> list:
    """``tool_calls`` (OpenAI dicts and objects, LangChain, Cohere, Ollama, LlamaIndex's
    ``additional_kwargs``) and the legacy ``function_call``."""
    extra = field(item, "additional_kwargs") or {}
    calls = list(field(item, "tool_calls") or extra.get("tool_calls") or ())
    legacy = field(item, "function_call")
    return [_call(call) for call in calls + ([{"function": legacy}] if legacy else [])]


def _call(call) -> ToolCall:
    function = field(call, "function")
    named = function if function is not None else call
    name = field(named, "name")
    arguments = next(
        (a for a in (field(named, key) for key in ("arguments", "args", "parameters", "input")) if a is not None), ""
    )
    return ToolCall(field(call, "id") or name, name, _json(arguments))


def _block_calls(content) -> list:
    """Calls in content blocks: Anthropic ``tool_use``, Bedrock ``toolUse``, genai
    ``function_call``, AutoGen ``FunctionCall``."""
    found = []
    for block in content if _is_list(content) else ():
        if field(block, "type") == "tool_use" or _is_autogen_call(block):
            found.append(_call(block))
            continue
        inner = next(
            (
                field(block, key)
                for key in ("toolUse", "function_call", "functionCall")
                if field(block, key) is not None
            ),
            None,
        )
        if inner is not None and field(inner, "name"):  # an unset proto field is an empty message
            found.append(
                ToolCall(
                    field(inner, "toolUseId") or field(inner, "id") or field(inner, "name"),
                    field(inner, "name"),
                    _json(field(inner, "input") or field(inner, "args") or {}),
                )
            )
    return found


def _is_autogen_call(block) -> bool:
    return not isinstance(block, Mapping) and all(
        isinstance(getattr(block, key, None), str) for key in ("id", "name", "arguments")
    )


def _results(item, role, content) -> list:
    """``(call id, text)`` of the tool results an item carries: Cohere v1 ``tool_results``,
    result blocks, or the item itself when its role is a tool's."""
    found = [(field(field(r, "call"), "name"), _json(field(r, "outputs"))) for r in field(item, "tool_results") or ()]
    found += _block_results(content)
    if role == "tool" and not found:
        extra = field(item, "additional_kwargs") or {}
        call_id = next(
            (
                i
                for i in (
                    field(item, "tool_call_id"),
                    extra.get("tool_call_id"),
                    field(item, "tool_name"),
                    field(item, "name"),
                )
                if isinstance(i, str)
            ),
            None,
        )
        found = [(call_id, text_of(content))]
    return found


def _block_results(content) -> list:
    found = []
    for block in content if _is_list(content) else ():
        if field(block, "type") == "tool_result":
            found.append((field(block, "tool_use_id"), text_of(field(block, "content"))))
        elif field(block, "toolResult") is not None:
            inner = field(block, "toolResult")
            found.append((field(inner, "toolUseId"), text_of(field(inner, "content"))))
        else:
            inner = field(block, "function_response") or field(block, "functionResponse")
            if inner is not None and (field(inner, "name") or field(inner, "id")):
                found.append((field(inner, "id") or field(inner, "name"), _json(field(inner, "response"))))
    return found


def text_of(content) -> str:
    """The text of a content that is a string, None, or a list of parts or blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not _is_list(content):
        return text_of(field(content, "text")) if isinstance(field(content, "text"), str) else ""
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif field(part, "type") in _TEXT_BLOCKS or (
            field(part, "type") is None and isinstance(field(part, "text"), str)
        ):
            texts.append(field(part, "text") or "")
        elif isinstance(field(part, "json"), (dict, list)):  # a Bedrock tool result block
            texts.append(_json(field(part, "json")))
    return "\n".join(texts)


def _is_list(value) -> bool:
    """A list of parts or blocks: a list, a tuple, or any sequence that is not text (the
    repeated fields of google-generativeai's proto-plus ``Content.parts``)."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _text_message(speaker, text: str) -> Message:
    if speaker is None:
        match = _SPEAKER.match(text)
        speaker = match.group(1) if match else ""
    speaker = speaker.strip().lower()
    if speaker == "system":
        return Message("system", text)
    return Message("assistant" if speaker in _ASSISTANT_SPEAKERS else "user", text)


def _json(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _describe(item) -> str:
    if isinstance(item, Mapping):
        return f"a dict with keys {sorted(map(str, item))}"
    return f"a {type(item).__name__}"
