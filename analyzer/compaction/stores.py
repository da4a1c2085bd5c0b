"""Append-only event logs with version-checked writes: in memory and in SQLite.

A session's version is the number of events in its log. ``view`` resolves the newest
boundary through an index, so its cost follows the view, not the length of the log.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading

from .messages import EventType, project
from .rows import check_append, check_session, decode, encode


class VersionConflict(Exception):
    """The session moved on since it was read; the append wrote nothing."""

    def __init__(self, session_id: str, expected: int, actual: int):
        super().__init__(f"session {session_id!r} is at version {actual}, not {expected}")
        self.session_id, self.expected, self.actual = session_id, expected, actual


def _unknown(session_id: str) -> ValueError:
    return ValueError(f"session_id {session_id!r} is not a known session")


def _repeated(session_id: str) -> ValueError:
    return ValueError(f"events: an event id is already in session {session_id!r}")


class _Log:
    def __init__(self):
        self.events: list = []
        self.positions: dict = {}
        self.boundary = -1


class InMemoryEventStore:
    def __init__(self):
        self._sessions: dict = {}
        self._lock = threading.Lock()

    def create(self, session_id: str) -> None:
        with self._lock:
            self._sessions.setdefault(check_session(session_id), _Log())

    def append(self, session_id: str, events, expected_version: int) -> int:
        events = check_append(session_id, events, expected_version)
        with self._lock:
            log = self._log(session_id)
            if len(log.events) != expected_version:
                raise VersionConflict(session_id, expected_version, len(log.events))
            ids = {event.id for event in events}
            if len(ids) < len(events) or not ids.isdisjoint(log.positions):
                raise _repeated(session_id)
            for event in events:
                log.positions[event.id] = len(log.events)
                if event.type is EventType.COMPACTION:
                    log.boundary = len(log.events)
                log.events.append(event)
            return len(log.events)

    def log(self, session_id: str) -> list:
        with self._lock:
            return list(self._log(session_id).events)

    def version(self, session_id: str) -> int:
        with self._lock:
            return len(self._log(session_id).events)

    def view(self, session_id: str) -> list:
        return self.snapshot(session_id)[1]

    def snapshot(self, session_id: str) -> tuple:
        """The version and the view, read together."""
        with self._lock:
            log = self._log(session_id)
            if log.boundary < 0:
                return len(log.events), list(log.events)
            ids = log.events[log.boundary].payload.ids
            named = {i: log.events[log.positions[i]] for i in ids if i in log.positions}
            return len(log.events), project(ids, named, log.events[log.boundary + 1 :])

    def _log(self, session_id: str) -> _Log:
        try:
            return self._sessions[check_session(session_id)]
        except KeyError:
            raise _unknown(session_id) from None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, id)
);
CREATE INDEX IF NOT EXISTS boundaries ON events (session_id, type, seq);
"""


class SQLiteEventStore:
    """One SQLite file, shared by threads and processes.

    The version check is the primary key (session_id, seq): an append writes the
    sequence numbers right after the version it read, so two writers from one version
    cannot both commit.
    """

    def __init__(self, path):
        self.path = str(path)
        self._local = threading.local()
        with self._connection() as db:
            db.executescript(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        """One connection per thread and process (a forked child opens its own)."""
        if getattr(self._local, "pid", None) != os.getpid():
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db, self._local.pid = db, os.getpid()
        return self._local.db

    def create(self, session_id: str) -> None:
        self._connection().execute("INSERT OR IGNORE INTO sessions VALUES (?)", (check_session(session_id),))

    def append(self, session_id: str, events, expected_version: int) -> int:
        rows = [
            (session_id, expected_version + n, e.id, e.type.value, encode(e))
            for n, e in enumerate(check_append(session_id, events, expected_version), start=1)
        ]
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            actual = self._version(db, session_id)
            if actual != expected_version:
                raise VersionConflict(session_id, expected_version, actual)
            db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows)
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")
            actual = self.version(session_id)
            if actual != expected_version:
                raise VersionConflict(session_id, expected_version, actual) from None
            raise _repeated(session_id) from None
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return expected_version + len(rows)

    def log(self, session_id: str) -> list:
        db = self._connection()
        with _reading(db):
            self._version(db, session_id)
            rows = db.execute("SELECT seq, body FROM events WHERE session_id = ? ORDER BY seq", (session_id,))
            return [decode(session_id, seq, body) for seq, body in rows]

    def version(self, session_id: str) -> int:
        return self._version(self._connection(), session_id)

    def view(self, session_id: str) -> list:
        return self.snapshot(session_id)[1]

    def snapshot(self, session_id: str) -> tuple:
        """The version and the view, read in one transaction."""
        db = self._connection()
        with _reading(db):
            version = self._version(db, session_id)
            newest = db.execute(
                "SELECT seq, body FROM events WHERE session_id = ? AND type = ? ORDER BY seq DESC LIMIT 1",
                (session_id, EventType.COMPACTION.value),
            ).fetchone()
            start, ids = (newest[0], decode(session_id, *newest).payload.ids) if newest else (0, ())
            named = {
                event.id: event
                for seq, body in db.execute(
                    "SELECT seq, body FROM events WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))",
                    (session_id, json.dumps(ids)),
                )
                for event in [decode(session_id, seq, body)]
            }
            after = db.execute(
                "SELECT seq, body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, start),
            )
            return version, project(ids, named, [decode(session_id, seq, body) for seq, body in after])

    def _version(self, db: sqlite3.Connection, session_id: str) -> int:
        check_session(session_id)
        row = db.execute(
            "SELECT (SELECT max(seq) FROM events WHERE session_id = s.id) FROM sessions s WHERE s.id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            raise _unknown(session_id)
        return row[0] or 0


class _reading:
    """A read transaction, so several SELECTs see one snapshot of the file."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN")

    def __exit__(self, *exc):
        self.db.execute("COMMIT")
