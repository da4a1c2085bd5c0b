"""OpenAI Agents SDK (`agents`): sessions, replayed input lists and handoffs.

Checked against openai-agents 0.24.0; the file is named beside each fact.

- A session (`SQLiteSession`, `AsyncSQLiteSession`, `AdvancedSQLiteSession`,
  `SQLAlchemySession`, `RedisSession`) passed to `Runner.run(..., session=...)` stores every
  item and, without `session_settings=SessionSettings(limit=N)`, each run reads all of them
  back (memory/session_settings.py: `limit=None` retrieves all). A compaction session
  wrapping it (`OpenAIResponsesCompactionSession`) bounds it, and so does an application that
  cuts the session itself before each run: it reads the items (`get_items()`), clears the
  session (`clear_session()`) and writes a cut of them back (`add_items(items[-N:])`)
  (memory/session.py `Session`), in the function that runs the agent on that session or in
  one it calls first with it.
- `result.to_input_list()` fed back as the next input is a list the caller replays whole
  (the generic analysis follows it: kept in a name, a dict entry, a session's entry through
  `cl.user_session.set(key, ...)`, or a record's field, `store[uid] = Thread(items=...)`; cut
  with `[-N:]` before it is kept, it is bounded). The fix below bounds the send and keeps the
  whole thread.
- Handoffs: a bare agent in `Agent(handoffs=[...])`, or in `agent.handoffs = [...]` /
  `.handoffs.append(...)` / `.extend([...])` (the SDK reads the attribute at run time), becomes
  `handoff(agent)` with no `input_filter` (run_internal/turn_preparation.py `get_handoffs`), and
  a handoff without `input_filter` gives the next agent the whole conversation.
  `RunConfig(handoff_input_filter=...)` filters all of them, and a `handoff_history_mapper=`
  decides what passes. `nest_handoff_history` alone bounds nothing: its default mapper writes
  every item of the transcript into one assistant message (handoffs/history.py
  `_build_summary_message`, 0.6.0 to 0.24.0). It is on by default in 0.6.x (run.py `RunConfig`,
  0.6.0 and 0.6.4) and off since 0.7.0: the message says which applies, from the version the
  project pins (`chatbound.frameworks.versions`). `agent.as_tool()` passes a brief (the tool's
  input) and is no handoff.
- A handoff matters where the runs continue a conversation (`session=`, `previous_response_id=`,
  `conversation_id=`, a replayed `to_input_list()`, or an input made from a web session's chat
  list that the module grows: a Streamlit page run on `st.session_state.chat` every rerun): in
  the module, or in a module that imports its agents and runs them so (`chatbound.analysis.project.users`:
  agents in `agents.py`, the server in `server.py`).
- What names the conversation a run continues (`conversation_key`, for MEMORY-SHARED-ACROSS-USERS):
  its `conversation_id=`, or the id of a session that outlives the run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from chatbound.findings import Finding, Fix, Span
from chatbound.fixes.edits import (
    BOUNDED_IMPORT,
    HISTORY_STAYS,
    WINDOW_TURNS,
    arg_at,
    call_at,
    import_of,
    innermost,
    keyword_added,
    replace_span,
    store_edit,
    stores_of,
    text_at,
)
from chatbound.fixes.index import walk_down
from chatbound.frameworks.versions import pinned, version_tuple
from chatbound.frameworks.vocabulary import Handoff, Kept, Window, links
from chatbound.syntax.messages import callee_name, is_count_slice
from chatbound.syntax.tree import bound_values, walk
from chatbound.vocabulary.sessions import SESSION_OBJECTS
from chatbound.vocabulary.sinks import keyword

HANDOFF_TRIGGERS = (re.compile(rb"\bhandoffs\s*=\s*\["),)
HANDOFF_CALLS = frozenset({"handoff", "Agent"})
# the input that was sent, then the run's new items: openai-agents 0.24.0 result.py `to_input_list` returns
# `original_items + replay_items`, so `h = run(h + [m]).to_input_list()` grows `h` as an append would
REPLAYS = frozenset({"to_input_list"})
WINDOW_ITEMS = 40  # items: about 10 turns of user, tool call, tool output, reply
SESSIONS = {"SQLiteSession", "AsyncSQLiteSession", "AdvancedSQLiteSession", "SQLAlchemySession", "RedisSession"}
AGENT_RUNS = ("run", "run_sync", "run_streamed")
GLOBAL_FILTERS = ("handoff_input_filter", "handoff_history_mapper")
DISTRIBUTION = "openai-agents"
NESTED_BY_DEFAULT = ((0, 6), (0, 7))  # RunConfig.nest_handoff_history defaults to True in [0.6, 0.7)
PROJECT_TRIGGERS = (re.compile(rb"\bRunner\s*\.\s*run"),)
CONTINUED_TAG = "agents.continued"
# Runner.run/run_sync/run_streamed(..., session=, previous_response_id=, conversation_id=)
# continue a conversation across runs (openai-agents 0.24.0, src/agents/run.py)
CONTINUED_BY = ("session", "previous_response_id", "conversation_id")
ADVICE = {
    "agents": f"Give the session `session_settings=SessionSettings(limit={WINDOW_ITEMS})` (`from agents import "
    "SessionSettings`): the session keeps every item, each run reads the last ones, and the SDK drops a tool "
    "output whose call fell out of the window. A list replayed by hand (`result.to_input_list()` fed back): send "
    f"`bounded_view(items, last_turns={WINDOW_TURNS})` and store `items + result.to_input_list()[len(result.input):]`; "
    "`to_input_list()` alone returns the bounded input that was sent. " + HISTORY_STAYS,
}
ADVICE["agents-cut"] = (
    f"Let the SDK cut it: `session_settings=SessionSettings(limit={WINDOW_ITEMS})` on the session drops a tool output "
    "whose call fell out of the window; or cut the items at a user message (`bounded_view(items, last_turns="
    f"{WINDOW_TURNS})`, `from chatbound.compaction import bounded_view`) before writing them back."
)
HANDOFF_ADVICE = (
    "Pass `input_filter=` (e.g. `handoff_filters.remove_all_tools`, or a filter that keeps a brief and the last "
    "turn), set `RunConfig(handoff_input_filter=...)` for every handoff, or call the specialist as a tool "
    "(`agent.as_tool(...)`), which gets only the brief the model writes."
)


def _sdk(facts, call: cst.Call, *names: str) -> bool:
    return any(q in names for q in facts.qualified(call.func))


# --- sessions -------------------------------------------------------------------------------------


def memories(facts) -> list[Kept]:
    if not any(i.startswith("agents") for i in facts.nodes.imports):
        return []
    found = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name.endswith("Session") and "Compaction" not in name and _unlimited_session(facts, call):
            found.append(
                Kept(
                    call,
                    f"Agents SDK `{name}` has no limit: every run re-sends all stored items",
                    ADVICE["agents"],
                    {"history": name, "framework": "agents", "storage": "framework", "sink": name},
                )
            )
    return found


def _unlimited_session(facts, call: cst.Call) -> bool:
    if not any(n.startswith("agents") for n in facts.qualified(call.func)):
        return False
    if keyword(call, "session_settings") is not None or keyword(call, "limit") is not None:
        return False
    for parent in facts.ancestors(call):
        if isinstance(parent, cst.Call) and "Compaction" in callee_name(parent):
            return False
        if isinstance(parent, cst.BaseStatement):
            break
    runs = any(
        s.framework == "agents" and _given_session(s.call) is not None and _pruned_before(facts, s.call) is None
        for s in facts.sinks
    )
    return runs or any(_session_passed_on(facts, c, call) for c in facts.nodes.calls)


def _session_passed_on(facts, call: cst.Call, session: cst.Call) -> bool:
    """`transport.run(agent, text, session)`: the session built at `session` handed to another
    module's function that gives it to a run as `session=` (its summary's `continued`)."""
    remote = facts.imported_function(call)
    for param, given in remote.continued if remote is not None else ():
        passed = keyword(call, given) if param.startswith("**") else None
        argument = passed.value if passed is not None else facts.argument_in(call, remote.params, param)
        if given == "session" and (
            argument is session or isinstance(argument, cst.Name) and facts.assignment_before(argument) is session
        ):
            return True
    return False


def _given_session(run: cst.Call) -> cst.BaseExpression | None:
    """The `session=` a run is given, unless None (`session=None` runs once, without memory)."""
    arg = keyword(run, "session")
    none = arg is None or isinstance(arg.value, cst.Name) and arg.value.value == "None"
    return None if none or arg is None else arg.value


def _pruned_before(facts, run: cst.Call) -> cst.CSTNode | None:
    """The cut the session `run` is given was written back with earlier in the same function,
    there or in a function of the module called with it; None when it is not cut by hand."""
    session = _given_session(run)
    if session is None:
        return None
    given = " ".join(facts.code(session).split())
    function = facts.function_of(run)
    for call in facts.calls_in(function):
        if facts.order(call) > facts.order(run):
            continue
        rewrite = _rewrite(facts, call)
        if rewrite is not None and rewrite[0] == given:
            return rewrite[1]
        for callee in facts.callees(call):
            for write in facts.calls_in(callee):
                rewrite = _rewrite(facts, write)
                param = rewrite is not None and facts.argument_for(call, callee, rewrite[0])
                if rewrite and isinstance(param, cst.BaseExpression) and " ".join(facts.code(param).split()) == given:
                    return rewrite[1]
    return None


def _rewrite(facts, write: cst.Call) -> tuple[str, cst.CSTNode] | None:
    """The session that `write` fills again with a cut of its own items after clearing it, and
    the cut: `s.clear_session()`, then `s.add_items(items[-N:])` of `items = await s.get_items()`."""
    if callee_name(write) != "add_items" or not isinstance(write.func, cst.Attribute) or not write.args:
        return None
    session = " ".join(facts.code(write.func.value).split())
    function = facts.function_of(write)
    cleared = any(
        callee_name(c) == "clear_session" and " ".join(facts.code(c.func.value).split()) == session
        for c in facts.calls_in(function)
        if isinstance(c.func, cst.Attribute) and facts.order(c) < facts.order(write)
    )
    cut = _cut_of_items(facts, write.args[0].value, session, 3) if cleared else None
    return (session, cut) if cut is not None else None


def _cut_of_items(facts, expr: cst.BaseExpression, session: str, depth: int) -> cst.CSTNode | None:
    """Where `expr` holds the session's own items cut to a count (`items[-N:]`, `get_items(limit=N)`)."""
    for node in walk(expr):
        if isinstance(node, cst.Subscript) and is_count_slice(node) and _items_of(facts, node.value, session, depth):
            return node
        if (
            isinstance(node, cst.Call)
            and callee_name(node) == "get_items"
            and node.args
            and _items_of(facts, node, session, 0)
        ):
            return node
        if isinstance(node, cst.Name) and depth > 0:
            value = facts.assignment_before(node)
            cut = _cut_of_items(facts, value, session, depth - 1) if isinstance(value, cst.BaseExpression) else None
            if cut is not None:
                return cut
    return None


