"""Token estimates of events: any ``(text) -> int`` applied to their one-line rendering."""

from __future__ import annotations

from collections.abc import Callable

from .messages import event_text
from .tokens import get_encoder


def resolve_estimator(estimator: Callable[[str], int] | None) -> Callable[[str], int]:
    """``estimator``, or the product's offline cl100k_base counter when it is None."""
    if estimator is None:
        return get_encoder()
    if not callable(estimator):
        raise ValueError(f"estimator must be a callable (text) -> int, got {estimator!r}")
    return estimator


def estimate(events, estimator: Callable[[str], int]) -> int:
    return sum(estimator(event_text(event)) for event in events)
