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
- LlamaIndex lists sent whole: ``ChatMemoryBuffer.from_defaults(token_limit=3000,
  chat_history=list(h)).get()`` (llama-index-core 0.14: ``get`` returns the newest messages under
  the limit, never starting on an assistant or tool message). The list is copied because the
  buffer's store keeps a reference and the chat engines append to it; a system message first
  in the list is kept in front.

- Semantic Kernel ``ChatHistory`` sent from an async function: a reduced copy,
  ``ChatHistoryTruncationReducer(target_count=20, messages=list(h.messages))`` and ``await
  reduced.reduce()`` before the call (semantic-kernel 1.45: ``reduce()`` keeps the system
  message and function calls with their results, and truncates only the copy).

- Responses API ``previous_response_id`` chains: ``truncation="auto"`` on the send (openai
  3.57 ``responses.create``). The server then drops the oldest items once the chain no longer
  fits the model's context window instead of failing the request with a 400; nothing changes
  before that, and every model takes it. Cost still grows until the window is full, so the
  advice names the lower bound too: server-side compaction, ``context_management=[{"type":
  "compaction", "compact_threshold": 20000}]`` (the model then sees an opaque compaction item in
  place of the earlier turns, and a model without compaction support rejects the request), or
  turns kept by the caller and sent as a bounded ``input``. Neither is an edit chatbound makes.

google-genai and google-generativeai chat objects kept per session: the chat is the store
and sends all of it (google-genai 3.6.1 ``Chat.send_message`` sends ``_curated_history +
[message]``, google-generativeai 0.8.6 ``ChatSession`` its whole ``history``; neither takes a
limit). Before each send the chat's own history is trimmed to its last whole turns:
``chat.get_history(curated=True)[:] = bounded_view(chat.get_history(curated=True),
last_turns=10)`` (google-genai >= 1.5, where ``get_history(curated=True)`` returns the very
list the chat sends from and records into; 1.0-1.3 have no ``get_history``) and
``chat.history = bounded_view(chat.history, last_turns=10)`` (``ChatSession.history`` has a
public setter). Rebuilding with ``client.chats.create(..., history=...)`` would need the
create arguments and the store at the send, which the send seldom holds. The trim drops the
chat's older turns, so it is safe only when the module never reads a chat's history back
(no ``.history``, ``get_history``, ``_curated_history``), else unsafe; and only when every
``send_message`` in the module is on a chat the kept one reaches (its store, a name set from
it, or from the function that creates it). Verified with the real objects, the model call
faked: 30 turns, each with an automatic function call, send at most 43 contents, not 119
(google-generativeai without tools 21, not 59), each starting on a user question, never a
function response without its call, and every reply comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.findings import Edit, Finding, Fix, Span
from chatbound.fixes.edits import (
    BOUNDED_IMPORT,
    EQUAL,
    HISTORY_STAYS,
    TRIM_IMPORTS,
    WINDOW_TURNS,
    arg_at,
    call_at,
    import_of,
    innermost,
    keyword_added,
    keywords_of,
    replace_span,
    span_of,
    text_at,
)
from chatbound.fixes.index import module_index, walk_down
from chatbound.syntax.messages import callee_name, is_bounding_name

TOKEN_LIMIT = 3000
REDUCED_COUNT = 20  # Semantic Kernel messages
COMPACTION = '{"type": "compaction", "compact_threshold": 20000}'  # tokens of a Responses chain's context
TRIM = (
    'trim_messages(strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, '
    'start_on="human", include_system=True)'
)
# Fields ConversationBufferWindowMemory shares with ConversationBufferMemory.
BUFFER_FIELDS = {"human_prefix", "ai_prefix", "memory_key", "chat_memory", "input_key", "output_key", "return_messages"}

