"""LangGraph's and LangChain v1's prebuilt agents: `create_react_agent` and `create_agent` with a
checkpointer keep every message of a thread and send all of it unless a hook or a middleware
trims; and the framework's `fix`, for these agents and for a node's send (`state.py`).

Checked against langgraph-prebuilt 1.1.3 and langchain 1.5.2; the file is named beside each fact
below.

- Agents: `create_react_agent(model, tools, checkpointer=...)` (langgraph-prebuilt
  chat_agent_executor.py) sends `state["messages"]` unless a `pre_model_hook` returns
  `llm_input_messages`; `create_agent(..., checkpointer=..., middleware=[...])` (langchain
  agents/factory.py) sends all of it unless a middleware trims. `SummarizationMiddleware`
  needs `trigger=` (or the deprecated `max_tokens_before_summary=`): without one
  `_should_summarize` is always False (agents/middleware/summarization.py).
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from chatbound.fixes.edits import TRIM_IMPORTS, replace_span
from chatbound.frameworks.langgraph.chains import _whole_state_chains
from chatbound.frameworks.langgraph.state import NODE_ADVICE, TRIM, _span, _trimmed_send
from chatbound.frameworks.vocabulary import Kept
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import keyword

TRIGGERS = (re.compile(rb"\b(?:create_react_agent|create_agent)[\s)]*\("),)
CALLS = frozenset({"create_react_agent", "create_agent", "compile"})  # `compile`: a graph's (graphs.py)
AGENTS = {"create_react_agent": "langgraph.prebuilt", "create_agent": "langchain.agents"}
# langchain 1.5.2 agents/middleware/__init__.py: the built-in middlewares that do not shorten
# what the model is sent (ContextEditingMiddleware clears old tool results only, past 100,000
# tokens by default, and keeps every other message).
NOT_TRIMMING = frozenset(
    """HumanInTheLoopMiddleware ModelCallLimitMiddleware ToolCallLimitMiddleware ModelFallbackMiddleware
    PIIMiddleware TodoListMiddleware ModelRetryMiddleware ToolRetryMiddleware LLMToolSelectorMiddleware
    LLMToolEmulator ContextEditingMiddleware ShellToolMiddleware FilesystemFileSearchMiddleware
    ModelRouterMiddleware ModelRefusalMiddleware ToolErrorMiddleware AutoModeMiddleware
    ProviderToolSearchMiddleware""".split()
)
HOOK = 'lambda state: {{"llm_input_messages": {trim}}}'.format(trim=TRIM.format(messages='state["messages"]'))
REACT_ADVICE = (
    'Give the agent a `pre_model_hook` that returns `{"llm_input_messages": trim_messages(state["messages"], '
    'strategy="last", token_counter=count_tokens_approximately, max_tokens=4000, start_on="human", '
    "include_system=True)}`: the model gets the last whole turns, the checkpointer keeps every message."
)
AGENT_ADVICE = (
    'Add a middleware that bounds what the model is sent: `SummarizationMiddleware(model=..., trigger=("tokens", '
    '4000), keep=("messages", 20))` (`from langchain.agents.middleware import SummarizationMiddleware`), or a '
    '`@before_model` middleware that trims `state["messages"]` with `trim_messages(..., start_on="human")`.'
)


# --- agents that keep a conversation ---------------------------------------------------------


def memories(facts) -> list[Kept]:
    """`create_react_agent` / `create_agent` with a checkpointer and nothing that trims, and
    prompt chains a node invokes with the whole checkpointed state."""
    if not any(i.startswith(("langgraph", "langchain")) for i in facts.nodes.imports):
        return []
    found = _whole_state_chains(facts)
    for call in facts.nodes.calls:
        name = callee_name(call)
        if name not in AGENTS or not any(q.startswith(AGENTS[name]) for q in facts.qualified(call.func)):
            continue
        saver = keyword(call, "checkpointer")
        if saver is None or isinstance(saver.value, cst.Name) and saver.value.value in ("None", "False"):
            continue
        saver_text = facts.code(saver.value)
        if name == "create_react_agent":
            if keyword(call, "pre_model_hook") is not None:
                continue
            why = "and no `pre_model_hook` trims what the model gets"
            advice = REACT_ADVICE
        else:
            why = _untrimmed_middleware(facts, keyword(call, "middleware"))
            if why is None:
                continue
            advice = AGENT_ADVICE
        found.append(
            Kept(
                call,
                f"`{name}(..., checkpointer={saver_text})` keeps every message of a thread {why}: each turn sends "
                "the whole thread to the model again",
                advice,
                {"framework": "langgraph", "history": name, "storage": "framework", "sink": name},
            )
        )
    return found


def _untrimmed_middleware(facts, middleware: cst.Arg | None) -> str | None:
    """Why the agent's middleware does not bound what the model gets, or None when it may."""
    if middleware is None:
        return "and no middleware trims what the model gets"
    if not isinstance(middleware.value, (cst.List, cst.Tuple)):
        return None  # built elsewhere: it may trim
    untriggered = False
    for element in middleware.value.elements:
        value = element.value
        name = callee_name(value) if isinstance(value, cst.Call) else ""
        if name == "SummarizationMiddleware":
            if keyword(value, "trigger") or keyword(value, "max_tokens_before_summary"):
                return None
            untriggered = True
        elif name not in NOT_TRIMMING:
            return None  # a middleware of the project's own (or a decorated hook): it may trim
    if untriggered:
        return "and its `SummarizationMiddleware` has no `trigger=`, so it never summarizes (langchain 1.x)"
    return "and none of its middleware trims what the model gets"


# --- fixes ----------------------------------------------------------------------------------------


def fix(finding, module: cst.Module, wrapper, lines):
    """A node's send of checkpointed state: `trim_messages(...)` around it; a prebuilt agent
    with a checkpointer: a trimming `pre_model_hook`; `create_agent`: advice."""
    properties = finding.properties
    if properties.get("storage") in ("checkpoint", "platform"):
        return _trimmed_send(finding, module, wrapper, lines), NODE_ADVICE
    if properties.get("framework") != "langgraph":
        return None
    if properties.get("history") == "create_react_agent":
        return _trimming_hook(finding, module, wrapper, lines), REACT_ADVICE
    return None, AGENT_ADVICE


def _trimming_hook(finding, module, wrapper, lines):
    """`create_react_agent(...)` -> the same call with a `pre_model_hook` that trims."""
    positions = wrapper.resolve(PositionProvider)
    call = next((n for n in positions if isinstance(n, cst.Call) and _span(positions[n]) == finding.span), None)
    if call is None or keyword(call, "state_schema") is not None or any(a.star for a in call.args):
        return None
    args = list(call.args)
    if args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    hook = cst.Arg(
        cst.parse_expression(HOOK),
        keyword=cst.Name("pre_model_hook"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    fixed = call.with_changes(args=[*args, hook])
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        module.code_for_node(fixed),
        TRIM_IMPORTS,
        'Add a pre_model_hook that sends trim_messages(state["messages"], ...) as llm_input_messages: the model '
        "gets the last whole turns under 4,000 tokens, the checkpointer still keeps every message",
        safe=True,
    )
