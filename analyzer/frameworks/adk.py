"""Google ADK (`google.adk`): a Runner on a session kept across turns (and the session a run names:
`conversation_key`), sub-agent transfers,
and tools whose results return to the agent's model.

Checked against google-adk 2.13.0 (and 1.18.0 / 1.22.0 where named); the file is named
beside each fact.

- The conversation is the session's events: a `Runner` (`Runner(agent=..., session_service=
  ...)` or `InMemoryRunner(agent)`, runners.py) appends every event of `run_async` / `run`
  to the session named by `session_id=`. An `LlmAgent` (`Agent`) with `include_contents=
  'default'` (the default, agents/llm_agent.py; the same in 1.0.0) gets every event of the
  session on each model call (flows/llm_flows/context/_contents.py `_get_contents`);
  `include_contents='none'` gets the current turn only (`_get_current_turn_contents`).
- Bounds: `include_contents='none'`; events compaction, `App(..., events_compaction_config=
  EventsCompactionConfig(...))` run by `Runner(app=...)` (apps/app.py; since 1.16.0, with
  `compaction_interval` and `overlap_size` required in 1.18.0, optional pairs in 2.13.0);
  `run_async(..., run_config=RunConfig(get_session_config=GetSessionConfig(
  num_recent_events=N)))` (agents/run_config.py: the field since 1.27.0; 1.26.0 has none and
  its RunConfig forbids unknown fields; runners.py passes it to `get_session`). A session
  created for the run in the same function (`create_session(...)` then one run) is one turn.
- Served: `adk web` / `adk api_server` import `{name}.agent` from the agents folder (a top-level
  package), take its `app` or else its `root_agent` (cli/utils/agent_loader.py), and run it on a
  session per user: a `root_agent` LLM agent there keeps the session like a runner's.
- Transfer: an LlmAgent's `sub_agents=[...]` are transfer targets (`transfer_to_agent`,
  flows/llm_flows/agent_transfer.py); the sub-agent then answers from the same session
  and, with `include_contents='default'`, is sent all of it. An agent tree is served across
  turns when its root is the module's `root_agent` (what `adk web` / `adk run` load,
  cli/utils/agent_loader.py) or an `App(root_agent=...)`, or runs on a kept session here.
  `AgentTool(agent)` passes the model's request as the sub-agent's input: a brief.
- Tools: an agent's `tools=[...]` are called by its model and their results go back to it
  (a retrieval tool's `similarity_top_k` chunks, tools/retrieval/vertex_ai_rag_retrieval.py).
- Instructions (what PROMPT-OVERSIZED-SYSTEM asks, `served_agents`): the served root's and its
  transfer targets' `instruction=` / `global_instruction=` are sent with every call of every
  turn. Any other agent shows no conversation in its module: run as a tool
  (`AgentTool(agent=...)` runs it on the one request it is given), a step of a
  `SequentialAgent`, or defined for another module to use.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable

import libcst as cst

from chatbound.findings import Edit, Finding, Fix, Span
from chatbound.fixes.edits import call_at, import_edit, keyword_added, name_is_taken
from chatbound.frameworks.versions import lowest, version_tuple
from chatbound.frameworks.vocabulary import Handoff, Kept
from chatbound.syntax.datafiles import read_data_file
from chatbound.syntax.messages import callee_name, string
from chatbound.syntax.values import bound_expression
from chatbound.vocabulary.sinks import keyword, positional

TRIGGERS = (
    (re.compile(rb"\bgoogle\.adk\b"), re.compile(rb"\.\s*run(?:_async)?\s*\(")),  # both: an ADK run
    (re.compile(rb"\bgoogle\.adk\b"), re.compile(rb"^root_agent\s*=", re.M)),  # both: an agent the ADK CLI serves
)
HANDOFF_TRIGGERS = (re.compile(rb"\bsub_agents\s*=\s*\["),)
# the project pass (chatbound.analysis.project.users): a served root's `sub_agents=[...]` naming
# agents imported from other modules of the project
# (and an agent another module runs on a runner of its own)
PROJECT_TRIGGERS = (re.compile(rb"\bsub_agents\s*=\s*\["), re.compile(rb"\b(?:InMemory)?Runner\s*\("))
TRANSFERRED_TAG = "adk.transferred"
RUN_TAG = "adk.run"  # an importer runs the agent on its own `Runner(agent=...)`
HANDOFF_CALLS = frozenset({"Agent", "LlmAgent"})
LLM_AGENTS = ("Agent", "LlmAgent")
CALLS = frozenset({"run_async", *LLM_AGENTS})
INSTRUCTIONS = ("instruction", "global_instruction")
RUNNERS = ("Runner", "InMemoryRunner")
RUNS = ("run_async", "run")
FRESH = ("create_session", "uuid4", "uuid1")  # a session id made for this run
ROOT = "root_agent"
SERVED_FILE = "agent.py"  # agents_dir/{agent_name}/agent.py: what `adk web` / `adk api_server` load
RECENT_EVENTS = 50  # about 10 turns with a tool call each: user, call, response, reply
DISTRIBUTION = "google-adk"
# google-adk 1.27.0 (1.28.0, 2.13.0): agents/run_config.py `RunConfig.get_session_config`,
# sessions/base_session_service.py `GetSessionConfig`; 1.26.0 has neither field nor import path.
RECENT_SINCE = (1, 27)
COMPACTION_SINCE = (1, 16)  # apps/app.py `App.events_compaction_config`: not in 1.15.1
RUN_CONFIG_IMPORTS = (
    "from google.adk.agents.run_config import RunConfig",
    "from google.adk.sessions.base_session_service import GetSessionConfig",
)
RECENT = (
    f"`run_config=RunConfig(get_session_config=GetSessionConfig(num_recent_events={RECENT_EVENTS}))` on the run "
    "(google-adk 1.27 and later; the session keeps every event)"
)
COMPACTION = (
    "events compaction on the app (`Runner(app=App(name=..., root_agent=agent, events_compaction_config="
    "EventsCompactionConfig(compaction_interval=5, overlap_size=1)), session_service=...)`, google-adk 1.16 "
    "and later), which folds older turns into summaries (what is sent then grows by one summary per interval)"
)
ADVICE = {"adk": f"Send each call the recent events only: {RECENT}, or configure {COMPACTION}."}
HANDOFF_ADVICE = (
    "Give each sub-agent only what it needs: `include_contents='none'` on a sub-agent that works from the "
    "current turn (it still sees the transfer and the user's latest message), or call it as a tool "
    "(`AgentTool(agent=specialist)`), which passes the request the model writes as the sub-agent's input."
)


def _imports_adk(facts) -> bool:
    if __name__ not in facts.framework_data:
        facts.framework_data[__name__] = any(i.startswith("google.adk") for i in facts.nodes.imports)
    return facts.framework_data[__name__]


def _adk(facts, call: cst.Call, names) -> bool:
    return callee_name(call) in names and any(q.startswith("google.adk") for q in facts.qualified(call.func))


def _value(facts, expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a name (or `self.attr`) holds where it is read, through `await`; else `expr`."""
    for _ in range(4):
        if isinstance(expr, cst.Await):
            expr = expr.expression
        elif isinstance(expr, cst.Name):
            bound = facts.assignment_before(expr)
            if not isinstance(bound, cst.BaseExpression):
                return None
            expr = bound
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            klass = facts.class_of(expr)
            values = [
                node.value
                for node in facts.nodes.assigns
                if isinstance(node, cst.Assign)
                and facts.class_of(node) is klass
                and any(facts.code(t.target) == facts.code(expr) for t in node.targets)
            ]
            if len(values) != 1:
                return None
            expr = values[0]
        else:
            return expr
    return expr