SUGGESTIONS = {
    "langchain": 'Trim before the model: `trim_messages(max_tokens=..., strategy="last", start_on="human", '
    "include_system=True)` in the chain, or ConversationSummaryBufferMemory / ConversationTokenBufferMemory.",
    "buffer": f"Use `ConversationBufferWindowMemory(k={WINDOW_TURNS}, ...)`: `chat_memory.messages` keeps every "
    f"message, the prompt gets the last {WINDOW_TURNS} exchanges. " + HISTORY_STAYS,
    "runnable": "Put a trimmer on the history in front of the chain: `RunnablePassthrough.assign(history="
    'itemgetter("history") | trim_messages(strategy="last", token_counter=count_tokens_approximately, '
    'max_tokens=4000, start_on="human", include_system=True)) | chain`. ' + HISTORY_STAYS,
    "llama_index": f"Send a token-limited view: `ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, "
    "chat_history=list(history)).get()` (`from llama_index.core.memory import ChatMemoryBuffer`); copy the "
    "list, the buffer appends to the one it is given. " + HISTORY_STAYS,
    "semantic_kernel": "Send a reduced copy: `reduced = ChatHistoryTruncationReducer(target_count=20, "
    "messages=list(history.messages))`, `await reduced.reduce()`, then `chat_history=reduced` (`reduce()` "
    "truncates the history it is called on, keeping the system message and function calls with their results). "
    + HISTORY_STAYS,
    "google-genai": "A chat object re-sends its whole history and has no limit: trim it to its last whole turns "
    f"before each send, `chat.get_history(curated=True)[:] = bounded_view(chat.get_history(curated=True), "
    f"last_turns={WINDOW_TURNS})` (google-generativeai: `chat.history = bounded_view(chat.history, "
    f"last_turns={WINDOW_TURNS})`); the chat then keeps only those turns. To keep them all, keep the turns "
    "yourself and send a bounded `contents` to `generate_content`.",
    "openai-responses": '`truncation="auto"` (applied with `--fix`) stops the chain from failing once it '
    "outgrows the context window, but cost still grows until the window is full. For a lower bound turn on "
    f"server-side compaction, `context_management=[{COMPACTION}]` (the model then sees an opaque compaction item in "
    "place of the earlier turns; a model without compaction support rejects it), or keep the turns yourself and "
    "send a bounded `input`.",
    "openai-assistants": 'Give each run on the thread `truncation_strategy={"type": "last_messages", "last_messages": '
    f"{2 * WINDOW_TURNS}}}` (`threads.runs.create` and its `_and_poll`/`stream` forms): the thread keeps every message, "
    'the run reads the newest ones. The default, `"auto"`, drops messages only once the thread outgrows the '
    "model's context window, so cost grows until then; `max_prompt_tokens=` caps the tokens a run may read.",
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
    if framework == "llama_index":
        return _memory_view(finding, module, wrapper, lines), SUGGESTIONS["llama_index"]
    if framework == "openai-assistants":
        return None, SUGGESTIONS[framework]
    if storage == "server":
        return _server_truncation(finding, module, wrapper, lines), SUGGESTIONS["openai-responses"]
    if framework == "semantic_kernel":
        return _reduced_copy(finding, module, wrapper, lines), SUGGESTIONS["semantic_kernel"]
    if framework == "google-genai" and storage == "framework":
        return _trimmed_chat(finding, module, wrapper, lines), SUGGESTIONS[framework]
    return None


def _window_memory(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`ConversationBufferMemory(...)` -> `ConversationBufferWindowMemory(k=10, ...)`."""
    call = call_at(wrapper, finding.span)
    keywords = keywords_of(call) if call is not None else None
    base = import_of(module, "ConversationBufferMemory")
    if keywords is None or not keywords <= BUFFER_FIELDS or not isinstance(call.func, cst.Name) or not base:
        return None
    if base.endswith(".buffer"):
        base = base[: -len(".buffer")] + ".buffer_window"
    window = cst.Arg(
        cst.Integer(str(WINDOW_TURNS)),
        keyword=cst.Name("k"),
        equal=EQUAL,
        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if call.args else cst.MaybeSentinel.DEFAULT,
    )
    fixed = call.with_changes(func=cst.Name("ConversationBufferWindowMemory"), args=[window, *call.args])
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        module.code_for_node(fixed),
        [f"from {base} import ConversationBufferWindowMemory"],
        f"Use ConversationBufferWindowMemory(k={WINDOW_TURNS}): chat_memory keeps every message, the prompt gets the "
        f"last {WINDOW_TURNS} exchanges",
        safe=True,
    )


def _trimmed_runnable(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`RunnableWithMessageHistory(chain, ..., history_messages_key="h")` with a trimmer on "h"."""
    call = call_at(wrapper, finding.span)
    if call is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    key = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == "history_messages_key"), None
    )
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
    return replace_span(
        replace(finding, span=span_of(wrapper, runnable)),
        module,
        wrapper,
        lines,
        step,
        ["from operator import itemgetter", "from langchain_core.runnables import RunnablePassthrough", *TRIM_IMPORTS],
        f'Trim "{name}" in front of the chain (whole turns, the system message kept); the stored history is unchanged',
        safe=True,
    )


