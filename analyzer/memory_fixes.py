"""Fixes for histories a framework keeps (MEMORY-UNBOUNDED-HISTORY), each checked against the
SDK's own source and run against it before it was written here.

An edit is safe when the stored history (what the user sees) stays as it was and only what
is sent is bounded:

- LangChain ``ConversationBufferMemory(...)`` -> ``ConversationBufferWindowMemory(k=10, ...)``
  (langchain 0.3 / langchain-classic 1.0: the same fields; ``chat_memory.messages`` keeps
  every message, ``load_memory_variables`` returns the last ``2 * k``).
- ``RunnableWithMessageHistory(chain, ...)``: a ``trim_messages(..., start_on="human",
  include_system=True)`` step on the history key in front of the chain (langchain-core 1.8:
  the message history store still gets every message).
- OpenAI Agents SDK sessions: ``session_settings=SessionSettings(limit=40)`` (openai-agents
  0.24: the runner reads the last 40 items, drops tool outputs whose call fell out of the
  window; ``add_items`` still stores everything).
- LlamaIndex lists sent whole: ``ChatMemoryBuffer.from_defaults(token_limit=3000,
  chat_history=list(h)).get()`` (llama-index-core 0.14: ``get`` returns the newest messages under
  the limit, never starting on an assistant or tool message). The list is copied because the
  buffer's store keeps a reference and the chat engines append to it; a system message first
  in the list is kept in front.

- Semantic Kernel ``ChatHistory`` sent from an async function: a reduced copy,
  ``ChatHistoryTruncationReducer(target_count=20, messages=list(h.messages))`` and ``await
  reduced.reduce()`` before the call (semantic-kernel 1.45: ``reduce()`` keeps the system
  message and function calls with their results, and truncates only the copy).

No edit, only the advice: Pydantic AI (a history processor's result replaces the run's
history, so ``all_messages()`` returns the trimmed list; v2 moved ``history_processors=`` to
``capabilities=[ProcessHistory(...)]``), google-genai chat objects (the chat is the store; no bound), Responses
API ``previous_response_id`` chains (``truncation="auto"`` only acts at the context window),
and Agents SDK input lists replayed by hand (``result.to_input_list()`` returns the input
that was sent, so a bounded input would shrink the stored thread).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .findings import Edit, Finding, Fix, Span
from .fixes import HISTORY_STAYS, TRIM_IMPORTS, WINDOW_TURNS, _imports, _index, _wrap, text_at

WINDOW_ITEMS = 40  # Agents SDK items: about 10 turns of user, tool call, tool output, reply
TOKEN_LIMIT = 3000
REDUCED_COUNT = 20  # Semantic Kernel messages
TRIM = (
    'trim_messages(strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, '
    'start_on="human", include_system=True)'
)
# Fields ConversationBufferWindowMemory shares with ConversationBufferMemory.
BUFFER_FIELDS = {"human_prefix", "ai_prefix", "memory_key", "chat_memory", "input_key", "output_key", "return_messages"}
# Agents SDK sessions whose __init__ takes session_settings (openai-agents 0.24).
EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
SESSIONS = {"SQLiteSession", "AsyncSQLiteSession", "AdvancedSQLiteSession", "SQLAlchemySession", "RedisSession"}

SUGGESTIONS = {
    "buffer": f"Use `ConversationBufferWindowMemory(k={WINDOW_TURNS}, ...)`: `chat_memory.messages` keeps every "
    f"message, the prompt gets the last {WINDOW_TURNS} exchanges. " + HISTORY_STAYS,
    "runnable": "Put a trimmer on the history in front of the chain: `RunnablePassthrough.assign(history="
    'itemgetter("history") | trim_messages(strategy="last", token_counter=count_tokens_approximately, '
    'max_tokens=4000, start_on="human", include_system=True)) | chain`. ' + HISTORY_STAYS,
    "agents": f"Give the session `session_settings=SessionSettings(limit={WINDOW_ITEMS})` (`from agents import "
    "SessionSettings`): the session keeps every item, each run reads the last ones, and the SDK drops a tool "
    "output whose call fell out of the window. A list replayed by hand (`result.to_input_list()` fed back): keep "
    "it in such a session instead; bounding the input alone would also shrink what `to_input_list()` returns. "
    + HISTORY_STAYS,
    "llama_index": f"Send a token-limited view: `ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, "
    "chat_history=list(history)).get()` (`from llama_index.core.memory import ChatMemoryBuffer`); copy the "
    "list, the buffer appends to the one it is given. " + HISTORY_STAYS,
    "pydantic_ai": "Bound what is sent with a history processor that keeps the last whole turns: "
    "`Agent(..., history_processors=[keep_recent])` (v1), `Agent(..., capabilities=[ProcessHistory(keep_recent), "
    "ReinjectSystemPrompt()])` (v2). The processor's result replaces the run's history, so keep the stored "
    "history with `extend(result.new_messages())`, not `= result.all_messages()`; a trim also drops the "
    "`system_prompt` part unless `ReinjectSystemPrompt()` puts it back.",
    "semantic_kernel": "Send a reduced copy: `reduced = ChatHistoryTruncationReducer(target_count=20, "
    "messages=list(history.messages))`, `await reduced.reduce()`, then `chat_history=reduced` (`reduce()` "
    "truncates the history it is called on, keeping the system message and function calls with their results). "
    + HISTORY_STAYS,
    "google-genai": "A chat object re-sends its whole history and has no limit: keep the turns yourself and "
    "recreate the chat per turn from the last whole turns (`client.chats.create(model=..., history=recent)`; "
    "google-generativeai: `model.start_chat(history=recent)`), or send a bounded `contents` to `generate_content`.",
    "openai-responses": "`truncation=\"auto\"` only drops items once the context window is full, so cost still "
    "grows to the window: after N turns start a new chain (`previous_response_id=None`) from a summary in "
    "`instructions`, or keep the turns yourself and send a bounded `input`.",
}


def framework_fix(
    finding: Finding, module: cst.Module, wrapper: MetadataWrapper, lines: Sequence[str]
) -> tuple[Fix | None, str] | None:
    """The fix (or None) and the advice for a history a framework keeps; None when the finding
    is not one (a plain list, a LangChain message list)."""
    framework = str(finding.properties.get("framework", ""))
    history = str(finding.properties.get("history", ""))
    storage = finding.properties.get("storage")
    if framework == "langchain" and history == "ConversationBufferMemory":
        return _window_memory(finding, module, wrapper, lines), SUGGESTIONS["buffer"]
    if framework == "langchain" and history == "RunnableWithMessageHistory":
        return _trimmed_runnable(finding, module, wrapper, lines), SUGGESTIONS["runnable"]
    if framework == "agents":
        return (_session_limit(finding, module, wrapper, lines) if storage == "framework" else None), SUGGESTIONS["agents"]
    if framework == "llama_index":
        return _memory_view(finding, module, wrapper, lines), SUGGESTIONS["llama_index"]
    if storage == "server":
        return None, SUGGESTIONS["openai-responses"]
    if framework == "semantic_kernel":
        return _reduced_copy(finding, module, wrapper, lines), SUGGESTIONS["semantic_kernel"]
    if framework == "pydantic_ai" or framework == "google-genai" and storage == "framework":
        return None, SUGGESTIONS[framework]
    return None


def _call_at(wrapper: MetadataWrapper, span: Span) -> cst.Call | None:
    """The call whose 1-based span is ``span``."""
    for node, where in wrapper.resolve(PositionProvider).items():
        if (isinstance(node, cst.Call) and (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
                == (span.line, span.col, span.end_line, span.end_col)):
            return node
    return None


def _span_of(wrapper: MetadataWrapper, node: cst.CSTNode) -> Span:
    where = wrapper.resolve(PositionProvider)[node]
    return Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)


def _keywords(call: cst.Call) -> set[str] | None:
    """The keyword names of ``call``, or None when it has positional or starred arguments."""
    if any(arg.keyword is None for arg in call.args):
        return None
    return {arg.keyword.value for arg in call.args}


def _import_of(module: cst.Module, name: str) -> str:
    """The module ``name`` is imported from (`from X import name`), or ""."""
    return next((full.rsplit(".", 1)[0] for full in _imports(module) if full.rsplit(".", 1)[1] == name), "")


def _with_keyword(call: cst.Call, keyword: str, value: str) -> cst.Call:
    """``call`` with ``keyword=value`` added last."""
    args = list(call.args)
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, cst.Arg(cst.parse_expression(value), keyword=cst.Name(keyword), equal=EQUAL)])


def _window_memory(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`ConversationBufferMemory(...)` -> `ConversationBufferWindowMemory(k=10, ...)`."""
    call = _call_at(wrapper, finding.span)
    keywords = _keywords(call) if call is not None else None
    base = _import_of(module, "ConversationBufferMemory")
    if keywords is None or not keywords <= BUFFER_FIELDS or not isinstance(call.func, cst.Name) or not base:
        return None
    if base.endswith(".buffer"):
        base = base[: -len(".buffer")] + ".buffer_window"
    window = cst.Arg(cst.Integer(str(WINDOW_TURNS)), keyword=cst.Name("k"), equal=EQUAL,
                     comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if call.args else cst.MaybeSentinel.DEFAULT)
    fixed = call.with_changes(func=cst.Name("ConversationBufferWindowMemory"), args=[window, *call.args])
    return _wrap(
        finding, module, wrapper, lines, module.code_for_node(fixed), [f"from {base} import ConversationBufferWindowMemory"],
        f"Use ConversationBufferWindowMemory(k={WINDOW_TURNS}): chat_memory keeps every message, the prompt gets the "
        f"last {WINDOW_TURNS} exchanges",
        safe=True,
    )


