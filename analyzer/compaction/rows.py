"""What every store checks and how the SQL stores keep an event: one JSON text per row.

The checks live here so that the three stores reject the same arguments the same way, and
a row that cannot be read back names its session and position rather than failing deep
inside a JSON or dataclass error.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from .messages import CompactionBoundary, Event, EventType, Message, ToolCall


def check_session(session_id) -> str:
    # PostgreSQL text cannot hold NUL, so no store accepts it: one contract for all three.
    if not isinstance(session_id, str) or not session_id or "\0" in session_id:
        raise ValueError(f"session_id must be a non-empty string without NUL characters, got {session_id!r}")
    return session_id


def check_append(session_id, events, expected_version) -> list:
    """The arguments of ``append``, checked; ``events`` as a list."""
    check_session(session_id)
    if isinstance(expected_version, bool) or not isinstance(expected_version, int) or expected_version < 0:
        raise ValueError(f"expected_version must be a non-negative integer, got {expected_version!r}")
    events = list(events)
    for event in events:
        if not isinstance(event, Event):
            raise ValueError(f"events must be Event instances, got {event!r}")
        if not isinstance(event.id, str) or not event.id or "\0" in event.id:
            raise ValueError(f"events: an event id must be a non-empty string without NUL, got {event.id!r}")
    return events


def encode(event: Event) -> str:
    return json.dumps(
        {
            "id": event.id,
            "type": event.type.value,
            "synthetic": event.synthetic,
            "timestamp": event.timestamp,
            "message": asdict(event.message) if event.message else None,
            "payload": asdict(event.payload) if event.payload else None,
        }
    )


def decode(session_id: str, position: int, body: str) -> Event:
    """The event stored at ``position`` (1-based) of ``session_id``; ValueError naming both if malformed."""
    try:
        return _event(json.loads(body))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"session {session_id!r}, position {position}: the stored event is malformed "
            f"({type(error).__name__}: {error})"
        ) from error


def _event(data: dict) -> Event:
    message = data["message"]
    if message is not None:
        calls = tuple(ToolCall(**call) for call in message.pop("tool_calls"))
        message = Message(**message, tool_calls=calls)
    payload = data["payload"]
    if payload is not None:
        payload = CompactionBoundary(
            **{key: tuple(value) if isinstance(value, list) else value for key, value in payload.items()}
        )
    return Event(
        EventType(data["type"]),
        message=message,
        payload=payload,
        synthetic=data["synthetic"],
        id=data["id"],
        timestamp=data["timestamp"],
    )
