"""Each distribution must hold every source folder of its own (the pyprojects list packages by
hand): the analyzer's pyproject.toml everything under analyzer/ and rules/ but the engine, and
the engine's (analyzer/compaction/pyproject.toml) the engine's folders. `chatbound` itself is a
namespace package the two share (tests/test_development_install.py says why)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import ROOT

ENGINE = ROOT / "analyzer" / "compaction"


def packages_on_disk(name, folder, skip=()):
    found = {name}  # the folder itself, with or without an __init__.py
    for init in folder.rglob("__init__.py"):
        parts = init.parent.relative_to(folder).parts
        if "__pycache__" in parts or "build" in parts:
            continue
        if any(init.parent.is_relative_to(s) for s in skip):
            continue
        found.add(".".join((name, *parts)))
    return found


def listed(pyproject):
    return set(tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["packages"])


def test_every_analyzer_package_folder_is_listed_in_its_pyproject():
    on_disk = packages_on_disk("chatbound", ROOT / "analyzer", skip=(ENGINE,)) | packages_on_disk(
        "chatbound.rules", ROOT / "rules"
    )
    assert on_disk == listed(ROOT / "pyproject.toml")


def test_every_engine_package_folder_is_listed_in_its_own_pyproject():
    assert packages_on_disk("chatbound.compaction", ENGINE) == listed(ENGINE / "pyproject.toml")


def test_neither_distribution_ships_an_init_for_chatbound_itself():
    assert not (ROOT / "analyzer" / "__init__.py").exists()
    assert "chatbound" not in listed(ENGINE / "pyproject.toml")
