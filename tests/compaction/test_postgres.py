"""What only the PostgreSQL store has: a schema of its own, a pool, and connections that can drop."""

import random
import threading
import uuid

import pytest
from conftest import require

psycopg = require("psycopg", reason="PostgreSQL tests need psycopg, the analyzer's test extra")
from psycopg_pool import ConnectionPool  # noqa: E402

from chatbound.compaction import Event, PostgresEventStore  # noqa: E402
from chatbound.compaction.postgres import SCHEMA_VERSION  # noqa: E402

from .builders import A, U, contents  # noqa: E402


@pytest.fixture
def schema():
    return f"test_{uuid.uuid4().hex[:12]}"


def sql(uri, statement, *params):
    with psycopg.connect(uri, autocommit=True) as db:
        cursor = db.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else None


def test_first_use_creates_the_schema_at_its_version_and_a_second_store_keeps_the_data(postgres_uri, schema):
    with PostgresEventStore(postgres_uri, schema=schema) as store:
        store.create("s")
        store.append("s", [Event.of(U("u1"))], 0)
    assert sql(postgres_uri, f'SELECT version FROM "{schema}".schema_version') == [(SCHEMA_VERSION,)]
    with PostgresEventStore(postgres_uri, schema=schema) as again:
        assert contents(again.log("s")) == ["u1"]
    assert sql(postgres_uri, f'SELECT count(*) FROM "{schema}".schema_version') == [(1,)]


