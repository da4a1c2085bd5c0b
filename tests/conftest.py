from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
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


if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# a hook pip and uv call to build a wheel: `build_wheel` for `install`, `build_editable` for `install -e`
BUILD = "import importlib, sys; getattr(importlib.import_module(sys.argv[1]), sys.argv[2])(sys.argv[3])"


def build(project: Path, hook: str, out: Path) -> subprocess.Popen:
    """Start the build backend that `project`'s pyproject.toml names on one hook, in a process of its
    own as pip and uv run it (setuptools cannot run two hooks in one), offline: the backend is the
    test extra's setuptools. The wheel lands in `out`."""
    backend = tomllib.loads((project / "pyproject.toml").read_text())["build-system"]["build-backend"]
    command = [sys.executable, "-c", BUILD, backend, hook, str(out)]
    return subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wheel_of(build_: subprocess.Popen, out: Path) -> Path:
    """The wheel a `build` into `out` made, once it is done."""
    stderr = build_.communicate(timeout=300)[1]
    assert build_.returncode == 0, stderr
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="session")
def engine_wheel(tmp_path_factory) -> Path:
    """The engine's wheel, built once a run from a copy of analyzer/compaction (the build writes
    its egg-info and build/ there, not into the checkout)."""
    source = tmp_path_factory.mktemp("engine-source")
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "analyzer" / "compaction", source, dirs_exist_ok=True, ignore=ignore)
    out = tmp_path_factory.mktemp("engine-wheel")
    return wheel_of(build(source, "build_wheel", out), out)


def tool(name: str) -> str:
    """A command the test extra installs (uv, poetry), beside this interpreter or on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is part of the test extra: pip install '.[test]'")
    return found


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
