"""The real MCP client and server over an in-memory session, a recording model: a client that
sends every tool `session.list_tools()` returns sends as many as the server registers, and more
as soon as the server adds one, with no change in the client; the filter chatbound suggests
(`[t for t in response.tools if t.name in NEEDED]`) sends the same few whatever the server holds
and is not reported."""

from __future__ import annotations

import asyncio
import sys
from types import SimpleNamespace

from conftest import require

require("mcp.server.mcpserver", reason="the in-memory Client and MCPServer of mcp 2.x")
from mcp import Client  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

APP = """\
from anthropic import Anthropic
from mcp import ClientSession


class Desk:
    def __init__(self, session: ClientSession):
        self.session = session
        self.anthropic = Anthropic()

    async def answer(self, messages: list) -> str:
        response = await self.session.list_tools()
        tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                 for t in response.tools]
        reply = self.anthropic.messages.create(model="claude-sonnet-4-5", max_tokens=1000, messages=messages, tools=tools)
        return reply.content[0].text
"""
FILTERED = APP.replace("for t in response.tools]", "for t in response.tools if t.name in NEEDED]").replace(
    "\n\nclass Desk:", '\nNEEDED = {"read_file", "search_files"}\n\n\nclass Desk:'
)
SERVED = (
    "read_file",
    "search_files",
    "write_file",
    "move_file",
    "list_directory",
    "create_directory",
    "get_file_info",
    "list_allowed_directories",
)
LATER = ("delete_file", "zip_directory", "tail_file", "edit_file")


class Recording:
    """Stands in for `anthropic.Anthropic`: answers every call and keeps the tool names each one sent."""

    sent: list[list[str]] = []

    def __init__(self) -> None:
        self.messages = self

    def create(self, model, max_tokens, messages, tools):
        self.sent.append(sorted(tool["name"] for tool in tools))
        return SimpleNamespace(content=[SimpleNamespace(text="Done.")])


def run(source: str, monkeypatch) -> list[list[str]]:
    """The tools sent on two turns against a server of eight tools, then on two more after the
    server registers four more."""
    monkeypatch.setitem(sys.modules, "anthropic", SimpleNamespace(Anthropic=Recording))
    monkeypatch.setattr(Recording, "sent", [])
    namespace: dict = {}
    exec(compile(source, "desk.py", "exec"), namespace)
    server = MCPServer("files")

    def register(names) -> None:
        for name in names:
            server.add_tool(lambda path: path, name=name, description=f"{name.replace('_', ' ')} under the root.")

    async def chat() -> None:
        register(SERVED)
        async with Client(server) as client:
            desk = namespace["Desk"](client.session)
            for turn in range(4):
                if turn == 2:
                    register(LATER)
                await desk.answer([{"role": "user", "content": f"question {turn}"}])

    asyncio.run(chat())
    return Recording.sent


def test_every_tool_the_server_lists_is_sent_and_the_filter_sends_only_the_needed_ones(monkeypatch):
    rules = [r for r in all_rules() if r.ID == "TOOLS-ALL-REGISTERED"]
    [finding] = analyze_source(APP, "desk.py", rules).findings
    assert (finding.span.line, finding.span.col) == (14, 111)
    sent = run(APP, monkeypatch)
    assert [len(tools) for tools in sent] == [8, 8, 12, 12]  # the server grew; the client did not change
    assert analyze_source(FILTERED, "desk.py", rules).findings == []
    assert run(FILTERED, monkeypatch) == [["read_file", "search_files"]] * 4
