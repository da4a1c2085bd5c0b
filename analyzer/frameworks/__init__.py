"""What the frameworks that hold a conversation do with it: one module per framework.

Rules never name a framework; they ask the chat facts (`chatbound.analysis.histories`), and the
facts ask these modules. Each module declares, in the words the facts already speak:

- `REPLAYS`: methods of a run's result that return the whole conversation, the history
  that was sent followed by the run's new messages (`h = result.all_messages()` grows `h`).
- `TRIGGERS`: code shapes one of which a file using the framework holds (the memory and
  handoff rules' pre-check), and `CALLS`: the callee names its facts start from (so a
  module holding only those is still read).
- `storage(facts, expr)`: the `Storage` of a conversation the framework keeps that `expr`
  names (LangGraph's `state["messages"]` in a graph node), or None.
- `collect(facts)`: the `History` of each such storage: what grows it every turn, the
  framework's own bounds (trims), and whether it holds tool traffic.
- `memories(facts)`: framework objects that keep a conversation and send all of it
  themselves (an agent with a checkpointer and no trimming hook), as `Kept`.
- `handoffs(facts)`: calls that give another agent the whole conversation, as `Handoff`.
- `windows(facts)`: plain count cuts the application writes back into a conversation the
  framework keeps with tool calls in it (an Agents SDK session pruned by hand), as `Window`.
- `KINDS` and `ADVICE`: how a finding describes each storage kind the module adds, and the
  framework's own bound for it.
- `state_messages(facts, expr)`: where `expr` carries the framework's whole message state
  (`state["messages"]` handed to a specialist), or None.
- `fix(finding, module, wrapper, lines)`: the framework's own bound for a finding it owns,
  as `(fix or None, advice)`, or None when the finding is not its own.

- `sink(facts, call)`: the `Sink` a call is when only the framework knows it (Swarm's
  `client.run(agent, messages)`), or None.
- `tool_results(facts, call, arg)`: whether `arg` of `call` gives an agent tools whose
  results go back to its model (ADK's `Agent(tools=[...])`), so a retrieval tool's results
  reach a model there.
- `TOOL_CONTEXT`: attributes of a tool's context parameter that hold one object every tool of
  the agent is given (Pydantic AI's `ctx.deps`): tools acting on it are one toolkit.
- `TOOL_CHOICES` / `chooses_tools(call)`: keywords of a tool decorator that let a run leave the
  tool out of a step (Pydantic AI's `prepare=`), and whether an agent call chooses its tools
  for each step (`capabilities=[PrepareTools(fn)]`): such tools are not all sent every time.
- `route_schemas(tree)`: the names of the classes given to a model as tools only for a router to
  pick the next agent by (LangGraph: a conditional edge comparing the tool call's name with
  `ToBilling.__name__`), counted as routes, not work tools.
- `TOOL_KEYWORDS` / `TOOL_TRIGGERS`: keywords that attach tools beside `tools=` (the Agents
  SDK's `mcp_servers=`); `server_tools(imports, call)` / `toolset(imports, call)`: how a call
  returning every tool of a server, or a toolset offering all of them unfiltered, reads in
  a message (MCP), or None; `TOOLS_ADVICE`: the bound for those.
- `system_parts(qualified, call)` / `system_config(module, qualified, call, directory)`: the
  parts of an agent's system prompt the framework assembles (CrewAI's role, goal and
  backstory, inline or read from its YAML config); `PROMPT_TRIGGERS`, `PROMPT_FILES` and
  `PROMPT_KEYWORDS`: the shapes, config reads and call keywords that lead to them.
- `INSTRUCTIONS` / `is_llm_agent(qualified)` / `served_agents(rule, module)`: the keywords
  that are an agent's system prompt (ADK's `instruction=`), the calls that make such an
  agent, and which of them answer across turns (the served root and its sub-agents).

Every name is optional: a module declares what its framework has. A new framework is one
new module, listed in `MODULES`.
"""

from __future__ import annotations

import ast

import libcst as cst

from chatbound.fixes.edits import HISTORY_STAYS, WINDOW_TURNS
from chatbound.frameworks import (
    adk,
    autogen,
    chainlit,
    chat_memories,
    crewai,
    gradio,
    langchain,
    langgraph,
    llama_index,
    mcp,
    memory_objects,
    openai_agents,
    pydantic_ai,
    routes,
    smolagents,
    streamlit,
    swarm,
)
from chatbound.frameworks.langgraph import functional as langgraph_functional
from chatbound.frameworks.mcp_servers import Server, known_server
from chatbound.frameworks.vocabulary import Handoff, Kept, Window

