"""The version of a framework a project pins, for the facts whose default changed between versions.

The project is the nearest folder above the file (up to the repository's `.git`, at most a
few levels) holding a declaration. A version is read only where it is one version: a lock
file's entry (`uv.lock`, `poetry.lock`: `[[package]] name = ... version = ...`), `name==X`
in a requirements file or PEP 621 `dependencies`, a Poetry `name = "X"`, and the ranges that
stay within one minor series (`~=0.6.1`, Poetry `^0.6.1` / `~0.6.1`, which allow 0.6.x
only: their lower bound is taken). A bare `>=`, or no declaration, is no pin: the caller says
which version's behaviour it assumed. Where a fix needs a setting added in some version, the
project's floor is what matters (`lowest`): its pin, or the bound of a `>=` range. The file
read is recorded as a data file of the result, so a cached result is checked against it.
"""

from __future__ import annotations

import os
import re

DECLARATIONS = ("uv.lock", "poetry.lock", "pyproject.toml")  # then requirements*.txt
LEVELS = 5  # folders searched above the file
LOCKED = re.compile(r'^\[\[package\]\]\s*\nname\s*=\s*"([^"]+)"\s*\nversion\s*=\s*"([^"]+)"', re.M)
VERSION = r"(\d+(?:\.\d+)*)"


def pinned(facts, distribution: str) -> tuple[str, str] | None:
    """(version, the file that pins it) for `distribution` in the file's project, or None."""
    return _memo(facts, distribution, False)


def lowest(facts, distribution: str) -> tuple[str, str] | None:
    """(the lowest version the project allows, the file that says so): its pin, or the bound
    of a `>=` range; None when it declares neither."""
    return _memo(facts, distribution, True)


def _memo(facts, distribution: str, floor: bool) -> tuple[str, str] | None:
    context = facts.rule.context
    memo = facts.framework_data.setdefault(__name__, {})
    if (distribution, floor) not in memo:
        memo[distribution, floor] = (
            pinned_in(context.directory, distribution, context.data_files, floor) if context.directory else None
        )
    return memo[distribution, floor]


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def pinned_in(directory: str, distribution: str, data_files: list[str], floor: bool = False) -> tuple[str, str] | None:
    """(version, file name) pinned in the project above `directory` (with ``floor``, a `>=`
    bound too); the files read are added to `data_files`."""
    wanted = _normal(distribution)
    folder = os.path.abspath(directory)
    for _ in range(LEVELS):
        files = [os.path.join(folder, name) for name in DECLARATIONS]
        try:
            files += sorted(os.path.join(folder, n) for n in os.listdir(folder) if re.match(r"requirements.*\.txt$", n))
        except OSError:
            return None
        declared = [path for path in files if os.path.isfile(path)]
        for path in declared:
            data_files.append(path)
            version = _version_in(path, wanted, floor)
            if version is not None:
                return version, os.path.basename(path)
        if declared or os.path.isdir(os.path.join(folder, ".git")) or os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)
    return None


def _version_in(path: str, wanted: str, floor: bool) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    if path.endswith(".lock"):
        return next((v for name, v in LOCKED.findall(text) if _normal(name) == wanted), None)
    name = r"[\"']?" + re.escape(wanted).replace(r"\-", "[-_.]") + r"(?:\[[^\]]*\])?[\"']?"
    ranges, poetry = ("==|~=|>=", r"==|\^|~|>=") if floor else ("==|~=", r"==|\^|~")
    for pattern in (
        rf"(?:^|[\s\[,])[\"']?{name}\s*(?:{ranges})\s*{VERSION}",  # requirement, PEP 621 string
        rf"^\s*{name}\s*=\s*[\"'](?:{poetry})?\s*{VERSION}[\"'{',' if floor else ''}]",
    ):  # Poetry
        found = re.search(pattern, text, re.M | re.I)
        if found is not None:
            return found.group(1)
    return None


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
