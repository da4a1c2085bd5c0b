"""``bounded_view``: the window pass over a plain list of chat messages of any common shape."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from .cut import Entry, plan_cut
from .estimates import estimate, resolve_estimator
from .shapes import read_item
from .windows import LastEvents, LastTurns, TokenBudget, positive


def bounded_view(
    messages,
    *,
    last_turns: int | None = None,
    last_events: int | None = None,
    max_tokens: int | None = None,
    estimator: Callable[[str], int] | None = None,
) -> list:
    """A new list holding the bounded view of ``messages``.

    ``messages`` is a list of the chat items of any common SDK or framework, dicts or
    objects, or of text (``shapes`` says how each is read). The system message stays first,
    the newest turn always stays, whole turns leave, and a tool result never stays without
    the call it answers. Several limits apply together. ``messages`` and its items are not
    modified; the kept items are the same objects, in their order (the latest system message
    first). An item of no known shape raises ``ValueError``.
    """
    windows = [
        window(positive(argument, value))
        for window, argument, value in (
            (LastTurns, "last_turns", last_turns),
            (LastEvents, "last_events", last_events),
            (TokenBudget, "max_tokens", max_tokens),
        )
        if value is not None
    ]
    if not windows:
        raise ValueError("bounded_view needs last_turns, last_events or max_tokens")
    if isinstance(messages, (str, bytes)) or isinstance(messages, Mapping):
        raise ValueError(f"bounded_view needs a list of messages, not a {type(messages).__name__}")
    items = list(messages)
    names: dict = {}
    parts = [_read(index, item, names) for index, item in enumerate(items)]
    entries = [_entry(part) for part in parts]
    count = resolve_estimator(estimator) if max_tokens is not None else None
    tokens = functools.lru_cache(maxsize=None)(lambda i: estimate(parts[i], count))
    cut = plan_cut(entries, windows, tokens, pin_prior_summary=True)
    kept = range(len(items)) if cut is None else cut.pinned + cut.preserved
    return _without_orphan_results(items, entries, kept)


def _read(index: int, item, names: dict) -> list:
    try:
        return read_item(item, names)
    except ValueError as error:
        raise ValueError(f"bounded_view: item {index}: {error}") from None


def _entry(messages) -> Entry:
    tools = [message for message in messages if message.role == "tool"]
    answers = tuple(message.tool_call_id for message in tools if message.tool_call_id is not None)
    calls = tuple(call.id for message in messages for call in message.tool_calls)
    return Entry("tool" if tools else messages[0].role, False, calls, answers)


def _without_orphan_results(items, entries, kept) -> list:
    called: set = set()
    view = []
    for i in kept:
        if all(answer in called for answer in entries[i].answers):
            called.update(entries[i].calls)
            view.append(items[i])
    return view
