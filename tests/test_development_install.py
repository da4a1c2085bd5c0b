"""An editable install of either distribution beside a regular install of the other (or both
editable) imports chatbound and runs it. setuptools lays out an editable install as an import
hook placed after the path search, not as a folder: while the analyzer shipped a
`chatbound/__init__.py`, a regular engine's `site-packages/chatbound/compaction/` (or an editable
engine's namespace hook) made `chatbound` a namespace package before the hook was asked, the
analyzer's `__init__.py` never ran, and `from chatbound import __version__` failed. Neither
distribution ships one now: `chatbound` is a namespace package however each is installed.

Each case is a fresh virtualenv. The wheels, regular and editable, are built from a copy of the
checkout by the backend each pyproject.toml names (setuptools, in the test extra, offline) and
installed by uv (in the test extra) without dependencies; the virtualenv reads those from this
environment's site-packages, with every file of chatbound's left out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest
from conftest import ROOT, build, tool, wheel_of

from chatbound.version import __version__

PROJECTS = {"analyzer": Path("."), "engine": Path("analyzer", "compaction")}
PROBE = (
    "import json, chatbound.compaction, chatbound.rules, chatbound.interfaces.cli as cli\n"
    "print(json.dumps({'engine': chatbound.compaction.__file__, 'rules': chatbound.rules.__file__, 'cli': cli.__file__}))"
)
CASES = {
    "editable analyzer, regular engine": {"analyzer": "editable", "engine": "regular"},
    "regular analyzer, editable engine": {"analyzer": "regular", "engine": "editable"},
    "both editable": {"analyzer": "editable", "engine": "editable"},
}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """What the two distributions build from, copied: an editable install points here, and the
    builds write their egg-info here, not into the checkout."""
    copy = tmp_path_factory.mktemp("checkout")
    for folder in ("analyzer", "rules"):
        shutil.copytree(
            ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
        )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    return copy


@pytest.fixture(scope="module")
def wheels(checkout, engine_wheel, tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(distribution, "regular" or "editable") -> its wheel, as pip or uv would build it; the
    three besides the run's engine wheel build at once."""
    out = tmp_path_factory.mktemp("wheels")
    hooks = {"regular": "build_wheel", "editable": "build_editable"}
    wanted = [("analyzer", "regular"), ("analyzer", "editable"), ("engine", "editable")]
    builds = {(name, kind): build(checkout / PROJECTS[name], hooks[kind], out / name / kind) for name, kind in wanted}
    return {("engine", "regular"): engine_wheel} | {
        (name, kind): wheel_of(started, out / name / kind) for (name, kind), started in builds.items()
    }


@pytest.fixture(scope="module")
def dependencies(tmp_path_factory) -> Path:
    """This environment's site-packages without chatbound's files (its packages, metadata and
    editable hooks) nor .pth files: the virtualenvs import the dependencies from here."""
    view = tmp_path_factory.mktemp("dependencies")
    for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for entry in Path(site).iterdir():
            if not entry.name.startswith(("chatbound", "__editable__")) and entry.suffix != ".pth":
                (view / entry.name).symlink_to(entry)
    return view


def test_every_development_install_imports_chatbound_and_runs_it(checkout, wheels, dependencies, tmp_path):
    """One test for the three cases, so that parallel workers do not build the wheels twice."""
    for case, kinds in CASES.items():
        env = tmp_path / case.replace(",", "").replace(" ", "-")
        venv.create(env, with_pip=False)
        (site,) = env.glob("lib/python*/site-packages")
        (site / "dependencies.pth").write_text(f"{dependencies}\n")
        python = env / "bin" / "python"
        environ = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
        installed = subprocess.run(
            [tool("uv"), "pip", "install", "--python", str(python), "--offline", "--no-index", "--no-deps"]
            + [str(wheels[name, kind]) for name, kind in kinds.items()],
            env={**environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")},
            capture_output=True,
            text=True,
        )
        assert installed.returncode == 0, f"{case}: {installed.stderr}"
        probe = subprocess.run([str(python), "-c", PROBE], env=environ, capture_output=True, text=True)
        # before, with an editable analyzer: ImportError: cannot import name '__version__' from 'chatbound' (unknown location)
        assert probe.returncode == 0, f"{case}: {probe.stderr}"
        files = json.loads(probe.stdout)
        where = {"editable": checkout, "regular": site}
        assert Path(files["engine"]).is_relative_to(where[kinds["engine"]]), case
        assert Path(files["rules"]).is_relative_to(where[kinds["analyzer"]]), case
        assert Path(files["cli"]).is_relative_to(where[kinds["analyzer"]]), case
        version = subprocess.run(
            [str(env / "bin" / "chatbound"), "--version"], env=environ, capture_output=True, text=True
        )
        assert (version.returncode, version.stdout) == (0, f"chatbound, version {__version__}\n"), (
            f"{case}: {version.stderr}"
        )