def _contents_none(facts, agent: cst.BaseExpression | None) -> bool:
    """An agent built with `include_contents='none'`, in this module or in the module of the
    checked tree it is imported from (read, not run); an agent neither shows (a parameter, an
    installed package) is taken with the default, `'default'`."""
    value = _value(facts, agent)
    if isinstance(value, cst.Call):
        arg = keyword(value, "include_contents")
        return arg is not None and string(arg.value) == "none"
    return isinstance(agent, cst.Name) and any(
        _imported_contents_none(facts, bound) for bound in facts.nodes.bindings.get(agent.value, ())
    )


def _imported_contents_none(facts, bound: str) -> bool:
    """`from .specialists import notes` (or `from pkg.specialists import notes`, found from the
    file's folder up): whether that module sets `notes = Agent(..., include_contents="none")`."""
    module, _, name = bound.rpartition(".")
    dots = len(module) - len(module.lstrip("."))
    relative = module.lstrip(".").replace(".", "/")
    directory = facts.rule.context.directory
    if not directory or not relative:
        return False
    bases = (
        [os.path.join(directory, *[".."] * (dots - 1))]
        if dots
        else [os.path.join(directory, *[".."] * up) for up in range(relative.count("/") + 3)]
    )
    for base in bases:
        for path in (f"{relative}.py", f"{relative}/__init__.py"):
            text = read_data_file(base, path)
            if text is not None:
                facts.rule.context.data_files.append(os.path.normpath(os.path.join(base, path)))
                return _defines_contents_none(text, name)
    return False


