"""Scans of a file's bytes that need no parse: how deep its brackets nest, and how many bytes
of string literals can be part of a value.

`nesting_problem` protects the process: LibCST's native parser recurses on the C stack and
crashes (SIGSEGV) on a few thousand nested brackets or prefix operators. CPython itself
refuses more than 200 nested brackets ("too many nested parentheses"), so a file deeper
than that is not valid Python and is reported instead of parsed.
"""

from __future__ import annotations

import itertools
import re

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
_PREFIX_RUN = re.compile(rb"(?:(?:not\b|await\b|lambda\b[^:\r\n]*:|[-+~*])\s*){%d,}" % (MAX_NESTING + 1))


def literal_bytes(source: bytes) -> int:
    """Bytes of the string literals that can be part of a value: all but the strings that are
    a statement of their own (a docstring, a bare string) at bracket depth 0. A text resolved
    from literals has at most this many bytes, hence at most this many tokens."""
    total = depth = last = 0
    for match in _NOISE.finditer(source):
        between = source[last : match.start()]
        depth += sum(between.count(o) for o in (b"(", b"[", b"{")) - sum(between.count(c) for c in (b")", b"]", b"}"))
        last = match.end()
        text = match.group()
        if text.startswith(b"#"):
            continue
        line = source.rfind(b"\n", 0, match.start()) + 1
        end = line - 1 - (source[line - 2 : line - 1] == b"\r")  # where the line before ends
        continued = end > 0 and source[end - 1 : end] == b"\\"  # a backslash continues it
        if depth <= 0 and not source[line : match.start()].strip() and not continued:
            continue  # a statement of its own: never part of a value
        total += len(text)
    return total


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
