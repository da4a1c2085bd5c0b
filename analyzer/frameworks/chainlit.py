"""Chainlit (`chainlit`): the thread a chat session keeps for the app.

Checked against chainlit 2.12.0:

- `cl.chat_context` keeps, per chat session, every message of the thread: `Message.send()`
  and the user's messages add themselves (message.py, emitter.py `process_message` call
  `chat_context.add`), and nothing removes them but `remove()` / `clear()`.
  `cl.chat_context.to_openai()` returns all of them as OpenAI messages, `get()` a copy of
  the list (chat_context.py). Sent to a model in `@cl.on_message`, it is the whole thread
  on every turn; a slice or `bounded_view` at the send bounds it (the generic analysis
  reads those).
- `cl.user_session` histories are the shared analysis's (`chatbound.vocabulary.sessions`).
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.fixes.edits import BOUNDED_IMPORT, WINDOW_TURNS, replace_span, text_at
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.facts import Storage

TRIGGERS = (re.compile(rb"\bchat_context\s*\.\s*(?:to_openai|get)\s*\("),)
CALLS = frozenset({"to_openai"})
READS = ("to_openai", "get")
KEY = "cl.chat_context"
KINDS = {"chainlit": "the thread Chainlit keeps for the chat session (every message sent or received is added)"}
ADVICE = {
    "chainlit": "Send the last turns of the thread, not all of it: `bounded_view(cl.chat_context.to_openai(), "
    "last_turns=10)` (`from chatbound.compaction import bounded_view`); Chainlit keeps the whole thread for the UI.",
}


def storage(facts, expr: cst.CSTNode) -> Storage | None:
    """`cl.chat_context.to_openai()` / `cl.chat_context.get()`."""
    if not isinstance(expr, cst.Call) or callee_name(expr) not in READS or not isinstance(expr.func, cst.Attribute):
        return None
    if "chainlit.chat_context" not in facts.qualified(expr.func.value):
        return None
    return Storage(KEY, "chainlit", facts.code(expr))


def collect(facts) -> None:
    """The thread grows by Chainlit itself on every message: its growth sites are the
    handlers that read it (each runs once a turn)."""
    reads = [call for call in facts.nodes.calls if storage(facts, call) is not None]
    if reads:
        history = facts.history(Storage(KEY, "chainlit", facts.code(reads[0])))
        history.roles.add("message")
        history.growth.extend({id(f): f for f in map(facts.function_of, reads) if f is not None}.values())
        history.growth_note = "Chainlit itself"


def fix(finding, module: cst.Module, wrapper, lines):
    """`cl.chat_context.to_openai()` -> `bounded_view(cl.chat_context.to_openai(), last_turns=10)`
    at the send (safe: role dicts, and Chainlit's thread is untouched); `get()` returns
    Message objects, which bounded_view does not read: advice."""
    if finding.properties.get("storage") != "chainlit":
        return None
    sent = text_at(lines, finding.span)
    if not sent.rstrip().endswith("to_openai()"):
        return None, ADVICE["chainlit"]
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        f"bounded_view({sent}, last_turns={WINDOW_TURNS})",
        [BOUNDED_IMPORT],
        f"Send the last {WINDOW_TURNS} turns of the Chainlit thread; Chainlit keeps all of it",
        safe=True,
    ), ADVICE["chainlit"]
