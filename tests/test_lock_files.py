"""`--fix` never leaves a lock file stale: where uv.lock or poetry.lock governs the declaration,
the engine's declaration is an unsafe fix whose message names the one command that adds and
locks it, and after that command the real tool's locked checks pass. The engine comes from a
wheel built from this checkout, in a local index: the tools never reach the network."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import invoke, tool

SERVICE = (
    "from openai import OpenAI\n\n"
    "client = OpenAI()\n"
    "history = []\n\n\n"
    "def answer(question):\n"
    '    history.append({"role": "user", "content": question})\n'
    '    reply = client.chat.completions.create(model="gpt-4o", messages=history)\n'
    '    history.append({"role": "assistant", "content": reply.choices[0].message.content})\n'
)


@pytest.fixture(scope="module")
def index(engine_wheel, tmp_path_factory) -> Path:
    """A PEP 503 index holding only the engine's wheel, built from the checkout."""
    wheels = tmp_path_factory.mktemp("index")
    shutil.copy(engine_wheel, wheels)
    page = wheels / "simple" / "chatbound-compaction"
    page.mkdir(parents=True)
    name = engine_wheel.name
    (page / "index.html").write_text(f'<html><body><a href="../../{name}">{name}</a></body></html>\n')
    return wheels


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def served(index):
    """The index over HTTP on the loopback (Poetry's sources are URLs, and it reads no file:// index)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(index)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    server.shutdown()


def run(cwd: Path, *command: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "UV_OFFLINE": "1",
        "UV_PYTHON": sys.executable,
        "UV_CACHE_DIR": str(cwd.parent / "uv-cache"),
        "POETRY_CACHE_DIR": str(cwd.parent / "poetry-cache"),
        "POETRY_VIRTUALENVS_IN_PROJECT": "true",
        "POETRY_NO_INTERACTION": "1",
    }
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def fixed_with_unsafe(root: Path) -> str:
    """--fix alone changes nothing (the declaration is unsafe); --unsafe-fixes fixes the code and
    leaves the declaration to the tool, saying how."""
    fixed = invoke("check", "--fix", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert fixed.output.splitlines()[-1].endswith("1 fixable with `--fix --unsafe-fixes`.")
    assert (root / "bot.py").read_text() == SERVICE
    forced = invoke("check", "--fix", "--unsafe-fixes", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert "from chatbound.compaction import bounded_view" in (root / "bot.py").read_text()
    return forced.output


def test_a_uv_locked_project_is_told_uv_add_and_then_uv_sync_locked_passes(tmp_path, index):
    root = tmp_path / "desk"
    root.mkdir()
    pyproject = (
        '[project]\nname = "desk"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'
        f'[tool.uv]\nno-index = true\nfind-links = ["{index.as_posix()}"]\n'
    )
    (root / "pyproject.toml").write_text(pyproject)
    (root / "bot.py").write_text(SERVICE)
    assert run(root, tool("uv"), "lock").returncode == 0
    output = fixed_with_unsafe(root)
    advice = "run `uv add chatbound-compaction`: uv.lock governs pyproject.toml"
    assert f"warning: bot.py: the fixes import chatbound.compaction: {advice}" in output
    assert (root / "pyproject.toml").read_text() == pyproject  # before: edited, and the lock stale
    added = run(root, tool("uv"), "add", "chatbound-compaction")
    assert added.returncode == 0, added.stderr
    synced = run(root, tool("uv"), "sync", "--locked")
    assert synced.returncode == 0, synced.stderr
    imported = run(root, str(root / ".venv" / "bin" / "python"), "-c", "import chatbound.compaction")
    assert imported.returncode == 0, imported.stderr


def test_a_poetry_locked_project_is_told_poetry_add_and_then_poetry_check_lock_passes(tmp_path, served):
    root = tmp_path / "desk"
    root.mkdir()
    pyproject = (
        '[tool.poetry]\nname = "desk"\nversion = "0.1.0"\ndescription = ""\nauthors = []\npackage-mode = false\n\n'
        '[tool.poetry.dependencies]\npython = ">=3.10"\n\n'
        f'[[tool.poetry.source]]\nname = "engine"\nurl = "{served}"\npriority = "primary"\n'
    )
    (root / "pyproject.toml").write_text(pyproject)
    (root / "bot.py").write_text(SERVICE)
    locked = run(root, tool("poetry"), "lock")
    assert locked.returncode == 0, locked.stderr
    output = fixed_with_unsafe(root)
    advice = "run `poetry add chatbound-compaction`: poetry.lock governs pyproject.toml"
    assert f"warning: bot.py: the fixes import chatbound.compaction: {advice}" in output
    assert (root / "pyproject.toml").read_text() == pyproject
    added = run(root, tool("poetry"), "add", "chatbound-compaction")
    assert added.returncode == 0, added.stdout + added.stderr
    checked = run(root, tool("poetry"), "check", "--lock")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert 'name = "chatbound-compaction"' in (root / "poetry.lock").read_text()