def _items_of(facts, expr: cst.BaseExpression, session: str, depth: int) -> bool:
    """`expr` is `session.get_items(...)`, awaited or bound to a name first."""
    for node in walk(expr):
        if isinstance(node, cst.Call) and callee_name(node) == "get_items" and isinstance(node.func, cst.Attribute):
            return " ".join(facts.code(node.func.value).split()) == session
    if isinstance(expr, cst.Name) and depth > 0:
        value = facts.assignment_before(expr)
        return isinstance(value, cst.BaseExpression) and _items_of(facts, value, session, depth - 1)
    return False


def windows(facts) -> list[Window]:
    """A session cut by hand to its last items, run by an agent with tools: the session holds
    function calls and their outputs, and the SDK drops an output whose call was cut only when
    it applies `SessionSettings(limit=N)` itself (0.24.0 run_internal/session_persistence.py
    `prepare_input_with_session`: `output_pruning_indexes` only with a limit), so the kept tail
    can start with an output whose call is gone, which the Responses API rejects."""
    if not any(i.startswith("agents") for i in facts.nodes.imports):
        return []
    found: list[Window] = []
    for sink in facts.sinks:
        session = _given_session(sink.call) if sink.framework == "agents" else None
        cut = _pruned_before(facts, sink.call) if session is not None else None
        if cut is not None and _has_tools(facts, sink.call) and all(w.node is not cut for w in found):
            why = f"the Agents SDK session `{facts.code(session)}` holds the agent's tool calls and their outputs"
            found.append(Window(cut, facts.code(session), why, ADVICE["agents-cut"]))
    return found


