"""LlamaIndex hand-written workflows: a sub-agent step handed the whole chat history after a transfer.

Checked against llama-index-core 0.12.0 and 0.14.25 (with llama-index-workflows 2.26.1); the
file is named beside each fact.

- A workflow is a `Workflow` subclass whose `@step` methods (`@step`, `@step(num_workers=4)`:
  workflow/decorators.py) each take the events their event parameter is annotated with (a
  union takes each: workflow/utils.py `inspect_signature`); a step emits the event it returns
  or hands to `ctx.send_event(...)`.
- The steps of a run share its `Context`: `await ctx.set(key, value)` / `await ctx.get(key)`
  (0.12.0 workflow/context.py), `await ctx.store.set(...)` / `ctx.store.get(...)` (0.14.25:
  workflows/context/state_store.py). The value is the object itself: a list read from it and
  appended to is the run's transcript, every agent's turns and tool traffic.
- `llm.achat_with_tools(tools, chat_history=[...])` (and `chat_with_tools`,
  `stream_chat_with_tools`, `astream_chat_with_tools`: llms/function_calling.py) sends
  `chat_history`; `get_tool_calls_from_response(...)` returns the tool calls as
  `ToolSelection`s with `tool_name` and `tool_kwargs`. An orchestrator that reads the chosen
  agent from a transfer tool call's `tool_kwargs` and emits an event hands the conversation to
  the step that takes that event.
- `ChatMemoryBuffer.from_defaults(token_limit=N, chat_history=...)`: `get()` returns the last
  messages within N tokens; without `token_limit` the limit is 0.75 of the llm's context window
  (`DEFAULT_TOKEN_LIMIT_RATIO`), else 3,000 (memory/chat_memory_buffer.py): that default grows
  with the window, so only a limit of at most the 3,000 tokens chatbound's own fix uses bounds.

Objects that keep one conversation (`keeps_conversation`; checked against llama-index-core
0.14.25, also in the legacy `llama_index` 0.9 package): every chat engine keeps its turns in a
memory, `chat()` / `stream_chat()` put the user's message and the answer into it and read it
back on the next call (chat_engine/simple.py, context.py, condense_question.py,
condense_plus_context.py). `index.as_chat_engine(...)` returns one of them for every
`chat_mode` (indices/base.py); `ChatMemoryBuffer`, `ChatSummaryMemoryBuffer`, `Memory`,
`SimpleComposableMemory` and `VectorMemory` (memory/) are such memories themselves.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.frameworks.chat_memories import TOKEN_LIMIT
from chatbound.frameworks.vocabulary import Handoff
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.tree import walk
from chatbound.vocabulary.sinks import Sink, keyword, positional

# classes whose objects keep a conversation: the chat engines of chat_engine/ and the memories of memory/
KEEPERS = frozenset(
    """SimpleChatEngine ContextChatEngine CondenseQuestionChatEngine CondensePlusContextChatEngine
    MultiModalContextChatEngine MultiModalCondensePlusContextChatEngine ChatMemoryBuffer
    ChatSummaryMemoryBuffer Memory SimpleComposableMemory VectorMemory""".split()
)
MAKERS = frozenset({"from_defaults"})  # the classes' own constructors
ENGINE_METHODS = frozenset({"as_chat_engine"})  # an index's method returning a chat engine


def keeps_conversation(qualified: str) -> bool:
    """Whether a call of `qualified` makes an object keeping one conversation: a keeper class
    (`llama_index.core.memory.ChatMemoryBuffer.from_defaults`) or an index's chat engine
    (`llama_index.core.VectorStoreIndex.from_documents.as_chat_engine`, named by the call the
    index was built by)."""
    parts = qualified.split(".")
    if parts[0] != "llama_index" or len(parts) < 2:
        return False
    if parts[-1] in MAKERS:
        parts = parts[:-1]
    return parts[-1] in KEEPERS or (parts[-1] in ENGINE_METHODS and len(parts) > 2)


TOOL_CHATS = frozenset({"chat_with_tools", "achat_with_tools", "stream_chat_with_tools", "astream_chat_with_tools"})
CALLS = HANDOFF_CALLS = TOOL_CHATS
HANDOFF_TRIGGERS = (re.compile(rb"\ba?(?:stream_)?chat_with_tools\s*\("),)
WORKFLOWS = ("llama_index.core.workflow", "workflows")
TRANSFER_ADVICE = (
    "Hand the sub-agent a brief, not the transcript: the transfer tool call's arguments, the user state and the "
    "last turn, or a token-limited view of the history (`ChatMemoryBuffer.from_defaults(token_limit=3000, "
    "chat_history=chat_history).get()`, which never starts at a tool result); keep the whole history in the Context."
)


def sink(facts, call: cst.Call) -> Sink | None:
    """`llm.achat_with_tools(tools, chat_history=...)`: what it sends is `chat_history`."""
    sent = keyword(call, "chat_history") if callee_name(call) in TOOL_CHATS else None
    if sent is None or not any(i.startswith("llama_index") for i in facts.nodes.imports):
        return None
    return Sink(call, f"llama_index.{callee_name(call)}", "llama_index", (sent.value,))


def handoffs(facts) -> list[Handoff]:
    """A step taking the event an orchestrator step emits after its transfer tool call, sending
    its own model the whole conversation kept in the Context (passed in with the start event,
    so it holds the earlier turns of the chat too)."""
    if not any(i.startswith("llama_index") for i in facts.nodes.imports):
        return []
    found = []
    for klass in facts.nodes.classes:
        if not any(
            q.startswith(WORKFLOWS) and q.endswith(".Workflow") for b in klass.bases for q in facts.qualified(b.value)
        ):
            continue
        steps = [
            f
            for f in klass.body.body
            if isinstance(f, cst.FunctionDef)
            and any(
                callee_name(d.decorator) == "step"
                if isinstance(d.decorator, cst.Call)
                else facts.code(d.decorator) == "step"
                for d in f.decorators
            )
        ]
        conversations = _conversations(facts, steps)
        for transfer, event, emitted in _transfers(facts, steps):
            for step in steps:
                if step is transfer or event not in _taken(facts, step):
                    continue
                for node, key in _sent_conversations(facts, step):
                    if key in conversations:
                        found.append(
                            Handoff(
                                node,
                                _message(facts, transfer, step, event, key),
                                TRANSFER_ADVICE,
                                related=(
                                    (
                                        emitted,
                                        f"`{transfer.name.value}` emits `{event}` after the model's transfer tool call",
                                    ),
                                    (conversations[key], f"the conversation enters the Context as `{key}` here"),
                                ),
                            )
                        )
    return found


def _message(facts, transfer, step, event, key) -> str:
    return (
        f"After `{transfer.name.value}` transfers with `{event}`, the step `{step.name.value}` sends its model "
        f"the whole `{key}` of the workflow's Context (the chat passed in with the start event, every agent's turns "
        "and tool traffic): the sub-agent pays for every earlier turn again on each of its calls."
    )


def _taken(facts, step: cst.FunctionDef) -> set[str]:
    """The events a step takes: the names in its event parameter's annotation."""
    params = [p for p in step.params.params if p.annotation is not None]
    return {
        n.value
        for p in params
        if facts.code(p.annotation.annotation) != "Context"
        for n in walk(p.annotation.annotation)
        if isinstance(n, cst.Name)
    }


