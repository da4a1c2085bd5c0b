"""Several threads and several processes writing one session, in SQLite and in PostgreSQL."""

import multiprocessing
import queue
import threading

import pytest

from chatbound.compaction import EventType, SessionService

from .builders import A, U, contents
from .workers import append_and_compact, append_messages, compact_repeatedly, open_store, race_to_compact

SPAWN = multiprocessing.get_context("spawn")
FIRST = ["u1", "a1", "u2", "a2", "u3", "a3"]


@pytest.fixture
def shared(target):
    """A session with three turns in the target's store, and the service that made it."""
    store = open_store(target)
    service = SessionService(store, estimator=len)
    sid = service.create()
    service.append(sid, U("u1"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    yield service, sid
    if hasattr(store, "close"):
        store.close()


def run_all(workers):
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
        assert not worker.is_alive()


def drain(results, count):
    return [results.get(timeout=120) for _ in range(count)]


def check_writers(log, reports, writers, count):
    """Every writer's messages are in the log once each, in its order, where it was told they went."""
    won = []
    for writer, versions, *_ in reports:
        if writer == "compactor":
            continue
        assert versions == sorted(set(versions)), "a writer's versions must strictly increase"
        assert [log[v - 1].message.content for v in versions] == [f"{writer}-{n}" for n in range(count)]
        won += versions
    assert len(won) == len(set(won)) == writers * count
    written = contents(e for e in log if e.message and not e.synthetic)
    assert sorted(written) == sorted(FIRST + [f"{w}-{n}" for w in range(writers) for n in range(count)])


def test_threads_sharing_one_store_appending_and_compacting_lose_nothing(shared):
    service, sid = shared
    results = queue.Queue()
    store = service.store
    workers = [threading.Thread(target=append_messages, args=(store, sid, w, 40, results)) for w in range(4)]
    workers += [threading.Thread(target=compact_repeatedly, args=(store, sid, 30, results)) for _ in range(2)]
    run_all(workers)
    reports = drain(results, 6)
    check_writers(store.log(sid), reports, writers=4, count=40)
    outcomes = [report for name, report in reports if name == "compactor"]
    assert sum(sum(o.values()) for o in outcomes) == 60


def test_processes_appending_and_compacting_lose_nothing(shared, target):
    service, sid = shared
    results = SPAWN.Queue()
    workers = [SPAWN.Process(target=append_messages, args=(target, sid, w, 30, results)) for w in range(3)]
    workers.append(SPAWN.Process(target=compact_repeatedly, args=(target, sid, 20, results)))
    run_all(workers)
    check_writers(service.store.log(sid), drain(results, 4), writers=3, count=30)


def test_eight_processes_of_200_messages_with_compactions_between_lose_nothing(shared, target):
    """Every message once, in each writer's order; every compaction landed whole or raised VersionConflict."""
    service, sid = shared
    results = SPAWN.Queue()
    args = [(target, sid, w, 200, 25, results) for w in range(8)]
    run_all([SPAWN.Process(target=append_and_compact, args=a) for a in args])
    reports = drain(results, 8)
    log = service.store.log(sid)
    check_writers(log, reports, writers=8, count=200)
    outcomes = dict(compaction for _, _, compactions in reports for compaction in compactions)
    assert len(outcomes) == 8 * 8
    landed = sorted(text for text, outcome in outcomes.items() if outcome == "landed")
    boundaries = [n for n, event in enumerate(log) if event.type is EventType.COMPACTION]
    for n in boundaries:  # whole: the boundary, then the summary turn it names, nothing between
        summary = log[n].payload.summary
        assert [event.id for event in log[n + 1 : n + 1 + len(summary)]] == list(summary) and len(summary) == 2
        assert all(event.synthetic for event in log[n + 1 : n + 3])
    assert sorted(log[n + 2].message.content for n in boundaries) == landed and landed
    assert len(set(contents(e for e in log if e.synthetic))) == len(landed) + 1  # + the one shadow prompt


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_two_compactions_from_one_version_one_wins_the_other_gets_version_conflict(shared, target, kind):
    service, sid = shared
    before = service.store.log(sid)
    if kind == "threads":
        barrier, results = threading.Barrier(2), queue.Queue()
        workers = [
            threading.Thread(target=race_to_compact, args=(service.store, sid, barrier, results)) for _ in range(2)
        ]
    else:
        barrier, results = SPAWN.Barrier(2), SPAWN.Queue()
        workers = [SPAWN.Process(target=race_to_compact, args=(target, sid, barrier, results)) for _ in range(2)]
    run_all(workers)
    assert sorted(drain(results, 2)) == ["lost", "won"]
    after = service.store.log(sid)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert contents(service.view(sid)) == ["u3", "a3"]
