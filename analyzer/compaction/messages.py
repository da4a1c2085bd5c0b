"""What a session is made of: messages, the events that store them, and boundaries."""

from __future__ import annotations

import enum
import time
import uuid
from dataclasses import dataclass, field

ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    tool_calls: tuple = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, not {self.role!r}")
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


class EventType(enum.Enum):
    MESSAGE = "message"
    COMPACTION = "compaction"


@dataclass(frozen=True)
class CompactionBoundary:
    """Names the view from here on, by event id and in view order; what it omits is covered."""

    pinned: tuple = ()
    summary: tuple = ()
    preserved: tuple = ()
    covered_event_count: int = 0
    tokens_saved: int = 0

    @property
    def ids(self) -> tuple:
        return self.pinned + self.summary + self.preserved


@dataclass(frozen=True)
class Event:
    type: EventType
    message: Message | None = None
    payload: CompactionBoundary | None = None
    synthetic: bool = False
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    timestamp: float = field(default_factory=time.time)

    @classmethod
    def of(cls, message: Message, synthetic: bool = False) -> Event:
        return cls(EventType.MESSAGE, message=message, synthetic=synthetic)

    @property
    def role(self) -> str | None:
        return self.message.role if self.message else None

    @property
    def starts_turn(self) -> bool:
        """A turn starts at every user message the user wrote (not a summary's shadow prompt)."""
        return self.role == "user" and not self.synthetic


def project(boundary_ids: tuple, named: dict, after: list) -> list:
    """The view a boundary defines: its named events in order, then every later event."""
    view = [named[event_id] for event_id in boundary_ids if event_id in named]
    listed = set(boundary_ids)
    view.extend(event for event in after if event.id not in listed)
    return view


def event_text(item: Event | Message) -> str:
    """The one-line rendering that token estimates and summary prompts use."""
    message = item.message if isinstance(item, Event) else item
    if message is None:
        return ""
    if message.role == "tool":
        return f"Tool [responses: {message.name or message.tool_call_id} → {message.content}]"
    label = message.role.capitalize()
    text = f"{label}: {message.content}" if message.content else label
    if message.tool_calls:
        calls = ", ".join(f"{call.name}({call.arguments})" for call in message.tool_calls)
        text += f" [tool calls: {calls}]"
    return text
