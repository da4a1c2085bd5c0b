"""Converting OpenAI chat messages and Anthropic messages to and from ``Message``.

Reading goes through ``shapes.read_item``, which also reads the other SDKs' shapes."""

from __future__ import annotations

import json

from .messages import Message
from .shapes import read_item as messages_of
from .shapes import text_of


def from_openai(messages) -> list:
    names: dict = {}
    return [message for item in messages for message in messages_of(item, names)]


def to_openai(messages) -> list:
    result = []
    for message in messages:
        item = {"role": message.role, "content": message.content}
        if message.role == "tool":
            item["tool_call_id"] = message.tool_call_id
        elif message.name is not None:
            item["name"] = message.name
        if message.tool_calls:
            item["content"] = message.content or None
            item["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
        result.append(item)
    return result


def from_anthropic(messages, system: str | None = None) -> list:
    """``messages`` and the separate ``system`` parameter of an Anthropic call."""
    names: dict = {}
    head = [Message("system", text_of(system))] if system else []
    return head + [message for item in messages for message in messages_of(item, names)]


def to_anthropic(messages) -> tuple:
    """``(system, messages)``: the latest system message's text, and the turns as blocks.

    Consecutive tool results become one user message of ``tool_result`` blocks.
    """
    system = None
    result: list = []
    results = None
    for message in messages:
        if message.role == "tool":
            if results is None:
                results = []
                result.append({"role": "user", "content": results})
            block = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
            results.append(block)
            continue
        results = None
        if message.role == "system":
            system = message.content
        elif message.tool_calls:
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _arguments(c.arguments)}
                for c in message.tool_calls
            ]
            result.append({"role": "assistant", "content": blocks})
        else:
            result.append({"role": message.role, "content": message.content})
    return system, result


def _arguments(arguments: str):
    try:
        return json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {"arguments": arguments}


def from_langchain(messages) -> list:
    """LangChain messages (needs langchain-core, the optional extra) as ``Message``s."""
    from langchain_core.messages import convert_to_openai_messages

    return from_openai(convert_to_openai_messages(list(messages)))


def to_langchain(messages) -> list:
    from langchain_core.messages import convert_to_messages

    return convert_to_messages(to_openai(messages))
