"""Condensing what leaves the view into a summary turn that stands in for it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from .messages import Message, event_text

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You condense a conversation into a summary that replaces it. Build on the previous "
    "summary, keep every fact, decision, name, number and open question, and write it so "
    "the conversation can continue from it."
)
SHADOW_PROMPT = "Summarize our conversation so far."


@dataclass(frozen=True)
class SummaryRequest:
    """What a summarizer sees; stored system messages are never part of it."""

    session_id: str
    prior_summary: list
    covered: list
    preserved: list


class ModelSummarizer:
    """A rolling summary from a model.

    ``complete(messages: list[dict]) -> str | None`` wraps the user's model client; the call
    is never stored as conversation. A blank reply logs a warning, calls ``on_failure`` and
    declines (nothing is written); an exception from ``complete`` propagates.
    """

    def __init__(
        self,
        complete: Callable[[list], str | None],
        overlap: int = 2,
        system_prompt: str = SYSTEM_PROMPT,
        shadow_prompt: str = SHADOW_PROMPT,
        formatter: Callable = event_text,
        on_failure: Callable[[SummaryRequest], None] | None = None,
    ):
        if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
            raise ValueError(f"overlap must be a non-negative integer, got {overlap!r}")
        self.complete, self.overlap = complete, overlap
        self.system_prompt, self.shadow_prompt = system_prompt, shadow_prompt
        self.formatter, self.on_failure = formatter, on_failure

    def prompt(self, request: SummaryRequest) -> list:
        """The messages of the summarizing call."""
        sections = [
            ("Previous summary", request.prior_summary),
            ("Conversation to summarize", request.covered),
            ("It continues with (for context only)", request.preserved[: self.overlap]),
        ]
        text = "\n\n".join(
            f"{title}:\n" + "\n".join(self.formatter(event) for event in events) for title, events in sections if events
        )
        return [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": text},
        ]

    def __call__(self, request: SummaryRequest) -> list:
        reply = self.complete(self.prompt(request))
        if reply is None or not reply.strip():
            log.warning("summary of session %s came back blank; the view stays", request.session_id)
            if self.on_failure is not None:
                self.on_failure(request)
            return []
        return [Message("user", self.shadow_prompt), Message("assistant", reply.strip())]
