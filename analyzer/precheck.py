"""Cheap textual tests on a file's bytes, before the LibCST parse.

`may_have_findings` decides which files are parsed at all: a file that holds none of the
selected rules' trigger words (`Rule.TRIGGERS`) cannot produce a finding, so it is skipped.
A rule without TRIGGERS makes every file a candidate: the pre-check never hides a finding
by guessing what a rule needs.

`nesting_problem` protects the process: LibCST's native parser recurses on the C stack and
crashes (SIGSEGV) on a few thousand nested brackets or prefix operators. CPython itself
refuses more than 200 nested brackets ("too many nested parentheses"), so a file deeper
than that is not valid Python and is reported instead of parsed.
"""

from __future__ import annotations

import itertools
import re
from typing import Iterable

from .rule import Rule

MAX_NESTING = 200  # CPython's tokenizer limit on nested brackets (MAXLEVEL)

# Comments and string literals, so that brackets and operators inside them do not count.
_NOISE = re.compile(
    rb"""\#[^\r\n]*
    | '''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)
    | \"\"\"[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
    | '[^'\\\r\n]*(?:\\[\s\S][^'\\\r\n]*)*'?
    | "[^"\\\r\n]*(?:\\[\s\S][^"\\\r\n]*)*"?""",
    re.X,
)
_STEP = [0] * 256
for _open, _close in (b"()", b"[]", b"{}"):
    _STEP[_open], _STEP[_close] = 1, -1
_NOT_BRACKETS = bytes(b for b in range(256) if not _STEP[b])
# A run of prefix operators: each one is a level of the tree, with no bracket to count.
_PREFIX_RUN = re.compile(
    rb"(?:(?:not\b|await\b|lambda\b[^:\r\n]*:|[-+~*])\s*){%d,}" % (MAX_NESTING + 1)
)


def trigger_words(rules: Iterable[type[Rule]]) -> frozenset[bytes] | None:
    """The lower-cased words any of `rules` needs; None when some rule needs every file."""
    words: set[bytes] = set()
    for rule in rules:
        if rule.TRIGGERS is None:
            return None
        words.update(word.lower().encode("utf-8") for word in rule.TRIGGERS)
    return frozenset(words)


def may_have_findings(source: bytes, words: frozenset[bytes] | None) -> bool:
    """False only when the file holds none of the words: then no selected rule can report."""
    if words is None:
        return True
    lowered = source.lower()
    return any(word in lowered for word in words)


def nesting_problem(source: bytes | str) -> str | None:
    """Why the file is too deeply nested to parse safely, or None."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    code = _NOISE.sub(b"_", source)
    depth = max(itertools.accumulate(_STEP[b] for b in code.translate(None, _NOT_BRACKETS)), default=0)
    if depth > MAX_NESTING:
        return f"nested too deeply: {depth} levels of brackets (Python allows {MAX_NESTING})"
    run = _PREFIX_RUN.search(code)
    if run:
        line = code.count(b"\n", 0, run.start()) + 1
        return f"nested too deeply: more than {MAX_NESTING} prefix operators in a row at line {line}"
    return None
