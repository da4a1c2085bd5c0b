"""``bounded_view``: the window pass over a plain list of chat message dicts."""

from __future__ import annotations

import functools
from typing import Callable, Optional

from .adapters import messages_of
from .cut import Entry, plan_cut
from .estimates import estimate, resolve_estimator
from .windows import LastEvents, LastTurns, TokenBudget, positive


def bounded_view(
    messages,
    *,
    last_turns: Optional[int] = None,
    last_events: Optional[int] = None,
    max_tokens: Optional[int] = None,
    estimator: Optional[Callable[[str], int]] = None,
) -> list:
    """A new list holding the bounded view of OpenAI- or Anthropic-style ``messages``.

    The system message stays first, the newest turn always stays, whole turns leave, and a
    tool result never stays without the call it answers. Several limits apply together.
    ``messages`` and its dicts are not modified; the kept dicts are the same objects.
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
    items = list(messages)
    names: dict = {}
    parts = [messages_of(item, names) for item in items]
    entries = [_entry(part) for part in parts]
    count = resolve_estimator(estimator) if max_tokens is not None else None
    tokens = functools.lru_cache(maxsize=None)(lambda i: estimate(parts[i], count))
    cut = plan_cut(entries, windows, tokens, pin_prior_summary=True)
    kept = range(len(items)) if cut is None else cut.pinned + cut.preserved
    return _without_orphan_results(items, entries, kept)


def _entry(messages) -> Entry:
    answers = tuple(message.tool_call_id for message in messages if message.role == "tool")
    calls = tuple(call.id for message in messages for call in message.tool_calls)
    return Entry("tool" if answers else messages[0].role, False, calls, answers)


def _without_orphan_results(items, entries, kept) -> list:
    called: set = set()
    view = []
    for i in kept:
        if all(answer in called for answer in entries[i].answers):
            called.update(entries[i].calls)
            view.append(items[i])
    return view
