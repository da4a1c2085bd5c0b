"""`chatbound lsp` over stdio, driven the way an editor drives it: JSON-RPC with
Content-Length framing, initialize, didOpen/didChange/didSave, codeAction, shutdown, exit."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURES
from lsprotocol import types
from pygls.workspace import TextDocument

from chatbound.findings import Edit, Finding, Fix, Severity, Span
from chatbound.interfaces.lsp import fix_action, in_document, to_range

TIMEOUT = 20  # seconds for any one message; the whole test never hangs

SOURCE = (
    "TOP_K = 30\n"
    "docs = llm.invoke(store.similarity_search(q, k=TOP_K))\n"
    "small = llm.invoke(store.similarity_search(q, k=20))\n"
    'x = "\U0001f600"; more = llm.invoke(store.similarity_search(q, k=40))\n'
)


class Client:
    """A minimal LSP client: one reader thread, messages queued, every wait bounded."""

    def __init__(self, cwd) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chatbound", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            self.messages.put(json.loads(stream.read(int(headers["content-length"]))))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict | None = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: dict | None = None):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, **({"params": params} if params is not None else {})})
        response = self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in response, response
        return response["result"]

    def wait(self, wanted, seen: list | None = None) -> dict:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("no answer from the language server in time") from None
            if wanted(message):
                return message
            if seen is not None:
                seen.append(message)

    def diagnostics(self, uri: str, seen: list | None = None) -> dict:
        return self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, seen
        )["params"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


@pytest.fixture
def client(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.chatbound.options]\nmax-top-k = 25\n")
    started = Client(tmp_path)
    yield started
    started.close()


def lsp_range(line, start, end_line, end) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}


def test_a_session_gets_diagnostics_on_open_change_and_save_and_quick_fixes(client, tmp_path):
    capabilities = client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    assert capabilities["serverInfo"]["name"] == "chatbound"
    assert capabilities["capabilities"]["codeActionProvider"]["codeActionKinds"] == ["quickfix"]
    client.notify("initialized", {})
    path = tmp_path / "app.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE},
        },
    )

    published = client.diagnostics(uri)
    assert published["version"] == 1
    # k=20 on line 3 is within max-top-k = 25 from pyproject.toml: not reported
    first, second = published["diagnostics"]
    assert first["code"] == "RAG-EXCESSIVE-TOP-K" and first["source"] == "chatbound"
    assert (
        first["codeDescription"]["href"]
        == "https://github.com/chatbound/chatbound/blob/main/docs/rules/RAG-EXCESSIVE-TOP-K.md"
    )
    assert first["severity"] == 2  # medium -> Warning
    assert first["range"] == lsp_range(1, 45, 1, 52)
    assert first["message"].startswith(
        "30 retrieved results per query reach the model here (k=30, from TOP_K = 30 (line 1))"
    )
    assert first["relatedInformation"] == [
        {"location": {"uri": uri, "range": lsp_range(0, 8, 0, 10)}, "message": "k is set here"},
    ]
    # after an emoji (one code point, two UTF-16 units) the character offsets shift by one
    assert second["range"] == lsp_range(3, 55, 3, 59)

    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": lsp_range(1, 47, 1, 47),
            "context": {"diagnostics": [first]},
        },
    )
    assert [(a["title"], a["kind"]) for a in actions] == [
        ("chatbound: ignore RAG-EXCESSIVE-TOP-K on this line", "quickfix"),
    ]
    assert actions[0]["edit"]["changes"][uri] == [
        {
            "range": lsp_range(1, 0, 1, 54),
            "newText": "docs = llm.invoke(store.similarity_search(q, k=TOP_K))  # chatbound: ignore[RAG-EXCESSIVE-TOP-K]",
        }
    ]
    assert actions[0]["diagnostics"][0]["code"] == "RAG-EXCESSIVE-TOP-K"

    # two quick edits: the first is superseded within the debounce window and never published
    for version, text in ((2, "35"), (3, "4")):
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": lsp_range(3, 57, 3, 59), "text": text}],
            },
        )
    seen: list = []
    after_change = client.diagnostics(uri, seen)
    assert after_change["version"] == 3
    assert [d["range"] for d in after_change["diagnostics"]] == [lsp_range(1, 45, 1, 52)]
    assert not [m for m in seen if m.get("method") == "textDocument/publishDiagnostics"]

    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri)["version"] == 3

    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri)["diagnostics"] == []

    assert client.request("shutdown") is None
    client.notify("exit")
    assert client.proc.wait(timeout=TIMEOUT) == 0


CHAT_CLASS = """
class Chat{i}:
    def __init__(self, client):
        self.client = client
        self.history = []

    def ask(self, text):
        self.history.append({{"role": "user", "content": text}})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=self.history)
        self.history.append({{"role": "assistant", "content": reply.choices[0].message.content}})
        return reply