def _has_tools(facts, run: cst.Call) -> bool:
    """The agent `run` starts is an SDK `Agent(tools=...)` with tools (not an empty list)."""
    starting = keyword(run, "starting_agent") or (run.args[0] if run.args and run.args[0].keyword is None else None)
    for value in bound_values(facts, starting.value) if starting is not None else []:
        if isinstance(value, cst.Call) and _sdk(facts, value, "agents.Agent"):
            tools = keyword(value, "tools")
            if (
                tools is not None
                and not (isinstance(tools.value, cst.List | cst.Tuple) and not tools.value.elements)
                and not (isinstance(tools.value, cst.Name) and tools.value.value == "None")
            ):
                return True
    return False


# --- handoffs -------------------------------------------------------------------------------------


def handoffs(facts) -> list[Handoff]:
    if not any(i.startswith("agents") for i in facts.nodes.imports):
        return []
    if any(keyword(c, name) is not None for c in facts.nodes.calls for name in GLOBAL_FILTERS):
        return []  # every handoff of the run is filtered, or mapped by the project's own function
    continued = "" if _continues_a_conversation(facts) else _continued_elsewhere(facts)
    if continued is None:
        return []  # a one-shot run hands over its one message: no history to pay for again
    how = _how_it_passes(facts, continued)
    found = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name == "handoff" and _sdk(facts, call, "agents.handoff", "agents.handoffs.handoff"):
            if keyword(call, "input_filter") is None:
                found.append(
                    Handoff(
                        call,
                        "`handoff(...)` without `input_filter` gives the next agent the entire "
                        f"conversation history{how}: it pays for every earlier turn and tool call again.",
                        HANDOFF_ADVICE,
                    )
                )
        elif _sdk(facts, call, "agents.Agent") or isinstance(call.func, cst.Subscript) and _is_sdk_agent(facts, call):
            listed = keyword(call, "handoffs")
            elements = listed.value.elements if listed is not None and isinstance(listed.value, cst.List) else ()
            found.extend(_bare(facts, [e.value for e in elements], "handoffs=[...]", how))
    for target, values, where in _assigned_handoffs(facts):
        if _is_sdk_agent(facts, target):
            found.extend(_bare(facts, values, where, how))
    return found