def _defines_contents_none(text: str, name: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        and isinstance(node.value, ast.Call)
        and any(
            k.arg == "include_contents" and isinstance(k.value, ast.Constant) and k.value.value == "none"
            for k in node.value.keywords
        )
        for node in tree.body
    )


# --- a Runner on a session kept across turns ---------------------------------------------------


def _runs(facts) -> list[tuple[cst.Call, cst.Call]]:
    """(run call, the Runner(...) it runs on) for the module's runs that continue a session."""
    key = __name__ + ".runs"
    if key not in facts.framework_data:
        found = []
        for call in facts.nodes.calls:
            if callee_name(call) not in RUNS or not isinstance(call.func, cst.Attribute):
                continue
            runner = _value(facts, call.func.value)
            if isinstance(runner, cst.Call) and _adk(facts, runner, RUNNERS) and _continues(facts, call):
                found.append((call, runner))
        facts.framework_data[key] = found
    return facts.framework_data[key]


def _continues(facts, run: cst.Call) -> bool:
    """The run adds a turn to a session that outlives it: its session was not created for it
    (`create_session` in the same function, outside any loop around the run), and the run is
    repeated (in a loop, or in a handler taking the turn as a parameter)."""
    session = keyword(run, "session_id")
    if session is None:
        return False
    function = facts.function_of(run)
    value = session.value.value if isinstance(session.value, cst.Attribute) else session.value
    created = _value(facts, value) if isinstance(value, cst.Name) else value
    if isinstance(created, cst.Call) and callee_name(created) == "str" and created.args:
        created = created.args[0].value  # str(uuid4())
    # `async for event in runner.run_async(...)` iterates the run's events: not a loop of turns
    loops = [loop for loop in facts.loops_of(run) if not (isinstance(loop, cst.For) and facts.inside(run, loop.iter))]
    if isinstance(created, cst.Call) and callee_name(created) in FRESH:
        if facts.function_of(created) is function and all(facts.inside(created, loop) for loop in loops):
            return False
    if loops:
        return True
    if function is None:
        return False
    params = [
        p
        for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
        if p.name.value not in ("self", "cls")
    ]
    return bool(params or function.decorators)


def _unbounded(facts, runner: cst.Call, run: cst.Call) -> str | None:
    """The agent a runner sends whole sessions for, or None when a bound (or a setting the
    module does not show) may cut it."""
    config = keyword(run, "run_config")
    if config is not None:
        value = _value(facts, config.value)
        if not isinstance(value, cst.Call) or keyword(value, "get_session_config") is not None:
            return None
    app = keyword(runner, "app")
    if app is not None:
        value = _value(facts, app.value)
        if not (isinstance(value, cst.Call) and callee_name(value) == "App"):
            return None  # an app built elsewhere may compact
        if keyword(value, "events_compaction_config") is not None:
            return None
        agent = keyword(value, "root_agent")
    else:
        agent = keyword(runner, "agent") or positional(runner, 0)
    if (
        agent is None
        or isinstance(agent.value, cst.Name)
        and agent.value.value == "None"
        or _contents_none(facts, agent.value)
    ):
        return None  # no agent yet (set later on the runner), or one sent the current turn only
    return facts.code(agent.value)


