"""MCP (Model Context Protocol) tools: every tool a server registers, attached to an agent.

How many tools a server offers is known only when it runs; attached without a filter, the
agent gets all of them, today's and whatever the server adds later. Checked against
mcp 2.3.0, langchain-mcp-adapters 0.3.2, openai-agents 0.24.0 and google-adk 2.13.0:

- Calls that return every tool of a server: `ClientSession.list_tools()` (mcp
  client/session.py; the result's `.tools`), `MultiServerMCPClient.get_tools()` (all
  servers, or every tool of one with `server_name=`) and `load_mcp_tools(session)`
  (langchain_mcp_adapters client.py, tools.py). A comprehension with a condition over
  them (`[t for t in tools if t.name in NEEDED]`) chooses: not reported.
- Toolsets that offer every tool of their server unless given `tool_filter=`: ADK's
  `McpToolset` / deprecated `MCPToolset` (tools/mcp_tool/mcp_toolset.py) in `tools=[...]`;
  the Agents SDK's `MCPServerStdio`, `MCPServerSse`, `MCPServerStreamableHttp`
  (agents/mcp/server.py) in `Agent(mcp_servers=[...])` (agent.py).
"""

from __future__ import annotations

import re

import libcst as cst

from ..messages import callee_name
from ..sinks import keyword

TOOL_TRIGGERS = (re.compile(rb"\bmcp_servers\s*="),)
TOOL_KEYWORDS = ("mcp_servers",)  # Agents SDK Agent(mcp_servers=[...])
# callee -> the package (imported by the module) whose call returns every tool of a server
SERVER_TOOLS = {"list_tools": "mcp", "get_tools": "langchain_mcp_adapters", "load_mcp_tools": "langchain_mcp_adapters"}
TOOLSETS = {
    "McpToolset": "google.adk", "MCPToolset": "google.adk",
    "MCPServerStdio": "agents", "MCPServerSse": "agents", "MCPServerStreamableHttp": "agents",
}
FILTER = "tool_filter"
TOOLS_ADVICE = (
    "Attach only the tools this agent needs: `tool_filter=[...]` on the toolset or server (ADK `McpToolset`, "
    "Agents SDK `MCPServerStdio`/`MCPServerSse`/`MCPServerStreamableHttp`), or pick them by name "
    "(`[t for t in tools if t.name in NEEDED]`); a server's tool list can grow without a change here."
)


def _imports(imports: set[str], package: str) -> bool:
    return any(i == package or i.startswith(package + ".") for i in imports)


def server_tools(imports: set[str], call: cst.Call) -> str | None:
    """How a call that returns every tool of an MCP server reads in a message, or None."""
    name = callee_name(call)
    package = SERVER_TOOLS.get(name)
    if package is None or not _imports(imports, package):
        return None
    if isinstance(call.func, cst.Attribute):
        receiver = cst.Module([]).code_for_node(call.func.value)
        return f"every tool the MCP server{'s' if name == 'get_tools' else ''} of `{receiver}` register{'' if name == 'get_tools' else 's'} (`{receiver}.{name}()`)"
    return f"every tool the MCP server registers (`{name}(...)`)"


def toolset(imports: set[str], call: cst.Call) -> str | None:
    """How an MCP toolset without `tool_filter=` reads in a message, or None."""
    name = callee_name(call)
    package = TOOLSETS.get(name)
    if package is None or not _imports(imports, package) or keyword(call, FILTER) is not None:
        return None
    return f"every tool its MCP server registers (`{name}(...)` without `{FILTER}=`)"