def _bare(facts, values, where: str, how: str) -> list[Handoff]:
    """The bare agents among `values` (a name bound to `handoff(...)` is reported at that call)."""
    found = []
    for value in values:
        bound = facts.assignment_before(value) if isinstance(value, cst.Name) else None
        if (
            not isinstance(value, (cst.Name, cst.Attribute))
            or isinstance(bound, cst.Call)
            and callee_name(bound) == "handoff"
        ):
            continue
        agent = facts.code(value)
        found.append(
            Handoff(
                value,
                f"`{agent}` in `{where}` is `handoff({agent})` with no `input_filter`: the next "
                f"agent gets the entire conversation history{how} and pays for every earlier turn "
                "again.",
                HANDOFF_ADVICE,
            )
        )
    return found


def _assigned_handoffs(facts):
    """(agent, bare values, how) for `agent.handoffs = [...]` and `agent.handoffs.append(x)` /
    `.extend([...])`: handoffs set after the agent is built."""
    for node in facts.nodes.assigns:
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.List):
            for target in node.targets:
                if isinstance(target.target, cst.Attribute) and target.target.attr.value == "handoffs":
                    yield target.target.value, [e.value for e in node.value.elements], "handoffs = [...]"
    for call in facts.nodes.growth_calls:
        receiver = call.func.value
        if not (isinstance(receiver, cst.Attribute) and receiver.attr.value == "handoffs" and call.args):
            continue
        name = callee_name(call)
        if name == "append":
            yield receiver.value, [call.args[0].value], "handoffs.append(...)"
        elif name == "extend" and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            yield receiver.value, [e.value for e in call.args[0].value.elements], "handoffs.extend([...])"


def _is_sdk_agent(facts, expr: cst.CSTNode) -> bool:
    """`expr` is an `agents.Agent(...)` / `Agent[Context](...)` call, or a name bound to one."""
    value = facts.assignment_before(expr) if isinstance(expr, cst.Name) else expr
    if not isinstance(value, cst.Call):
        return False
    func = value.func.value if isinstance(value.func, cst.Subscript) else value.func
    return "agents.Agent" in facts.qualified(func)


