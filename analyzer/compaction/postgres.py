"""A PostgreSQL event log, shared by every instance of a chat service (psycopg 3).

Install with ``pip install 'chatbound-compaction[postgres]'``. The contract is the other
stores': a session's version is the number of events in its log, and an append names the
version it read. The database enforces the check: the append moves the session's version
with one conditional UPDATE, which holds the session row's lock until commit, so of two
writers from one version across processes and machines only one can commit; the other's
UPDATE matches no row and it raises VersionConflict. (session_id, position) is the events'
primary key as well. Every call is one or two statements, without a transaction held open
between them (see the queries). Checked against psycopg 3.3.9 and psycopg-pool 3.3.3.
"""

from __future__ import annotations

try:
    from psycopg import errors, sql
    from psycopg_pool import ConnectionPool
except ImportError as error:  # the engine has no dependencies; this store is an extra
    raise ImportError("PostgresEventStore needs psycopg: pip install 'chatbound-compaction[postgres]'") from error

from .messages import EventType, project
from .rows import check_append, check_session, decode, encode
from .stores import VersionConflict, _repeated, _unknown

SCHEMA_VERSION = 1

# _MIGRATIONS[n] takes a schema from version n to n + 1; a later change appends one.
_MIGRATIONS = [
    """
    CREATE TABLE {s}.sessions (id text PRIMARY KEY, version bigint NOT NULL DEFAULT 0);
    CREATE TABLE {s}.events (
        session_id text NOT NULL REFERENCES {s}.sessions (id),
        position bigint NOT NULL,
        id text NOT NULL,
        type text NOT NULL,
        body text NOT NULL,
        CONSTRAINT one_event_per_position PRIMARY KEY (session_id, position),
        CONSTRAINT one_id_per_session UNIQUE (session_id, id)
    );
    CREATE INDEX boundaries ON {s}.events (session_id, position) WHERE type = 'compaction';
    """,
]

_QUERIES = {
    "create": "INSERT INTO {s}.sessions (id) VALUES (%s) ON CONFLICT DO NOTHING",
    "version": "SELECT version FROM {s}.sessions WHERE id = %s",
    # One statement, so one round trip and atomic even in autocommit: the UPDATE matches no
    # row when the version moved (it waits for a concurrent writer's commit, then re-checks),
    # and then the INSERT joins with nothing.
    "append": """
        WITH moved AS (
            UPDATE {s}.sessions SET version = version + %(count)s
            WHERE id = %(session)s AND version = %(expected)s RETURNING id
        )
        INSERT INTO {s}.events (session_id, position, id, type, body)
        SELECT moved.id, %(expected)s + row.n, row.id, row.type, row.body
        FROM moved, unnest(%(ids)s::text[], %(types)s::text[], %(bodies)s::text[])
            WITH ORDINALITY AS row (id, type, body, n)
    """,
    # Reads see events up to the version read with them: every position up to a committed
    # version is committed, so two statements read one state without a long transaction.
    "log": "SELECT position, body FROM {s}.events WHERE session_id = %s AND position <= %s ORDER BY position",
    "newest": """
        SELECT s.version, b.position, b.body FROM {s}.sessions s LEFT JOIN LATERAL (
            SELECT position, body FROM {s}.events
            WHERE session_id = s.id AND type = 'compaction' AND position <= s.version
            ORDER BY position DESC LIMIT 1
        ) b ON true
        WHERE s.id = %(session)s
    """,
    "view": """
        SELECT position, body FROM {s}.events
        WHERE session_id = %(session)s AND id = ANY(%(ids)s) AND position <= %(version)s
        UNION
        SELECT position, body FROM {s}.events
        WHERE session_id = %(session)s AND position > %(start)s AND position <= %(version)s
        ORDER BY position
    """,
}
assert EventType.COMPACTION.value == "compaction"  # the partial index and "newest" name it