def memories(facts) -> list[Kept]:
    if not _imports_adk(facts):
        return []
    found, seen = _served_root(facts), set()
    for run, runner in _runs(facts):
        agent = _unbounded(facts, runner, run) if id(runner) not in seen else None
        seen.add(id(runner))
        if agent is None:
            continue
        runs = [facts.rule.span(r) for r, same in _runs(facts) if same is runner]
        name = f"{facts.code(run.func.value)}.{callee_name(run)}"
        version = _version_note(facts)
        found.append(
            Kept(
                runner,
                f"ADK `{callee_name(runner)}` runs `{agent}` on a session kept across turns "
                f"(`{name}(..., session_id=...)`) with no events compaction: the agent's default "
                "`include_contents='default'` sends every event of the session to the model on each call "
                "(google-adk 2.13)",
                _advice(version),
                {
                    "history": "session events",
                    "framework": "google-adk",
                    "storage": "framework",
                    "sink": name,
                    "runs": [(r.line, r.col, r.end_line, r.end_col) for r in runs],
                    **version,
                },
            )
        )
    return found


def _served_root(facts) -> list[Kept]:
    """The `root_agent` LLM agent of an `agent.py` that runs no session itself: `adk web` and
    `adk api_server` import `{name}.agent` with the agents folder on the path, so `{name}` is a
    top-level package (google-adk 2.13.0 cli/utils/agent_loader.py `_load_from_submodule`, which
    takes a module-level `app` first), and run the agent on a session per user that each turn
    adds to. An `agent.py` of a sub-package (`sub_agents/bqml/agent.py`) is a sub-agent of
    another, not served. Bounded by `include_contents='none'` or an `app = App(...,
    events_compaction_config=...)`; an `app` built otherwise may compact, and a module that runs
    the agent on a runner of its own is read as such (`_runs`)."""
    context = facts.rule.context
    if os.path.basename(context.path) != SERVED_FILE or _runs(facts) or not context.directory:
        return []
    if ROOT in _given(facts.rule, RUN_TAG, tests=False):
        return []  # the app runs it on a runner of its own: that module's run is the finding
    above = os.path.dirname(context.directory)
    context.data_files.append(os.path.join(above, "__init__.py"))  # a cached result is checked against it
    if read_data_file(above, "__init__.py") is not None:
        return []
    module_level = [
        node
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign) and facts.function_of(node) is None and facts.class_of(node) is None
    ]
    named = {
        t.target.value: node.value for node in module_level for t in node.targets if isinstance(t.target, cst.Name)
    }
    root, app = named.get(ROOT), named.get("app")
    agent = _value(facts, root)
    if not isinstance(agent, cst.Call) or not _adk(facts, agent, LLM_AGENTS) or _contents_none(facts, root):
        return []
    if app is not None and not (
        isinstance(app, cst.Call) and callee_name(app) == "App" and keyword(app, "events_compaction_config") is None
    ):
        return []
    version = _version_note(facts)
    return [
        Kept(
            root,
            f"`{ROOT}` is the agent `adk web` and `adk api_server` serve from `{SERVED_FILE}`, on a session per "
            "user that every turn adds to, with no events compaction: its default `include_contents='default'` "
            "sends every event of the session to the model on each call (google-adk 2.13)",
            _served_advice(version),
            {
                "history": "session events",
                "framework": DISTRIBUTION,
                "served": True,
                "storage": "framework",
                "sink": ROOT,
                **version,
            },
        )
    ]