def _continues_a_conversation(facts) -> bool:
    """Runs that carry earlier turns: a session, a server-side conversation, or an input list
    replayed from an earlier result. Only then does a handoff pass a growing history."""
    return any(
        callee_name(call) == "to_input_list" or any(keyword(call, k) is not None for k in CONTINUED_BY)
        for call in facts.nodes.calls
    )


def _continued_elsewhere(facts) -> str | None:
    """Where a module that imports this one's agents runs them on a continuing conversation,
    as the message says it; None when no module does."""
    places = sorted(
        {m.place for mentions in links(facts).given.values() for m in mentions if m.tag == CONTINUED_TAG},
        key=lambda p: (p.path, p.span.line),
    )
    return f"runs continue the conversation in {places[0].path}:{places[0].span.line}; " if places else None


def _how_it_passes(facts, continued: str) -> str:
    """How the transcript reaches the next agent in the version the project pins, and where
    runs continue the conversation when another module runs them."""
    found = pinned(facts, DISTRIBUTION)
    if found is None:
        return f" ({continued}openai-agents 0.7+ assumed: the project pins no version)"
    version, where = found
    low, high = NESTED_BY_DEFAULT
    if low <= version_tuple(version)[:2] < high:
        return (
            f", folded into one assistant message that still holds every item ({continued}openai-agents {version} "
            f"in {where} nests handoff history by default)"
        )
    return f" ({continued}openai-agents {version} in {where})"


# --- what the project pass reads (stdlib ast, chatbound.analysis.project.users) ---------------------


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, ast.AST]]:
    """Every project name this module imports, when it runs an agent (`Runner.run*`) on a
    continuing conversation: the importer decides whether the imported agents' handoffs pass
    a growing history."""
    if not any(target.startswith("agents.") for target in imported.values()):
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    runs = [
        c
        for c in calls
        if isinstance(c.func, ast.Attribute)
        and c.func.attr in AGENT_RUNS
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == "Runner"
    ]
    continued = any(
        isinstance(c.func, ast.Attribute)
        and c.func.attr == "to_input_list"
        or any(k.arg in CONTINUED_BY for k in c.keywords)
        for c in calls
    )
    session = [run for run in runs if _session_history(tree, run, imported, calls)]
    if not runs or not (continued or session):
        return []
    return [
        (local, CONTINUED_TAG, (session or runs)[0])
        for local, target in imported.items()
        if not target.startswith("agents")
    ]


def _session_history(tree: ast.Module, run: ast.Call, imported: dict[str, str], calls: list[ast.Call]) -> bool:
    """The run's input is a conversation a web session keeps and the module grows: a session
    object's list (`st.session_state.chat_history`, whose `.append(...)` the module calls), or
    a list made from it by a loop or a comprehension."""
    given = run.args[1] if len(run.args) > 1 else next((k.value for k in run.keywords if k.arg == "input"), None)
    sources = [given] if given is not None else []
    if isinstance(given, ast.Name):
        sources += [
            node.iter
            for node in ast.walk(tree)
            if isinstance(node, ast.For)
            and any(
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr in ("append", "extend")
                and isinstance(inner.func.value, ast.Name)
                and inner.func.value.id == given.id
                for inner in ast.walk(node)
            )
        ]
        sources += [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == given.id for t in node.targets)
        ]
    sources += [
        generator.iter
        for source in list(sources)
        if isinstance(source, (ast.ListComp, ast.GeneratorExp))
        for generator in source.generators
    ]
    grown = {
        ast.dump(c.func.value)
        for c in calls
        if isinstance(c.func, ast.Attribute) and c.func.attr in ("append", "extend")
    }
    return any(ast.dump(source) in grown and _kept_by_session(source, imported) for source in sources)


