"""Which files to check: walk directories like `ruff check`, honouring .gitignore and excludes."""

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


class _Ignores:
    """The exclude patterns plus every .gitignore met on the way, each anchored at its folder."""

    def __init__(self, root: Path, excludes: list[str]) -> None:
        self.root = root
        self.excludes = pathspec.GitIgnoreSpec.from_lines(excludes)
        self.gitignores: dict[Path, pathspec.GitIgnoreSpec] = {}

    def load_gitignore(self, directory: Path) -> None:
        try:
            lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        self.gitignores[directory] = pathspec.GitIgnoreSpec.from_lines(lines)

    def load_parents(self, start: Path) -> None:
        """The .gitignore files above `start`, up to the repository root."""
        for directory in start.parents:
            self.load_gitignore(directory)
            if (directory / ".git").exists():
                break

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return _match(self.excludes, path, self.root, is_dir) or any(
            _match(spec, path, base, is_dir)
            for base, spec in self.gitignores.items()
            if base in path.parents
        )


def _match(spec: pathspec.GitIgnoreSpec, path: Path, base: Path, is_dir: bool) -> bool:
    try:
        relative = path.relative_to(base).as_posix()
    except ValueError:
        relative = path.name
    return spec.match_file(relative + "/" if is_dir else relative)


def discover(
    paths: list[Path], root: Path, excludes: list[str], force_exclude: bool = False
) -> Discovery:
    """Python files under `paths`, sorted; unreadable paths become errors, not crashes."""
    found = Discovery()
    ignores = _Ignores(root.resolve(), excludes)
    for given in paths:
        path = Path(os.path.abspath(given))
        if not os.path.lexists(path):
            found.errors.append(FileError(str(given), "no such file or directory"))
        elif path.is_dir():
            ignores.load_parents(path)
            _walk(path, ignores, found)
        elif not (force_exclude and ignores.excluded(path, is_dir=False)):
            found.files.append(path)
    found.files = sorted(set(found.files))
    return found


def _walk(top: Path, ignores: _Ignores, found: Discovery) -> None:
    def on_error(error: OSError) -> None:
        found.errors.append(FileError(error.filename or str(top), f"cannot read directory: {error.strerror}"))

    for dirpath, dirnames, filenames in os.walk(top, onerror=on_error, followlinks=False):
        directory = Path(dirpath)
        ignores.load_gitignore(directory)
        dirnames[:] = sorted(
            name for name in dirnames if not ignores.excluded(directory / name, is_dir=True)
        )
        for name in filenames:
            path = directory / name
            if name.endswith(SUFFIXES) and not ignores.excluded(path, is_dir=False):
                found.files.append(path)
