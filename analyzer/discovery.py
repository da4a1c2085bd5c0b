"""Which files to check: walk directories like `ruff check`, honouring .gitignore and excludes.

Paths are plain strings while walking (absolute, normalized): a `Path` per file and per
comparison was most of a re-run's time. `below` and `_relative` answer what
`Path.relative_to` would, by spelling."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .findings import FileError

SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)


def below(path: str, folder: str) -> str | None:
    """`path` relative to `folder` (both absolute and normalized) when strictly below it."""
    prefix = os.path.join(folder, "")  # with one trailing separator, "/" included
    return path[len(prefix):] if path.startswith(prefix) and len(path) > len(prefix) else None


def _relative(path: str, base: str) -> str:
    """What `_match` matches: the posix path from `base`, or the bare name outside it."""
    if path == base:
        return "."
    inside = below(path, base)
    if inside is None:
        return os.path.basename(path)
    return inside if os.sep == "/" else inside.replace(os.sep, "/")


class _Ignores:
    """The exclude patterns plus every .gitignore met on the way, each anchored at its folder."""

    def __init__(self, root: str, excludes: list[str]) -> None:
        self.root = root
        self.excludes = pathspec.GitIgnoreSpec.from_lines(excludes)
        self.gitignores: dict[str, pathspec.GitIgnoreSpec] = {}

    def load_gitignore(self, directory: str) -> None:
        try:
            with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as stream:
                lines = stream.read().splitlines()
        except OSError:
            return
        self.gitignores[directory] = pathspec.GitIgnoreSpec.from_lines(lines)

    def load_parents(self, start: str) -> None:
        """The .gitignore files above `start`, up to the repository root (none above it)."""
        directory = Path(start)
        while not (directory / ".git").exists() and directory != directory.parent:
            directory = directory.parent
            self.load_gitignore(str(directory))

    def excluded(self, path: str, is_dir: bool) -> bool:
        return _match(self.excludes, path, self.root, is_dir) or any(
            _match(spec, path, base, is_dir)
            for base, spec in self.gitignores.items()
            if below(path, base) is not None
        )


def _match(spec: pathspec.GitIgnoreSpec, path: str, base: str, is_dir: bool) -> bool:
    relative = _relative(path, base)
    return spec.match_file(relative + "/" if is_dir else relative)


def discover(
    paths: list[Path], root: Path, excludes: list[str], force_exclude: bool = False
) -> Discovery:
    """Python files under `paths`, sorted; unreadable paths become errors, not crashes."""
    found = Discovery()
    ignores = _Ignores(str(root.resolve()), excludes)
    files: list[str] = []
    for given in paths:
        path = os.path.abspath(given)
        if not os.path.lexists(path):
            found.errors.append(FileError(str(given), "no such file or directory"))
        elif os.path.isdir(path):
            ignores.load_parents(path)
            _walk(path, ignores, files, found)
        elif not (force_exclude and ignores.excluded(path, is_dir=False)):
            files.append(path)
    # sorted as Paths sort: part by part
    found.files = [Path(path) for path in sorted(set(files), key=lambda path: path.split(os.sep))]
    return found


def _walk(top: str, ignores: _Ignores, files: list[str], found: Discovery) -> None:
    def on_error(error: OSError) -> None:
        found.errors.append(FileError(error.filename or top, f"cannot read directory: {error.strerror}"))

    for directory, dirnames, filenames in os.walk(top, onerror=on_error, followlinks=False):
        if ".gitignore" in filenames:
            ignores.load_gitignore(directory)
        dirnames[:] = sorted(
            name for name in dirnames if not ignores.excluded(os.path.join(directory, name), is_dir=True)
        )
        for name in filenames:
            if name.endswith(SUFFIXES):
                path = os.path.join(directory, name)
                if not ignores.excluded(path, is_dir=False):
                    files.append(path)
