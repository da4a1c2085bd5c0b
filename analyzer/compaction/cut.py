"""One pass of any window: what is pinned, what is covered, what is preserved.

The pass sees its input only as entries (role, synthetic flag, tool call ids made and
answered), so the session engine and ``bounded_view`` over plain dicts share it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    role: str
    synthetic: bool = False
    calls: tuple = ()
    answers: tuple = ()

    @property
    def starts_turn(self) -> bool:
        return self.role == "user" and not self.synthetic


@dataclass(frozen=True)
class Cut:
    """Positions in the view. ``prior_summary`` is pinned or covered, as the pass decided."""

    pinned: list
    prior_summary: list
    covered: list
    preserved: list


def entry_of(event) -> Entry:
    message = event.message
    return Entry(
        message.role,
        event.synthetic,
        tuple(call.id for call in message.tool_calls),
        (message.tool_call_id,) if message.role == "tool" else (),
    )


def plan_cut(
    entries: Sequence[Entry],
    windows: Sequence,
    tokens: Callable[[int], int],
    pin_prior_summary: bool,
) -> Cut | None:
    """The cut of one pass, or None when nothing would leave the view."""
    systems = [i for i, entry in enumerate(entries) if entry.role == "system"]
    first_turn = next((i for i, entry in enumerate(entries) if entry.starts_turn), len(entries))
    head = [i for i in range(first_turn) if entries[i].role != "system"]
    preamble = [i for i in head if not entries[i].synthetic]
    prior = [i for i in head if entries[i].synthetic]
    conversation = [i for i in range(first_turn, len(entries)) if entries[i].role != "system"]
    pinned = systems[-1:] + preamble + (prior if pin_prior_summary else [])

    raw = max(window.raw_cut(entries, conversation, pinned, tokens) for window in windows)
    cut = _snap(entries, conversation, raw)
    if cut == 0:
        return None
    covered = sorted(conversation[:cut] + systems[:-1] + ([] if pin_prior_summary else prior))
    return Cut(pinned, prior, covered, conversation[cut:])


def _snap(entries, conversation, raw: int) -> int:
    """Forward to a turn start, back to the newest one, then back past any split tool call."""
    starts = [k for k, i in enumerate(conversation) if entries[i].starts_turn]
    if not starts:
        return 0
    cut = next((k for k in starts if k >= raw), starts[-1])
    return _keep_calls_with_results(entries, conversation, cut, set(starts))


def _keep_calls_with_results(entries, conversation, cut: int, starts: set) -> int:
    """The latest turn start at or before ``cut`` that no kept tool result reaches across."""
    called_at = {call: k for k, i in enumerate(conversation) for call in entries[i].calls}
    earliest_call = len(conversation)
    for k in range(len(conversation) - 1, -1, -1):
        for answer in entries[conversation[k]].answers:
            earliest_call = min(earliest_call, called_at.get(answer, earliest_call))
        if k <= cut and k in starts and earliest_call >= k:
            return k
    return 0
