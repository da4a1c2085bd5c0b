"""Sessions: appending messages and recording compaction passes in a store."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from .estimates import resolve_estimator
from .messages import CompactionBoundary, Event, EventType, Message
from .stores import VersionConflict
from .strategy import CompactionResult
from .triggers import CompactionRequest, turn_count


class SessionService:
    def __init__(self, store, estimator: Callable[[str], int] | None = None):
        self.store = store
        self.estimator = resolve_estimator(estimator)

    def create(self) -> str:
        session_id = uuid.uuid4().hex
        self.store.create(session_id)
        return session_id

    def append(self, session_id: str, *messages: Message) -> list:
        """Store ``messages`` at the end of the log; a concurrent write only means a retry."""
        for message in messages:
            if not isinstance(message, Message):
                raise ValueError(f"messages must be Message instances, got {message!r}")
        events = [Event.of(message) for message in messages]
        while True:
            try:
                self.store.append(session_id, events, self.store.version(session_id))
                return events
            except VersionConflict:
                continue

    def view(self, session_id: str) -> list:
        return self.store.view(session_id)

    def compact(self, session_id: str, trigger, strategy) -> CompactionResult:
        """Run ``strategy`` when ``trigger`` fires; write one boundary plus the summary.

        Raises VersionConflict, writing nothing, when the session moved since it was read.
        """
        version, view = self.store.snapshot(session_id)
        if not trigger(CompactionRequest(session_id, view, turn_count(view))):
            return CompactionResult.nothing_left(view)
        result = strategy.compact(session_id, view, self.estimator)
        if result.unchanged:
            return result
        summary = [Event.of(message, synthetic=True) for message in result.summary]
        boundary = CompactionBoundary(
            pinned=tuple(event.id for event in result.pinned),
            summary=tuple(event.id for event in summary),
            preserved=tuple(event.id for event in result.preserved),
            covered_event_count=len(result.covered),
            tokens_saved=result.tokens_saved,
        )
        self.store.append(session_id, [Event(EventType.COMPACTION, payload=boundary), *summary], version)
        return result