def _kept_by_session(expr: ast.expr, imported: dict[str, str]) -> bool:
    """`st.session_state.x` / `st.session_state["x"]`: an item of a session object (`chatbound.
    vocabulary.sessions.SESSION_OBJECTS`: Streamlit, Flask, Chainlit), which lasts across turns."""
    parts = []
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        parts.append(expr.attr if isinstance(expr, ast.Attribute) else "[]")
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in imported or not parts:
        return False
    qualified = ".".join([imported[expr.id], *reversed(parts)])
    return any(qualified.startswith(f"{session}.") for session in SESSION_OBJECTS)


# --- fixes ----------------------------------------------------------------------------------------


def fix(finding: Finding, module: cst.Module, wrapper: MetadataWrapper, lines):
    """A session without a limit: `session_settings=SessionSettings(limit=40)`; a replayed input
    list: `bounded_view` at the send, the store keeps the whole thread. A list the app grows with
    its own messages (a web session's chat) is no one's but the app's: None, and the generic
    bounded view at the send (the runner copies its input: run.py `copy_input_items`)."""
    if finding.properties.get("framework") != "agents":
        return None
    if finding.properties.get("storage") == "framework":
        return _session_limit(finding, module, wrapper, lines), ADVICE["agents"]
    stores = stores_of(module, wrapper, " ".join(str(finding.properties.get("history", "")).split()), "to_input_list")
    if stores == []:
        return None
    return _replayed_input(finding, module, wrapper, lines, stores), ADVICE["agents"]


def _session_limit(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`SQLiteSession(...)` -> `SQLiteSession(..., session_settings=SessionSettings(limit=40))`
    (the runner reads the last 40 items and drops tool outputs whose call fell out of the
    window; `add_items` still stores everything)."""
    call = call_at(wrapper, finding.span)
    if call is None or not isinstance(call.func, cst.Name) or call.func.value not in SESSIONS:
        return None
    if not import_of(module, call.func.value).startswith("agents"):
        return None
    fixed = keyword_added(wrapper, lines, call, "session_settings", f"SessionSettings(limit={WINDOW_ITEMS})")
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        fixed,
        ["from agents import SessionSettings"],
        f"Give the session a limit of {WINDOW_ITEMS} items: it keeps every item, each run reads the last "
        f"{WINDOW_ITEMS} (the SDK drops tool outputs whose call fell out)",
        safe=True,
    )


def _replayed_input(finding: Finding, module, wrapper, lines, stores: list[cst.Assign | cst.Call] | None) -> Fix | None:
    """`Runner.run(agent, items)` -> `Runner.run(agent, bounded_view(items, last_turns=10))`, and the
    store `h = r.to_input_list()` -> `h = items + r.to_input_list()[len(r.input):]`:
    `to_input_list()` is the input that was sent (`r.input`) followed by the run's new items.
    30 turns with tool calls through a fake Model store the same thread; each call sends at
    most 27 items, not 79, never an output without its call."""
    sent = text_at(lines, finding.span)
    history = " ".join(str(finding.properties.get("history", "")).split())
    found = arg_at(wrapper, finding.span)
    if found is None or str(finding.properties.get("expression", "")) != sent:
        return None
    call, arg = found
    position = call.args.index(arg)
    if (
        not isinstance(call.func, cst.Attribute)
        or call.func.attr.value not in AGENT_RUNS
        or not (arg.keyword is None and position == 1 or arg.keyword is not None and arg.keyword.value == "input")
    ):
        return None
    if sent != history and not _is_list_name(module, wrapper, finding.span, sent, history):
        return None  # bounded_view takes a list; the first input may be a string
    if stores is None:
        stores = _kept_replays(wrapper, finding.span, call)
    if not stores:
        return None
    fix = replace_span(
        finding,
        module,
        wrapper,
        lines,
        f"bounded_view({sent}, last_turns={WINDOW_TURNS})",
        [BOUNDED_IMPORT],
        f"Send bounded_view({sent}, last_turns={WINDOW_TURNS}) and store the whole input with the run's new items "
        "(to_input_list() after the input that was sent), so the stored thread stays whole",
        safe=True,
    )
    edits = [
        store_edit(module, wrapper, store, f"{sent} + {{r}}.to_input_list()[len({{r}}.input):]") for store in stores
    ]
    return fix and replace(fix, edits=(*fix.edits, *edits))


def _kept_replays(wrapper: MetadataWrapper, span: Span, run: cst.Call) -> list[cst.Assign | cst.Call] | None:
    """`kept = result.to_input_list()` in the function of the run, `result` being the run's result,
    when every replay of that result there is such a local (which a record then keeps:
    `store[uid] = Thread(items=kept)`); None otherwise."""
    function = innermost(wrapper, span, cst.FunctionDef)
    if function is None:
        return None
    nodes = list(walk_down(function))
    targets = [
        (node.targets[0].target if isinstance(node, cst.Assign) else node.target, node.value)
        for node in nodes
        if isinstance(node, (cst.Assign, cst.AnnAssign))
    ]
    results = {
        target.value
        for target, value in targets
        if isinstance(target, cst.Name) and (value is run or isinstance(value, cst.Await) and value.expression is run)
    }
    replays = [
        node
        for node in nodes
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "to_input_list"
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value in results
    ]
    kept: list[cst.Assign | cst.Call] = [
        node
        for node in nodes
        if isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
        and any(node.value is replay and not replay.args for replay in replays)
    ]
    return kept if replays and len(kept) == len(replays) else None


def _is_list_name(module: cst.Module, wrapper: MetadataWrapper, span: Span, name: str, history: str) -> bool:
    """``name`` is set, in the function holding ``span``, only to list literals, `x + [...]` or
    the store's entry read back (`session.get(key) or []`)."""
    function = innermost(wrapper, span, cst.FunctionDef)
    if function is None or not name.isidentifier():
        return False
    values = [
        node.value
        for node in walk_down(function)
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign))
        and module.code_for_node(node.targets[0].target if isinstance(node, cst.Assign) else node.target) == name
    ]
    return bool(values) and all(
        isinstance(v, cst.List)
        or _reads_store(module, v, history)
        or isinstance(v, cst.BinaryOperation)
        and isinstance(v.operator, cst.Add)
        and (isinstance(v.left, cst.List) or isinstance(v.right, cst.List))
        for v in values
    )


