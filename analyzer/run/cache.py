"""Results of earlier runs in `.chatbound_cache/` at the project root: a re-run parses nothing.

An entry is one file's result, keyed by the file's shown path and content (files the
pre-check skipped share one list of keys, `skipped`: no entry file each); entries live in
a folder named by everything else that decides a result (chatbound's version and code, every
rule's code, the LibCST version, the codes that select and ignore rules, the options). A result that read data files
(a prompt read by literal path) records their hashes and is used only while they match.
A file's content hash comes from the stat index (`chatbound.run.stat_index`, beside the
folders) while the file's stat is the one recorded with it: an unchanged file is not read.
Writes are atomic (temporary file, then rename); an entry that cannot be read is a miss.
Entries are pickles read by an unpickler that builds nothing but chatbound's own data
classes, so a planted cache file cannot run code.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib
import importlib.util
import io
import json
import os
import pickle
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chatbound.findings import FileResult
from chatbound.run.stat_index import StatIndex
from chatbound.version import __version__

CACHE_DIR = ".chatbound_cache"
STAT_INDEX = "stat-index"  # beside the settings' folders: a file's hash depends on no setting


def _code_files() -> list[str]:
    """chatbound's own modules (sub-packages too: the engine drives the cost projections),
    every rule's module and LibCST's `_version.py` (its version, written at its build):
    editing or upgrading one invalidates. Found as files, not imported: a run served from the
    cache loads no rule, nor LibCST, nor `importlib.metadata`."""
    import chatbound.rules as rule_package

    folders = {Path(__file__).resolve().parent.parent, *(Path(folder).resolve() for folder in rule_package.__path__)}
    libcst = importlib.util.find_spec("libcst")
    versions = [os.path.join(os.path.dirname(libcst.origin), "_version.py")] if libcst and libcst.origin else []
    return sorted({str(path) for folder in folders for path in folder.rglob("*.py")}) + versions


def run_key(select: Iterable[str], ignore: Iterable[str], options: dict[str, Any], stats: StatIndex) -> str:
    """The selected rules are named by the codes that select them: with every rule's code in
    the key, the same codes always select the same rules. The code's hashes come from
    `stats`, which reads only files changed since it learnt them."""
    settings = json.dumps(
        {
            "version": __version__,
            "options": options,
            "select": sorted(code.strip().upper() for code in select),
            "ignore": sorted(code.strip().upper() for code in ignore),
        },
        sort_keys=True,
        default=repr,
    )
    code = [str(stats.content_hash(path)) for path in _code_files()]  # not where it is installed: venvs share entries
    return hashlib.sha256("\n".join([settings, *code]).encode("utf-8", "surrogatepass")).hexdigest()[:24]


class _Unpickler(pickle.Unpickler):
    """Builds only chatbound's data classes and enums (findings, spans, fixes, results)."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] == "chatbound":
            obj = getattr(importlib.import_module(module), name, None)
            if isinstance(obj, type) and (dataclasses.is_dataclass(obj) or issubclass(obj, enum.Enum)):
                return obj
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")