def _emitted(step: cst.FunctionDef) -> list[cst.Call]:
    """The events a step returns or sends: `return ActiveSpeakerEvent()`, `ctx.send_event(E(...))`."""
    found = []
    for node in walk(step.body):
        value = (
            node.value
            if isinstance(node, cst.Return)
            else positional(node, 0)
            if isinstance(node, cst.Call) and callee_name(node) == "send_event"
            else None
        )
        value = value.value if isinstance(value, cst.Arg) else value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            found.append(value)
    return found


def _transfers(facts, steps: list[cst.FunctionDef]) -> list[tuple[cst.FunctionDef, str, cst.Call]]:
    """(step, event, where it is emitted) for a step that calls a model with tools, reads the
    chosen agent from an argument of a tool call (`tool_kwargs["agent_name"]`; a step passing
    `tool_kwargs` on whole runs a tool), and emits an event."""
    found = []
    for step in steps:
        nodes = list(walk(step.body))
        if not any(isinstance(n, cst.Call) and callee_name(n) in TOOL_CHATS for n in nodes):
            continue
        if not any(
            isinstance(n, cst.Subscript) and isinstance(n.value, cst.Attribute) and n.value.attr.value == "tool_kwargs"
            for n in nodes
        ):
            continue  # the agent is chosen by an argument of the tool call: `call.tool_kwargs["agent_name"]`
        found.extend((step, call.func.value, call) for call in _emitted(step))
    return found


