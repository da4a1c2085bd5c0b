"""The language server's answer to an edit: seconds from a `didChange` to the diagnostics of
that version, on the generated modules of `scaling.py` (many chat classes), printed beside
the same module checked once by `chatbound check` in the same run, and the target (1 s).

Two edits are timed: one to a module whose analysis is done (the user pauses, then types), and
one sent while the previous version is still being checked (the user types on): the second
must not wait for the stale analysis to finish.

    python benchmarks/lsp_latency.py [--lines 6700]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scaling import module

TARGET = 1.0  # seconds from an edit to its diagnostics


class Server:
    """`chatbound lsp` over pipes; reads until the message wanted arrives."""

    def __init__(self, cwd: Path) -> None:
        command = [sys.executable, "-m", "chatbound", "lsp"]
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, method: str, params: dict, request: bool = False) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        length = 0
        while (line := self.proc.stdout.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def published(self, version: int) -> None:
        while True:
            message = self.read()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["version"] == version:
                return

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def edit(server: Server, uri: str, version: int, text: str) -> None:
    server.send(
        "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=6_700)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chats.py"
        text = module(args.lines, 1)
        path.write_text(text)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "chatbound", "check", "--no-cache", "--exit-zero", "-q", str(path)],
            capture_output=True,
            check=True,
        )
        check = time.perf_counter() - start
        server = Server(Path(folder))
        try:
            server.send(
                "initialize", {"processId": None, "rootUri": Path(folder).as_uri(), "capabilities": {}}, request=True
            )
            server.send("initialized", {})
            uri = path.as_uri()
            server.send(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
            server.published(1)
            start = time.perf_counter()
            edit(server, uri, 2, text + "\n# one more line\n")
            server.published(2)
            paused = time.perf_counter() - start
            edit(server, uri, 3, text + "\n# typed\n")
            time.sleep(0.5)  # version 3 is being checked
            start = time.perf_counter()
            edit(server, uri, 4, text + "\n# typed on\n")
            server.published(4)
            typed_on = time.perf_counter() - start
        finally:
            server.close()
    lines = len(text.splitlines())
    print(f"{lines:,}-line module: `chatbound check` {check:.2f} s")
    for name, seconds in (("an edit after a pause", paused), ("an edit while the last one is checked", typed_on)):
        print(f"{name}: {seconds:.2f} s to its diagnostics ({seconds / check:.2f} of the check; target {TARGET:.1f} s)")
    return 0 if max(paused, typed_on) <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