MODULES = (
    langgraph,
    langgraph_functional,
    openai_agents,
    swarm,
    autogen,
    adk,
    chainlit,
    crewai,
    mcp,
    smolagents,
    pydantic_ai,
    llama_index,
    langchain,
    streamlit,
    gradio,
    routes,
    memory_objects,
)
__all__ = [
    "ADVICE",
    "CALLS",
    "CHAT_SENDS",
    "MEMORY_ADVICE",
    "SEND_ADVICE",
    "REPLAYS",
    "HANDOFF_CALLS",
    "HANDOFF_TRIGGERS",
    "INSTRUCTIONS",
    "KINDS",
    "MODULES",
    "TRIGGERS",
    "Handoff",
    "Kept",
    "Window",
    "PROMPT_FILES",
    "PROMPT_KEYWORDS",
    "PROMPT_TRIGGERS",
    "SERVER_LAUNCHERS",
    "SERVER_OBJECTS",
    "SERVER_SESSIONS",
    "SERVER_TOOL_CALLS",
    "SERVER_TOOLS_ADVICE",
    "TOOL_CHOICES",
    "TOOL_CONTEXT",
    "TOOL_KEYWORDS",
    "TOOL_TRIGGERS",
    "chooses_tools",
    "collect",
    "CONVERSATION_KEYWORDS",
    "CONTINUED_BY",
    "CONVERSATION_KEY_NAMES",
    "conversation_key",
    "keeps_conversation",
    "fix",
    "framework_kind",
    "handoffs",
    "history_callbacks",
    "instructed_agent",
    "memories",
    "Server",
    "known_server",
    "server_tools",
    "sent_list",
    "served_agents",
    "runs_elsewhere",
    "sink",
    "state_messages",
    "storage",
    "system_config",
    "system_parts",
    "route_schemas",
    "tool_results",
    "toolset",
    "trims_chat",
    "windows",
]


def _declared(name: str) -> list:
    return [getattr(module, name) for module in MODULES if hasattr(module, name)]


TRIGGERS = tuple(pattern for patterns in _declared("TRIGGERS") for pattern in patterns)
HANDOFF_TRIGGERS = tuple(pattern for patterns in _declared("HANDOFF_TRIGGERS") for pattern in patterns)
CALLS = frozenset(name for names in _declared("CALLS") for name in names)
REPLAYS = frozenset(name for names in _declared("REPLAYS") for name in names)
HANDOFF_CALLS = frozenset(name for names in _declared("HANDOFF_CALLS") for name in names)
KINDS = {kind: text for kinds in _declared("KINDS") for kind, text in kinds.items()}
ADVICE = {kind: text for advice in _declared("ADVICE") for kind, text in advice.items()}
TOOL_KEYWORDS = tuple(keyword for keywords in _declared("TOOL_KEYWORDS") for keyword in keywords)
SERVER_TOOL_CALLS = frozenset(name for names in _declared("SERVER_TOOLS") for name in names)  # callee names
TOOL_TRIGGERS = tuple(pattern for patterns in _declared("TOOL_TRIGGERS") for pattern in patterns)
TOOL_CONTEXT = tuple(name for names in _declared("TOOL_CONTEXT") for name in names)
TOOL_CHOICES = tuple(name for names in _declared("TOOL_CHOICES") for name in names)
SERVER_TOOLS_ADVICE = " ".join(_declared("TOOLS_ADVICE"))
SERVER_LAUNCHERS = {name: how for launchers in _declared("SERVER_LAUNCHERS") for name, how in launchers.items()}
SERVER_SESSIONS = tuple(name for names in _declared("SERVER_SESSIONS") for name in names)
SERVER_OBJECTS = {name: packages for objects in _declared("SERVER_OBJECTS") for name, packages in objects.items()}
PROMPT_TRIGGERS = tuple(pattern for patterns in _declared("PROMPT_TRIGGERS") for pattern in patterns)
PROMPT_FILES = tuple(pattern for patterns in _declared("PROMPT_FILES") for pattern in patterns)
PROMPT_KEYWORDS = tuple(keyword for keywords in _declared("PROMPT_KEYWORDS") for keyword in keywords)
INSTRUCTIONS = tuple(keyword for keywords in _declared("INSTRUCTIONS") for keyword in keywords)
_STORAGE, _COLLECT, _MEMORIES, _HANDOFFS = (_declared(n) for n in ("storage", "collect", "memories", "handoffs"))
_STATE_MESSAGES, _SINK, _FIX, _TOOL_RESULTS = (_declared(n) for n in ("state_messages", "sink", "fix", "tool_results"))
_SERVER_TOOLS, _TOOLSET, _SYSTEM_PARTS, _SYSTEM_CONFIG = (
    _declared(n) for n in ("server_tools", "toolset", "system_parts", "system_config")
)
_INSTRUCTED, _SERVED, _WINDOWS = _declared("is_llm_agent"), _declared("served_agents"), _declared("windows")
_KEEPS, _KEYS = _declared("keeps_conversation"), _declared("conversation_key")
CONVERSATION_KEY_NAMES = frozenset(name for names in _declared("CONVERSATION_KEY_NAMES") for name in names)
CONVERSATION_KEYWORDS = tuple(keyword for keywords in _declared("CONVERSATION_KEYWORDS") for keyword in keywords)
CONTINUED_BY = tuple(keyword for keywords in _declared("CONTINUED_BY") for keyword in keywords)
_ROUTE_SCHEMAS, _CHOOSES_TOOLS = _declared("route_schemas"), _declared("chooses_tools")
_CALLBACKS = _declared("history_callbacks")
_RUNS_ELSEWHERE = _declared("runs_elsewhere")