class Cache:
    def __init__(self, root: Path, key: str, stats: StatIndex | None = None) -> None:
        self.base = root / CACHE_DIR
        self.key = key
        self.folder = self.base / key
        self._hashes: dict[str, str | None] = {}  # content hashes of the files this run read or checked
        self._skipped: set[str] | None = None  # read on first use
        self._new_skips: list[str] = []
        self._keys: dict[str, tuple[bytes, str, str]] = {}  # shown path -> (the bytes it was read as, their hash, key)
        self._folders: set[Path] = set()  # made in this run
        self._started = time.time_ns()  # before the run reads any file (see StatIndex.record)
        self._stats = stats  # read on first use when not given

    @classmethod
    def open(cls, root: Path, select: Iterable[str], ignore: Iterable[str], options: dict[str, Any]) -> Cache:
        stats = _stat_index(root / CACHE_DIR, time.time_ns())
        return cls(root, run_key(select, ignore, options, stats), stats)

    @property
    def stats(self) -> StatIndex:
        if self._stats is None:
            self._stats = _stat_index(self.base, self._started)
        return self._stats

    def _key(self, shown: str, source: bytes) -> str:
        """The entry's key; computed once per file and run (`get`, then `put` or `skip`)."""
        known = self._keys.get(shown)
        if known is not None and known[0] is source:
            return known[2]
        digest = hashlib.sha256(source).hexdigest()
        key = self._named_key(shown, digest, os.path.abspath(shown))
        self._keys[shown] = (source, digest, key)
        return key

    def _named_key(self, shown: str, digest: str, path: str) -> str:
        self._hashes.setdefault(path, digest)  # for the results that rest on it
        named = hashlib.sha256(shown.encode("utf-8", "surrogatepass")).digest()
        return hashlib.sha256(named + bytes.fromhex(digest)).hexdigest()

    def _hash(self, path: str) -> str | None:
        """A file's content hash, once per run (those the run read are known already), read
        only when the stat index does not know it."""
        if path not in self._hashes:
            self._hashes[path] = self.stats.content_hash(path)
        return self._hashes[path]

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"

    def skipped(self) -> set[str]:
        if self._skipped is None:
            try:
                self._skipped = set((self.folder / "skipped").read_text("ascii").split())
            except (OSError, ValueError):
                self._skipped = set()
        return self._skipped

    def known(self, path: str, shown: str, status: os.stat_result) -> FileResult | None:
        """The result for the file at `path` (absolute) if the stat index knows its content
        by `status`, without reading it; None: read it and `get`."""
        digest = self.stats.known_hash(path, status)
        return None if digest is None else self._result(shown, self._named_key(shown, digest, path))

    def get(
        self, shown: str, source: bytes, path: str | None = None, status: os.stat_result | None = None
    ) -> FileResult | None:
        """The result for `source`; with the file's `path` and the `status` taken before it was
        read, the stat index learns its hash."""
        key = self._key(shown, source)
        if path is not None and status is not None:
            self.stats.record(path, status, self._keys[shown][1])
        return self._result(shown, key)

    def _result(self, shown: str, key: str) -> FileResult | None:
        if key in self.skipped():
            return FileResult(shown)
        try:
            data = self._entry(key).read_bytes()
            result, data_files = _Unpickler(io.BytesIO(data)).load()
        except Exception:  # missing, truncated, corrupt or planted: a miss, never a crash
            return None
        if not isinstance(result, FileResult) or not isinstance(data_files, dict):
            return None
        if any(self._hash(path) != digest for path, digest in data_files.items()):
            return None
        return result

    def put(self, shown: str, source: bytes, result: FileResult) -> None:
        """Store atomically; a cache that cannot be written only costs speed."""
        entry = self._entry(self._key(shown, source))
        try:
            rests_on = [*result.data_files, *result.modules]
            data = pickle.dumps((result, {path: self._hash(path) for path in rests_on}), protocol=5)
            self._write(entry, data)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    def summary(self, digest: str) -> Any:
        """A module summary kept by its content hash (chatbound.analysis.project), or None."""
        try:
            found = _Unpickler(io.BytesIO((self.folder / "summaries" / f"{digest}.pickle").read_bytes())).load()
        except Exception:  # missing or unreadable: summarise again
            return None
        return found if dataclasses.is_dataclass(found) else None

    def put_summary(self, digest: str, summary: Any) -> None:
        try:
            self._write(self.folder / "summaries" / f"{digest}.pickle", pickle.dumps(summary, protocol=5))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    def skip(self, shown: str, source: bytes) -> None:
        """Remember a file the pre-check skipped without a problem (written by `flush`)."""
        self._new_skips.append(self._key(shown, source))

    def flush(self) -> None:
        """Write the skipped files' keys, those of earlier runs included, in one file, and the
        stat index when it learnt something."""
        try:
            if self._new_skips:
                keys = self.skipped() | set(self._new_skips)
                self._new_skips = []
                self._write(self.folder / "skipped", "\n".join(sorted(keys)).encode("ascii"))
            if self._stats is not None and self._stats.changed:
                self._stats.changed = False
                self._write(self.base / STAT_INDEX, self._stats.dumps())
        except OSError:
            pass

    def _write(self, path: Path, data: bytes) -> None:
        if path.parent not in self._folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._ignore_in_git()
            self._folders.add(path.parent)
        import tempfile  # a run served from the cache writes nothing

        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise

    def _ignore_in_git(self) -> None:
        ignore = self.base / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by chatbound: the result cache is never committed\n*\n")


def _stat_index(base: Path, started: int) -> StatIndex:
    try:
        return StatIndex(started, (base / STAT_INDEX).read_bytes())
    except OSError:
        return StatIndex(started)


def clean(root: Path) -> bool:
    """Remove the cache folder; True when there was one."""
    import shutil

    folder = root / CACHE_DIR
    if not folder.is_dir() or folder.is_symlink():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True
