"""The project model's plain data: what one module says about itself (its summary), and what a
file sees of the modules it imports once the summaries are linked.

Summaries are keyed by content, not by path, so they hold spans only; linking adds the path
(`Place`) of the module each fact comes from, which a finding names as a related location.
Everything here pickles: summaries are cached on disk and links travel to worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatbound.findings import Span


@dataclass(frozen=True)
class SendSummary:
    """A parameter that reaches a model whole inside the function (or a helper of its module)."""

    param: str
    api: str
    framework: str
    span: Span  # the model call
    position: int = 0  # for a `*args` parameter: which of the arguments it stands for reaches the model
    agent: str = ""  # an agent run's (`Runner.run(agent, items)`): the parameter given as the agent
    receiver: str = ""  # the parameter the call is made on (`recv.chat(items)`): a caller's object sends


@dataclass(frozen=True)
class Forward:
    """A parameter passed whole to an imported function: `target` as the module spells it
    (`.llm.chat`), `argument` its position or keyword there."""

    param: str
    target: str
    argument: int | str


@dataclass(frozen=True)
class HistorySummary:
    """A history the module keeps, as `chatbound.analysis.histories.History` records it."""

    key: str
    kind: str
    label: str
    growth: tuple[tuple[Span, str], ...] = ()  # (where, how: "`append()`")
    definitions: tuple[Span, ...] = ()
    trims: tuple[Span, ...] = ()
    roles: tuple[str, ...] = ()
    textual: bool = False
    tool_traffic: bool = False
    system_first: bool = False
    bounded_store: bool = False


@dataclass(frozen=True)
class StoreWrite:
    """A write to a database history (`chatbound.databases`): `push` adds a turn, `set`
    writes `param` back as the whole history."""

    history: HistorySummary
    how: str
    param: str | None = None


@dataclass(frozen=True)
class RetrievalSummary:
    """The results of a retrieval a function returns with no cut on the way (`chatbound.analysis.retrieval`):
    `count` of them (`similarity_search(q, k=20)`, a `$vectorSearch` limit), or a retriever
    asking for that many (`kind`)."""

    count: int
    label: str  # what sets the count: "k", "$vectorSearch limit"
    kind: str  # "results" or "retriever"
    span: Span  # where the count is set


@dataclass(frozen=True)
class FunctionSummary:
    params: tuple[str, ...]
    sends: tuple[SendSummary, ...] = ()
    forwards: tuple[Forward, ...] = ()
    returns: HistorySummary | None = None  # a whole history it returns
    writes: tuple[StoreWrite, ...] = ()  # to a database history it reads whole elsewhere
    retrieves: RetrievalSummary | None = None  # retrieval results it returns whole
    keeps: Span | None = None  # it returns an object keeping one conversation, made here
    tool_params: tuple[str, ...] = ()  # parameters it gives a model call as its tools (`tools=tools`)
    # (parameter, keyword): parameters it gives a model run as the conversation an SDK keeps
    # (`Runner.run(agent, items, session=session)`), a framework's `CONTINUED_BY` keyword
    continued: tuple[tuple[str, str], ...] = ()
    # (parameter, roles): parameters it adds a turn to (`history.append({"role": "user", ...})`),
    # with the roles of what it adds: a caller's history grows at the call
    grows: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # parameters it gives a model call as the system prompt (`system_instruction=system_prompt`,
    # `{"role": "system", "content": system}`): the texts its callers give are what is sent
    system_params: tuple[str, ...] = ()
    # (parameter, method): it calls `parameter.method(*args, **kwargs)` with its own star parameters
    # (a retry, logging or tracing wrapper): a caller's call is that method's call on what it gives
    relays: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TextSummary:
    """A module-level text constant (`SYSTEM_PROMPT = "..."`) as `chatbound.syntax.texts`
    resolves it: what a module importing it may send as a system prompt."""

    value: str
    span: Span  # where the text is defined
    partial: bool = False  # some parts (f-string fields) are not counted
    returned: bool = False  # what a function of that name returns when called with no arguments
    read_from: str = ""  # a data file the module reads it from, relative to the module (the importer reads it)
    defaults: tuple[tuple[str, str], ...] = ()  # returned: (parameter, its default's code), in order


@dataclass(frozen=True)
class ToolListSummary:
    """A tool list a module offers: a module-level list or registry (`TOOLS = [...]`), or the one
    value a function returns (`def all_tools(): return [...]`: `returned`)."""

    work: int  # work tools
    routes: int  # routes to other agents (handoffs, agents run as tools), counted apart
    partial: bool  # some elements are not counted
    span: Span  # where the list is built
    returned: bool = False
    servers: tuple[str, ...] = ()  # every tool of MCP servers, known only at run time (how it reads)


@dataclass(frozen=True)
class ModuleSummary:
    """What one module offers the modules that import it."""

    functions: dict[str, FunctionSummary] = field(default_factory=dict)  # "chat", "Memory.get"
    classes: tuple[str, ...] = ()
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> its bases defined in the module
    instances: dict[str, str] = field(default_factory=dict)  # module-level `db = Database()`: "db" -> "Database"
    imports: dict[str, str] = field(default_factory=dict)  # bound name -> target, for re-exports and forwards
    texts: dict[str, TextSummary] = field(default_factory=dict)  # module-level text constants by name
    tool_lists: dict[str, ToolListSummary] = field(default_factory=dict)  # by list or function name
    # module-level names bound once to a new empty list (`history = []`): one list for the process
    lists: dict[str, Span] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.texts or self.tool_lists or self.lists) or any(
            f.sends
            or f.forwards
            or f.returns
            or f.writes
            or f.retrieves
            or f.keeps
            or f.grows
            or f.system_params
            or f.relays
            for f in self.functions.values()
        )


@dataclass(frozen=True)
class Place:
    """A span in another module, named by the path the run shows it under."""

    path: str
    span: Span
    label: str = ""


@dataclass(frozen=True)
class RemoteSend:
    param: str
    api: str
    framework: str
    place: Place  # the model call, possibly several modules away
    position: int = 0  # as `SendSummary.position`
    agent: str = ""  # as `SendSummary.agent`
    receiver: str = ""  # as `SendSummary.receiver`


@dataclass(frozen=True)
class RemoteHistory:
    summary: HistorySummary
    path: str

    def place(self, span: Span, label: str = "") -> Place:
        return Place(self.path, span, label)


@dataclass(frozen=True)
class RemoteRetrieval:
    """Retrieval results an imported function returns, as the importing file sees them."""

    summary: RetrievalSummary
    place: Place  # where the count is set


@dataclass(frozen=True)
class RemoteFunction:
    """An imported function or method as the importing file sees it."""

    path: str
    name: str
    params: tuple[str, ...]
    sends: tuple[RemoteSend, ...] = ()
    returns: RemoteHistory | None = None
    writes: tuple[StoreWrite, ...] = ()
    retrieves: RemoteRetrieval | None = None
    keeps: Place | None = None  # where the conversation object it returns is made
    tool_params: tuple[str, ...] = ()  # as `FunctionSummary.tool_params`
    continued: tuple[tuple[str, str], ...] = ()  # as `FunctionSummary.continued`
    grows: tuple[tuple[str, tuple[str, ...]], ...] = ()  # as `FunctionSummary.grows`
    system_params: tuple[str, ...] = ()  # as `FunctionSummary.system_params`
    relays: tuple[tuple[str, str], ...] = ()  # as `FunctionSummary.relays`


@dataclass(frozen=True)
class RemoteText:
    """An imported text constant as the importing file sees it."""

    value: str
    partial: bool
    place: Place  # where it is defined
    returned: bool = False  # what an imported function returns called with no arguments (`system_prompt()`)
    file: str = ""  # the data file it is read from, as shown
    defaults: tuple[tuple[str, str], ...] = ()  # returned: the arguments it stands for (see TextSummary)


@dataclass(frozen=True)
class RemoteToolList:
    """An imported tool list, or helper returning one, as the importing file sees it."""

    summary: ToolListSummary
    place: Place  # where it is built


@dataclass(frozen=True)
class Mention:
    """What another module or a deployment file says about a name: `tag` in a framework's words
    (`langgraph.node`: an importer registers it as a graph node), `place` where it says so."""

    tag: str
    place: Place


@dataclass(frozen=True)
class Links:
    """The links that run against the imports (`chatbound.analysis.project.users`): what importers and
    deployment files say about this module's names (`given`; "" is the module itself), what
    the definitions of the names it imports are (`seen`), and the files that says so."""

    given: dict[str, tuple[Mention, ...]] = field(default_factory=dict)
    seen: dict[str, tuple[Mention, ...]] = field(default_factory=dict)
    modules: tuple[str, ...] = ()


@dataclass(frozen=True)
class Linked:
    """What one file sees of the project: imported functions and methods keyed by the
    qualified name the file's chat facts spell (`.llm.chat`, `memory.Memory.get`), imported
    text constants and tool lists keyed the same way (`.prompts.SYSTEM_PROMPT`,
    `.tools.helpers.all_tools`), what importers and imported definitions say about its names
    (`links`), and every module the answer rests on (its result is cached against their contents)."""

    functions: dict[str, RemoteFunction] = field(default_factory=dict)
    texts: dict[str, RemoteText] = field(default_factory=dict)
    tool_lists: dict[str, RemoteToolList] = field(default_factory=dict)
    modules: tuple[str, ...] = ()
    lists: dict[str, Place] = field(default_factory=dict)  # imported module-level lists, where each is bound
    seconds: float = 0.0  # what linking cost (the project pass's share of the run)
    links: Links = field(default_factory=Links)
