"""MCP (Model Context Protocol) tools: every tool a server registers, attached to an agent.

How many tools a server offers is known only when it runs; attached without a filter, the
agent gets all of them, today's and whatever the server adds later. Checked against
mcp 2.3.0, langchain-mcp-adapters 0.3.2, openai-agents 0.24.0, google-adk 0.5.0 and 2.13.0,
pydantic-ai-slim 0.2.4, 1.0.0 and 2.68.0, and smolagents 1.26.0:

- Calls that return every tool of a server: `ClientSession.list_tools()` (mcp
  client/session.py; the result's `.tools`), `MultiServerMCPClient.get_tools()` (all
  servers, or every tool of one with `server_name=`) and `load_mcp_tools(session)`
  (langchain_mcp_adapters client.py, tools.py). A comprehension with a condition over
  them (`[t for t in tools if t.name in NEEDED]`) chooses: not reported.
- Toolsets that offer every tool of their server unless given `tool_filter=`: ADK's
  `McpToolset` / deprecated `MCPToolset` (tools/mcp_tool/mcp_toolset.py) in `tools=[...]`;
  the Agents SDK's `MCPServerStdio`, `MCPServerSse`, `MCPServerStreamableHttp`
  (agents/mcp/server.py) in `Agent(mcp_servers=[...])` (agent.py).
- ADK 0.x: `tools, exit_stack = await MCPToolset.from_server(connection_params=...)`
  (tools/mcp_tool/mcp_toolset.py, "Retrieve all tools from the MCP connection"; no filter).
- Pydantic AI: `MCPServerStdio`, `MCPServerSSE`, `MCPServerHTTP` (0.x, 1.x) and
  `MCPServerStreamableHTTP` (1.x) (mcp.py) in `Agent(mcp_servers=[...])` (0.x; deprecated in
  1.x) or `Agent(toolsets=[...])` (1.x agent/__init__.py); 2.x replaced them with `MCPToolset`
  and `load_mcp_toolsets(config)` (every server of a config file). `server.filtered(fn)`
  (toolsets/abstract.py, 1.x and 2.x) is a filtered toolset, no longer the whole server.
- smolagents: `MCPClient(...).get_tools()` and `with MCPClient(...) as tools` (mcp_client.py:
  `__enter__` returns the tools), and `with ToolCollection.from_mcp(...) as c` whose
  `c.tools` are every tool of the server (tools.py).
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.sinks import keyword

TOOL_TRIGGERS = (re.compile(rb"\b(?:mcp_servers|toolsets)\s*="),)
TOOL_KEYWORDS = ("mcp_servers", "toolsets")  # Agents SDK and Pydantic AI 0.x mcp_servers=, Pydantic AI 1.x toolsets=
# callee -> the packages (one imported by the module) whose call returns every tool of a server
SERVER_TOOLS = {
    "list_tools": ("mcp",),
    "get_tools": ("langchain_mcp_adapters", "smolagents"),
    "load_mcp_tools": ("langchain_mcp_adapters",),
    "from_server": ("google.adk",),
    "MCPClient": ("smolagents",),
    "from_mcp": ("smolagents",),
    "load_mcp_toolsets": ("pydantic_ai",),
}
TOOLSETS = {
    "McpToolset": ("google.adk",),
    "MCPToolset": ("google.adk", "pydantic_ai"),
    "MCPServerStdio": ("agents", "pydantic_ai"),
    "MCPServerSse": ("agents",),
    "MCPServerStreamableHttp": ("agents",),
    "MCPServerSSE": ("pydantic_ai",),
    "MCPServerHTTP": ("pydantic_ai",),
    "MCPServerStreamableHTTP": ("pydantic_ai",),
}
# The clients that launch the servers a listing call lists, and the argument holding the launch
# parameters (a list of them, or for `MultiServerMCPClient` a dict of them by server name):
# langchain-mcp-adapters client.py at 0204c32a (MultiServerMCPClient(connections: dict[str, Connection]),
# get_tools(*, server_name=None) lists every server's or that one's); smolagents 1.26.0 mcp_client.py
# (MCPClient(server_parameters: StdioServerParameters | dict | list[...])); mcp 2.3.0 client/stdio.py
# (stdio_client(server: StdioServerParameters) yields the streams `ClientSession(read, write)` reads).
SERVER_LAUNCHERS = {
    "MultiServerMCPClient": ("connections", True),
    "MCPClient": ("server_parameters", False),
    "stdio_client": ("server", False),
}
SERVER_SESSIONS = ("ClientSession",)
# A server object defined in the module, given to a toolset in-process (pydantic-ai 2.33.0 mcp.py:699,
# `MCPToolsetClient` takes an in-process `FastMCP`): its tools are the functions it registers
# (`@mcp.tool`). FastMCP's own package and mcp 2.3.0's `mcp.server.fastmcp.FastMCP`.
SERVER_OBJECTS = {"FastMCP": ("fastmcp", "mcp.server.fastmcp", "mcp.server")}
FILTER = "tool_filter"
TOOLS_ADVICE = (
    "Attach only the tools this agent needs: `tool_filter=[...]` on the toolset or server (ADK `McpToolset`, "
    "Agents SDK `MCPServerStdio`/`MCPServerSse`/`MCPServerStreamableHttp`), `server.filtered(...)` (Pydantic AI), "
    "or pick them by name "
    "(`[t for t in tools if t.name in NEEDED]`); a server's tool list can grow without a change here."
)


def _imports(imports: set[str], packages: tuple[str, ...]) -> bool:
    return any(i == p or i.startswith(p + ".") for i in imports for p in packages)


def server_tools(imports: set[str], call: cst.Call) -> str | None:
    """How a call that returns every tool of an MCP server reads in a message, or None."""
    name = callee_name(call)
    packages = SERVER_TOOLS.get(name)
    if packages is None or not _imports(imports, packages):
        return None
    if isinstance(call.func, cst.Attribute) and name in ("list_tools", "get_tools"):
        receiver = cst.Module([]).code_for_node(call.func.value)
        return f"every tool the MCP server{'s' if name == 'get_tools' else ''} of `{receiver}` register{'' if name == 'get_tools' else 's'} (`{receiver}.{name}()`)"
    return f"every tool the MCP server registers (`{cst.Module([]).code_for_node(call.func)}(...)`)"


def toolset(imports: set[str], call: cst.Call) -> str | None:
    """How an MCP toolset without `tool_filter=` (nor Pydantic AI's `.filtered()`, which wraps it) reads in a
    message, or None."""
    name = callee_name(call)
    packages = TOOLSETS.get(name)
    if packages is None or not _imports(imports, packages) or keyword(call, FILTER) is not None:
        return None
    return f"every tool its MCP server registers (`{name}(...)`, unfiltered)"
