"""chatbound.compaction: session compaction that keeps a chat history bounded and coherent.

A standalone library (no LibCST, no rules): an append-only event log per session, window
strategies that pin the system prompt and never split a turn or a tool call from its
results, optional rolling summaries, and ``bounded_view`` for plain message lists.

Shipped as its own distribution, ``chatbound-compaction`` (built from this folder), so that
code fixed by the analyzer imports it without pulling in the analyzer.
"""

__version__ = "0.1.0"

from .adapters import from_anthropic, from_openai, to_anthropic, to_openai
from .messages import CompactionBoundary, Event, EventType, Message, ToolCall, event_text
from .service import SessionService
from .stores import InMemoryEventStore, SQLiteEventStore, VersionConflict
from .strategy import CompactionResult, WindowCompactionStrategy
from .summarizer import ModelSummarizer, SummaryRequest
from .triggers import CompactionRequest, TokenCountTrigger, TurnCountTrigger, any_of
from .view import bounded_view
from .windows import last_events, last_turns, token_budget

__all__ = [
    "Message",
    "ToolCall",
    "Event",
    "EventType",
    "CompactionBoundary",
    "InMemoryEventStore",
    "SQLiteEventStore",
    "VersionConflict",
    "SessionService",
    "CompactionRequest",
    "CompactionResult",
    "SummaryRequest",
    "ModelSummarizer",
    "TurnCountTrigger",
    "TokenCountTrigger",
    "any_of",
    "WindowCompactionStrategy",
    "last_events",
    "last_turns",
    "token_budget",
    "event_text",
    "bounded_view",
    "from_openai",
    "to_openai",
    "from_anthropic",
    "to_anthropic",
]


def __getattr__(name):
    """PostgresEventStore imports psycopg, an optional extra: only when asked for."""
    if name == "PostgresEventStore":
        from .postgres import PostgresEventStore

        return PostgresEventStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
