"""Which files are unchanged since an earlier run, known without reading them.

ruff and mypy key a file's cached result by its stat and read it again only when that
changed; git's index does the same. Here the content hash stays the identity of a cache
entry (a `touch`, or a checkout that restores the same bytes, still hits), and this index
only spares a run reading and hashing a file whose stamp (modification and change times,
size, inode) is the one recorded beside its hash. Any write to a file changes its change
time (ctime), which no program can set: an edit that keeps the size and restores the
modification time is still seen.

A racy stamp is not recorded, as git does for a file modified within its index's timestamp
granularity: a file whose times are less than RACY_NS before this run started could be
written again within the same clock tick, after it was read, and keep its stamp.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from typing import Any

RACY_NS = 2_000_000_000  # the coarsest common timestamp granularity (FAT: 2 s); ext4 and APFS tick far finer


class _Unpickler(pickle.Unpickler):
    """Plain data only: a planted index builds no object, let alone runs code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in the stat index")


def _stamp(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino


class StatIndex:
    """Absolute path -> (stamp, content hash): read from `data` (what `dumps` wrote), which
    may be missing, truncated or planted (then it knows nothing). `started`: a time.time_ns()
    taken before the run read any file."""

    def __init__(self, started: int, data: bytes | None = None) -> None:
        self.started = started
        self._entries: dict[str, tuple] = {}
        self.changed = False  # entries added or replaced in this run: worth writing
        if data:
            try:
                loaded = _Unpickler(io.BytesIO(data)).load()
            except Exception:  # truncated or corrupt: an empty index
                return
            if isinstance(loaded, dict):
                self._entries = loaded

    def known_hash(self, path: str, status: os.stat_result) -> str | None:
        """The hash recorded for the file if its stamp is unchanged; None: read it."""
        entry = self._entries.get(path)
        if type(entry) is not tuple or len(entry) != 5 or entry[:4] != _stamp(status) or type(entry[4]) is not str:
            return None
        return entry[4]

    def record(self, path: str, status: os.stat_result, digest: str) -> None:
        """`digest` is the hash of what was read after `status` was taken (a stamp taken
        after the read could belong to a later write)."""
        if max(status.st_mtime_ns, status.st_ctime_ns) >= self.started - RACY_NS:
            return
        entry = (*_stamp(status), digest)
        if self._entries.get(path) != entry:
            self._entries[path] = entry
            self.changed = True

    def content_hash(self, path: str) -> str | None:
        """The file's content hash (sha256, hex), read and hashed only when its stamp changed;
        None when it cannot be read."""
        try:
            status = os.stat(path)
            known = self.known_hash(path, status)
            if known is not None:
                return known
            with open(path, "rb") as stream:
                digest = hashlib.sha256(stream.read()).hexdigest()
        except OSError:
            return None
        self.record(path, status, digest)
        return digest

    def dumps(self) -> bytes:
        return pickle.dumps(self._entries, protocol=5)
