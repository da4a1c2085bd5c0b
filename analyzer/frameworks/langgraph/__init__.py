"""LangGraph and LangChain v1 agents: graph state, checkpointers, agents and handoffs.

Checked against langgraph 1.2.24, langgraph-prebuilt 1.1.3, langchain 1.5.2, langchain-core
1.8.4, langgraph-supervisor 0.0.31 and langgraph-swarm 0.1.0; each module names the versions
its facts were read in, and the file beside each fact.

This is the face `chatbound.frameworks` and the project pass (`chatbound.analysis.project.users`)
read: the names the framework model declares (see `chatbound.frameworks`), from the modules
named for what they model, each importing only modules listed before it:

- `graphs`: a module's graphs: the message-state classes and reducers, the nodes given to
  `add_node`, `compile(checkpointer=...)`, a notebook's graph run once.
- `project`: the same across modules and `langgraph.json` (`defines`, `uses`, `deployed`).
- `state`: the message state as a conversation: its storage, growth and bounds (`RemoveMessage`,
  `Overwrite`, trims), where a value carries all of it, the `trim_messages` fix at a node's send.
- `chains`: prompt chains a node invokes with its whole state (`MessagesPlaceholder`).
- `prebuilt`: `create_react_agent` / `create_agent` with a checkpointer (`pre_model_hook`,
  middleware), and the framework's `fix`.
- `supervisors`: handoffs between graph agents (`Send`, `Command`, langgraph-supervisor,
  langgraph-swarm, a specialist a routing tool call picks) and `exports`.
- `functional`: the `@entrypoint` functional API, a framework module of its own in
  `chatbound.frameworks.MODULES`.
"""

from __future__ import annotations

from chatbound.frameworks.langgraph.graphs import (
    CHAIN_TAG,
    DEPLOYMENT_FILE,
    FACTORY_TAG,
    INSPECTS,
    MESSAGE_REDUCER,
    MESSAGE_STATE_NAMES,
    MESSAGE_STATES,
    NODE_FACTORY_TAG,
    NODE_TAG,
    ROUTER_TAG,
    RUNS,
    SAVER_TAG,
    SERVED_TAG,
    STATE_TAG,
    TOOL_NAMES,
    Graph,
    graph,
    runs_elsewhere,
)
from chatbound.frameworks.langgraph.prebuilt import (
    AGENT_ADVICE,
    AGENTS,
    CALLS,
    HOOK,
    NOT_TRIMMING,
    REACT_ADVICE,
    TRIGGERS,
    fix,
    memories,
)
from chatbound.frameworks.langgraph.project import PROJECT_TRIGGERS, defines, deployed, uses
from chatbound.frameworks.langgraph.state import (
    ADVICE,
    HANDOFF_KEYS,
    KINDS,
    NODE_ADVICE,
    TRIM,
    collect,
    state_messages,
    storage,
)
from chatbound.frameworks.langgraph.supervisors import (
    HANDOFF_ADVICE,
    HANDOFF_CALLS,
    HANDOFF_TRIGGERS,
    ROUTED_ADVICE,
    exports,
    handoffs,
    route_schemas,
)
from chatbound.frameworks.langgraph.threads import THREAD_KEYS as CONVERSATION_KEY_NAMES
from chatbound.frameworks.langgraph.threads import conversation_key

__all__ = [
    # graphs
    "CHAIN_TAG",
    "DEPLOYMENT_FILE",
    "FACTORY_TAG",
    "INSPECTS",
    "MESSAGE_REDUCER",
    "MESSAGE_STATE_NAMES",
    "MESSAGE_STATES",
    "NODE_FACTORY_TAG",
    "NODE_TAG",
    "ROUTER_TAG",
    "RUNS",
    "SAVER_TAG",
    "SERVED_TAG",
    "STATE_TAG",
    "TOOL_NAMES",
    "Graph",
    "graph",
    "runs_elsewhere",
    # project
    "PROJECT_TRIGGERS",
    "defines",
    "deployed",
    "uses",
    # state
    "ADVICE",
    "HANDOFF_KEYS",
    "KINDS",
    "NODE_ADVICE",
    "TRIM",
    "collect",
    "state_messages",
    "storage",
    # prebuilt
    "AGENT_ADVICE",
    "AGENTS",
    "CALLS",
    "HOOK",
    "NOT_TRIMMING",
    "REACT_ADVICE",
    "TRIGGERS",
    "fix",
    "memories",
    # supervisors
    "HANDOFF_ADVICE",
    "HANDOFF_CALLS",
    "HANDOFF_TRIGGERS",
    "ROUTED_ADVICE",
    "exports",
    "handoffs",
    # threads
    "CONVERSATION_KEY_NAMES",
    "conversation_key",
    "route_schemas",
]
