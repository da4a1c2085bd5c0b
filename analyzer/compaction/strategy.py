"""What leaves the view: the window strategy and the result of a pass."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from .cut import entry_of, plan_cut
from .estimates import estimate, resolve_estimator
from .messages import event_text
from .summarizer import SummaryRequest
from .windows import last_events


@dataclass(frozen=True)
class CompactionResult:
    """Events that left the view (still in the log), were pinned or preserved; the summary."""

    unchanged: bool
    covered: tuple = ()
    pinned: tuple = ()
    preserved: tuple = ()
    summary: tuple = ()
    tokens_saved: int = 0

    @classmethod
    def nothing_left(cls, view) -> CompactionResult:
        return cls(True, preserved=tuple(view))


class WindowCompactionStrategy:
    """Keeps the recent conversation, pins what must stay, covers the rest (optionally summarized)."""

    def __init__(
        self,
        window=last_events(20),  # noqa: B008  (a frozen window, shared safely)
        summarizer: Callable[[SummaryRequest], list] | None = None,
        estimator: Callable[[str], int] | None = None,
    ):
        self.window = window
        self.summarizer = summarizer
        self.estimator = estimator

    def compact(self, session_id: str, view: list, estimator=None) -> CompactionResult:
        """One pass over ``view``; ``estimator`` is the caller's default when this has none."""
        count = resolve_estimator(self.estimator or estimator)
        tokens = functools.lru_cache(maxsize=None)(lambda i: count(event_text(view[i])))
        cut = plan_cut([entry_of(e) for e in view], [self.window], tokens, self.summarizer is None)
        if cut is None:
            return CompactionResult.nothing_left(view)
        covered = [view[i] for i in cut.covered]
        preserved = [view[i] for i in cut.preserved]
        summary = ()
        if self.summarizer is not None:
            prior = set(cut.prior_summary)
            request = SummaryRequest(
                session_id,
                prior_summary=[view[i] for i in cut.prior_summary],
                covered=[view[i] for i in cut.covered if i not in prior and view[i].role != "system"],
                preserved=preserved,
            )
            summary = tuple(self.summarizer(request))
            if not summary:
                return CompactionResult.nothing_left(view)
        saved = sum(tokens(i) for i in cut.covered) - estimate(summary, count)
        return CompactionResult(
            False, tuple(covered), tuple(view[i] for i in cut.pinned), tuple(preserved), summary, saved
        )
