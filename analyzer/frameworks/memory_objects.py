"""Chat memories that a framework object keeps whole (MEMORY-UNBOUNDED-HISTORY): where each is
found; their fixes and advice are `chat_memories.py`'s, checked against the same sources.

- LangChain (langchain 0.3 / langchain-classic 1.0): `ConversationBufferMemory` and
  `ConversationStringBufferMemory` return every message from `load_memory_variables`;
  `ConversationChain` without `memory=` makes a `ConversationBufferMemory`.
  `RunnableWithMessageHistory(chain, ...)` (langchain-core 1.8) loads the whole stored history
  into every call unless a trim step sits in the chain (a bounding call or a count slice
  anywhere in it, or a history class of the module that trims itself).
- google-genai 3.6.1 `client.chats.create(...)` and google-generativeai 0.8.6
  `model.start_chat(...)`: a chat object kept per session (in a store, or `setdefault` on one),
  or bound before a `while` chat loop that sends on it each turn, re-sends its whole history on
  every `send_message` (google-genai chats.py: each send is given the curated history), unless the statement before each send
  trims that chat's own history (`chat_memories.trims_chat`).
- The Responses API (openai 3.57): `previous_response_id=` or `conversation=` read from a store,
  or chained in the chat loop (`prev = response.id`), replays the whole conversation, unless
  the call sets `truncation="auto"` or server-side compaction (`context_management=[{"type":
  "compaction", "compact_threshold": N}]`).
- The Assistants API (openai 3.57.0, resources/beta/threads/): `threads.messages.create(thread_id, ...)`
  adds a message to a thread the server keeps, and every run on it (`threads.runs.create`,
  `create_and_poll`, `create_and_stream`, `stream`) reads the whole thread unless the run sets
  `truncation_strategy={"type": "last_messages", "last_messages": N}` or `max_prompt_tokens=N`;
  the default, `"auto"` (types/beta/threads/run_create_params.py `TruncationStrategy`), drops
  messages from the middle only once the thread outgrows the model's context. A thread created
  in the function that adds the message (or by every caller that hands it in) lives one request.
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst
from libcst.metadata import ScopeProvider

from chatbound.frameworks.chat_memories import CHAT_SENDS, SUGGESTIONS, trims_chat
from chatbound.frameworks.vocabulary import Kept
from chatbound.syntax.messages import callee_name, is_bounding_name, is_count_slice, string
from chatbound.syntax.tree import walk
from chatbound.vocabulary.sinks import dotted, entry, keyword, positional

BUFFER_MEMORIES = ("ConversationBufferMemory", "ConversationStringBufferMemory")
UNBOUNDED_CHAINS = ("ConversationChain",)
RESPONSE_CHAINS = ("previous_response_id", "conversation")
THREAD_ADDS = ["threads", "messages", "create"]
THREAD_RUNS = ("create", "create_and_poll", "create_and_stream", "stream")
THREAD_CREATES = ("create", "create_and_run")  # `threads.create()`, `threads.create_and_run()`: a new thread
RUN_BOUNDS = ("truncation_strategy", "max_prompt_tokens")


def memories(facts) -> list[Kept]:
    found = []
    for call in facts.nodes.calls:
        kept = _memory_of(facts, call)
        if kept is not None and not _never_read(facts, call):
            found.append(kept)
    return _one_per_thread(facts, found)


def _one_per_thread(facts, found: list[Kept]) -> list[Kept]:
    """One finding per Assistants thread, not per message added to it: the adds whose thread id
    comes from the same calls (`thread_id = get_thread_id(user_id)`, else `create_thread()`) are one
    thread, reported where a function also runs it (else at its first add); the other adds are
    related locations."""
    threads: dict[tuple, list[Kept]] = {}
    for kept in found:
        if kept.properties.get("framework") == "openai-assistants" and isinstance(kept.site, cst.Call):
            threads.setdefault(_thread_source(facts, kept.node), []).append(kept)
    merged: dict[int, Kept | None] = {}  # by each add's id: its thread's one finding, at the first add
    for group in threads.values():
        first = next((k for k in group if _runs_a_thread(facts, k.site)), group[0])
        also = tuple((k.site, "a message is added to the same thread here") for k in group if k is not first)
        merged.update({id(k): None for k in group})
        merged[id(group[0])] = replace(first, related=first.related + also)
    return [one for k in found if (one := merged.get(id(k), k)) is not None]


def _thread_source(facts, expr: cst.CSTNode) -> tuple:
    """What a thread id is read from: its code and, for a local, the calls its function binds it
    to (`get_thread_id`, `create_thread`)."""
    if not isinstance(expr, cst.Name):
        return (facts.code(expr),)
    function = facts.function_of(expr)
    bound = {
        callee_name(value)
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign) and facts.function_of(node) is function
        for target in node.targets
        if isinstance(target.target, cst.Name) and target.target.value == expr.value
        for value in [node.value.expression if isinstance(node.value, cst.Await) else node.value]
        if isinstance(value, cst.Call)
    }
    return (expr.value, tuple(sorted(bound))) if bound else (expr.value, id(function))


def _runs_a_thread(facts, call: cst.CSTNode | None) -> bool:
    """The function adding the message also starts a run on a thread."""
    function = facts.function_of(call) if call is not None else None
    return any(_thread_run(c) for c in facts.calls_in(function))


def _thread_run(call: cst.Call) -> bool:
    """`client.beta.threads.runs.create(...)` and its `_and_poll`/`_and_stream`/`stream` forms."""
    parts = dotted(call.func)
    return parts[-3:-1] == ["threads", "runs"] and parts[-1] in THREAD_RUNS


def _never_read(facts, call: cst.Call) -> bool:
    """`self.chain = RunnableWithMessageHistory(...)` and `.chain` read nowhere else in the module,
    or `memory = ConversationBufferMemory(...)` in a function that never reads `memory`: an
    object built and kept but never run sends nothing."""
    parent = facts.parent(call)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
        return False
    target = parent.targets[0].target
    if isinstance(target, cst.Name):
        function = facts.function_of(call)
        return function is not None and not _read_in(facts, function, target)
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
        return False
    source = facts.rule.context.source
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    return len(re.findall(rf"\.\s*{re.escape(target.attr.value)}\b", text)) == 1


def _read_in(facts, function: cst.FunctionDef, target: cst.Name) -> bool:
    """Whether `function` reads the local `target` binds (a keyword's or attribute's name of the
    same spelling is no read; a nested function reading it is)."""
    for node in walk(function.body):
        if not isinstance(node, cst.Name) or node is target or node.value != target.value:
            continue
        parent = facts.parent(node)
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue
        if isinstance(parent, cst.AssignTarget):
            continue
        return True
    return False


def _memory_of(facts, call: cst.Call) -> Kept | None:
    name = callee_name(call)
    if name in BUFFER_MEMORIES:
        advice = "buffer" if name == "ConversationBufferMemory" else "langchain"  # the window fix is the buffer's
        memory = _kept(call, f"`{name}` keeps every message and puts all of it into each prompt", advice, name)
        return replace(memory, related=_memory_uses(facts, call))
    if name in UNBOUNDED_CHAINS and keyword(call, "memory") is None:
        message = (
            f"`{name}` without `memory=` uses ConversationBufferMemory, which sends every earlier message on each call"
        )
        return _kept(call, message, "langchain", name)
    if name == "RunnableWithMessageHistory" and call.args and not _has_trimmer(facts, call):
        message = "`RunnableWithMessageHistory` loads the whole stored history into every call and nothing in the chain trims it"
        return _kept(call, message, "runnable", name)
    kept = _kept_chat(facts, call)
    if kept is not None:
        message = (
            f"The chat object from `{facts.code(call.func)}` is kept {kept} and "
            "re-sends its whole history on every `send_message`"
        )
        return _kept(call, message, "google-genai", name, framework="google-genai")
    if name in ("create", "stream", "parse") and dotted(call.func)[-2:-1] == ["responses"]:
        return _previous_response_chain(facts, call)
    if dotted(call.func)[-3:] == THREAD_ADDS:
        return _kept_thread(facts, call)
    return None


# langchain 0.3 BaseChatMemory: `save_context` adds the exchange, `load_memory_variables` reads it all back
MEMORY_USES = {"save_context": "the memory grows here", "load_memory_variables": "all of it is read back here"}


def _memory_uses(facts, call: cst.Call) -> tuple[tuple[cst.CSTNode, str], ...]:
    """Where the module adds to the memory `call` makes, and reads it whole: the memory as it
    is kept (`store[sid] = ConversationBufferMemory(...)`), and any name bound to it since."""
    parent = facts.parent(call)
    target = parent.targets[0].target if isinstance(parent, cst.Assign) and len(parent.targets) == 1 else None
    kept = facts.storage_of(target) if target is not None else None
    if kept is None:
        return ()
    found = []
    for use in facts.nodes.calls:
        func = use.func
        if isinstance(func, cst.Attribute) and func.attr.value in MEMORY_USES:
            held = facts.storage_of(func.value)
            if held is not None and held.key == kept.key:
                found.append((use, MEMORY_USES[func.attr.value]))
    return tuple(found[:4])


def _kept(call: cst.Call, message: str, advice: str, kind: str, framework: str = "langchain") -> Kept:
    properties = {"history": kind, "framework": framework, "storage": "framework", "sink": kind}
    return Kept(call, message, SUGGESTIONS[advice], properties, site=call)


def _has_trimmer(facts, call: cst.Call) -> bool:
    """A trim step in the runnable, or a history class of this module that trims itself."""
    pending, seen = [call.args[0].value], set()
    while pending:
        expr = pending.pop()
        for node in walk(expr):
            if isinstance(node, cst.Call) and is_bounding_name(callee_name(node)):
                return True
            if isinstance(node, cst.Subscript) and is_count_slice(node):
                return True
            if isinstance(node, cst.Name) and node.value not in seen:
                seen.add(node.value)
                value = facts.assignment_before(node)
                if isinstance(value, cst.BaseExpression):
                    pending.append(value)
                pending.extend(f for f in facts.functions.get(node.value, []))
    return any(
        facts.histories.get(f"{klass.name.value}.messages") is not None
        and facts.histories[f"{klass.name.value}.messages"].trims
        for klass in facts.nodes.classes
    )


def _kept_chat(facts, call: cst.Call) -> str | None:
    """Where a chat object outlives one turn: kept per session (in a store, or `setdefault` on
    one), or bound before a `while` chat loop whose turns all send on it; None otherwise."""
    parts = dotted(call.func)
    if not (parts[-2:] == ["chats", "create"] or parts[-1] == "start_chat"):
        return None
    sends = [c for c in facts.nodes.calls if callee_name(c) in CHAT_SENDS]
    if not sends or all(_trimmed_before(facts, send) for send in sends):
        return None
    parent = facts.parent(call)
    if isinstance(parent, cst.Arg):
        holder = facts.parent(parent)
        stored = isinstance(holder, cst.Call) and callee_name(holder) == "setdefault"
        return "per session" if stored and facts.storage_of(holder) is not None else None
    if not isinstance(parent, cst.Assign):
        return None
    if any(facts.storage_of(t.target) is not None for t in parent.targets):
        return "per session"
    names = {t.target.value for t in parent.targets if isinstance(t.target, cst.Name)}
    looped = any(
        isinstance(send.func, cst.Attribute)
        and isinstance(send.func.value, cst.Name)
        and send.func.value.value in names
        and facts.function_of(send) is facts.function_of(call)
        and any(isinstance(loop, cst.While) and not facts.inside(call, loop) for loop in facts.loops_of(send))
        and not _trimmed_before(facts, send)
        for send in sends
    )
    return "across the turns of the chat loop" if looped else None


def _trimmed_before(facts, send: cst.Call) -> bool:
    """The statement before the one holding ``send`` trims the chat's own history
    (`chat.history = bounded_view(chat.history, last_turns=10)`)."""
    statement = next((a for a in facts.ancestors(send) if isinstance(a, (cst.SimpleStatementLine, cst.Lambda))), None)
    block = facts.parent(statement) if statement is not None else None
    body = list(getattr(block, "body", ()))
    if not isinstance(send.func, cst.Attribute) or statement not in body or body.index(statement) == 0:
        return False
    return trims_chat(body[body.index(statement) - 1], " ".join(facts.code(send.func.value).split()))


def _previous_response_chain(facts, call: cst.Call) -> Kept | None:
    truncation = keyword(call, "truncation")
    if truncation is not None and string(truncation.value) == "auto" or _compacts(keyword(call, "context_management")):
        return None
    for name in RESPONSE_CHAINS:
        arg = keyword(call, name)
        if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
            continue
        if facts.storage_of(arg.value) is not None or _chained_in_loop(facts, arg.value):
            message = (
                f"`{name}={facts.code(arg.value)}` chains every turn onto the previous response without "
                '`truncation="auto"`: the server replays the whole conversation as input'
            )
            return _server_kept(
                facts, arg.value, call, message, ("openai", "openai-responses", "openai.responses.create")
            )
    return None


def _compacts(arg: cst.Arg | None) -> bool:
    """`context_management=[{"type": "compaction", "compact_threshold": N}]`: the server compacts the
    chain once its context crosses N tokens."""
    if arg is None or not isinstance(arg.value, cst.List):
        return False
    for element in arg.value.elements:
        if isinstance(element.value, cst.Dict):
            keys = {string(e.key): e.value for e in element.value.elements if isinstance(e, cst.DictElement)}
            if string(keys.get("type")) == "compaction" and isinstance(keys.get("compact_threshold"), cst.Integer):
                return True
    return False


def _chained_in_loop(facts, value: cst.BaseExpression) -> bool:
    """`prev = response.id` inside the chat loop, read back on the next turn."""
    if not isinstance(value, cst.Name):
        return False
    scope = facts.rule.get_metadata(ScopeProvider, value, None)
    for assignment in scope[value.value] if scope is not None else ():
        target = getattr(assignment, "node", None)
        if isinstance(target, cst.Name):
            bound = facts.bound_value(target)
            if isinstance(bound, cst.Attribute) and bound.attr.value == "id" and facts.loops_of(target):
                return True
    return False


def _kept_thread(facts, call: cst.Call) -> Kept | None:
    """A message added to an Assistants thread that outlives the request, in a module whose runs
    read the whole thread."""
    arg = keyword(call, "thread_id") or positional(call, 0)
    if arg is None or _fresh_thread(facts, arg.value, 3) or any(_bounded_run(c) for c in facts.nodes.calls):
        return None
    message = (
        f"`thread_id={facts.code(arg.value)}` is an Assistants thread kept across requests: each message is added "
        "to it and every run without `truncation_strategy` reads the whole thread"
    )
    return _server_kept(
        facts, arg.value, call, message, ("openai-assistants", "openai-assistants", "openai.beta.threads.runs.create")
    )


def _server_kept(facts, history: cst.BaseExpression, call: cst.Call, message: str, how: tuple[str, str, str]) -> Kept:
    """A conversation the provider keeps on its side, named by `history` in `call`; `how` is
    (framework, advice, sink)."""
    framework, advice, sink = how
    properties = {"history": facts.code(history), "framework": framework, "storage": "server", "sink": sink}
    return Kept(history, message, SUGGESTIONS[advice], properties, site=call)


def _bounded_run(call: cst.Call) -> bool:
    """A run that reads only the end of its thread (a `truncation_strategy` other than `"auto"`, or a
    token budget)."""
    if not _thread_run(call):
        return False
    for name in RUN_BOUNDS:
        arg = keyword(call, name)
        if arg is None or isinstance(arg.value, cst.Name) and arg.value.value == "None":
            continue
        if isinstance(arg.value, cst.Dict):
            kinds = [
                string(e.value)
                for e in arg.value.elements
                if isinstance(e, cst.DictElement) and string(e.key) == "type"
            ]
            if kinds == ["auto"]:
                continue
        return True
    return False


def _fresh_thread(facts, expr: cst.BaseExpression, depth: int) -> bool:
    """`expr` is a thread made for this request: created in the function, or handed in by callers of
    the module that each create one."""
    for node in walk(expr):
        if (
            isinstance(node, cst.Call)
            and dotted(node.func)[-2:-1] == ["threads"]
            and dotted(node.func)[-1] in THREAD_CREATES
        ):
            return True
    if depth == 0 or not isinstance(expr, cst.Attribute | cst.Name):
        return False
    name = expr.value if isinstance(expr, cst.Attribute) else expr  # `thread.id`
    if not isinstance(name, cst.Name):
        return False
    value = facts.assignment_before(name)
    if isinstance(value, cst.BaseExpression):
        return _fresh_thread(facts, value, depth - 1)
    function = facts.function_of(name)
    if not isinstance(value, cst.Param) or function is None:
        return False
    passed = [facts.argument_for(c, function, value.name.value) for c in facts.callers(function)]
    return bool(passed) and all(p is not None and _fresh_thread(facts, p, depth - 1) for p in passed)


# langchain-core 1.8 runnables/history.py: `RunnableWithMessageHistory` calls
# `get_session_history(**{spec.id: configurable[spec.id]})`, whose default spec is the one
# `session_id` (`history_factory_config` unset), before and after every run; the factory's
# history is the conversation the run continues.
CONVERSATION_KEY_NAMES = ("session_id",)  # a run's config key naming the conversation (pre-check)
HISTORY_RUNS = frozenset({"invoke", "ainvoke", "stream", "astream"})
FRESH_HISTORIES = frozenset({"InMemoryChatMessageHistory", "ChatMessageHistory"})  # gone with the object


def conversation_key(facts, call: cst.Call) -> cst.BaseExpression | None:
    """The `session_id` of `chain.invoke(x, config={"configurable": {"session_id": sid}})` when
    `chain` is a `RunnableWithMessageHistory(...)` of this module with the default session spec
    whose factory keeps the history past the run (it reads a module-level store, or builds a
    persistent `...ChatMessageHistory`); or the `session_id=` a persistent chat history is
    built with (`RedisChatMessageHistory(session_id="support", url=...)`: langchain-community 0.3
    and langchain-mongodb store one conversation per session id, outside the process); None otherwise."""
    name = callee_name(call)
    if _persistent_history(name):
        given = keyword(call, "session_id")
        return given.value if given is not None else None
    if name not in HISTORY_RUNS or not isinstance(call.func, cst.Attribute):
        return None
    made = call.func.value
    if isinstance(made, cst.Name):
        made = facts.assignment_before(made)
    if not isinstance(made, cst.Call) or callee_name(made) != "RunnableWithMessageHistory":
        return None
    if not any(q.startswith("langchain_core.") or q.startswith("langchain.") for q in facts.qualified(made.func)):
        return None
    if keyword(made, "history_factory_config") is not None:
        return None
    factory = keyword(made, "get_session_history") or positional(made, 1)
    if factory is None or not _lasting_factory(facts, factory.value):
        return None
    config = keyword(call, "config") or positional(call, 1)
    configurable = entry(config.value if config else None, "configurable", facts.assignment_before)
    return entry(configurable, "session_id", facts.assignment_before)


def _persistent_history(name: str) -> bool:
    """A LangChain chat history class that keeps its messages outside the process."""
    return name.endswith("ChatMessageHistory") and name not in FRESH_HISTORIES


def _lasting_factory(facts, factory: cst.BaseExpression) -> bool:
    """The history factory returns what outlives one run: an entry of a module-level store
    (`store[sid]`, `store.setdefault(sid, ...)`, `store.get(sid)`) or a chat history kept outside
    the process (`RedisChatMessageHistory(sid, url)`), not one made fresh in memory per call."""
    if isinstance(factory, cst.Lambda):
        values = [factory.body]
    elif isinstance(factory, cst.Name):
        values = [v for f in facts.functions.get(factory.value, []) for v in facts.returns(f)]
    else:
        return False
    return bool(values) and all(_lasting_value(facts, v) for v in values)


def _lasting_value(facts, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Name):
        value = facts.assignment_before(value)
    if isinstance(value, cst.Subscript):
        store = value.value
    elif (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and callee_name(value) in ("setdefault", "get")
    ):
        store = value.func.value
    elif isinstance(value, cst.Call):
        return _persistent_history(callee_name(value))
    else:
        return False
    if not isinstance(store, cst.Name):
        return False
    bound = facts.assignment_before(store)
    return isinstance(bound, cst.Dict) and facts.function_of(bound) is None