def _system_first(module: cst.Module, history: str) -> bool:
    """``history`` is set to a list literal whose first message is the system message."""
    for node in module_index(module).assigns:
        target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
        if (
            module.code_for_node(target) == history
            and isinstance(node.value, cst.List)
            and node.value.elements
            and not isinstance(node, cst.AugAssign)
        ):
            first = module.code_for_node(node.value.elements[0].value)
            if "SYSTEM" in first or '"system"' in first or "'system'" in first:
                return True
    return False


def _memory_view(finding: Finding, module, wrapper, lines) -> Fix | None:
    """The history at the send -> `ChatMemoryBuffer.from_defaults(token_limit=3000, chat_history=list(h)).get()`."""
    history = text_at(lines, finding.span)
    if str(finding.properties.get("expression", "")) != history or finding.properties.get("storage") in (
        "framework",
        "server",
    ):
        return None
    if _system_first(module, history):
        text = (
            f"[{history}[0], *ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, "
            f"chat_history={history}[1:]).get()]"
        )
    else:
        text = f"ChatMemoryBuffer.from_defaults(token_limit={TOKEN_LIMIT}, chat_history=list({history})).get()"
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        text,
        ["from llama_index.core.memory import ChatMemoryBuffer"],
        f"Send the newest messages under {TOKEN_LIMIT} tokens (ChatMemoryBuffer over a copy); the stored list is "
        "unchanged",
        safe=True,
    )


def _reduced_copy(finding: Finding, module, wrapper, lines) -> Fix | None:
    """Send a reduced copy of an SK ChatHistory: `reduced = ChatHistoryTruncationReducer(target_count=20,
    messages=list(h.messages))`, `await reduced.reduce()` before the statement, `reduced` at the send."""
    history = text_at(lines, finding.span)
    function = innermost(wrapper, finding.span, cst.FunctionDef)
    statement = innermost(wrapper, finding.span, cst.SimpleStatementLine)
    if (
        str(finding.properties.get("expression", "")) != history
        or function is None
        or function.asynchronous is None
        or statement is None
        or "reduced" in module_index(module).names
    ):
        return None
    line = wrapper.resolve(PositionProvider)[statement].start.line
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    newline = module.default_newline
    setup = (
        f"{indent}reduced = ChatHistoryTruncationReducer(target_count={REDUCED_COUNT}, messages=list({history}.messages))"
        f"{newline}{indent}await reduced.reduce(){newline}"
    )
    fix = replace_span(
        finding,
        module,
        wrapper,
        lines,
        "reduced",
        ["from semantic_kernel.contents import ChatHistoryTruncationReducer"],
        f"Send a copy reduced to the last {REDUCED_COUNT} messages (the system message and function calls with their "
        "results kept); the stored ChatHistory is unchanged",
        safe=True,
    )
    return fix and replace(fix, edits=(*fix.edits, Edit(Span(line, 1, line, 1), setup)))