def _context_call(facts, node: cst.CSTNode, method: str) -> str | None:
    """The key of `await ctx.get("key")` / `ctx.store.set("key", ...)` (method `get` or `set`), or None."""
    node = node.expression if isinstance(node, cst.Await) else node
    if not isinstance(node, cst.Call) or callee_name(node) != method or not isinstance(node.func, cst.Attribute):
        return None
    if not _is_context(facts, node.func.value):
        return None
    key = positional(node, 0)
    return string(key.value) if key is not None else None


def _is_context(facts, receiver: cst.BaseExpression) -> bool:
    """A parameter annotated `Context` (or its `.store`)."""
    receiver = receiver.value if isinstance(receiver, cst.Attribute) and receiver.attr.value == "store" else receiver
    param = facts.assignment_before(receiver) if isinstance(receiver, cst.Name) else None
    return (
        isinstance(param, cst.Param)
        and param.annotation is not None
        and facts.code(param.annotation.annotation) == "Context"
    )


def _conversations(facts, steps: list[cst.FunctionDef]) -> dict[str, cst.CSTNode]:
    """Context keys set, in a step taking the start event, to a list the start event carries and
    the step appends to (`chat_history = ev.get("chat_history")`): the chat so far, every run."""
    found = {}
    for step in steps:
        if "StartEvent" not in _taken(facts, step):
            continue
        for call in (n for n in walk(step.body) if isinstance(n, cst.Call)):
            key, value = _context_call(facts, call, "set"), positional(call, 1)
            if key is None or value is None or not isinstance(value.value, cst.Name):
                continue
            name = value.value.value
            start = facts.assignment_before(value.value)
            grown = any(
                isinstance(c, cst.Call)
                and callee_name(c) in ("append", "extend")
                and isinstance(c.func, cst.Attribute)
                and facts.code(c.func.value) == name
                for c in walk(step.body)
            )
            if grown and isinstance(start, cst.Call) and _from_event(facts, start, step):
                found[key] = call
    return found


def _from_event(facts, value: cst.Call, step: cst.FunctionDef) -> bool:
    """`ev.get("chat_history", default=[])`, where `ev` is the step's start event."""
    receiver = value.func.value if isinstance(value.func, cst.Attribute) and callee_name(value) == "get" else None
    param = facts.assignment_before(receiver) if isinstance(receiver, cst.Name) else None
    return isinstance(param, cst.Param) and facts.function_of(param) is step


def _sent_conversations(facts, step: cst.FunctionDef) -> list[tuple[cst.CSTNode, str]]:
    """(where it enters, key) for each Context key sent whole by a model call of the step."""
    found = []
    for sink in facts.sinks:
        if facts.function_of(sink.call) is not step:
            continue
        for content in sink.content:
            entered = _whole_context(facts, content, 0)
            if entered is not None:
                found.append(entered)
    return found


def _whole_context(facts, expr: cst.CSTNode, depth: int) -> tuple[cst.CSTNode, str] | None:
    """`history` read from `await ctx.get("history")`, whole inside `expr` (through names, lists,
    `+`, a memory view of the default size); None for a slice, a brief, a small memory view."""
    if depth > 6:
        return None
    if isinstance(expr, cst.Name):
        value = facts.assignment_before(expr)
        key = _context_call(facts, value, "get") if isinstance(value, cst.CSTNode) else None
        if key is not None:
            return expr, key
        return _whole_context(facts, value, depth + 1) if isinstance(value, cst.BaseExpression) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _whole_context(facts, expr.left, depth + 1) or _whole_context(facts, expr.right, depth + 1)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return next(
            (
                found
                for e in expr.elements
                if isinstance(e, cst.StarredElement)
                for found in [_whole_context(facts, e.value, depth + 1)]
                if found
            ),
            None,
        )
    if isinstance(expr, cst.Call) and callee_name(expr) == "get" and isinstance(expr.func, cst.Attribute):
        memory = expr.func.value
        memory = facts.assignment_before(memory) if isinstance(memory, cst.Name) else memory
        if isinstance(memory, cst.Call) and callee_name(memory) == "from_defaults" and _default_limit(memory):
            history = keyword(memory, "chat_history")
            return _whole_context(facts, history.value, depth + 1) if history is not None else None
    return None


def _default_limit(memory: cst.Call) -> bool:
    """`ChatMemoryBuffer.from_defaults(...)` without a token limit of at most `TOKEN_LIMIT`."""
    limit = keyword(memory, "token_limit")
    value = limit.value if limit is not None else None
    return not (isinstance(value, cst.Integer) and int(value.value) <= TOKEN_LIMIT)
