"""A fixed app still deploys: `check --fix` on every app of fixtures/apps (requirements.txt apps
on the OpenAI SDK), then a fresh virtualenv installs each from its own requirements.txt alone,
offline (`--no-index`: the engine wheel built from this checkout and a stand-in SDK are the only
packages there), and the fixed module imports and answers, sending a bounded history. Every
fixture folder that declares dependencies is such an app, so none is left out."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, invoke

APPS = FIXTURES / "apps"
SDK = ROOT / "tests" / "data" / "fake_openai"
# Per app: twelve turns through its own entry point. Each reply says how many messages were sent.
TURNS = {
    "helpdesk": """
import helpdesk
for turn in range(1, 13):
    print(helpdesk.ask("ann", f"question {turn}"))
""",
    "tutor_cli": """
import tutor
t = tutor.Tutor()
for turn in range(1, 13):
    print(t.ask(f"question {turn}"))
""",
}
DECLARES = ("requirements*.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile")


def _run(*command, cwd=None):
    return subprocess.run(command, capture_output=True, text=True, check=True, cwd=cwd).stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    """The engine (copied out of the checkout first: no build/ left in it) and the stand-in SDK."""
    out = tmp_path_factory.mktemp("wheels")
    for name, source in (("engine", ROOT / "analyzer" / "compaction"), ("sdk", SDK)):
        copy = tmp_path_factory.mktemp("source") / name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        _run(
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(copy),
        )
    return out


def test_every_fixture_app_is_run_and_every_folder_declaring_dependencies_is_an_app():
    assert set(TURNS) == {p.name for p in APPS.iterdir() if p.is_dir()}
    declaring = {p.parent for pattern in DECLARES for p in FIXTURES.rglob(pattern)}
    assert declaring == {APPS / name for name in TURNS}


@pytest.mark.parametrize("name", sorted(TURNS))
def test_the_fixed_app_installs_from_its_own_requirements_offline_and_runs(name, wheels, tmp_path):
    app = Path(shutil.copytree(APPS / name, tmp_path / name))
    runtime = (app / "requirements.txt").read_text()
    fixed = invoke("check", "--fix", ".", cwd=app)
    assert fixed.exit_code == 0 and "Fixed 1 finding." in fixed.output
    assert (app / "requirements.txt").read_text() == runtime + "chatbound-compaction>=0.1.0\n"

    env = tmp_path / "env"
    venv.create(env, with_pip=True)
    python = str(env / "bin" / "python")
    _run(
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        str(wheels),
        "-r",
        str(app / "requirements.txt"),
    )
    installed = _run(python, "-m", "pip", "list", "--format=freeze", "--exclude", "pip", "--exclude", "setuptools")
    assert installed.split() == ["chatbound-compaction==0.1.0", "openai==1.99.0"]  # no analyzer, no LibCST

    replies = _run(python, "-c", TURNS[name], cwd=app).splitlines()
    assert replies[0] == "gpt-4o-mini read 2 messages"  # the system prompt and the first question
    assert replies[-1] == "gpt-4o-mini read 20 messages"  # turn 12 without the fix: 24
