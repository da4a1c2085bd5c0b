"""Cheap textual tests on a file's bytes, before the LibCST parse.

`rules_for` decides which rules run on a file, and so whether it is parsed at all: a rule
whose triggers (`Rule.TRIGGERS`) do not occur in the file, or whose `may_report` says no,
cannot report on it. A trigger is a word (found case-insensitively anywhere), a compiled
bytes pattern of the code shape a finding needs (`\\.similarity_search\\w*\\s*\\(`), or a
tuple of patterns that must all occur (a client's `.create(` and an `autogen` import). A
pattern runs only on files holding one of the literal words every match of it contains (read
from its parse tree: `similarity_search`). The words of all the selected rules are found in
the lower-cased text in one pass (an Aho-Corasick automaton, `pyahocorasick`), so most files
cost that pass and a few set lookups. A pattern that is an alternation (`A|B`,
`\\b(?:A|B)rest`) is searched as its alternatives, each with its own words: Python's regex
engine finds a literal prefix with a fast scan, but tries an alternation at every position
of the file. A rule without TRIGGERS makes every file a candidate: the pre-check never hides
a finding by guessing what a rule needs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import ahocorasick

try:
    import re._parser as _parser  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _parser

from chatbound.analysis.rule import Rule

# One alternative of a pattern: (anchors, pattern, whether it runs on the lower-cased text).
Alternative = tuple[frozenset[bytes] | None, re.Pattern[bytes], bool]


@dataclass(frozen=True)
class Triggers:
    """The selected rules' triggers, ready to search: words, and patterns each with the words
    one of which every match of it contains (so the pattern runs only where one occurs)."""

    words: tuple[bytes, ...]
    # groups of shapes that must all match; a shape matches where one of its alternatives does
    shapes: tuple[tuple[tuple[Alternative, ...], ...], ...]

    @functools.cached_property
    def needed(self) -> frozenset[bytes] | None:
        """Words one of which every match of a trigger contains (None when some trigger needs
        none): most files hold none of them, and are rejected by one set test."""
        needs = [frozenset(self.words)]
        for group in self.shapes:
            anchored = [_needed(shape) for shape in group if _needed(shape) is not None]
            if not anchored:
                return None
            needs.append(min(anchored, key=len))
        return frozenset().union(*needs)

    def search(self, source: bytes, lowered: bytes, present: set[bytes], seen: dict) -> bool:
        """Whether a trigger occurs, given the words `present` in the lower-cased text; `seen`
        keeps each shape's answer for the file, so a shape several rules declare (the memory
        rules share theirs) is searched once."""
        if self.needed is not None and present.isdisjoint(self.needed):
            return False
        if not present.isdisjoint(self.words):
            return True

        def found(shape) -> bool:
            if shape not in seen:
                seen[shape] = any(
                    (anchors is None or not present.isdisjoint(anchors))
                    and pattern.search(lowered if on_lowered else source) is not None
                    for anchors, pattern, on_lowered in shape
                )
            return seen[shape]

        return any(all(map(found, group)) for group in self.shapes)

    def anchors(self) -> frozenset[bytes]:
        """Every word the search looks up."""
        return frozenset(self.words).union(*(a for group in self.shapes for shape in group for a, _, _ in shape if a))


def _needed(shape: tuple[Alternative, ...]) -> frozenset[bytes] | None:
    """Words one of which every match of the shape contains, or None."""
    if any(anchors is None for anchors, _, _ in shape):
        return None
    return frozenset().union(*(anchors for anchors, _, _ in shape))


_REPEATS = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, getattr(_parser, "POSSESSIVE_REPEAT", _parser.MAX_REPEAT)}


def _anchors(items) -> frozenset[bytes] | None:
    """Lower-cased words, one of which is in every text the parsed pattern matches; None when
    the pattern has no literal of at least 3 characters that every match needs."""
    best: frozenset[bytes] | None = None

    def consider(found: frozenset[bytes] | None) -> None:
        nonlocal best
        if found and min(map(len, found)) >= 3 and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    run = bytearray()
    for op, av in items:
        if op is _parser.LITERAL:
            run.append(av)
            continue
        consider(frozenset([bytes(run).lower()]) if run else None)
        run = bytearray()
        if op is _parser.SUBPATTERN:
            consider(_anchors(av[-1]))
        elif op is _parser.BRANCH:
            alternatives = [_anchors(alternative) for alternative in av[1]]
            if all(alternatives):
                consider(frozenset().union(*alternatives))
        elif op in _REPEATS and av[0] >= 1:
            consider(_anchors(av[2]))
        elif op is getattr(_parser, "ATOMIC_GROUP", None):
            consider(_anchors(av))
    consider(frozenset([bytes(run).lower()]) if run else None)
    return best


def _alternative(pattern: re.Pattern[bytes]) -> Alternative:
    try:
        anchors = _anchors(_parser.parse(pattern.pattern, pattern.flags))
    except Exception:  # an unforeseen parse tree only costs the shortcut
        anchors = None
    # re.I with no upper-case letter outside escapes: the same matches, case-sensitively, on
    # the lower-cased text (several times faster than folding case at every position)
    if pattern.flags & re.I and not re.search(rb"[A-Z]", re.sub(rb"\\.", b"", pattern.pattern)):
        return anchors, re.compile(pattern.pattern, pattern.flags & ~re.I), True
    return anchors, pattern, False


def _shape(pattern: re.Pattern) -> tuple[Alternative, ...]:
    if isinstance(pattern.pattern, str):
        pattern = re.compile(pattern.pattern.encode("utf-8"), pattern.flags & ~re.U)
    if pattern.flags & re.X:  # whitespace and comments would have to be read too
        return (_alternative(pattern),)
    return tuple(_alternative(re.compile(text, pattern.flags)) for text in alternatives(pattern.pattern))


def _syntax(text: bytes) -> list[int]:
    """Per byte of a pattern: 1 for a group's `(`, -1 for its `)`, 2 for a `|`, 0 for the rest
    (escaped bytes and the members of a class included)."""
    marks, i, in_class = [0] * len(text), 0, False
    while i < len(text):
        char = text[i : i + 1]
        if char == b"\\":  # the next byte is escaped
            i += 2
            continue
        if in_class:
            in_class = char != b"]"
        elif char == b"[":  # a `]` right after `[` or `[^` is a member
            in_class = True
            i += 2 if text[i + 1 : i + 2] == b"^" else 1
            i += 1 if text[i : i + 1] == b"]" else 0
            continue
        else:
            marks[i] = {b"(": 1, b")": -1, b"|": 2}.get(char, 0)
        i += 1
    return marks


def _parts(text: bytes) -> list[bytes]:
    """`text` cut at its top-level `|`."""
    parts, depth, start = [], 0, 0
    for i, mark in enumerate(_syntax(text)):
        if mark == 2 and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        elif mark != 2:
            depth += mark
    return [*parts, text[start:]]


def _group_end(text: bytes) -> int:
    """Where the group that opens `text` ends (just after its `)`)."""
    depth = 0
    for i, mark in enumerate(_syntax(text)):
        depth += mark if mark != 2 else 0
        if depth == 0:
            return i + 1
    return len(text)


def alternatives(text: bytes) -> list[bytes]:
    """A pattern as alternatives that each begin with a literal where they can: `A|B` as `A`
    and `B`, and `\\b(?:a|b)rest` as `\\barest` and `\\bbrest` (a group left whole when
    quantified). A text matches the pattern where it matches one of them."""
    found: list[bytes] = []
    for part in _parts(text):
        prefix = re.match(rb"(?:\\b)*", part).group()
        rest = part[len(prefix) :]
        end = _group_end(rest) if rest.startswith(b"(?:") else 0
        options = _parts(rest[3 : end - 1]) if end else []
        if len(options) > 1 and rest[end : end + 1] not in (b"*", b"+", b"?", b"{"):
            found.extend(alt for option in options for alt in alternatives(prefix + option + rest[end:]))
        else:
            found.append(part)
    return found


def _group(patterns: tuple[re.Pattern, ...]) -> tuple[tuple[Alternative, ...], ...]:
    """Patterns that must all match, those with anchors first: a missing word rejects a file
    before any pattern runs."""
    return tuple(sorted(map(_shape, patterns), key=lambda shape: any(anchors is None for anchors, _, _ in shape)))


@functools.lru_cache(maxsize=32)
def _compiled(triggers: tuple[str | re.Pattern | tuple[re.Pattern, ...], ...]) -> Triggers:
    unique = dict.fromkeys(triggers)
    return Triggers(
        words=tuple(t.lower().encode("utf-8") for t in unique if isinstance(t, str)),
        shapes=tuple(_group(t) if isinstance(t, tuple) else (_shape(t),) for t in unique if not isinstance(t, str)),
    )


@functools.lru_cache(maxsize=32)
def _finder(triggers: tuple[Triggers, ...]) -> ahocorasick.Automaton | None:
    """An automaton that finds every word of `triggers` (overlaps too) in one pass over a
    text read as latin-1 (one character per byte)."""
    words = frozenset().union(*(t.anchors() for t in triggers))
    if not words:
        return None
    automaton = ahocorasick.Automaton()
    for word in words:
        automaton.add_word(word.decode("latin-1"), word)
    automaton.make_automaton()
    return automaton


def rules_for(source: bytes, rules: Sequence[type[Rule]], options: dict | None = None) -> tuple[type[Rule], ...]:
    """The rules whose own triggers occur in the file and whose `may_report` (given the run's
    options) allows it: only they can report on it, so only they run (a file parsed for one
    rule's shape does not pay for the others)."""
    lowered, seen, options = source.lower(), {}, options or {}
    triggers = {rule: _compiled(tuple(rule.TRIGGERS)) for rule in rules if rule.TRIGGERS is not None}
    present = _present(lowered, _finder(tuple(triggers.values())))
    return tuple(
        rule
        for rule in rules
        if (rule not in triggers or triggers[rule].search(source, lowered, present, seen))
        and rule.may_report(source, options)
    )


def occurs(source: bytes, triggers: tuple[str | re.Pattern | tuple[re.Pattern, ...], ...]) -> bool:
    """Whether one of `triggers` (written as a rule's `TRIGGERS`) occurs in the file."""
    compiled = _compiled(triggers)
    lowered = source.lower()
    return compiled.search(source, lowered, _present(lowered, _finder((compiled,))), {})


def _present(lowered: bytes, finder: ahocorasick.Automaton | None) -> set[bytes]:
    """The trigger words the lower-cased text holds."""
    return {word for _, word in finder.iter(lowered.decode("latin-1"))} if finder else set()
