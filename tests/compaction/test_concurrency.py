"""Several threads and several processes writing one SQLite session."""

import multiprocessing
import queue
import threading

import pytest

from chatbound.compaction import SessionService, SQLiteEventStore

from .builders import A, U, contents
from .workers import append_messages, compact_repeatedly, race_to_compact

SPAWN = multiprocessing.get_context("spawn")


def new_session(path):
    service = SessionService(SQLiteEventStore(path), estimator=len)
    sid = service.create()
    service.append(sid, U("u1"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    return service, sid


def run_all(workers):
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert not worker.is_alive()


def drain(results, count):
    return [results.get(timeout=120) for _ in range(count)]


def check_writers(service, sid, reports, writers, count):
    log = service.store.log(sid)
    won = []
    for writer, versions in reports:
        if writer == "compactor":
            continue
        assert versions == sorted(set(versions)), "a writer's versions must strictly increase"
        assert [log[v - 1].message.content for v in versions] == [f"{writer}-{n}" for n in range(count)]
        won += versions
    assert len(won) == len(set(won)) == writers * count
    stored = set(contents(e for e in log if e.message))
    assert {f"{w}-{n}" for w in range(writers) for n in range(count)} <= stored


def test_threads_appending_and_compacting_lose_nothing(tmp_path):
    path = tmp_path / "s.db"
    service, sid = new_session(path)
    results = queue.Queue()
    workers = [threading.Thread(target=append_messages, args=(path, sid, w, 40, results)) for w in range(4)]
    workers += [threading.Thread(target=compact_repeatedly, args=(path, sid, 30, results)) for _ in range(2)]
    run_all(workers)
    reports = drain(results, 6)
    check_writers(service, sid, reports, writers=4, count=40)
    outcomes = [report for name, report in reports if name == "compactor"]
    assert sum(sum(o.values()) for o in outcomes) == 60


def test_processes_appending_and_compacting_lose_nothing(tmp_path):
    path = tmp_path / "s.db"
    service, sid = new_session(path)
    results = SPAWN.Queue()
    workers = [SPAWN.Process(target=append_messages, args=(path, sid, w, 30, results)) for w in range(3)]
    workers.append(SPAWN.Process(target=compact_repeatedly, args=(path, sid, 20, results)))
    run_all(workers)
    check_writers(service, sid, drain(results, 4), writers=3, count=30)


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_two_compactions_from_one_version_one_wins_the_other_gets_version_conflict(tmp_path, kind):
    path = tmp_path / "s.db"
    service, sid = new_session(path)
    before = service.store.log(sid)
    if kind == "threads":
        barrier, results = threading.Barrier(2), queue.Queue()
        workers = [threading.Thread(target=race_to_compact, args=(path, sid, barrier, results)) for _ in range(2)]
    else:
        barrier, results = SPAWN.Barrier(2), SPAWN.Queue()
        workers = [SPAWN.Process(target=race_to_compact, args=(path, sid, barrier, results)) for _ in range(2)]
    run_all(workers)
    assert sorted(drain(results, 2)) == ["lost", "won"]
    after = service.store.log(sid)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert contents(service.view(sid)) == ["u3", "a3"]