# openai-agents 0.24.0 memory/sqlite_session.py: `SQLiteSession(session_id, db_path=":memory:")` names the
# conversation by its id in its database; an in-memory database lasts only as long as the object
CONVERSATION_KEY_NAMES = ("session", "conversation_id")  # a run's keywords naming the conversation (pre-check)
IN_MEMORY_SESSIONS = {"SQLiteSession", "AsyncSQLiteSession", "AdvancedSQLiteSession"}


def conversation_key(facts, call: cst.Call) -> cst.BaseExpression | None:
    """What names the conversation a `Runner.run*` continues: its `conversation_id=` (kept by the
    server), or the id of the session it is given (`session=SQLiteSession("chat", "app.db")`)
    when that session outlives the run; None otherwise."""
    if callee_name(call) not in AGENT_RUNS or not any(q.startswith("agents.") for q in facts.qualified(call.func)):
        return None
    conversation = keyword(call, "conversation_id")
    if conversation is not None:
        return conversation.value
    session = keyword(call, "session")
    value = session.value if session is not None else None
    if isinstance(value, cst.Name):
        value = facts.assignment_before(value)
    if not isinstance(value, cst.Call) or callee_name(value) not in SESSIONS:
        return None
    key = keyword(value, "session_id") or (value.args[0] if value.args and value.args[0].keyword is None else None)
    path = keyword(value, "db_path") or (
        value.args[1] if len(value.args) > 1 and value.args[1].keyword is None else None
    )
    in_memory = callee_name(value) in IN_MEMORY_SESSIONS and (
        path is None or isinstance(path.value, cst.SimpleString) and path.value.evaluated_value == ":memory:"
    )
    if in_memory and facts.function_of(value) is not None:
        return None  # made for this run and gone with it
    return key.value if key is not None else None


def _reads_store(module: cst.Module, value: cst.BaseExpression | None, history: str) -> bool:
    """`session.get("items") or []`, where `session["items"]` is the store the replay is kept in:
    the list kept last turn, or a first empty one."""
    if not (isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or)):
        return False
    read, default = value.left, value.right
    return (
        isinstance(default, cst.List)
        and isinstance(read, cst.Call)
        and isinstance(read.func, cst.Attribute)
        and read.func.attr.value == "get"
        and len(read.args) == 1
        and f"{module.code_for_node(read.func.value)}[{module.code_for_node(read.args[0].value)}]" == history
    )
