"""`--add-noqa`: write `# chatbound: ignore[ID]` comments for the current findings.

A comment goes at the end of the reported line, or of the statement's first line when the
reported line ends inside a string or a backslash continuation (both lines are where
`suppressions.apply_suppressions` looks). An existing `# chatbound: ignore[...]` on that
line gains the new ids; any other comment is kept and ours follows it. A file is replaced
atomically (temp file + os.replace, permissions kept) and only when the result still parses.
In a notebook the comments go into the cells' own text, and only those cells' `source` changes.
"""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from chatbound.findings import FileError, Finding
from chatbound.fixes.atomic import write_atomic
from chatbound.fixes.edits import source_lines
from chatbound.run.notebooks import Notebook, NotebookError, is_notebook, python_lines
from chatbound.run.suppressions import PATTERN


@dataclass
class NoqaResult:
    added: int = 0
    files: int = 0
    errors: list[FileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Lines:
    """Where comments can go: line ends outside strings and continuations, and the column of
    each line's existing comment (from one tokenization of the whole file)."""

    commentable: set[int]
    comments: dict[int, int]


def scan(source: str) -> Lines:
    blocked: set[int] = set()
    comments: dict[int, int] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        start, end = token.start[0], token.end[0]
        if token.type == tokenize.COMMENT:
            comments[start] = token.start[1]
        elif token.type not in (tokenize.NL, tokenize.NEWLINE) and end > start:
            blocked.update(range(start, end))  # a multi-line string: its inner line ends
    commentable = {
        number
        for number, line in enumerate(source_lines(source), 1)
        if number not in blocked and not line.rstrip().endswith("\\")
    }
    return Lines(commentable, comments)


def with_ids(line: str, ids: set[str], comment: int | None) -> str:
    """`line` (no newline) with a chatbound ignore comment naming `ids`, merged with the one
    its comment (starting at column `comment`) already holds."""
    if comment is not None:
        match = PATTERN.search(line, comment)
        if match and match.group("ids") is not None:
            known = [i.strip() for i in match.group("ids").split(",") if i.strip()]
            merged = known + sorted(ids - {i.upper() for i in known})
            start, end = match.span("ids")
            return line[:start] + ", ".join(merged) + line[end:]
    return f"{line.rstrip()}  # chatbound: ignore[{', '.join(sorted(ids))}]"


def _target_line(finding: Finding, commentable: set[int]) -> int | None:
    for line in (finding.span.line, finding.statement_line):
        if line in commentable:
            return line
    return None


def commented_lines(source: str, findings: list[Finding]) -> tuple[dict[int, str], list[Finding]]:
    """The new text (no line ending) of every line that gets ids, and the findings no line
    of whose statement can hold a comment. Raises tokenize.TokenError or SyntaxError."""
    info = scan(source)
    wanted: dict[int, set[str]] = defaultdict(set)
    homeless = []
    for finding in findings:
        line = _target_line(finding, info.commentable)
        if line is None:
            homeless.append(finding)
        else:
            wanted[line].add(finding.rule_id)
    lines = [line.rstrip("\r\n") for line in source_lines(source)]
    return {n: with_ids(lines[n - 1], ids, info.comments.get(n)) for n, ids in wanted.items()}, homeless


def _with_comments(text: str, new_lines: dict[int, str]) -> str:
    lines = source_lines(text)
    for number, line in new_lines.items():
        old = lines[number - 1]
        lines[number - 1] = line + old[len(old.rstrip("\r\n")) :]
    return "".join(lines)


def _commented_notebook(raw: bytes, findings: list[Finding]) -> tuple[bytes, list[Finding]]:
    """The notebook with the comments in its cells (each cell tokenized on its own, magics as
    Python of no consequence), and the findings no line can hold a comment for."""
    notebook = Notebook.parse(raw)
    texts, homeless = {}, []
    for cell in sorted({f.span.cell for f in findings}):
        own = notebook.sources[cell]
        new_lines, left = commented_lines(python_lines(own)[0], [f for f in findings if f.span.cell == cell])
        texts[cell], homeless = _with_comments(own, new_lines), homeless + left
    data = notebook.with_cells(texts).encode("utf-8") if texts else raw
    cst.parse_module(Notebook.parse(data).code)  # the cells must still parse
    return data, homeless


def add_noqa_to_file(path: Path, findings: list[Finding], result: NoqaResult) -> None:
    shown = findings[0].path
    if is_notebook(shown):
        try:
            data, homeless = _commented_notebook(path.read_bytes(), findings)
        except (OSError, NotebookError, SyntaxError, tokenize.TokenError, cst.ParserSyntaxError) as exc:
            result.errors.append(FileError(shown, f"cannot add ignore comments: {exc}"))
            return
        _write(path, shown, data, findings, homeless, result)
        return
    try:
        raw = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        source = raw.decode(encoding)
        new_lines, homeless = commented_lines(source, findings)
    except (OSError, UnicodeError, SyntaxError, tokenize.TokenError) as exc:
        result.errors.append(FileError(shown, f"cannot add ignore comments: {exc}"))
        return
    if not new_lines:
        _write(path, shown, b"", findings, homeless, result)
        return
    data = _with_comments(source, new_lines).encode(encoding)
    try:
        cst.parse_module(data)
    except Exception as exc:  # never write a file that would no longer parse
        result.errors.append(FileError(shown, f"left unchanged: it would not parse ({type(exc).__name__})"))
        return
    _write(path, shown, data, findings, homeless, result)


def _write(
    path: Path, shown: str, data: bytes, findings: list[Finding], homeless: list[Finding], result: NoqaResult
) -> None:
    result.warnings += [
        f"{shown}:{f'cell {f.span.cell}:' if f.span.cell else ''}{f.span.line}: no line of the statement can hold "
        f"a comment; {f.rule_id} left as is"
        for f in homeless
    ]
    if len(homeless) == len(findings):
        return
    try:
        write_atomic(path, data)
    except OSError as exc:
        result.errors.append(FileError(shown, f"cannot write: {exc.strerror or exc}"))
        return
    result.added += len(findings) - len(homeless)
    result.files += 1


def add_noqa(findings: list[Finding]) -> NoqaResult:
    """Comment every active finding; files grouped so each is rewritten once."""
    result = NoqaResult()
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.suppressed is None:
            by_file[finding.path].append(finding)
    for shown, group in sorted(by_file.items()):
        add_noqa_to_file(Path(shown), group, result)
    return result
