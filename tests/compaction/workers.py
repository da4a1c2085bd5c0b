"""Writers for the concurrency tests; module level so spawned processes can import them.

A writer gets either a store to share (threads) or a target, ("sqlite", path) or
("postgres", uri, schema), which it opens for itself (processes).
"""

from contextlib import contextmanager

from chatbound.compaction import (
    Event,
    ModelSummarizer,
    SessionService,
    SQLiteEventStore,
    VersionConflict,
    WindowCompactionStrategy,
    last_events,
)

from .builders import U


def open_store(target):
    if target[0] == "sqlite":
        return SQLiteEventStore(target[1])
    from chatbound.compaction import PostgresEventStore

    return PostgresEventStore(target[1], schema=target[2])


@contextmanager
def opened(target):
    if not isinstance(target, tuple):
        yield target
        return
    store = open_store(target)
    try:
        yield store
    finally:
        if hasattr(store, "close"):
            store.close()


def append_one(store, session_id, text):
    """Append one message, retrying lost races; the version it won."""
    event = Event.of(U(text))
    while True:
        try:
            return store.append(session_id, [event], store.version(session_id))
        except VersionConflict:
            continue


def append_messages(target, session_id, writer, count, results):
    """Append ``count`` messages one by one; report the versions won."""
    with opened(target) as store:
        results.put((writer, [append_one(store, session_id, f"{writer}-{n}") for n in range(count)]))


def compact_repeatedly(target, session_id, rounds, results):
    with opened(target) as store:
        service = SessionService(store, estimator=len)
        outcomes = {"compacted": 0, "unchanged": 0, "conflict": 0}
        for _ in range(rounds):
            try:
                result = service.compact(session_id, lambda r: True, WindowCompactionStrategy(last_events(3)))
                outcomes["unchanged" if result.unchanged else "compacted"] += 1
            except VersionConflict:
                outcomes["conflict"] += 1
        results.put(("compactor", outcomes))


def append_and_compact(target, session_id, writer, count, every, results):
    """Append ``count`` messages; after every ``every``-th, try a compaction with a summary.

    Reports the versions won and, per compaction, its summary text and whether it landed.
    """
    with opened(target) as store:
        service = SessionService(store, estimator=len)
        versions, compactions = [], []
        for n in range(count):
            versions.append(append_one(store, session_id, f"{writer}-{n}"))
            if n % every == every - 1:
                text = f"summary {writer}.{n}"
                strategy = WindowCompactionStrategy(last_events(10), summarizer=ModelSummarizer(lambda m: text))
                try:
                    result = service.compact(session_id, lambda r: True, strategy)
                    compactions.append((text, "unchanged" if result.unchanged else "landed"))
                except VersionConflict:
                    compactions.append((text, "conflict"))
        results.put((writer, versions, compactions))


def race_to_compact(target, session_id, barrier, results):
    """Read the view, wait for the rival to have read it too, then try to write."""
    with opened(target) as store:
        service = SessionService(store, estimator=len)

        def after_reading(request):
            barrier.wait()
            return True

        try:
            service.compact(session_id, after_reading, WindowCompactionStrategy(last_events(2)))
            results.put("won")
        except VersionConflict:
            results.put("lost")
