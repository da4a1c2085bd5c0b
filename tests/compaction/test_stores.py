"""The store contract, one suite run on all three stores: append-only, version-checked, projected on read."""

import sqlite3

import pytest

from chatbound.compaction import (
    CompactionBoundary,
    Event,
    EventType,
    Message,
    SessionService,
    ToolCall,
    VersionConflict,
    WindowCompactionStrategy,
    last_events,
)

from .builders import A, T, U, contents
from .workers import open_store


def test_append_returns_the_new_version_and_log_keeps_order(store):
    store.create("s")
    events = [Event.of(U("u1")), Event.of(A("a1"))]
    assert store.append("s", events, 0) == 2
    assert store.append("s", [Event.of(U("u2"))], 2) == 3
    assert store.version("s") == 3
    assert contents(store.log("s")) == ["u1", "a1", "u2"]


def test_events_come_back_equal_to_what_was_stored(store):
    store.create("s")
    call = Message("assistant", "", (ToolCall("c1", "search", '{"q": "x"}'),))
    events = [
        Event.of(call),
        Event.of(Message("tool", "hit", tool_call_id="c1", name="search")),
        Event.of(Message("user", "shadow"), synthetic=True),
        Event.of(Message("user", "a NUL \0, a quote ', émoji 🙂 and \\u0000")),
        Event(EventType.COMPACTION, payload=CompactionBoundary(("a",), ("b",), ("c", "d"), 3, 42)),
    ]
    store.append("s", events, 0)
    assert store.log("s") == events


@pytest.mark.parametrize("stale", [0, 1, 3])
def test_a_stale_version_raises_version_conflict_and_writes_nothing(store, stale):
    store.create("s")
    store.append("s", [Event.of(U("u1")), Event.of(A("a1"))], 0)
    with pytest.raises(VersionConflict):
        store.append("s", [Event.of(U("late"))], stale)
    assert contents(store.log("s")) == ["u1", "a1"]


@pytest.mark.parametrize("operation", ["log", "version", "view"])
def test_an_unknown_session_is_a_value_error_naming_it(store, operation):
    with pytest.raises(ValueError, match="session_id"):
        getattr(store, operation)("nope")


def test_an_event_id_already_in_the_log_is_rejected_and_nothing_is_written(store):
    store.create("s")
    u1 = Event.of(U("u1"))
    store.append("s", [u1], 0)
    for batch in ([Event.of(A("a1")), u1], [Event.of(A("a1"))] * 2):
        with pytest.raises(ValueError, match="events"):
            store.append("s", batch, 1)
    assert store.log("s") == [u1]


BAD_CALLS = {
    "append a non-event": lambda store: store.append("s", [U("u1")], 0),
    "append an event without an id": lambda store: store.append("s", [Event(EventType.MESSAGE, U("u"), id="")], 0),
    "a negative version": lambda store: store.append("s", [], -1),
    "a version that is a bool": lambda store: store.append("s", [], True),
    "a version that is a string": lambda store: store.append("s", [], "0"),
    "a session id that is a number": lambda store: store.append(7, [], 0),
    "an empty session id": lambda store: store.create(""),
    "a session id with NUL": lambda store: store.create("a\0b"),
    "a session id of None": lambda store: store.view(None),
}


@pytest.mark.parametrize("call", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_invalid_arguments_are_value_errors_and_write_nothing(store, call):
    store.create("s")
    with pytest.raises(ValueError, match="events|expected_version|session_id"):
        call(store)
    assert store.log("s") == []


def corrupt(target, position):
    """Overwrite the stored body of the event at ``position`` of session "s" with a non-event."""
    if target[0] == "sqlite":
        with sqlite3.connect(target[1]) as db:
            db.execute("UPDATE events SET body = '{\"id\": 1}' WHERE session_id = 's' AND seq = ?", (position,))
        return
    import psycopg

    with psycopg.connect(target[1]) as db:
        db.execute(
            f"UPDATE \"{target[2]}\".events SET body = 'not json' WHERE session_id = 's' AND position = %s", (position,)
        )


@pytest.mark.parametrize("read", ["log", "view", "snapshot"])
def test_a_malformed_row_is_one_value_error_naming_session_and_position(target, read):
    store = open_store(target)
    store.create("s")
    store.append("s", [Event.of(U("u1")), Event.of(A("a1")), Event.of(U("u2"))], 0)
    corrupt(target, 2)
    with pytest.raises(ValueError, match=r"session 's', position 2: the stored event is malformed"):
        getattr(store, read)("s")
    if hasattr(store, "close"):
        store.close()


def test_append_to_an_unknown_session_is_a_value_error(store):
    with pytest.raises(ValueError, match="session_id"):
        store.append("nope", [Event.of(U("u1"))], 0)


def test_view_projects_the_newest_boundary_then_every_later_event(store):
    store.create("s")
    u1, a1, u2, a2 = (Event.of(m) for m in (U("u1"), A("a1"), U("u2"), A("a2")))
    first = Event(EventType.COMPACTION, payload=CompactionBoundary(preserved=(u2.id,)))
    second = Event(EventType.COMPACTION, payload=CompactionBoundary(preserved=(a1.id, u2.id)))
    store.append("s", [u1, a1, u2, first, a2], 0)
    assert contents(store.view("s")) == ["u2", "a2"]
    store.append("s", [second], 5)
    assert contents(store.view("s")) == ["a1", "u2"]
    assert len(store.log("s")) == 6


def test_a_message_appended_between_read_and_write_fails_the_compaction(store):
    service = SessionService(store, estimator=len)
    sid = service.create()
    service.append(sid, U("u1"), A("a1"), U("u2"), A("a2"))

    class Interleaved(WindowCompactionStrategy):
        def compact(self, session_id, view, estimator=None):
            service.append(session_id, U("meanwhile"))
            return super().compact(session_id, view, estimator)

    with pytest.raises(VersionConflict):
        service.compact(sid, lambda request: True, Interleaved(last_events(1)))
    assert contents(service.view(sid)) == ["u1", "a1", "u2", "a2", "meanwhile"]
    assert all(event.type is EventType.MESSAGE for event in store.log(sid))


def test_append_of_a_non_message_is_rejected(store):
    service = SessionService(store)
    with pytest.raises(ValueError, match="messages"):
        service.append(service.create(), {"role": "user", "content": "hi"})


def test_unknown_role_is_rejected_by_name():
    with pytest.raises(ValueError, match="role"):
        Message("robot", "beep")


def test_messages_and_tool_calls_are_immutable():
    message = Message("assistant", "", [ToolCall("c1", "f", "{}")])
    assert isinstance(message.tool_calls, tuple)
    with pytest.raises(AttributeError):
        message.content = "changed"


def test_event_text_renders_every_kind_in_one_line():
    from chatbound.compaction import event_text

    assert event_text(U("hi")) == "User: hi"
    assert event_text(Message("system", "sys")) == "System: sys"
    assert event_text(A("", "c1")) == 'Assistant [tool calls: lookup({"q": "c1"})]'
    assert event_text(A("let me look", "c1")) == 'Assistant: let me look [tool calls: lookup({"q": "c1"})]'
    assert event_text(Event.of(T("c1", "42"))) == "Tool [responses: lookup → 42]"
