from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"  # the official OASIS schema

# In CI (`CI=true`) a framework or server the suite needs and cannot have is a failure: the test
# extra and tests/requirements/swarm.txt install all of them (.ci/run). Locally it is a skip saying why.
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
# Runtime tests whose framework conflicts with the test extra: .ci/run runs each in a virtualenv of
# its own, naming the file. A run of the whole suite in CI, without the framework, leaves them out.
OWN_VIRTUALENV = {"test_chainlit_runtime.py": "chainlit", "test_crewai_runtime.py": "crewai"}


def unavailable(reason: str):
    """What the test cannot have: in CI a failure, locally a skip (of the module, where called there)."""
    if IN_CI:
        pytest.fail(f"CI=true, and {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require(module: str, reason: str = ""):
    """`module`, imported; without it, `unavailable` (a failure in CI, locally a skip saying why).
    Unlike `pytest.importorskip`, CI never turns a missing framework into a green run."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        unavailable(
            f"{module} cannot be imported ({type(error).__name__}: {error})" + (f"; {reason}" if reason else "")
        )


def pytest_ignore_collect(collection_path, config):
    """In CI, a runtime test of OWN_VIRTUALENV is collected where its framework is installed or
    where the command names its file; anywhere else (the main suite's venv) it is left out."""
    module = OWN_VIRTUALENV.get(collection_path.name)
    if not IN_CI or module is None or importlib.util.find_spec(module) is not None:
        return None
    named = {Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args}
    return None if Path(collection_path).resolve() in named else True


@pytest.fixture
def write(tmp_path):
    """Write files into tmp_path: write({"a.py": "x = 1"}) -> tmp_path."""

    def _write(files: dict[str, str | bytes]) -> Path:
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return tmp_path

    return _write


def invoke(*args, cwd):
    """Run `chatbound ARGS` in-process from the folder `cwd` (the CLI reads paths from there)."""
    import os

    from click.testing import CliRunner

    from chatbound.interfaces.cli import main

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(old)
