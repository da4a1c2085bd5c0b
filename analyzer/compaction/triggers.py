"""When to compact: predicates on the active view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .estimates import estimate, resolve_estimator
from .windows import positive


@dataclass(frozen=True)
class CompactionRequest:
    session_id: str
    view: list
    turn_count: int


def turn_count(view) -> int:
    """The view's turns: user messages that are not a summary's shadow prompt."""
    return sum(1 for event in view if event.starts_turn)


def sent(view) -> list:
    """What reaches the model: the view without its superseded system messages."""
    systems = [i for i, event in enumerate(view) if event.role == "system"]
    superseded = set(systems[:-1])
    return [event for i, event in enumerate(view) if i not in superseded]


class TurnCountTrigger:
    """Fires when the view holds more than ``n`` turns."""

    def __init__(self, n: int):
        self.n = positive("n", n)

    def __call__(self, request: CompactionRequest) -> bool:
        return request.turn_count > self.n


class TokenCountTrigger:
    """Fires when the estimated tokens of what is sent reach ``threshold``."""

    def __init__(self, threshold: int, estimator: Callable[[str], int] | None = None):
        self.threshold = positive("threshold", threshold)
        self.estimator = resolve_estimator(estimator)

    def __call__(self, request: CompactionRequest) -> bool:
        return estimate(sent(request.view), self.estimator) >= self.threshold


def any_of(*triggers: Callable[[CompactionRequest], bool]) -> Callable[[CompactionRequest], bool]:
    """Fires when one of ``triggers`` fires."""
    if not triggers:
        raise ValueError("triggers must name at least one trigger")

    def fires(request: CompactionRequest) -> bool:
        return any(trigger(request) for trigger in triggers)

    return fires