def _served_advice(properties: dict) -> str:
    """A served agent has no run of this module to give a `run_config`: compaction on its app."""
    floor = properties.get("version")
    if floor is not None and version_tuple(floor)[:2] < COMPACTION_SINCE:
        return (
            f"google-adk {floor} (from {properties['version_file']}) has no events compaction (1.16.0): upgrade, then "
            f"serve `app = App(name=..., root_agent=root_agent, events_compaction_config=EventsCompactionConfig("
            "compaction_interval=5, overlap_size=1))` from agent.py (the ADK CLI loads a module's `app` before its "
            "`root_agent`)."
        )
    return (
        "Serve `app = App(name=..., root_agent=root_agent, events_compaction_config=EventsCompactionConfig("
        "compaction_interval=5, overlap_size=1))` from agent.py (the ADK CLI loads a module's `app` before its "
        "`root_agent`; google-adk 1.16 and later): older turns are folded into summaries, the session keeps every "
        "event."
    )


def _version_note(facts) -> dict:
    """The lowest google-adk the project allows, for the fix (`RunConfig.get_session_config`
    exists from 1.27.0 on): {"version": ..., "version_file": ...}, or {} when it declares none."""
    found = lowest(facts, DISTRIBUTION)
    return {"version": found[0], "version_file": found[1]} if found else {}


def _advice(properties) -> str:
    """The advice for the version the project allows: with none declared, which version it assumes."""
    version, where = properties.get("version"), properties.get("version_file")
    if version is None:
        return (
            f"The project declares no google-adk version; assuming 1.27 or later: send each call the recent "
            f"events only, {RECENT} (`--fix --unsafe-fixes` makes this edit once the project requires google-adk>=1.27), "
            f"or configure {COMPACTION}."
        )
    if version_tuple(version)[:2] >= RECENT_SINCE:
        return ADVICE["adk"]
    if version_tuple(version)[:2] >= COMPACTION_SINCE:
        return (
            f"google-adk {version} (from {where}) has no `RunConfig.get_session_config` (added in 1.27.0): "
            f"configure {COMPACTION}, or require google-adk>=1.27 and send each call the recent events only, "
            f"{RECENT}."
        )
    return (
        f"google-adk {version} (from {where}) has neither events compaction (1.16.0) nor "
        f"`RunConfig.get_session_config` (1.27.0): upgrade, then send each call the recent events only, {RECENT}."
    )


def fix(finding: Finding, module: cst.Module, wrapper, lines):
    """`runner.run_async(...)` -> `runner.run_async(..., run_config=RunConfig(get_session_config=
    GetSessionConfig(num_recent_events=50)))` on each run of the runner: the session keeps every
    event, each call is sent the last 50 (flat in tests against the real runner). Made only
    where the project requires google-adk 1.27 or later (a pin, a lock, a `>=` floor): before
    1.27.0 `RunConfig` has no such field and forbids unknown ones, so the app would not start;
    otherwise advice naming the version read or assumed. Unsafe: the window may start inside a
    turn (a model reply or a function call without the user message before it; a function
    response whose call fell out is dropped, flows/llm_flows/contents.py
    `_rearrange_events_for_async_function_responses_in_history` in 1.27.0 to 1.39, tools/
    _rearranger.py in 2.x). Compaction needs the runner rebuilt around an `App`;
    `include_contents='none'` makes the agent forget the conversation: advice."""
    if finding.properties.get("framework") != DISTRIBUTION:
        return None
    if finding.properties.get("served"):
        return None, _served_advice(finding.properties)  # the app the CLI serves is rebuilt around it: advice
    advice = _advice(finding.properties)
    version = finding.properties.get("version")
    if version is None or version_tuple(version)[:2] < RECENT_SINCE:
        return None, advice
    edits = []
    for line, col, end_line, end_col in finding.properties.get("runs", ()):
        call = call_at(wrapper, Span(line, col, end_line, end_col))
        if call is None or keyword(call, "run_config") is not None:
            return None, advice
        fixed = keyword_added(
            wrapper,
            lines,
            call,
            "run_config",
            f"RunConfig(get_session_config=GetSessionConfig(num_recent_events={RECENT_EVENTS}))",
        )
        edits.append(Edit(Span(line, col, end_line, end_col), fixed))
    for statement in RUN_CONFIG_IMPORTS:
        if name_is_taken(module, statement.rsplit(" ", 1)[1], statement):
            return None, advice
        edit = import_edit(module, wrapper, lines, statement, min(e.span.line for e in edits)) if edits else None
        edits += [edit] if edit is not None else []
    if not edits:
        return None, advice
    return Fix(
        f"Send each model call the last {RECENT_EVENTS} events of the session (google-adk {version} from "
        f"{finding.properties.get('version_file')}; the field exists since 1.27.0); the session keeps every "
        "event",
        tuple(edits),
        safe=False,
    ), advice


