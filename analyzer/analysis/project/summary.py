"""One module's summary (`summarize(source)`): what it offers the modules that import it,
read from its own chat facts and nothing else (no other module is read while summarising).

For each top-level function and each method of a top-level class: its parameters that reach
a model whole (and at which model call), those it passes whole to an imported function, and
the whole history it returns (with how that history grows and what bounds it), and the
retrieval results it returns with no cut (how many: whether they are too many is the
importer's call, under its own `max-top-k`). Also its
classes, its module-level instances of them, its module-level text constants (a prompt kept in
`prompts.py`), its tool lists and the functions returning one (with their sizes), and its
import table, through which the project pass follows re-exports and
forwards.
"""

from __future__ import annotations

import math
from dataclasses import replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from chatbound.analysis.chat import ChatRule
from chatbound.analysis.histories import ChatFacts, History, walk
from chatbound.analysis.histories.growth import SETUP_FUNCTION, growth_label
from chatbound.analysis.project.lists import module_lists
from chatbound.analysis.prompts import system_contents
from chatbound.analysis.retrieval import RetrievalFacts, counts_asked
from chatbound.analysis.rule import RuleContext
from chatbound.analysis.servertools import ServerTools, empty
from chatbound.analysis.sharing import keeps
from chatbound.analysis.toollists import Size, size_of
from chatbound.analysis.tools import TOOL_KEYWORDS, takes_tools
from chatbound.findings import Severity
from chatbound.frameworks import CONTINUED_BY, server_tools
from chatbound.syntax.bytescan import nesting_problem
from chatbound.syntax.messages import class_name, message_roles
from chatbound.syntax.parse import no_gc, parse
from chatbound.syntax.texts import Text, returned_text, text_of
from chatbound.syntax.visitors import visit_batched
from chatbound.vocabulary.sinks import CALLEE_NAMES, Sink, keyword, positional, sink_of
from chatbound.vocabulary.summaries import (
    Forward,
    FunctionSummary,
    HistorySummary,
    ModuleSummary,
    RetrievalSummary,
    SendSummary,
    StoreWrite,
    TextSummary,
    ToolListSummary,
)

NOT_KEPT = ("param", "loop", "accessor")  # state of one call, or a name-only guess: never exported


def summarize(source: bytes) -> ModuleSummary:
    """The module's summary; an empty one when it cannot be read whole (its own check says why:
    a syntax error, brackets nested deeper than LibCST's native parser survives, an expression
    deeper than the recursion limit), so that an imported module never fails its importer."""
    if nesting_problem(source):
        return ModuleSummary()
    with no_gc():
        try:
            module = parse(source)
        except Exception:
            return ModuleSummary()
        context = RuleContext(path="<summary>", module=module, options={}, source=source)
        summarizer = Summarizer(context)
        try:
            with summarizer.resolve(MetadataWrapper(module, unsafe_skip_copy=True)):
                visit_batched(module, [summarizer])
        except RecursionError:
            return ModuleSummary()
        return summarizer.summary


def _grows(facts: ChatFacts, function: cst.FunctionDef) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The parameters a function adds a turn to and never trims, with the roles of what it adds;
    not a set-up function's (`seed(history)` runs once)."""
    if SETUP_FUNCTION.match(function.name.value):
        return ()
    grown = facts.grown_params(function)
    trimmed = _trimmed(facts, function) if grown else set()
    found = []
    for param in grown:
        if param in trimmed:
            continue
        sites = [site for site, _ in facts.nodes.growth_by_name.get(param, ()) if facts.function_of(site) is function]
        roles = sorted({r for site in sites for v in facts.growth_values(site) for r in message_roles(v)})
        found.append((param, tuple(roles)))
    return tuple(found)


