"""Short constructors for the notation of engine-cases.md: U, A, T, S and Σ."""

from chatbound.compaction import CompactionBoundary, Event, EventType, Message, ToolCall


def U(text):
    return Message("user", text)


def A(text, *calls):
    return Message("assistant", text, tuple(ToolCall(call, "lookup", f'{{"q": "{call}"}}') for call in calls))


def T(call, text):
    return Message("tool", text, tool_call_id=call, name="lookup")


def S(text):
    return Message("system", text)


def contents(events):
    return [event.message.content for event in events]


def seed_summary(store, session_id, *texts):
    """Record a prior pass whose summary turn is ``texts`` (user shadow prompt, assistant summary)."""
    roles = ["user", "assistant"]
    summary = [Event.of(Message(roles[n % 2], text), synthetic=True) for n, text in enumerate(texts)]
    boundary = CompactionBoundary(summary=tuple(event.id for event in summary))
    store.append(session_id, [Event(EventType.COMPACTION, payload=boundary), *summary], store.version(session_id))
    return summary
