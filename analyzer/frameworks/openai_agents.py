"""OpenAI Agents SDK (`agents`): sessions, replayed input lists and handoffs.

Checked against openai-agents 0.24.0; the file is named beside each fact.

- A session (`SQLiteSession`, `AsyncSQLiteSession`, `AdvancedSQLiteSession`,
  `SQLAlchemySession`, `RedisSession`) passed to `Runner.run(..., session=...)` stores every
  item and, without `session_settings=SessionSettings(limit=N)`, each run reads all of them
  back (memory/session_settings.py: `limit=None` retrieves all). A compaction session
  wrapping it (`OpenAIResponsesCompactionSession`) bounds it.
- `result.to_input_list()` fed back as the next input is a list the caller replays whole
  (the generic analysis follows it; the fix below bounds it).
- Handoffs: a bare agent in `Agent(handoffs=[...])` becomes `handoff(agent)` with no
  `input_filter` (run_internal/turn_preparation.py `get_handoffs`), and a handoff without
  `input_filter` gives the next agent the whole conversation. `RunConfig(handoff_input_filter=
  ...)` filters all of them; `nest_handoff_history=True` folds the transcript into one summary
  message (run_config.py; on by default in 0.6.x, opt-in since 0.7) and is taken as the
  project's choice. `agent.as_tool()` passes a brief (the tool's input) and is no handoff.
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from ..edits import (
    BOUNDED_IMPORT, HISTORY_STAYS, WINDOW_TURNS, arg_at, call_at, import_of, innermost, replace_span, store_edit,
    stores_of, text_at, walk_down, with_keyword,
)
from ..findings import Finding, Fix, Span
from ..messages import callee_name
from ..sinks import keyword
from .vocabulary import Handoff, Kept

HANDOFF_TRIGGERS = (re.compile(rb"\bhandoffs\s*=\s*\["),)
HANDOFF_CALLS = frozenset({"handoff", "Agent"})
WINDOW_ITEMS = 40  # items: about 10 turns of user, tool call, tool output, reply
SESSIONS = {"SQLiteSession", "AsyncSQLiteSession", "AdvancedSQLiteSession", "SQLAlchemySession", "RedisSession"}
AGENT_RUNS = ("run", "run_sync", "run_streamed")
GLOBAL_FILTERS = ("handoff_input_filter", "nest_handoff_history")
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
            found.append(Kept(call, f"Agents SDK `{name}` has no limit: every run re-sends all stored items",
                              ADVICE["agents"], {"history": name, "framework": "agents", "storage": "framework",
                                                 "sink": name}))
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
    return any(s.framework == "agents" and keyword(s.call, "session") is not None for s in facts.sinks)


# --- handoffs -------------------------------------------------------------------------------------


def handoffs(facts) -> list[Handoff]:
    if not any(i.startswith("agents") for i in facts.nodes.imports):
        return []
    if any(keyword(c, name) is not None for c in facts.nodes.calls for name in GLOBAL_FILTERS):
        return []  # every handoff of the run is filtered or nested
    if not _continues_a_conversation(facts):
        return []  # a one-shot run hands over its one message: no history to pay for again
    found = []
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name == "handoff" and _sdk(facts, call, "agents.handoff", "agents.handoffs.handoff"):
            if keyword(call, "input_filter") is None:
                found.append(Handoff(call, "`handoff(...)` without `input_filter` gives the next agent the entire "
                                     "conversation history: it pays for every earlier turn and tool call again.",
                                     HANDOFF_ADVICE))
        elif name == "Agent" and _sdk(facts, call, "agents.Agent"):
            listed = keyword(call, "handoffs")
            for element in listed.value.elements if listed is not None and isinstance(listed.value, cst.List) else ():
                if isinstance(element.value, (cst.Name, cst.Attribute)):
                    agent = facts.code(element.value)
                    found.append(Handoff(element.value, f"`{agent}` in `handoffs=[...]` is `handoff({agent})` with no "
                                         "`input_filter` (openai-agents 0.24): the next agent gets the entire "
                                         "conversation history and pays for every earlier turn again.", HANDOFF_ADVICE))
    return found


def _continues_a_conversation(facts) -> bool:
    """Runs that carry earlier turns: a session, a server-side conversation, or an input list
    replayed from an earlier result. Only then does a handoff pass a growing history."""
    return any(callee_name(call) == "to_input_list" or any(keyword(call, k) is not None for k in CONTINUED_BY)
               for call in facts.nodes.calls)


# --- fixes ----------------------------------------------------------------------------------------


def fix(finding: Finding, module: cst.Module, wrapper: MetadataWrapper, lines):
    """A session without a limit: `session_settings=SessionSettings(limit=40)`; a replayed input
    list: `bounded_view` at the send, the store keeps the whole thread."""
    if finding.properties.get("framework") != "agents":
        return None
    limit = finding.properties.get("storage") == "framework"
    return (_session_limit if limit else _replayed_input)(finding, module, wrapper, lines), ADVICE["agents"]


def _session_limit(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`SQLiteSession(...)` -> `SQLiteSession(..., session_settings=SessionSettings(limit=40))`
    (the runner reads the last 40 items and drops tool outputs whose call fell out of the
    window; `add_items` still stores everything)."""
    call = call_at(wrapper, finding.span)
    if call is None or not isinstance(call.func, cst.Name) or call.func.value not in SESSIONS:
        return None
    if not import_of(module, call.func.value).startswith("agents"):
        return None
    fixed = with_keyword(call, "session_settings", f"SessionSettings(limit={WINDOW_ITEMS})")
    return replace_span(
        finding, module, wrapper, lines, module.code_for_node(fixed), ["from agents import SessionSettings"],
        f"Give the session a limit of {WINDOW_ITEMS} items: it keeps every item, each run reads the last "
        f"{WINDOW_ITEMS} (the SDK drops tool outputs whose call fell out)",
        safe=True,
    )


def _replayed_input(finding: Finding, module, wrapper, lines) -> Fix | None:
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
    if (not isinstance(call.func, cst.Attribute) or call.func.attr.value not in AGENT_RUNS
            or not (arg.keyword is None and position == 1 or arg.keyword is not None and arg.keyword.value == "input")):
        return None
    if sent != history and not _is_list_name(module, wrapper, finding.span, sent):
        return None  # bounded_view takes a list; the first input may be a string
    stores = stores_of(module, wrapper, history, "to_input_list")
    if not stores:
        return None
    fix = replace_span(
        finding, module, wrapper, lines, f"bounded_view({sent}, last_turns={WINDOW_TURNS})", [BOUNDED_IMPORT],
        f"Send bounded_view({sent}, last_turns={WINDOW_TURNS}) and store the whole input with the run's new items "
        "(to_input_list() after the input that was sent), so the stored thread stays whole",
        safe=True,
    )
    edits = [store_edit(module, wrapper, store, f"{sent} + {{r}}.to_input_list()[len({{r}}.input):]") for store in stores]
    return fix and replace(fix, edits=(*fix.edits, *edits))


def _is_list_name(module: cst.Module, wrapper: MetadataWrapper, span: Span, name: str) -> bool:
    """``name`` is set, in the function holding ``span``, only to list literals or `x + [...]`."""
    function = innermost(wrapper, span, cst.FunctionDef)
    if function is None or not name.isidentifier():
        return False
    values = [node.value for node in walk_down(function) if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign))
              and module.code_for_node(node.targets[0].target if isinstance(node, cst.Assign) else node.target) == name]
    return bool(values) and all(
        isinstance(v, cst.List) or isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add)
        and (isinstance(v.left, cst.List) or isinstance(v.right, cst.List)) for v in values
    )
