"""Well-known MCP servers and how many tools each offers, so a server attached whole can be
counted where its launch command names it (`MCPServerStdio('npx', ['-y', PACKAGE])`).

Each count was read in the server's source at the version named beside it (the tools its
list-tools handler returns, or its registered tools); a command pinned to another version
(`PACKAGE@1.2.0`) is not counted, since a server's tool list changes between versions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Server:
    name: str
    tools: int
    version: str


# modelcontextprotocol/servers: the servers archived on 2025-05-29 (d53d6cc7), read at its parent
# 1f705677 (npm 0.6.2, their last release), and the maintained ones at 76d64c82 (2026-07-29).
ARCHIVED, MAINTAINED = "0.6.2", "76d64c82"
SERVERS = {
    # src/brave-search/index.ts: ListTools returns [WEB_SEARCH_TOOL, LOCAL_SEARCH_TOOL]
    "@modelcontextprotocol/server-brave-search": Server("Brave Search", 2, ARCHIVED),
    # src/github/index.ts: ListTools returns 26 tools (create_or_update_file ... get_pull_request_reviews)
    "@modelcontextprotocol/server-github": Server("GitHub", 26, ARCHIVED),
    # src/slack/index.ts: ListTools returns 8 tools (listChannelsTool ... getUserProfileTool)
    "@modelcontextprotocol/server-slack": Server("Slack", 8, ARCHIVED),
    # src/puppeteer/index.ts: TOOLS holds 7 tools (puppeteer_navigate ... puppeteer_evaluate)
    "@modelcontextprotocol/server-puppeteer": Server("Puppeteer", 7, ARCHIVED),
    # src/google-maps/index.ts: MAPS_TOOLS holds 7 tools (GEOCODE_TOOL ... DIRECTIONS_TOOL)
    "@modelcontextprotocol/server-google-maps": Server("Google Maps", 7, ARCHIVED),
    # src/postgres/index.ts: ListTools returns one tool, `query`
    "@modelcontextprotocol/server-postgres": Server("PostgreSQL", 1, ARCHIVED),
    # src/filesystem/index.ts: 14 registerTool calls (read_file ... list_allowed_directories)
    "@modelcontextprotocol/server-filesystem": Server("filesystem", 14, MAINTAINED),
    # src/memory/index.ts: 9 registerTool calls (create_entities ... open_nodes)
    "@modelcontextprotocol/server-memory": Server("memory", 9, MAINTAINED),
    # src/sequentialthinking/index.ts: one registerTool call, `sequentialthinking`
    "@modelcontextprotocol/server-sequential-thinking": Server("sequential thinking", 1, MAINTAINED),
    # src/fetch/src/mcp_server_fetch/server.py: list_tools returns one Tool, `fetch`
    "mcp-server-fetch": Server("fetch", 1, MAINTAINED),
    # src/git/src/mcp_server_git/server.py: list_tools returns 12 Tools (GitTools: git_status ... git_branch)
    "mcp-server-git": Server("git", 12, MAINTAINED),
    # src/time/src/mcp_server_time/server.py: list_tools returns 2 Tools (get_current_time, convert_time)
    "mcp-server-time": Server("time", 2, MAINTAINED),
    # mendableai/firecrawl-mcp-server 1b9c89b5 (1.12.0), src/index.ts: ListTools returns 8 tools
    "firecrawl-mcp": Server("Firecrawl", 8, "1.12.0"),
    # domdomegg/airtable-mcp-server 8a759ba9 (1.14.0), src/tools/index.ts: registerAll registers 16 tools
    "airtable-mcp-server": Server("Airtable", 16, "1.14.0"),
}
# A clone of coleam00/mcp-mem0 run by path (`python .../mcp-mem0/main.py`): 22fb7af0, src/main.py
# registers 3 tools (save_memory, get_all_memories, search_memories); the repository has no releases.
CLONES = {re.compile(r"(?:^|/)mcp-mem0/(?:src/)?main\.py$"): Server("mem0", 3, "22fb7af0")}


def known_server(launch: list[str]) -> Server | None:
    """The one well-known server a launch command's words name, or None when they name none,
    several, or a version other than the one counted."""
    found = {SERVERS.get(_unpinned(word)) for word in launch} | {
        server for word in launch for pattern, server in CLONES.items() if pattern.search(word.replace("\\", "/"))
    }
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _unpinned(word: str) -> str:
    """`@scope/pkg@latest` -> `@scope/pkg`; a word pinned to another version than the one counted
    stays as it is (and names no server of the table)."""
    scope = "@" if word.startswith("@") else ""
    package, _, version = word.removeprefix("@").partition("@")
    server = SERVERS.get(scope + package)
    return scope + package if server is not None and version in ("", "latest", server.version) else word
