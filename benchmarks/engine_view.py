"""Appends per second, and view() on a 1,000,000-event log against a 1,000-event log, per store.

Every store finds the newest boundary through an index and reads only the events it names
and those after it, so the view time at 1M events should stay within 2x of 1k. The logs are
seeded through each store's own append, in batches of 100,000 events (one version-checked
append each). PostgreSQL is a private server started by pgserver (the test extra), at its
default durability (a commit waits for its fsync); the appends are measured once more with
synchronous_commit=off, which is what SQLiteEventStore's synchronous=NORMAL amounts to.
Run: python benchmarks/engine_view.py
"""

import tempfile
import time
import timeit
import warnings
from pathlib import Path

from chatbound.compaction import (
    CompactionBoundary,
    Event,
    EventType,
    InMemoryEventStore,
    Message,
    SQLiteEventStore,
)

NAMED, AFTER, BATCH, APPENDS = 40, 60, 100_000, 500


def fill(store, session_id, size):
    """``size`` events: old history, a boundary naming NAMED of them, then AFTER more; seconds taken."""
    start = time.perf_counter()
    store.create(session_id)
    roles = ("user", "assistant")
    history = [Event.of(Message(roles[n % 2], f"message {n}")) for n in range(size - AFTER - 1)]
    for first in range(0, len(history), BATCH):
        store.append(session_id, history[first : first + BATCH], first)
    boundary = CompactionBoundary(preserved=tuple(event.id for event in history[-NAMED:]))
    tail = [Event.of(Message("user", f"new {n}")) for n in range(AFTER)]
    store.append(session_id, [Event(EventType.COMPACTION, payload=boundary), *tail], len(history))
    assert len(store.view(session_id)) == NAMED + AFTER
    return time.perf_counter() - start


def appends_per_second(store, session_id):
    """One message per append, after reading the version, as SessionService.append does."""
    store.create(session_id)
    start = time.perf_counter()
    for n in range(APPENDS):
        store.append(session_id, [Event.of(Message("user", f"m{n}"))], store.version(session_id))
    return APPENDS / (time.perf_counter() - start)


def seconds_per_view(store, session_id):
    return min(timeit.repeat(lambda: store.view(session_id), number=20, repeat=7)) / 20


def postgres(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is not set
        import pgserver
    from chatbound.compaction import PostgresEventStore

    uri = pgserver.get_server(Path(folder) / "pg", cleanup_mode="stop").get_uri()
    relaxed = PostgresEventStore(uri + "&options=-csynchronous_commit%3Doff", schema="relaxed")
    print(f"postgres appends with synchronous_commit=off: {appends_per_second(relaxed, 'appends'):8.0f}/s")
    relaxed.close()
    return PostgresEventStore(uri)


def main():
    with tempfile.TemporaryDirectory() as folder:
        stores = [("memory", InMemoryEventStore()), ("sqlite", SQLiteEventStore(Path(folder) / "b.db"))]
        stores.append(("postgres", postgres(folder)))
        for name, store in stores:
            rate = appends_per_second(store, "appends")
            fill(store, "small", 1_000)
            seeding = fill(store, "large", 1_000_000)
            small, large = seconds_per_view(store, "small"), seconds_per_view(store, "large")
            print(
                f"{name:8} appends {rate:8.0f}/s; 1M events seeded in {seeding:5.1f} s; view of {NAMED + AFTER} "
                f"events: 1k-event log {small * 1e3:6.2f} ms, 1M-event log {large * 1e3:6.2f} ms, "
                f"ratio {large / small:.2f} (target <= 2)"
            )


if __name__ == "__main__":
    main()
