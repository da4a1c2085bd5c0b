"""Writers for the concurrency tests; module level so spawned processes can import them."""

from chatbound.compaction import (
    Event,
    SessionService,
    SQLiteEventStore,
    VersionConflict,
    WindowCompactionStrategy,
    last_events,
)

from .builders import U


def append_messages(path, session_id, writer, count, results):
    """Append ``count`` messages one by one, retrying lost races; report the versions won."""
    store = SQLiteEventStore(path)
    versions = []
    for n in range(count):
        event = Event.of(U(f"{writer}-{n}"))
        while True:
            try:
                versions.append(store.append(session_id, [event], store.version(session_id)))
                break
            except VersionConflict:
                continue
    results.put((writer, versions))


def compact_repeatedly(path, session_id, rounds, results):
    service = SessionService(SQLiteEventStore(path), estimator=len)
    outcomes = {"compacted": 0, "unchanged": 0, "conflict": 0}
    for _ in range(rounds):
        try:
            result = service.compact(session_id, lambda r: True, WindowCompactionStrategy(last_events(3)))
            outcomes["unchanged" if result.unchanged else "compacted"] += 1
        except VersionConflict:
            outcomes["conflict"] += 1
    results.put(("compactor", outcomes))


def race_to_compact(path, session_id, barrier, results):
    """Read the view, wait for the rival to have read it too, then try to write."""
    service = SessionService(SQLiteEventStore(path), estimator=len)

    def after_reading(request):
        barrier.wait()
        return True

    try:
        service.compact(session_id, after_reading, WindowCompactionStrategy(last_events(2)))
        results.put("won")
    except VersionConflict:
        results.put("lost")
