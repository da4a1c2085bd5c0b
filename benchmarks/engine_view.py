"""view() on a 1,000,000-event log against a 1,000-event log with the same view size.

The stores find the newest boundary through an index and resolve its ids one by one, so
the ratio should stay near 1 (target: at most 2). Run: python benchmarks/engine_view.py
"""

import tempfile
import timeit
from pathlib import Path

from chatbound.compaction import (
    CompactionBoundary,
    Event,
    EventType,
    InMemoryEventStore,
    Message,
    SQLiteEventStore,
)

NAMED, AFTER = 40, 60


def fill(store, session_id, size):
    """``size`` events: old history, a boundary naming NAMED of them, then AFTER more."""
    store.create(session_id)
    roles = ("user", "assistant")
    history = [Event.of(Message(roles[n % 2], f"message {n}")) for n in range(size - AFTER - 1)]
    for start in range(0, len(history), 100_000):
        store.append(session_id, history[start : start + 100_000], start)
    boundary = CompactionBoundary(preserved=tuple(event.id for event in history[-NAMED:]))
    tail = [Event.of(Message("user", f"new {n}")) for n in range(AFTER)]
    store.append(session_id, [Event(EventType.COMPACTION, payload=boundary), *tail], len(history))
    assert len(store.view(session_id)) == NAMED + AFTER


def seconds_per_view(store, session_id):
    return min(timeit.repeat(lambda: store.view(session_id), number=20, repeat=7)) / 20


def main():
    with tempfile.TemporaryDirectory() as folder:
        for name, store in [("memory", InMemoryEventStore()), ("sqlite", SQLiteEventStore(Path(folder) / "b.db"))]:
            fill(store, "small", 1_000)
            fill(store, "large", 1_000_000)
            small, large = seconds_per_view(store, "small"), seconds_per_view(store, "large")
            print(
                f"{name:6} view of {NAMED + AFTER} events: 1,000-event log {small * 1e6:8.1f} µs, "
                f"1,000,000-event log {large * 1e6:8.1f} µs, ratio {large / small:.2f} (target <= 2)"
            )


if __name__ == "__main__":
    main()