# --- tools ---------------------------------------------------------------------------------------


def tool_results(facts, call: cst.Call, arg: cst.Arg) -> bool:
    """`Agent(tools=[...])`: the model calls them and reads what they return."""
    return arg.keyword is not None and arg.keyword.value == "tools" and _adk(facts, call, LLM_AGENTS)


# --- sub-agent transfer -------------------------------------------------------------------------


def handoffs(facts) -> list[Handoff]:
    """An LlmAgent served across turns whose `sub_agents` keep the default contents."""
    if not _imports_adk(facts):
        return []
    served = _served_agents(facts)
    found = []
    for call in facts.nodes.calls:
        listed = keyword(call, "sub_agents")
        if listed is None or id(call) not in served or not _adk(facts, call, LLM_AGENTS):
            continue
        if not isinstance(listed.value, (cst.List, cst.Tuple)):
            continue
        whole = [
            facts.code(e.value)
            for e in listed.value.elements
            if not isinstance(e, cst.StarredElement) and not _contents_none(facts, e.value)
        ]
        if whole:
            names = ", ".join(f"`{n}`" for n in whole)
            verbs = ("takes", "is", "it pays") if len(whole) == 1 else ("take", "are", "each pays")
            found.append(
                Handoff(
                    listed.value,
                    f"{names} in `sub_agents=[...]` {verbs[0]} over by transfer and, with "
                    f"`include_contents='default'` (google-adk's default), {verbs[1]} sent every event of "
                    f"the session: {verbs[2]} for the whole conversation again on every call.",
                    HANDOFF_ADVICE,
                )
            )
    return found


def _served_agents(facts) -> set[int]:
    """Ids of the agents whose tree answers across turns: the module's `root_agent`, an
    `App`'s `root_agent=`, the agent of a runner whose runs continue a session."""
    found = [
        node.value
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign)
        and facts.function_of(node) is None
        and any(isinstance(t.target, cst.Name) and t.target.value == ROOT for t in node.targets)
    ]
    found += [
        _value(facts, keyword(call, "root_agent").value)
        for call in facts.nodes.calls
        if callee_name(call) == "App" and keyword(call, "root_agent") is not None
    ]
    found += [
        _value(facts, agent.value)
        for _, runner in _runs(facts)
        for agent in [keyword(runner, "agent") or positional(runner, 0)]
        if agent is not None
    ]
    return {id(value) for value in found if value is not None}


# --- agents served across turns, for their instructions -------------------------------------


def is_llm_agent(qualified: Iterable[str]) -> bool:
    """`google.adk.Agent`, `google.adk.agents.LlmAgent` and their other import paths."""
    return any(name.startswith("google.adk.") and name.rsplit(".", 1)[-1] in LLM_AGENTS for name in qualified)


def served_agents(rule: cst.BatchableCSTVisitor, module: cst.Module) -> set[int]:
    """The ids of the agent calls of `module` that hold a conversation: the served root and the
    LLM agents it transfers to, followed through names bound once."""
    pending = [*_roots(module), *_transferred_here(rule, module)]
    served: set[int] = set()
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name):
            node = bound_expression(rule, node)
        if not isinstance(node, cst.Call) or id(node) in served or callee_name(node) not in LLM_AGENTS:
            continue
        served.add(id(node))
        for arg in node.args:
            if (
                arg.keyword is not None
                and arg.keyword.value == "sub_agents"
                and isinstance(arg.value, (cst.List, cst.Tuple))
            ):
                pending.extend(e.value for e in arg.value.elements if isinstance(e, cst.Element))
    return served


