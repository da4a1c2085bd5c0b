"""How much of the conversation stays: the raw cut each window proposes.

A raw cut is a position in the conversation (the view without its pinned events and
stored system messages); everything before it would leave the view. The pass then snaps
it to a turn start.
"""

from __future__ import annotations

from dataclasses import dataclass


def positive(argument: str, value) -> int:
    """``value`` if it is an integer above zero, else a ValueError naming ``argument``."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{argument} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True)
class LastEvents:
    n: int

    def raw_cut(self, entries, conversation, pinned, tokens) -> int:
        return max(0, len(conversation) - self.n)


@dataclass(frozen=True)
class LastTurns:
    n: int

    def raw_cut(self, entries, conversation, pinned, tokens) -> int:
        starts = [k for k, i in enumerate(conversation) if entries[i].starts_turn]
        return starts[-self.n] if len(starts) >= self.n else 0


@dataclass(frozen=True)
class TokenBudget:
    """The newest events that fit, as a contiguous suffix, once the pinned tokens came off."""

    n: int

    def raw_cut(self, entries, conversation, pinned, tokens) -> int:
        left = self.n - sum(tokens(i) for i in pinned)
        cut = len(conversation)
        while cut > 0 and tokens(conversation[cut - 1]) <= left:
            cut -= 1
            left -= tokens(conversation[cut])
        return cut


def last_events(n: int) -> LastEvents:
    """Keep the last ``n`` conversation events (pinned events take no slot)."""
    return LastEvents(positive("n", n))


def last_turns(n: int) -> LastTurns:
    """Keep the last ``n`` turns."""
    return LastTurns(positive("n", n))


def token_budget(n: int) -> TokenBudget:
    """Keep what fits in ``n`` estimated tokens, pinned events counted first."""
    return TokenBudget(positive("n", n))