"""


def test_an_edit_stops_the_analysis_of_the_text_it_replaced_and_only_the_new_text_is_published(client, tmp_path):
    """A module of 300 chat classes takes seconds to check; the edit that replaces it arrives
    while it is checked: that analysis stops at its next step, says so in the log, and the
    first diagnostics published are the new text's."""
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    path = tmp_path / "big.py"
    big = "".join(CHAT_CLASS.format(i=i) for i in range(300))
    path.write_text(big, encoding="utf-8")
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": big}}
    )
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SOURCE}]},
    )
    seen: list = []
    published = client.diagnostics(uri, seen)
    assert published["version"] == 2
    assert [d["code"] for d in published["diagnostics"]] == ["RAG-EXCESSIVE-TOP-K", "RAG-EXCESSIVE-TOP-K"]
    logged = [m["params"]["message"] for m in seen if m.get("method") == "window/logMessage"]
    assert logged == [f"chatbound: stopped checking {uri}: it changed"]
    assert client.request("shutdown") is None


def test_a_send_in_another_module_is_shown_and_goes_away_when_that_module_bounds_it(client, tmp_path):
    """fixtures/project/send_elsewhere: bot.py grows a per-user list and hands it to llm.chat,
    which sends it whole. The finding rests on llm.py (a related location there); bounding the
    send in llm.py's buffer, unsaved, republishes bot.py without it."""
    app = tmp_path / "app"
    shutil.copytree(FIXTURES / "project" / "send_elsewhere", app)
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    bot, llm = (app / "bot.py").as_uri(), (app / "llm.py").as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": bot, "languageId": "python", "version": 1, "text": (app / "bot.py").read_text()}},
    )

    (finding,) = client.diagnostics(bot)["diagnostics"]
    assert finding["code"] == "MEMORY-UNBOUNDED-HISTORY"
    assert finding["range"] == lsp_range(10, 18, 10, 25)  # `history` in `chat(history)`
    elsewhere = [r for r in finding["relatedInformation"] if r["location"]["uri"] != bot]
    assert elsewhere == [
        {
            "location": {"uri": llm, "range": lsp_range(8, 11, 8, 73)},
            "message": "`history` is sent whole to openai.chat.completions.create here",
        }
    ]

    text = (app / "llm.py").read_text()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": llm, "languageId": "python", "version": 1, "text": text}}
    )
    assert client.diagnostics(llm)["diagnostics"] == []
    start = text.splitlines()[8].index("messages=messages") + len("messages=messages")
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": llm, "version": 2},
            "contentChanges": [{"range": lsp_range(8, start, 8, start), "text": "[-20:]"}],
        },
    )
    assert client.diagnostics(bot)["diagnostics"] == []  # the file on disk still sends it whole
    assert "[-20:]" not in (app / "llm.py").read_text()

    client.notify("textDocument/didClose", {"textDocument": {"uri": llm}})  # back to the file as saved
    assert client.diagnostics(llm)["diagnostics"] == []
    assert [d["code"] for d in client.diagnostics(bot)["diagnostics"]] == ["MEMORY-UNBOUNDED-HISTORY"]
    assert client.request("shutdown") is None


def test_a_bad_config_is_shown_once_and_the_server_keeps_running(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.chatbound]\nselec = ['RAG']\n")
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    uri = (tmp_path / "app.py").as_uri()
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE},
        },
    )
    shown = client.wait(lambda m: m.get("method") == "window/showMessage")
    assert shown["params"]["type"] == 1 and "unknown key `selec` in [tool.chatbound]" in shown["params"]["message"]
    assert client.diagnostics(uri)["diagnostics"] == []
    assert client.request("shutdown") is None


def test_a_fix_becomes_a_workspace_edit_in_utf16_positions():
    document = TextDocument("file:///app.py", 'x = "\U0001f600"; history = messages\n')
    finding = Finding(
        rule_id="RAG-EXCESSIVE-TOP-K",
        severity=Severity.MEDIUM,
        message="m",
        path="app.py",
        span=Span(1, 20, 1, 28),
        fix=Fix("Send the last 20 messages", (Edit(Span(1, 20, 1, 28), "messages[-20:]"),), safe=True),
    )
    diag = types.Diagnostic(range=to_range(finding.span, document), message="m")
    action = fix_action(finding, in_document(document), diag)
    assert action.title == "chatbound: Send the last 20 messages"
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred is True
    (edit,) = action.edit.changes["file:///app.py"]
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character) == (0, 20, 28)
    assert edit.new_text == "messages[-20:]"
