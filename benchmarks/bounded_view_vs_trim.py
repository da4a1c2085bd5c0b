"""bounded_view against LangChain's trim_messages: 10,000 OpenAI messages, one token budget.

Both count with the same function (chatbound.compaction.tokens.count_tokens, offline cl100k_base) on
the same one-line rendering of a message. trim_messages gets LangChain messages converted
beforehand and the settings that keep it valid (include_system, start_on="human").
langchain-core is only in the ``bench`` extra. Run: python benchmarks/bounded_view_vs_trim.py
"""

import json
import sys
import timeit

from chatbound.compaction import bounded_view
from chatbound.compaction.tokens import count_tokens

BUDGET = 4_000
LABELS = {"system": "System", "human": "User", "ai": "Assistant", "tool": "Tool"}


def history(size):
    messages = [{"role": "system", "content": "You are a helpful assistant for a bookshop."}]
    n = 0
    while len(messages) < size:
        call = f"call_{n}"
        messages += [
            {"role": "user", "content": f"Is book number {n} in stock, and what does it cost?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "stock", "arguments": f'{{"book": {n}}}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": call,
                "content": f'{{"book": {n}, "in_stock": {n % 7}, "price": 12.5}}',
            },
            {"role": "assistant", "content": f"Book {n} has {n % 7} copies in stock at 12.50."},
        ]
        n += 1
    return messages[:size]


def langchain_text(message):
    """The rendering event_text gives the same message, for LangChain's message classes."""
    label = LABELS[message.type]
    if message.type == "tool":
        return f"Tool [responses: {message.name or message.tool_call_id} → {message.content}]"
    text = f"{label}: {message.content}" if message.content else label
    calls = getattr(message, "tool_calls", None)
    if calls:
        text += " [tool calls: " + ", ".join(f"{c['name']}({json.dumps(c['args'])})" for c in calls) + "]"
    return text


def main():
    try:
        from langchain_core.messages import convert_to_messages, trim_messages
    except ImportError:
        print("langchain-core is not installed (pip install 'chatbound[bench]'); nothing to compare.")
        return 0

    messages = history(10_000)
    converted = convert_to_messages(messages)

    def ours():
        return bounded_view(messages, max_tokens=BUDGET, estimator=count_tokens)

    def theirs():
        return trim_messages(
            converted,
            max_tokens=BUDGET,
            token_counter=lambda batch: sum(count_tokens(langchain_text(m)) for m in batch),
            strategy="last",
            include_system=True,
            start_on="human",
        )

    kept_ours, kept_theirs = len(ours()), len(theirs())
    ours_s = min(timeit.repeat(ours, number=1, repeat=5))
    theirs_s = min(timeit.repeat(theirs, number=1, repeat=3))
    print(
        f"10,000 messages, budget {BUDGET} tokens: bounded_view kept {kept_ours} in {ours_s * 1e3:.1f} ms, "
        f"trim_messages kept {kept_theirs} in {theirs_s * 1e3:.1f} ms"
    )
    print(f"ratio trim_messages / bounded_view = {theirs_s / ours_s:.1f} (above 1: bounded_view is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
