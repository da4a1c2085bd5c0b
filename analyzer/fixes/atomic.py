"""The one way chatbound writes a user's file: all or nothing, permissions kept."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path


def _inside(target: Path, roots: Sequence[Path]) -> bool:
    """Whether ``target`` (resolved) lies in a checked folder: a root that is a folder, or the
    folder of a root that is a file (a file root is not resolved: it may be the link itself)."""
    folders = [(root if root.is_dir() else root.absolute().parent).resolve() for root in roots]
    return any(folder in target.parents for folder in folders)


def write_atomic(path: Path, data: bytes, roots: Sequence[Path] | None = None) -> None:
    """Replace the file behind ``path`` by ``data`` through a temporary file in its folder.

    An existing file keeps its permissions; a new one gets what ``open()`` would give it.
    With ``roots`` (the checked tree), a symlink is followed only when its target lies
    inside them; otherwise the write is refused with an OSError.
    """
    target = path.resolve()
    if roots is not None and target != path.absolute() and not _inside(target, roots):
        raise OSError(f"not written: {path} is a symlink to {target}, outside the checked tree")
    if target.exists():
        mode = stat.S_IMODE(target.stat().st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