class PostgresEventStore:
    """Sessions in the PostgreSQL schema ``schema`` (created with its tables on first use).

    ``pool`` is a ``psycopg_pool.ConnectionPool`` (the store borrows a connection per call,
    so threads never share one) or a connection string, for which the store opens a pool of
    up to 4 connections, each checked before it is lent (a connection the server closed while
    idle is replaced, not handed to the next call), and closes it in ``close()``. A pool passed
    in is used as configured: give it ``check=ConnectionPool.check_connection`` for the same.
    A call whose connection dies under it raises ``psycopg.OperationalError``; an append that
    raised may still have committed, and a retry from the version read again cannot write it
    twice. A pool does not survive ``fork``:
    create the store in each process.
    """

    def __init__(self, pool, schema: str = "chatbound"):
        if not isinstance(schema, str) or not schema or "\0" in schema:
            raise ValueError(f"schema must be a non-empty string without NUL characters, got {schema!r}")
        if isinstance(pool, str):
            # check=: each connection is tried (one empty query) before it is lent, and a dead one
            # (the server restarted, failed over, or ended it for idle_session_timeout) is replaced
            # (the `check` parameter and `ConnectionPool.check_connection`, new in psycopg-pool 3.2; read in
            # 3.3.3: `getconn` checks each connection it takes, and takes another until its timeout)
            self._pool, self._owned = (
                ConnectionPool(
                    pool,
                    min_size=1,
                    max_size=4,
                    open=True,
                    kwargs={"autocommit": True},
                    check=ConnectionPool.check_connection,
                ),
                True,
            )
        elif isinstance(pool, ConnectionPool):
            self._pool, self._owned = pool, False
        else:
            raise ValueError(f"pool must be a psycopg_pool.ConnectionPool or a connection string, got {pool!r}")
        self.schema = schema
        name = sql.Identifier(schema)
        self._sql = {key: sql.SQL(text).format(s=name) for key, text in _QUERIES.items()}
        try:
            self._migrate(name)
        except BaseException:
            self.close()  # a pool the store opened is closed, its connections and threads with it
            raise

    def _migrate(self, name) -> None:
        """Bring the schema to SCHEMA_VERSION; concurrent first users take turns."""
        with self._pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"chatbound.compaction {self.schema}",))
            db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {s}").format(s=name))
            db.execute(
                sql.SQL("CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer NOT NULL)").format(s=name)
            )
            row = db.execute(sql.SQL("SELECT version FROM {s}.schema_version").format(s=name)).fetchone()
            current = row[0] if row else 0
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"schema {self.schema!r} is at version {current}, newer than this "
                    f"chatbound-compaction understands ({SCHEMA_VERSION}); upgrade chatbound-compaction"
                )
            for script in _MIGRATIONS[current:]:
                db.execute(sql.SQL(script).format(s=name))
            if row is None:
                db.execute(sql.SQL("INSERT INTO {s}.schema_version VALUES (%s)").format(s=name), (SCHEMA_VERSION,))
            elif current < SCHEMA_VERSION:
                db.execute(sql.SQL("UPDATE {s}.schema_version SET version = %s").format(s=name), (SCHEMA_VERSION,))

    def close(self) -> None:
        """Close the pool if the store opened it; a pool passed in stays open."""
        if self._owned:
            self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def create(self, session_id: str) -> None:
        with self._pool.connection() as db:
            db.execute(self._sql["create"], (check_session(session_id),))

    def append(self, session_id: str, events, expected_version: int) -> int:
        """Write ``events`` after ``expected_version`` in one statement: all of them or none."""
        events = check_append(session_id, events, expected_version)
        if not events:
            actual = self.version(session_id)
            if actual != expected_version:
                raise VersionConflict(session_id, expected_version, actual)
            return actual
        values = {
            "session": session_id,
            "expected": expected_version,
            "count": len(events),
            "ids": [event.id for event in events],
            "types": [event.type.value for event in events],
            "bodies": [encode(event) for event in events],
        }
        try:
            with self._pool.connection() as db:
                if db.execute(self._sql["append"], values).rowcount != len(events):
                    raise VersionConflict(session_id, expected_version, self._version(db, session_id))
        except errors.UniqueViolation as error:
            if error.diag.constraint_name == "one_id_per_session":
                raise _repeated(session_id) from None
            raise VersionConflict(session_id, expected_version, self.version(session_id)) from None
        return expected_version + len(events)

    def log(self, session_id: str) -> list:
        with self._pool.connection() as db:
            rows = db.execute(self._sql["log"], (session_id, self._version(db, session_id)))
            return [decode(session_id, position, body) for position, body in rows]

    def version(self, session_id: str) -> int:
        with self._pool.connection() as db:
            return self._version(db, session_id)

    def view(self, session_id: str) -> list:
        return self.snapshot(session_id)[1]

    def snapshot(self, session_id: str) -> tuple:
        """The version and the view at that version: the newest boundary, then its events and later ones."""
        with self._pool.connection() as db:
            row = db.execute(self._sql["newest"], {"session": check_session(session_id)}).fetchone()
            if row is None:
                raise _unknown(session_id)
            version, start, body = row
            ids = decode(session_id, start, body).payload.ids if body is not None else ()
            values = {"session": session_id, "ids": list(ids), "start": start or 0, "version": version}
            listed, named, after = set(ids), {}, []
            for position, body in db.execute(self._sql["view"], values):
                event = decode(session_id, position, body)
                if event.id in listed:
                    named[event.id] = event
                if position > values["start"]:
                    after.append(event)
            return version, project(ids, named, after)

    def _version(self, db, session_id: str) -> int:
        row = db.execute(self._sql["version"], (check_session(session_id),)).fetchone()
        if row is None:
            raise _unknown(session_id)
        return row[0]