def _trimmed_runnable(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`RunnableWithMessageHistory(chain, ..., history_messages_key="h")` with a trimmer on "h"."""
    call = _call_at(wrapper, finding.span)
    if call is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    key = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "history_messages_key"), None)
    name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
    if not isinstance(name, str) or not name.isidentifier():
        return None
    runnable = call.args[0].value
    text = module.code_for_node(runnable)
    if not isinstance(runnable, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not (
        isinstance(runnable, cst.BinaryOperation) and isinstance(runnable.operator, cst.BitOr)
    ):
        text = f"({text})"
    step = f'RunnablePassthrough.assign({name}=itemgetter("{name}") | {TRIM}) | {text}'
    return _wrap(
        replace(finding, span=_span_of(wrapper, runnable)), module, wrapper, lines, step,
        ["from operator import itemgetter", "from langchain_core.runnables import RunnablePassthrough", *TRIM_IMPORTS],
        f'Trim "{name}" in front of the chain (whole turns, the system message kept); the stored history is unchanged',
        safe=True,
    )


def _session_limit(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`SQLiteSession(...)` -> `SQLiteSession(..., session_settings=SessionSettings(limit=40))`."""
    call = _call_at(wrapper, finding.span)
    if call is None or not isinstance(call.func, cst.Name) or call.func.value not in SESSIONS:
        return None
    if not _import_of(module, call.func.value).startswith("agents"):
        return None
    fixed = _with_keyword(call, "session_settings", f"SessionSettings(limit={WINDOW_ITEMS})")
    return _wrap(
        finding, module, wrapper, lines, module.code_for_node(fixed), ["from agents import SessionSettings"],
        f"Give the session a limit of {WINDOW_ITEMS} items: it keeps every item, each run reads the last "
        f"{WINDOW_ITEMS} (the SDK drops tool outputs whose call fell out)",
        safe=True,
    )


def _system_first(module: cst.Module, history: str) -> bool:
    """``history`` is set to a list literal whose first message is the system message."""
    for node in _index(module).assigns:
        target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
        if (module.code_for_node(target) == history and isinstance(node.value, cst.List) and node.value.elements
                and not isinstance(node, cst.AugAssign)):
            first = module.code_for_node(node.value.elements[0].value)
            if "SYSTEM" in first or '"system"' in first or "'system'" in first:
                return True
    return False


def _memory_view(finding: Finding, module, wrapper, lines) -> Fix | None:
    """The history at the send -> `ChatMemoryBuffer.from_defaults(token_limit=3000, chat_history=list(h)).get()`."""
    history = text_at(lines, finding.span)
    if str(finding.properties.get("expression", "")) != history or finding.properties.get("storage") in ("framework", "server"):
        return None
    if _system_first(module, history):
        text = (f"[{history}[0], *ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, "
                f"chat_history={history}[1:]).get()]")
    else:
        text = f"ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, chat_history=list({history})).get()"
    return _wrap(
        finding, module, wrapper, lines, text, ["from llama_index.core.memory import ChatMemoryBuffer"],
        f"Send the newest messages under {TOKEN_LIMIT} tokens (ChatMemoryBuffer over a copy); the stored list is "
        "unchanged",
        safe=True,
    )


def _innermost(wrapper: MetadataWrapper, span: Span, kind) -> cst.CSTNode | None:
    """The innermost node of ``kind`` whose lines hold ``span``."""
    found, start = None, 0
    for node, where in wrapper.resolve(PositionProvider).items():
        if isinstance(node, kind) and where.start.line <= span.line and span.end_line <= where.end.line and where.start.line >= start:
            found, start = node, where.start.line
    return found


def _reduced_copy(finding: Finding, module, wrapper, lines) -> Fix | None:
    """Send a reduced copy of an SK ChatHistory: `reduced = ChatHistoryTruncationReducer(target_count=20,
    messages=list(h.messages))`, `await reduced.reduce()` before the statement, `reduced` at the send."""
    history = text_at(lines, finding.span)
    function = _innermost(wrapper, finding.span, cst.FunctionDef)
    statement = _innermost(wrapper, finding.span, cst.SimpleStatementLine)
    if (str(finding.properties.get("expression", "")) != history or function is None or function.asynchronous is None
            or statement is None or "reduced" in _index(module).names):
        return None
    line = wrapper.resolve(PositionProvider)[statement].start.line
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    newline = module.default_newline
    setup = (f"{indent}reduced = ChatHistoryTruncationReducer(target_count={REDUCED_COUNT}, messages=list({history}.messages))"
             f"{newline}{indent}await reduced.reduce(){newline}")
    fix = _wrap(
        finding, module, wrapper, lines, "reduced", ["from semantic_kernel.contents import ChatHistoryTruncationReducer"],
        f"Send a copy reduced to the last {REDUCED_COUNT} messages (the system message and function calls with their "
        "results kept); the stored ChatHistory is unchanged",
        safe=True,
    )
    return fix and replace(fix, edits=(*fix.edits, Edit(Span(line, 1, line, 1), setup)))