def test_a_schema_newer_than_the_library_is_refused_by_name(postgres_uri, schema):
    PostgresEventStore(postgres_uri, schema=schema).close()
    sql(postgres_uri, f'UPDATE "{schema}".schema_version SET version = %s', SCHEMA_VERSION + 1)
    with pytest.raises(RuntimeError) as refused:
        PostgresEventStore(postgres_uri + f"&application_name={schema}", schema=schema)
    assert f"schema '{schema}' is at version {SCHEMA_VERSION + 1}" in str(refused.value)
    # the pool the refused store opened is closed, though the error (its traceback) keeps the store
    # alive: no connection of it is left (before: its connections stayed open until it was collected)
    assert sql(postgres_uri, f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{schema}'") == [(0,)]


def test_stores_opened_at_once_on_a_new_schema_create_it_once(postgres_uri, schema):
    errors, stores = [], []

    def open_one():
        try:
            stores.append(PostgresEventStore(postgres_uri, schema=schema))
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(stores) == 4
    for store in stores:
        store.close()


def test_a_pool_passed_in_is_used_and_left_open(postgres_uri, schema):
    pool = ConnectionPool(postgres_uri, min_size=1, max_size=2, open=True)
    store = PostgresEventStore(pool, schema=schema)
    store.create("s")
    store.append("s", [Event.of(U("u1")), Event.of(A("a1"))], 0)
    store.close()
    assert not pool.closed
    assert contents(PostgresEventStore(pool, schema=schema).view("s")) == ["u1", "a1"]
    pool.close()


@pytest.mark.parametrize("pool, schema", [(42, "chatbound"), (None, "chatbound"), ("postgresql://", "")])
def test_a_bad_pool_or_schema_is_a_value_error(pool, schema):
    with pytest.raises(ValueError, match="pool|schema"):
        PostgresEventStore(pool, schema=schema)


def test_a_connection_killed_inside_the_append_writes_nothing(postgres_uri, schema):
    """The server ends the append's own connection after the version moved and one row was written."""
    with PostgresEventStore(postgres_uri, schema=schema) as store:
        store.create("s")
        store.append("s", [Event.of(U("u1"))], 0)
        sql(
            postgres_uri,
            f"""CREATE FUNCTION "{schema}".drop_connection() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.position = 3 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER drop_connection AFTER INSERT ON "{schema}".events
                FOR EACH ROW EXECUTE FUNCTION "{schema}".drop_connection();""",
        )
        with pytest.raises(psycopg.OperationalError):
            store.append("s", [Event.of(A("a1")), Event.of(U("u2")), Event.of(A("a2"))], 1)
        assert store.version("s") == 1 and contents(store.log("s")) == ["u1"]
        sql(postgres_uri, f'DROP TRIGGER drop_connection ON "{schema}".events')
        assert store.append("s", [Event.of(A("a1"))], 1) == 2  # the pool replaced the dead connection


def test_connections_killed_at_random_leave_every_batch_whole_or_absent(postgres_uri, schema):
    """Another connection ends the writer's connections while they run a statement (an idle one
    the pool would replace before lending it) as it appends batches of five. Each row's insert
    waits 2 ms, so that an append, one statement, runs long enough to be hit."""
    victim = postgres_uri + "&application_name=victim"
    done, outcomes = threading.Event(), {}

    def kill():
        while not done.is_set():
            sql(
                postgres_uri,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'victim' AND state = 'active'",
            )
            done.wait(random.uniform(0.0, 0.01))

    with PostgresEventStore(victim, schema=schema) as store:
        store.create("s")
        sql(
            postgres_uri,
            f"""CREATE FUNCTION "{schema}".slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(0.002); RETURN NEW; END $$;
                CREATE TRIGGER slow_insert AFTER INSERT ON "{schema}".events
                FOR EACH ROW EXECUTE FUNCTION "{schema}".slow_insert();""",
        )
        killer = threading.Thread(target=kill)
        killer.start()
        try:
            for batch in range(40):
                events = [Event.of(U(f"{batch}.{n}")) for n in range(5)]
                try:
                    store.append("s", events, store.version("s"))
                    outcomes[batch] = "appended"
                except psycopg.OperationalError:
                    outcomes[batch] = "dropped"
        finally:
            done.set()
            killer.join()
    with PostgresEventStore(postgres_uri, schema=schema) as reader:  # the writer's idle connections may be dead
        log = contents(reader.log("s"))
    batches = [log[n : n + 5] for n in range(0, len(log), 5)]
    stored = []
    for texts in batches:  # whole: five messages of one batch, in order
        batch = texts[0].split(".")[0]
        assert texts == [f"{batch}.{n}" for n in range(5)]
        stored.append(int(batch))
    assert stored == sorted(set(stored))
    assert {b for b, outcome in outcomes.items() if outcome == "appended"} <= set(stored)
    assert "dropped" in outcomes.values(), "the killer never hit an append: the test proved nothing"


def test_connections_the_server_closed_while_idle_are_replaced_before_the_next_append(postgres_uri, schema):
    """Every backend of the store ended between two appends (a restart, a failover or
    idle_session_timeout does the same): the pool checks a connection before lending it."""
    with PostgresEventStore(postgres_uri + "&application_name=idle_victim", schema=schema) as store:
        store.create("s")
        assert store.append("s", [Event.of(U("u1"))], 0) == 1
        ended = sql(
            postgres_uri,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'idle_victim'",
        )
        assert ended and all(row == (True,) for row in ended)
        assert store.append("s", [Event.of(A("a1"))], 1) == 2  # before: psycopg.OperationalError
        assert contents(store.log("s")) == ["u1", "a1"]


def test_a_writer_running_through_a_server_restart_keeps_a_whole_log(postgres_server, schema):
    """The server restarts (pg_ctl restart -m fast) while a writer appends batches of three, its
    store's pool holding four connections: the batch the restart cut off raises at most one
    OperationalError and no batch begun after the restart does (each dead connection is replaced
    before it is lent; without the check, each was lent once and failed), and the log holds every
    acknowledged batch once, whole and in order. No batch begins while the server goes down: one
    begun then could be lent a connection its check found alive an instant before the server
    ended it (a race CI met once). The run's shared server (one of the test's own took 8 s to
    create and remove): nothing else uses it meanwhile, and the tests after this one open
    connections of their own."""
    from pgserver._commands import pg_ctl

    uri = postgres_server.get_uri()
    outcomes: list[tuple[int, str]] = []
    restarting, restarted, done = threading.Event(), threading.Event(), threading.Event()
    backends = f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{schema}'"

    with PostgresEventStore(uri + f"&application_name={schema}", schema=schema) as store:
        store.create("s")
        # four readers wait on a lock at once, so that the pool opens its four connections
        with psycopg.connect(uri) as blocker:
            blocker.execute(f'LOCK TABLE "{schema}".events IN ACCESS EXCLUSIVE MODE')
            readers = [threading.Thread(target=store.log, args=("s",)) for _ in range(4)]
            for reader in readers:
                reader.start()
            for _ in range(1000):
                if sql(uri, backends + " AND wait_event_type = 'Lock'") == [(4,)]:
                    break
                done.wait(0.01)
        for reader in readers:
            reader.join()
        assert sql(uri, backends) == [(4,)]

        def write():
            for batch in range(5000):
                while restarting.is_set() and not (restarted.is_set() or done.is_set()):
                    restarted.wait(0.01)
                if done.is_set() and not restarted.is_set():  # the restart itself failed
                    return
                began_after = restarted.is_set()
                events = [Event.of(U(f"{batch}.{n}")) for n in range(3)]
                try:
                    store.append("s", events, store.version("s"))
                    outcomes.append((batch, "after" if began_after else "appended"))
                except psycopg.OperationalError as error:
                    outcomes.append((batch, f"error: {type(error).__name__}"))
                if restarted.is_set() and sum(1 for _, o in outcomes if o == "after") >= 5:
                    return

        writer = threading.Thread(target=write)
        writer.start()
        try:
            while len(outcomes) < 5:
                done.wait(0.01)
            restarting.set()
            pg_ctl(["-w", "-m", "fast", "restart"], pgdata=postgres_server.pgdata, user=postgres_server.system_user)
            postgres_server.ensure_postgres_running()  # pgserver reads the new server's pid, to stop it at the end
            restarted.set()
        finally:
            done.set()
            writer.join(timeout=120)
        assert not writer.is_alive()
        log = contents(store.log("s"))

    errors = [o for _, o in outcomes if o.startswith("error")]
    assert len(errors) <= 1, outcomes  # the batch the restart cut off, no more (before: one a dead connection)
    after = [b for b, o in outcomes if o == "after"]
    assert len(after) >= 5  # the writer went on after the restart without an error of a dead connection
    assert all(o == "after" for b, o in outcomes if b > after[0]), outcomes
    batches = [log[n : n + 3] for n in range(0, len(log), 3)]
    stored = [int(texts[0].split(".")[0]) for texts in batches]
    for texts, batch in zip(batches, stored):
        assert texts == [f"{batch}.{n}" for n in range(3)]  # whole
    assert stored == sorted(set(stored))  # once each, in order
    assert {b for b, o in outcomes if o in ("appended", "after")} <= set(stored)