def _given(rule, tag: str, tests: bool = True) -> set[str]:
    """The module's names another module says `tag` of (the project pass's `uses`); not `tests`:
    a test module's say is left out (a test runs a served agent on a runner of its own)."""
    project = getattr(rule.context, "project", None)
    given = project.links.given if project is not None else {}
    return {
        name
        for name, mentions in given.items()
        if any(m.tag == tag and (tests or not _test_module(m.place.path)) for m in mentions)
    }


def _test_module(path: str) -> bool:
    """`tests/test_agents.py`, `agent_test.py`: pytest's own default file patterns, or a tests folder."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or any(p in ("test", "tests") for p in parts[:-1])


def _transferred_here(rule: cst.BatchableCSTVisitor, module: cst.Module) -> Iterable[cst.BaseExpression]:
    """Module-level agents another module's served tree transfers to (`sub_agents=[physics_agent]`
    with `physics_agent` imported from here): what the project pass says (`uses`)."""
    names = _given(rule, TRANSFERRED_TAG)
    if not names:
        return
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value in names for t in small.targets
            ):
                yield small.value


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, ast.AST]]:
    """The imported agents a served tree of this module transfers to: `root_agent = Agent(...,
    sub_agents=[math_agent, physics.physics_agent])` (or `App(root_agent=...)`), followed through
    module-level names bound once, as `served_agents` follows them in one module; and those it
    runs on a runner of its own (`Runner(agent=root_agent, ...)`)."""
    if not any(target.lstrip(".").startswith("google.adk") for target in imported.values()):
        return []
    found: list[tuple[str, str, ast.AST]] = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):  # `Runner(agent=root_agent, ...)`
        func = call.func
        if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in RUNNERS:
            agent = next((k.value for k in call.keywords if k.arg == "agent"), None)
            target = imported.get(agent.id) if isinstance(agent, ast.Name) else None
            if target is not None and not target.lstrip(".").startswith("google."):  # an agent of the project
                found.append((agent.id, RUN_TAG, agent))
    bound: dict[str, list[ast.expr]] = {}
    roots: list[ast.expr] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(statement.value)
                if target.id == ROOT:
                    roots.append(statement.value)
        if isinstance(statement.value, ast.Call):
            roots += [k.value for k in statement.value.keywords if k.arg == ROOT]
    seen: set[int] = set()
    pending = list(roots)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and node.id in imported and node.id not in bound:
            if not imported[node.id].lstrip(".").startswith("google."):
                found.append((node.id, TRANSFERRED_TAG, node))
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
            found.append((f"{node.value.id}.{node.attr}", TRANSFERRED_TAG, node))
            continue
        if isinstance(node, ast.Name) and len(bound.get(node.id, ())) == 1:
            node = bound[node.id][0]
        func = node.func if isinstance(node, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in LLM_AGENTS or id(node) in seen:
            continue
        seen.add(id(node))
        for k in node.keywords:
            if k.arg == "sub_agents" and isinstance(k.value, (ast.List, ast.Tuple)):
                pending.extend(e for e in k.value.elts if not isinstance(e, ast.Starred))
    return found


def _roots(module: cst.Module) -> Iterable[cst.BaseExpression]:
    """`root_agent = ...` at module level, and `root_agent=` of a module-level call (`App`)."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.Assign):
                continue
            if any(isinstance(t.target, cst.Name) and t.target.value == ROOT for t in small.targets):
                yield small.value
            if isinstance(small.value, cst.Call):
                yield from (a.value for a in small.value.args if a.keyword is not None and a.keyword.value == ROOT)


CONVERSATION_KEY_NAMES = ("session_id",)  # a run's keyword naming the conversation (pre-check)


def conversation_key(facts, call: cst.Call) -> cst.BaseExpression | None:
    """The `session_id=` of a run that continues a session (google-adk 2.13.0 runners.py
    `run_async(*, user_id, session_id, ...)`; a session service keys a session by the app, the
    user and the session id), when the `user_id=` does not tell users apart either (a literal);
    None otherwise."""
    if not any(run is call for run, _ in _runs(facts)):
        return None
    user, session = keyword(call, "user_id"), keyword(call, "session_id")
    if user is None or session is None or not isinstance(user.value, (cst.SimpleString, cst.Integer)):
        return None
    return session.value