def _server_truncation(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`responses.create(..., previous_response_id=x)` -> the same call with `truncation="auto"`,
    unless the call already says how to truncate or manage its context."""
    found = arg_at(wrapper, finding.span)
    if found is None:
        return None
    call, arg = found
    keywords = keywords_of(call)
    if (
        arg.keyword is None
        or arg.keyword.value != "previous_response_id"
        or not isinstance(call.func, cst.Attribute)
        or call.func.attr.value != "create"
        or keywords is None
        or keywords & {"truncation", "context_management"}
    ):
        return None
    fixed = keyword_added(wrapper, lines, call, "truncation", '"auto"')
    return replace_span(
        replace(finding, span=span_of(wrapper, call)),
        module,
        wrapper,
        lines,
        fixed,
        [],
        "Let the server drop the oldest items once the chain outgrows the model's context window instead of failing "
        "with a 400 (nothing changes before that, and the chain of response ids stays as it is); cost still grows "
        f"until the window is full: for a lower bound add `context_management=[{COMPACTION}]` by hand",
        safe=True,
    )


# The trim put before each send of a kept chat, by SDK; ``{r}`` is the chat.
CHAT_TRIMS = {
    "create": f"{{r}}.get_history(curated=True)[:] = bounded_view({{r}}.get_history(curated=True), last_turns={WINDOW_TURNS})",
    "start_chat": f"{{r}}.history = bounded_view({{r}}.history, last_turns={WINDOW_TURNS})",
}
CHAT_SENDS = ("send_message", "send_message_stream")
# Reads of a chat's history: trimming it changes what they see.
HISTORY_READS = {"history", "_history", "get_history", "_curated_history", "_comprehensive_history"}


def trims_chat(statement: cst.CSTNode | None, chat: str) -> bool:
    """``statement`` trims the history of ``chat`` (one of CHAT_TRIMS, any bounding call)."""
    if not (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
        and len(statement.body[0].targets) == 1
    ):
        return False
    code = cst.Module([]).code_for_node
    assign = statement.body[0]
    target = " ".join(code(assign.targets[0].target).split())
    read = {
        f"{chat}.history": f"{chat}.history",
        f"{chat}.get_history(curated=True)[:]": f"{chat}.get_history(curated=True)",
    }.get(target)
    value = assign.value
    return (
        read is not None
        and isinstance(value, cst.Call)
        and is_bounding_name(callee_name(value))
        and bool(value.args)
        and " ".join(code(value.args[0].value).split()) == read
    )


def _trimmed_chat(finding: Finding, module, wrapper, lines) -> Fix | None:
    """Before every send of the kept chat, a line trimming its own history to the last turns."""
    create = call_at(wrapper, finding.span)
    kind = callee_name(create) if create is not None else ""
    if kind not in CHAT_TRIMS:
        return None
    positions = wrapper.resolve(PositionProvider)
    sends = [
        n
        for n in positions
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in CHAT_SENDS
    ]
    reached = _chats_reached(module, wrapper, create)
    edits = []
    for send in sends:
        chat = module.code_for_node(send.func.value)
        statement = innermost(wrapper, span_of(wrapper, send), cst.SimpleStatementLine)
        if (
            chat not in reached
            or statement is None
            or len(statement.body) != 1
            or any(isinstance(n, cst.Lambda) for n in walk_down(statement))
        ):
            return None  # a send on something else, or one no line can go before
        line = positions[statement].start.line
        indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
        edits.append(Edit(Span(line, 1, line, 1), indent + CHAT_TRIMS[kind].format(r=chat) + module.default_newline))
    if not edits:
        return None
    reads = sorted({n.attr.value for n in positions if isinstance(n, cst.Attribute) and n.attr.value in HISTORY_READS})
    fix = replace_span(
        replace(finding, span=Span(edits[0].span.line, 1, edits[0].span.line, 1)),
        module,
        wrapper,
        lines,
        edits[0].text,
        [BOUNDED_IMPORT],
        f"Trim the chat object's own history to its last {WINDOW_TURNS} turns before each send: the chat keeps only "
        "those turns"
        + (
            f", and this module reads a chat's history ({', '.join(reads)})"
            if reads
            else "; nothing in this module reads its history back, so only what is sent changes"
        ),
        safe=not reads,
    )
    return fix and replace(fix, edits=(*fix.edits, *edits[1:]))


def _chats_reached(module: cst.Module, wrapper: MetadataWrapper, create: cst.Call) -> set[str]:
    """The expressions that hold the chat ``create`` makes: its store (`CHATS[k]`, `rooms[room_id]`:
    any subscript of the dict it is put in), and names set only from the store (`CHATS[k]`,
    `CHATS.get(k)`), from ``create`` itself, or from a call of the function that holds ``create``."""
    code = lambda node: " ".join(module.code_for_node(node).split())  # noqa: E731
    assigns = [n for n in module_index(module).assigns if isinstance(n, cst.Assign) and len(n.targets) == 1]
    made = next((n.targets[0].target for n in assigns if n.value is create), None)
    kept = [made] + [
        n.targets[0].target
        for n in assigns
        if made is not None
        and isinstance(made, cst.Name)
        and isinstance(n.value, cst.Name)
        and n.value.value == made.value
    ]  # `self._chats[k] = chat`
    stores = {code(t.value) for t in kept if isinstance(t, cst.Subscript)}
    maker = innermost(wrapper, span_of(wrapper, create), cst.FunctionDef)
    reached = {code(n) for n in walk_down(module) if isinstance(n, cst.Subscript) and code(n.value) in stores}
    linked: dict[str, bool] = {}
    for node in assigns:
        if isinstance(node.targets[0].target, cst.Name):
            value = node.value
            link = (
                value is create
                or isinstance(value, cst.Subscript)
                and code(value.value) in stores
                or isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in ("get", "setdefault")
                and code(value.func.value) in stores
                or maker is not None
                and isinstance(value, cst.Call)
                and callee_name(value) == maker.name.value
            )
            name = node.targets[0].target.value
            linked[name] = linked.get(name, True) and link
    return reached | {name for name, link in linked.items() if link}