def _first(functions, *args):
    for function in functions:
        found = function(*args)
        if found is not None:
            return found
    return None


def storage(facts, expr: cst.CSTNode):
    return _first(_STORAGE, facts, expr)


def history_callbacks(facts) -> list:
    """(function, parameter): functions this module hands a chat UI of another module, each
    parameter receiving the UI's whole chat every turn."""
    return [found for function in _CALLBACKS for found in function(facts)]


def collect(facts) -> None:
    for function in _COLLECT:
        function(facts)


def keeps_conversation(qualified: str) -> bool:
    """Whether a call of `qualified` makes an object that keeps one conversation for whoever
    calls it (a LangChain memory); a call given one through `CONVERSATION_KEYWORDS` keeps it too."""
    return any(function(qualified) for function in _KEEPS)


def conversation_key(facts, call: cst.Call) -> cst.BaseExpression | None:
    """The expression that names the conversation `call` continues in a store that outlives it
    (a checkpointed graph's `thread_id`), or None."""
    return _first(_KEYS, facts, call)


def memories(facts) -> list[Kept]:
    return [kept for function in _MEMORIES for kept in function(facts)]


def handoffs(facts) -> list[Handoff]:
    return [handoff for function in _HANDOFFS for handoff in function(facts)]


def windows(facts) -> list[Window]:
    return [window for function in _WINDOWS for window in function(facts)]


def state_messages(facts, expr: cst.CSTNode) -> cst.CSTNode | None:
    """Where `expr` carries a framework's whole message state (`state["messages"]`), or None."""
    return _first(_STATE_MESSAGES, facts, expr)


def sink(facts, call: cst.Call):
    return _first(_SINK, facts, call)


def runs_elsewhere(facts, receiver: cst.BaseExpression, method: str) -> bool:
    """Whether `receiver.method(...)`, which looks like a model call, hands its input to code that
    makes its own (a compiled graph's `invoke`): it is no send itself."""
    return any(function(facts, receiver, method) for function in _RUNS_ELSEWHERE)


def tool_results(facts, call: cst.Call, arg: cst.Arg) -> bool:
    """Whether `arg` of `call` hands an agent tools whose results return to its model."""
    return any(function(facts, call, arg) for function in _TOOL_RESULTS)


def server_tools(imports: set[str], call: cst.Call) -> str | None:
    """How a call that returns every tool of a server reads in a message, or None."""
    return _first(_SERVER_TOOLS, imports, call)


def chooses_tools(call: cst.Call) -> bool:
    return any(function(call) for function in _CHOOSES_TOOLS)


def route_schemas(tree: ast.Module) -> set[str]:
    return set().union(*(function(tree) for function in _ROUTE_SCHEMAS))


def toolset(imports: set[str], call: cst.Call) -> str | None:
    """How a toolset that offers every tool of its server, unfiltered, reads in a message, or None."""
    return _first(_TOOLSET, imports, call)


def system_parts(qualified: set[str], call: cst.Call) -> dict | None:
    """The expressions an agent's system prompt is assembled from (part name -> expression), or
    None; `qualified` are the names the call's callee stands for."""
    return _first(_SYSTEM_PARTS, qualified, call)


