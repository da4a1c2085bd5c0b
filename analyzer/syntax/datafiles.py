"""Data files a module reads by a literal path (a prompt in `prompts/system.md`): where the
file is, and its text. No LibCST here: the project pass reads the files its summaries name.
"""

from __future__ import annotations

import os

MAX_FILE_BYTES = 1_000_000
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", "requirements.txt")


def folder_holding(directory: str, relative: str) -> str:
    """The folder a relative path is read from: the file's own, else the nearest folder above
    it, up to the project's root, that holds it (`open("prompts/v1.md")` in `src/graph/` of an
    app started from its root, where the working directory is the root)."""
    folder = directory
    for _ in range(4):
        if os.path.isfile(os.path.join(folder, relative)):
            return folder
        if any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            break
        folder = os.path.dirname(folder)
    return directory


def read_data_file(directory: str, relative: str) -> str | None:
    """The text of a small data file next to the analyzed file; None when it cannot be read."""
    path = os.path.normpath(os.path.join(directory, relative))
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