def _trimmed(facts: ChatFacts, function: cst.FunctionDef) -> set[str]:
    """The parameters a function trims (`del history[:-KEEP]`, `history.pop(0)` under a size
    test): what it sends or keeps of them is bounded."""
    names = {p.name.value for p in facts._params(function)}
    trimmed = {param for _, param, _ in facts.helper_trims.get(id(function), [])}
    return trimmed | {name for name in names if facts._local_trimmed(cst.Name(name), function)}


def _defaults(function: cst.FunctionDef) -> tuple[tuple[str, str], ...]:
    """`def load(version="v1")`: (("version", '"v1"'),), what a call may give and still mean the
    text summarised (`load("v1")`)."""
    params = [*function.params.posonly_params, *function.params.params]
    return tuple((p.name.value, cst.Module([]).code_for_node(p.default)) for p in params if p.default is not None)


class Summarizer(ChatRule):
    """Not a rule users select: the chat traversal, kept for the summary it leaves."""

    ID, NAME, SEVERITY, SUMMARY = "PROJECT-SUMMARY", "project-summary", Severity.LOW, "module summary"

    def __init__(self, context) -> None:
        super().__init__(context)
        self.system_contents: list[cst.BaseExpression] = []  # of system messages built in dicts and pairs

    def visit_Dict(self, node: cst.Dict) -> None:
        self.system_contents.extend(system_contents(node))

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self.system_contents.extend(system_contents(node))

    def leave_Module(self, original_node: cst.Module) -> None:
        facts = self.chat_facts()
        retrieved = self._retrievals(facts)
        functions = {}
        for function in facts.nodes.functions:
            name = self._qualname(facts, function)
            if name is not None:
                functions[name] = self._function(
                    facts,
                    function,
                    facts.calls_in(function),
                    facts.returns(function),
                    retrieved.get(id(function)),
                )
        top = [k for k in facts.nodes.classes if facts.class_of(k) is None]
        classes = tuple(k.name.value for k in top)
        self.summary = ModuleSummary(
            functions=functions,
            classes=classes,
            bases={
                k.name.value: named
                for k in top
                if (
                    named := tuple(
                        b.value.value for b in k.bases if isinstance(b.value, cst.Name) and b.value.value in classes
                    )
                )
            },
            instances=self._instances(facts, classes),
            imports={name: min(targets) for name, targets in facts.nodes.bindings.items()},
            texts=self._texts(original_node),
            tool_lists={**self._tool_lists(original_node), **self._server_tools(facts)},
            lists=module_lists(self.context.source),
        )

    def _tool_lists(self, module: cst.Module) -> dict[str, ToolListSummary]:
        """Module-level tool lists and registries, and the functions that return one (a helper
        in `tools/helpers.py`; it runs after the module's lists are bound)."""
        known: dict[str, Size] = {}
        found: dict[str, ToolListSummary] = {}
        for statement in module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                names = (
                    [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
                    if isinstance(small, cst.Assign)
                    else []
                )
                size = size_of(small.value, known) if names else None
                for name in names if size is not None else ():
                    known[name] = size
                    found[name] = ToolListSummary(size.work, size.routes, size.partial, self.span(small.value))
        for function in (s for s in module.body if isinstance(s, cst.FunctionDef)):
            returns = [n.value for n in walk(function.body) if isinstance(n, cst.Return) and n.value is not None]
            size = size_of(returns[0], known) if len(returns) == 1 else None
            if size is not None:
                found[function.name.value] = ToolListSummary(
                    size.work, size.routes, size.partial, self.span(returns[0]), returned=True
                )
        return found

    def _server_tools(self, facts: ChatFacts) -> dict[str, ToolListSummary]:
        """Functions and methods that return every tool of MCP servers, gathered by the module's own
        client (`MCPClient.start()` returning `self.tools`): their number is known only at run time."""
        if not any(server_tools(facts.nodes.imports, call) for call in facts.nodes.calls):
            return {}
        tools, found = ServerTools(facts), {}
        for function in facts.nodes.functions:
            name = self._qualname(facts, function)
            returned = [r for r in facts.returns(function) if not empty(r)]
            listed = [tools.tools(r) for r in returned] if name is not None else []
            if listed and all(listed):
                found[name] = ToolListSummary(
                    0, 0, False, self.span(returned[0]), returned=True, servers=(tools.describe(listed[0]),)
                )
        return found

    def _texts(self, module: cst.Module) -> dict[str, TextSummary]:
        """Module-level `NAME = <text>` constants (a prompt kept in `prompts.py`), what its
        top-level functions return called with no arguments (`def system_prompt(): ...`), and a
        module class's text defaults (`class Config(BaseModel): prompt: str = "..."`), also as
        read on a module-level instance built without them (`config = Config()`)."""
        found = {}
        for function in (s for s in module.body if isinstance(s, cst.FunctionDef)):
            text = returned_text(self, function)
            if text is not None:
                found[function.name.value] = replace(
                    self._text_summary(text, returned=True), defaults=_defaults(function)
                )
        defaults = {c.name.value: self._class_texts(c) for c in module.body if isinstance(c, cst.ClassDef)}
        for statement in module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
                if isinstance(small, cst.AnnAssign) and small.value is not None:
                    targets = [small.target]  # `SYSTEM_PROMPT: str = ...`
                names = [t.value for t in targets if isinstance(t, cst.Name)]
                text = text_of(self, small.value) if names else None
                for name in names if text is not None else ():
                    found[name] = self._text_summary(text)
                built = small.value if names and isinstance(small.value, cst.Call) else None
                klass = built.func.value if built is not None and isinstance(built.func, cst.Name) else None
                given = {a.keyword.value for a in built.args if a.keyword is not None} if built is not None else set()
                for attr, summary in (
                    defaults.get(klass, {}).items()
                    if built is not None and not any(a.keyword is None for a in built.args)
                    else ()
                ):
                    if attr not in given:
                        found.update({f"{name}.{attr}": summary for name in names})
        for klass, texts in defaults.items():
            found.update({f"{klass}.{attr}": summary for attr, summary in texts.items()})
        return found

    def _text_summary(self, text: Text, returned: bool = False) -> TextSummary:
        """A text as an importer sees it; one read from a data file names the file to read."""
        return TextSummary(text.value, self.span(text.node), text.partial, returned, text.file if text.unread else "")

    def _class_texts(self, klass: cst.ClassDef) -> dict[str, TextSummary]:
        """`prompt: str = "..."` / `prompt = "..."` in a class body: the text defaults it declares."""
        found = {}
        for statement in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    name, value = small.target.value, small.value
                elif (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    name, value = small.targets[0].target.value, small.value
                else:
                    continue
                text = text_of(self, value)
                if text is not None:
                    found[name] = TextSummary(text.value, self.span(text.node), text.partial)
        return found

    @staticmethod
    def _qualname(facts: ChatFacts, function: cst.FunctionDef) -> str | None:
        """`chat` or `Memory.get`; None for nested functions and classes (not importable)."""
        owner = facts.parent(facts.parent(function))  # FunctionDef <- IndentedBlock <- ClassDef
        if isinstance(facts.parent(function), cst.Module):
            return function.name.value
        if isinstance(owner, cst.ClassDef) and isinstance(facts.parent(owner), cst.Module):
            return f"{owner.name.value}.{function.name.value}"
        return None

    def _retrievals(self, facts: ChatFacts) -> dict[int, RetrievalSummary]:
        """By function: the most retrieval results it returns (or a retriever asking for them)
        with no cut on the way; an importer decides whether they are too many. Every cut stops
        the follow here (a slice, a reranker, a filter), whatever it keeps."""
        retrieval = RetrievalFacts(facts, math.inf, lambda reranker: True)
        found: dict[int, RetrievalSummary] = {}
        for call in facts.nodes.calls:
            for label, node, count in counts_asked(self, call):
                start = len(retrieval.returned)
                retrieval.reach_of_call(call, count.value)
                for function, kept, kind in retrieval.returned[start:]:
                    known = found.get(id(function))
                    if known is None or kept > known.count:
                        found[id(function)] = RetrievalSummary(kept, label, kind, self.span(node))
        return found

    def _function(
        self,
        facts: ChatFacts,
        function: cst.FunctionDef,
        calls: list[cst.Call],
        values: list[cst.BaseExpression],
        retrieves: RetrievalSummary | None,
    ) -> FunctionSummary:
        """`calls` and `values` (what its `return`s give) are the function's own; `retrieves` the
        retrieval results it returns."""
        sent = facts.sent_params(function)
        trimmed = _trimmed(facts, function) if sent else set()
        sends = tuple(
            SendSummary(
                param,
                sink.api,
                sink.framework,
                self.span(sink.call),
                agent=_agent_param(facts, function, sink),
                receiver=_receiver_param(facts, function, sink),
            )
            for param, sink in sent
            if param not in trimmed
        ) + tuple(
            SendSummary(
                param,
                sink.api,
                sink.framework,
                self.span(sink.call),
                position,
                _spread_agent(sink, param),
                _receiver_param(facts, function, sink),
            )
            for param, sink, position in self._passed_on(facts, function)
        )
        returned = None
        for value in values:
            for use in facts.whole_history_in(value):
                history = facts.histories.get(use.storage.key)
                kept = history is not None and (history.growth or history.storage.kind == "database")
                if returned is None and kept and use.storage.kind not in NOT_KEPT:
                    returned = self._history(history)
        return FunctionSummary(
            params=tuple(p.name.value for p in facts._params(function)),
            sends=sends,
            forwards=tuple(self._forwards(facts, calls)),
            returns=returned,
            writes=tuple(self._writes(facts, function)),
            retrieves=retrieves,
            keeps=next((self.span(value) for value in values if keeps(facts, value, frozenset())), None),
            tool_params=_tool_params(facts, function, calls),
            continued=_continued(facts, function),
            grows=_grows(facts, function),
            system_params=_system_params(facts, function, calls, self.system_contents),
            relays=_relays(facts, function, calls),
        )

    @staticmethod
    def _passed_on(facts: ChatFacts, function: cst.FunctionDef) -> list[tuple[str, Sink, int]]:
        """A wrapper that hands its `*args` or `**kwargs` on to a model call (`def call(recv, *args,
        **kwargs): return recv.chat.completions.create(*args, **kwargs)`, the shape of every retry,
        logging or tracing wrapper) sends whatever messages its callers pass: `"**kwargs"` (a
        caller's `messages=`) or `"*args"` (the argument after the named ones at the position
        the model call reads its messages from: the second of `Runner.run(agent, input)`)."""
        stars = {
            star: param.name.value
            for star, param in (("*", function.params.star_arg), ("**", function.params.star_kwarg))
            if isinstance(param, cst.Param)
        }
        found = []
        for sink in facts.sinks if stars else ():
            if facts.function_of(sink.call) is not function:
                continue
            for arg in sink.call.args:
                if arg.star in stars and isinstance(arg.value, cst.Name) and arg.value.value == stars[arg.star]:
                    position = _read_position(facts, sink.call, arg) if arg.star == "*" else 0
                    found.append((f"{arg.star}{stars[arg.star]}", sink, position))
        return found

    def _writes(self, facts: ChatFacts, function: cst.FunctionDef):
        """Its writes to a database history: a turn pushed, or a parameter set back whole."""
        for call, write in facts.store_writes:
            history = facts.histories.get(write.key)
            if facts.function_of(call) is not function or history is None:
                continue
            if write.how == "push":
                yield StoreWrite(self._history(history), "push")
            elif write.how == "set":
                for value in write.values:
                    for use in facts.whole_history_in(value):
                        if use.storage.kind == "param":
                            yield StoreWrite(self._history(history), "set", use.storage.label)

    def _forwards(self, facts: ChatFacts, calls: list[cst.Call]):
        for call in calls:
            if not call.args or facts.callees(call):
                continue
            targets = set(facts.qualified(call.func))
            if isinstance(call.func, cst.Attribute):
                targets |= {f"{c}.{call.func.attr.value}" for c in facts.client_of(call.func.value)}
            if not targets:
                continue
            position = 0
            for arg in call.args:
                if arg.star:
                    break
                argument: int | str = arg.keyword.value if arg.keyword is not None else position
                position += arg.keyword is None
                for use in facts.whole_history_in(arg.value):
                    if use.storage.kind == "param":
                        for target in sorted(targets):
                            yield Forward(use.storage.label, target, argument)

    def _history(self, history: History) -> HistorySummary:
        return HistorySummary(
            key=history.storage.key,
            kind=history.storage.kind,
            label=history.storage.label,
            growth=tuple((self.span(site), growth_label(site)) for site in history.growth),
            definitions=tuple(self.span(node) for node in history.definitions),
            trims=tuple(self.span(node) for node in history.trims),
            roles=tuple(sorted(history.roles)),
            textual=history.textual,
            tool_traffic=history.tool_traffic,
            system_first=history.system_first,
            bounded_store=history.bounded_store,
        )

    @staticmethod
    def _instances(facts: ChatFacts, classes: tuple[str, ...]) -> dict[str, str]:
        found = {}
        for node in facts.nodes.assigns:
            if isinstance(node, cst.Assign) and isinstance(facts.parent(facts.parent(node)), cst.Module):
                value = node.value
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in classes:
                    for target in node.targets:
                        if isinstance(target.target, cst.Name):
                            found[target.target.value] = value.func.value
        return found


def _read_position(facts: ChatFacts, call: cst.Call, spread: cst.Arg) -> int:
    """Which of the arguments `*args` stands for the model call reads as its messages: the
    call asked again with three named arguments in its place (0 when it reads none of them)."""
    probes = [cst.Arg(cst.Name(f"_arg{i}")) for i in range(3)]
    args = [a for arg in call.args for a in (probes if arg is spread else [arg])]
    sink = sink_of(call.with_changes(args=args), facts.qualified, facts.assignment_before)
    read = [i for i, probe in enumerate(probes) if sink is not None and any(c is probe.value for c in sink.content)]
    return read[0] if read else 0


def _agent_param(facts: ChatFacts, function: cst.FunctionDef, sink: Sink) -> str:
    """The parameter an Agents SDK run in `function` is given as its agent (`Runner.run(agent,
    items)`, openai-agents 0.24 `starting_agent`), so that a caller's two runs can be told apart."""
    if sink.framework != "agents":
        return ""
    agent = positional(sink.call, 0) or keyword(sink.call, "starting_agent")
    return (_own_param(facts, function, agent.value) or "") if agent is not None else ""


def _receiver_param(facts: ChatFacts, function: cst.FunctionDef, sink: Sink) -> str:
    """The parameter the model call is made on (`def send(recv, items): return recv.chat(items)`):
    what a caller gives for it is the object that sends (a chat engine, a compiled graph)."""
    func = sink.call.func
    return (_own_param(facts, function, func.value) or "") if isinstance(func, cst.Attribute) else ""


def _spread_agent(sink: Sink, param: str) -> str:
    """`"*args"` when an Agents SDK run is given a wrapper's `*args` first (`Runner.run(*args,
    **kwargs)`): the caller's first argument there is the agent."""
    first = sink.call.args[0] if sink.call.args else None
    spread = first is not None and first.star == "*" and isinstance(first.value, cst.Name)
    return param if sink.framework == "agents" and spread and param == f"*{first.value.value}" else ""


def _own_param(facts: ChatFacts, function: cst.FunctionDef, value: cst.BaseExpression) -> str | None:
    """The name of `function`'s parameter that `value` reads, if it reads one."""
    bound = facts.assignment_before(value) if isinstance(value, cst.Name) else None
    return bound.name.value if isinstance(bound, cst.Param) and facts.function_of(bound) is function else None


def _spread_kwargs(function: cst.FunctionDef, call: cst.Call) -> str | None:
    """`"**kwargs"` when `call` is given `function`'s own `**kwargs` (a wrapper passing a caller's keywords on)."""
    kwargs = function.params.star_kwarg
    if isinstance(kwargs, cst.Param) and any(
        a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs.name.value for a in call.args
    ):
        return f"**{kwargs.name.value}"
    return None


def _continued(facts: ChatFacts, function: cst.FunctionDef) -> tuple[tuple[str, str], ...]:
    """(parameter, keyword) for the parameters the function's model calls are given as the
    conversation an SDK keeps (`session=session`): its callers' session is what is continued.
    A wrapper passing its `**kwargs` on passes a caller's `session=` (`("**kwargs", "session")`)."""
    found: list[tuple[str, str]] = []
    for sink in facts.sinks:
        if facts.function_of(sink.call) is not function:
            continue
        spread = _spread_kwargs(function, sink.call)
        if spread is not None:
            found.extend((spread, k) for k in CONTINUED_BY)
        for arg in sink.call.args:
            param = (
                _own_param(facts, function, arg.value) if arg.keyword and arg.keyword.value in CONTINUED_BY else None
            )
            if param is not None and arg.keyword is not None:
                found.append((param, arg.keyword.value))
    return tuple(found)


def _relays(facts: ChatFacts, function: cst.FunctionDef, calls: list[cst.Call]) -> tuple[tuple[str, str], ...]:
    """`(recv, "run_sync")` for `recv.run_sync(*args, **kwargs)` in `def call(recv, *args, **kwargs)`:
    a wrapper that hands everything its callers give on to a method of what they give it, which
    may be a model call (the callee names `sink_of` knows), whatever the receiver is."""
    stars = {
        star: param.name.value
        for star, param in (("*", function.params.star_arg), ("**", function.params.star_kwarg))
        if isinstance(param, cst.Param)
    }
    if not stars:
        return ()
    named = {p.name.value for p in facts._params(function)}
    found = []
    for call in calls:
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in named
            and func.attr.value in CALLEE_NAMES
            and call.args
            and all(
                a.star and isinstance(a.value, cst.Name) and stars.get(str(a.star)) == a.value.value for a in call.args
            )
        ):
            continue
        found.append((func.value.value, func.attr.value))
    return tuple(dict.fromkeys(found))


def _system_params(
    facts: ChatFacts, function: cst.FunctionDef, calls: list[cst.Call], messages: list[cst.BaseExpression]
) -> tuple[str, ...]:
    """The parameters the function gives its model call as the system prompt: `system_instruction=
    system_prompt` in the config of `def respond(history, system_prompt)`'s model call, or the
    content of a system message it builds (`messages`: those of the module). Only a function
    that calls a model: one that only builds or logs a message sends nothing."""
    sent = {id(sink.call) for sink in facts.sinks}
    if not any(id(call) in sent for call in calls):
        return ()
    contents = [c for c in messages if facts.function_of(c) is function]
    contents += [c for call in calls for c in system_contents(call)]
    return tuple(dict.fromkeys(p for c in contents if (p := _own_param(facts, function, c))))


def _tool_params(facts: ChatFacts, function: cst.FunctionDef, calls: list[cst.Call]) -> tuple[str, ...]:
    """The parameters the function gives a model call as its tools: `create(..., tools=tools)`
    inside `def send(client, messages, tools)`, so its callers' lists are what is attached."""
    found: list[str] = []
    sent = {id(sink.call) for sink in facts.sinks}
    for call in calls:
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if not (takes_tools(class_name(call), keywords) or id(call) in sent):
            continue
        found.extend(p for k in TOOL_KEYWORDS if k in keywords and (p := _own_param(facts, function, keywords[k])))
        spread = _spread_kwargs(function, call)  # a wrapper passing its `**kwargs` on: a caller's `tools=`
        if spread is not None:
            found.append(spread)
    return tuple(found)