def system_config(module: cst.Module, qualified: set[str], call: cst.Call, directory: str) -> tuple[str, str] | None:
    """An agent's system prompt read from the framework's config file, and that file, or None."""
    return _first(_SYSTEM_CONFIG, module, qualified, call, directory)


def instructed_agent(qualified: set[str]) -> bool:
    """Whether a call whose callee stands for `qualified` is an agent whose `INSTRUCTIONS`
    keywords are its system prompt."""
    return any(function(qualified) for function in _INSTRUCTED)


def served_agents(rule: cst.BatchableCSTVisitor, module: cst.Module) -> set[int]:
    """Ids of the instructed agent calls of `module` that hold a conversation across turns (an
    agent run once as a tool or a step sends its instruction once)."""
    return {found for function in _SERVED for found in function(rule, module)}


def fix(finding, module: cst.Module, wrapper, lines):
    """The framework's own fix and advice for ``finding``, or None when no framework owns it
    (the memories no framework module models yet answer last: `chat_memories.framework_fix`)."""
    return _first(_FIX, finding, module, wrapper, lines) or chat_memories.framework_fix(finding, module, wrapper, lines)


# The memories no framework module models yet: their advice by kind, and the chat objects' sends.
MEMORY_ADVICE = chat_memories.SUGGESTIONS
CHAT_SENDS = chat_memories.CHAT_SENDS
trims_chat = chat_memories.trims_chat
# What to do where a framework's model call is given a whole history, by the sink's framework.
SEND_ADVICE = {
    "langchain": MEMORY_ADVICE["langchain"],
    "llama_index": MEMORY_ADVICE["llama_index"],
    "semantic_kernel": MEMORY_ADVICE["semantic_kernel"],
    "agents": ADVICE["agents"],
    "pydantic_ai": ADVICE["pydantic_ai"],
    "google-genai": "Send a bounded `contents` (the last whole turns), or recreate the chat from a bounded history.",
}


# SDKs and frameworks whose message lists bounded_view reads (compaction/shapes.py); "http" is
# the JSON body of those APIs' chat endpoints, the same role dicts (Gemini's with `parts`).
LIST_SDKS = (
    "openai",
    "anthropic",
    "litellm",
    "mistral",
    "ollama",
    "groq",
    "together",
    "cohere",
    "bedrock",
    "boto3",
    "genai",
    "google",
    "vertex",
    "huggingface",
    "autogen",
    "gradio",
    "swarm",
    "crewai",  # Agent.kickoff(messages): LLMMessage role/content dicts (crewai 1.15.30 utilities/types.py)
    "http",
)
# A history sent as a list by these frameworks: whether bounded_view at the send serves it, and their own advice.
LIST_ADVICE = {
    "langchain": (
        True,
        'Trim before the call: `trim_messages(history, strategy="last", token_counter='
        'count_tokens_approximately, max_tokens=4000, start_on="human", include_system=True)`, or '
        "SummarizationMiddleware with a trigger. " + HISTORY_STAYS,
    ),
    "llamaindex": (
        False,
        "Use a token-limited memory: `ChatMemoryBuffer.from_defaults(token_limit=3000)` "
        "(or a summary memory) instead of the whole chat history. " + HISTORY_STAYS,
    ),
    "agents": (
        True,
        f"Send a bounded view of the input: `bounded_view(history, last_turns={WINDOW_TURNS})` from "
        "chatbound.compaction (the runner copies its input), or keep the conversation in a session with "
        "`session_settings=SessionSettings(limit=...)`. " + HISTORY_STAYS,
    ),
}


def framework_kind(finding) -> str:
    """plain, langchain, llamaindex, agents, or "" when the framework is one we do not edit."""
    name = str(finding.properties.get("framework", "")).lower().replace("-", "_")
    if not name or name.startswith(LIST_SDKS) and "agents" not in name:
        return "plain"
    for kind, prefixes in (
        ("langchain", ("langchain", "langgraph")),
        ("llamaindex", ("llama_index", "llamaindex")),
        ("agents", ("openai_agents", "agents")),
    ):
        if name.startswith(prefixes):
            return kind
    return ""


def sent_list(finding) -> tuple[bool, str | None]:
    """For a history ``finding`` sees sent as a list: whether the generic bounded_view wrap at the
    send serves it, and its framework's own advice (None: the generic advice; "": none)."""
    kind = framework_kind(finding)
    if kind == "plain":
        return True, None
    return LIST_ADVICE.get(kind, (False, ""))
