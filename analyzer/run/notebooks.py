"""Jupyter notebooks: their code cells checked as one module, findings placed by cell, as ruff does.

The code cells are joined into one Python module (`Notebook.code`), so a history built in
one cell and sent in another is one dataflow. What is not Python keeps its line, so every
other line keeps its number: an IPython line magic (`%pip install openai`), a shell escape
(`!ls`, `files = !ls`) or a help line (`client?`) becomes `pass` (or `files = None`). A
cell holding a cell magic (`%%bash`) or automagics (`pip install openai`) is left out, and so
is, with a warning, a cell that does not compile on its own. Positions are reported in the cell: cell
N is the notebook's N-th cell, markdown included, and lines are 1-based within it (ruff's
`notebook.ipynb:cell 3:2:5`).

A fix is made on the joined code and checked there like any fix; it is written back by
applying the same edits, in cell positions, to the cells' own text and replacing only the
`source` values of the cells it changed in the file's JSON text: outputs, metadata,
execution counts, other cells, indentation, key order and the final newline stay as they
were, byte for byte.
"""

from __future__ import annotations

import ast
import bisect
import functools
import json
import os
import re
from dataclasses import dataclass, field, replace
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from chatbound.findings import Edit, FileError, FileResult, Finding, Related, Span, one_line

SUFFIX = ".ipynb"
MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024  # outputs (plots, tables) make notebooks big; the code limit applies to the cells

# IPython's automagics (`pip install x` without `%`), as ruff lists them: a cell that starts with
# one and does not compile is left out without a warning
AUTOMAGICS = frozenset(
    "alias alias_magic autoawait autocall automagic bookmark cd code_wrap colors conda config debug dhist dirs "
    "doctest_mode edit env gui history killbgscripts load load_ext loadpy logoff logon logstart logstate logstop "
    "lsmagic macro magic mamba matplotlib micromamba notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip "
    "popd pprint precision prun psearch psource pushd pwd pycat pylab quickref recall rehashx reload_ext rerun "
    "reset reset_selective run save sc set_env sx system tb time timeit unalias unload_ext who who_ls whos xdel "
    "xmode".split()
)
_ESCAPED = re.compile(r"(?P<indent>[ \t]*)(?:(?P<target>[A-Za-z_][\w.]*\s*=\s*)[%!]|[%!]|\?+[\w.]|[\w.]+\?+\s*$)")
_TOKENS = re.compile(r"(?P<comment>#)|(?P<quote>[rRbBuUfF]{0,2}(?:\"\"\"|'''|\"|'))|(?P<open>[(\[{])|(?P<close>[)\]}])")
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def is_notebook(path: str | os.PathLike) -> bool:
    return os.fspath(path).endswith(SUFFIX)


class NotebookError(ValueError):
    """Why a file is not a notebook we can read: one line, the run goes on."""


@dataclass(frozen=True)
class Cells:
    """Where each code cell sits in the joined code (plain data: it travels to workers and
    into the cache). `starts[i]` is the joined line on which cell `numbers[i]` begins."""

    numbers: tuple[int, ...] = ()
    starts: tuple[int, ...] = ()
    placeholders: frozenset[int] = frozenset()  # joined lines standing in for a magic
    warnings: tuple[str, ...] = ()

    def to_cell(self, span: Span) -> Span:
        """A joined-code span as a span in its cell (the end on the start's cell)."""
        at = bisect.bisect_right(self.starts, span.line) - 1
        if at < 0 or span.cell:
            return span
        first = self.starts[at] - 1
        return Span(span.line - first, span.col, span.end_line - first, span.end_col, cell=self.numbers[at])

    def to_joined(self, span: Span) -> Span:
        first = self.starts[self.numbers.index(span.cell)] - 1
        return Span(span.line + first, span.col, span.end_line + first, span.end_col)

    def line_label(self, line: int) -> str:
        """A joined-code line as `cell N:L`."""
        span = self.to_cell(Span(line, 1, line, 1))
        return f"cell {span.cell}:{span.line}"

    def touches_placeholder(self, span: Span) -> bool:
        """Whether an edit of `span` would change a magic's line (a line inserted before it does not)."""
        if span.col == 1 and (span.line, span.col) == (span.end_line, span.end_col):
            return False
        return any(line in self.placeholders for line in range(span.line, span.end_line + 1))


def _line_ends(text: str) -> list[int]:
    """Offsets just past each line ending (\\n, \\r\\n, \\r), as LibCST counts lines."""
    return [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def _is_cell_magic(text: str) -> bool:
    return any(line.lstrip().startswith("%%") for line in text.splitlines())


class _Scanner:
    """Fed a cell's lines one by one, says whether a new statement may begin on the next one
    (outside brackets, strings and backslash continuations): a line magic is recognised only
    there, as IPython does, so `%` continuing an expression and `!` inside a string stay Python."""

    def __init__(self) -> None:
        self.depth, self.quote, self.continued = 0, "", False

    @property
    def at_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def feed(self, line: str) -> None:
        position = 0
        if self.quote:
            position = _string_end(line, 0, self.quote)
            if position < 0:
                return
            self.quote = ""
        while (match := _TOKENS.search(line, position)) is not None:
            if match.group("comment"):
                break
            if match.group("quote"):
                delimiter = match.group("quote").lstrip("rRbBuUfF")
                position = _string_end(line, match.end(), delimiter)
                if position < 0:
                    self.quote = delimiter if len(delimiter) == 3 else ""
                    break
            else:
                self.depth = max(0, self.depth + (1 if match.group("open") else -1))
                position = match.end()
        self.continued = not self.quote and line.rstrip("\r\n").endswith("\\")


def _string_end(line: str, start: int, delimiter: str) -> int:
    """Offset past the string's closing delimiter on this line, or -1."""
    index = start
    while (index := line.find(delimiter, index)) >= 0:
        backslashes = len(line[:index]) - len(line[:index].rstrip("\\"))
        if backslashes % 2 == 0:
            return index + len(delimiter)
        index += 1
    return -1


def python_lines(text: str) -> tuple[str, list[int]]:
    """The cell's text with each line magic, shell escape or help line (and the lines it
    continues onto with a backslash) replaced by Python of no consequence, and the 0-based
    numbers of the lines replaced."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    if not any(_ESCAPED.match(line) for line in lines):
        return text, []
    scanner, replaced, continued = _Scanner(), [], ""
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if continued:
            stand_in = continued
        elif scanner.at_start and (match := _ESCAPED.match(line)):
            target = match.group("target")
            stand_in = match.group("indent") + (f"{target.rstrip()} None" if target else "pass")
            continued = match.group("indent") + "pass"
        else:
            scanner.feed(line)
            continue
        lines[number] = stand_in + line[len(body) :]
        replaced.append(number)
        continued = continued if body.endswith("\\") else ""
    return "".join(lines), replaced


@dataclass
class Notebook:
    """A notebook read from its JSON text: its cells and the joined code of its code cells."""

    text: str
    cells: list[dict[str, Any]]
    code: str = ""
    index: Cells = field(default_factory=Cells)
    sources: dict[int, str] = field(default_factory=dict)  # cell number -> the cell's own text
    _located: dict[int, list[int] | None] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, source: bytes | str, shown: str = "") -> Notebook:
        try:
            text = source if isinstance(source, str) else source.decode("utf-8-sig")
            data = json.loads(text)
        except UnicodeDecodeError as exc:
            raise NotebookError(f"cannot decode the notebook as UTF-8: {one_line(exc)}") from None
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not a notebook: invalid JSON at {exc.lineno}:{exc.colno}: {exc.msg}") from None
        except RecursionError:
            raise NotebookError("not a notebook: JSON nested too deeply") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            if isinstance(data, dict) and "worksheets" in data:
                raise NotebookError(
                    "notebook format 3 is not supported: convert it with `jupyter nbconvert --to notebook`"
                )
            raise NotebookError("not a notebook: the JSON has no `cells` list")
        notebook = cls(text, data["cells"])
        if _language(data) not in ("", "python"):
            return notebook  # an R or Julia notebook: nothing to check, as ruff
        notebook._join(shown)
        return notebook

    def _join(self, shown: str) -> None:
        parts, numbers, starts, placeholders, warnings, line = [], [], [], set(), [], 1
        for number, cell in enumerate(self.cells, 1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            text = _cell_text(cell, number)
            if not text.strip() or _is_cell_magic(text):
                continue
            code, replaced = python_lines(text)
            problem = _compile_problem(code)
            if problem:  # a cell of automagics (`pip install openai`) is left out silently, as ruff does
                if text.split(None, 1)[0] not in AUTOMAGICS:
                    warnings.append(f"{shown}:cell {number}: not checked: {problem}")
                continue
            self.sources[number] = text
            if not code.endswith(("\n", "\r")):
                code += "\n"
            numbers.append(number)
            starts.append(line)
            placeholders.update(line + n for n in replaced)
            parts.append(code)
            line += len(_line_ends(code))
        self.code = "".join(parts)
        self.index = Cells(tuple(numbers), tuple(starts), frozenset(placeholders), tuple(warnings))

    def line(self, cell: int, line: int) -> str:
        """One line of a cell's own text (magics as written), without its ending; "" if none."""
        lines = re.split(r"\r\n|\r|\n", self.sources.get(cell, ""))
        return lines[line - 1] if 0 < line <= len(lines) else ""

    # --- where things are in the file's JSON text ------------------------------------------

    @functools.cached_property
    def _source_values(self) -> dict[int, tuple[int, int]]:
        """Cell number -> (start, end) of its `source` value in `text`."""
        found: dict[int, tuple[int, int]] = {}
        for key, start, _ in _members(self.text, _SPACE.match(self.text).end())[0]:
            if key == "cells":
                for number, (item, _end) in enumerate(_elements(self.text, start), 1):
                    if self.text[item] == "{":
                        for name, value, end in _members(self.text, item)[0]:
                            if name == "source":
                                found[number] = (value, end)
        return found

    @functools.cached_property
    def _text_lines(self) -> list[int]:
        return [0, *_line_ends(self.text)]

    def file_span(self, span: Span) -> Span:
        """A cell span as a span in the file's own JSON text (what code scanning and an editor
        showing the raw file display); the span itself when the cell cannot be located."""
        offsets = self._offsets(span.cell)
        if offsets is None:
            return span
        ends = [0, *_line_ends(self.sources[span.cell])]

        def where(line: int, col: int) -> tuple[int, int]:
            decoded = min(ends[min(line, len(ends)) - 1] + col - 1, len(offsets) - 1)
            raw = offsets[decoded]
            row = bisect.bisect_right(self._text_lines, raw)
            return row, raw - self._text_lines[row - 1] + 1

        (line, col), (end_line, end_col) = where(span.line, span.col), where(span.end_line, span.end_col)
        return Span(line, col, end_line, end_col)

    def _offsets(self, cell: int) -> list[int] | None:
        """For each character of the cell's text, its offset in `text` (and one past the end)."""
        if cell not in self._located:
            self._located[cell] = self._locate(cell)
        return self._located[cell]

    def _locate(self, cell: int) -> list[int] | None:
        located = self._source_values.get(cell)
        if located is None or cell not in self.sources:
            return None
        start, end = located
        literals = [start] if self.text[start] == '"' else [i for i, _ in _elements(self.text, start)]
        if not literals:
            return None
        offsets: list[int] = []
        for literal in literals:
            index = literal + 1
            while self.text[index] != '"':
                offsets.append(index)
                if self.text[index] != "\\":
                    index += 1
                elif self.text[index + 1] != "u":
                    index += 2
                else:
                    pair = (
                        0xD800 <= int(self.text[index + 2 : index + 6], 16) < 0xDC00
                        and self.text[index + 6 : index + 8] == "\\u"
                    )
                    index += 12 if pair else 6
            last = index
        offsets.append(last)
        return offsets if len(offsets) == len(self.sources[cell]) + 1 else None

    # --- writing cells back ------------------------------------------------------------------

    def with_cells(self, texts: dict[int, str]) -> str:
        """The JSON text with the `source` of each cell in `texts` replaced, in the style the
        file writes sources in; every other byte as it was."""
        out, position = [], 0
        for number in sorted(texts):
            start, end = self._source_values[number]
            out += [self.text[position:start], self._dumped(texts[number], self.text[start:end])]
            position = end
        return "".join(out) + self.text[position:]

    def _dumped(self, text: str, before: str) -> str:
        plain = self.text.isascii()
        if before.startswith('"'):
            return json.dumps(text, ensure_ascii=plain)
        lines = [json.dumps(line, ensure_ascii=plain) for line in text.splitlines(keepends=True)]
        layout = re.match(r"\[(\r?\n)([ \t]*)", before)
        if layout is None:
            return "[" + ", ".join(lines) + "]"
        newline, indent = layout.groups()
        closing = re.search(r"([ \t]*)\]$", before).group(1)
        return "[" + newline + ("," + newline).join(indent + line for line in lines) + newline + closing + "]"


def _language(data: dict) -> str:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return value[name].lower()
    return ""


def _cell_text(cell: dict, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError(f"not a notebook: cell {number}'s `source` is not text")


def _compile_problem(code: str) -> str:
    """Why the cell is not Python: CPython's complaint, when LibCST (which reads syntax newer
    than the running interpreter) cannot parse the cell either."""
    try:
        compile(code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        problem = f"syntax error at {exc.lineno or 1}:{exc.offset or 1}: {one_line(exc.msg)}"
    except (ValueError, RecursionError, MemoryError) as exc:
        problem = f"cannot read as Python: {type(exc).__name__}"
    else:
        return ""
    from chatbound.syntax.parse import parse_problem

    return "" if parse_problem(code) is None else problem


def _members(text: str, index: int) -> tuple[list[tuple[str, int, int]], int]:
    """An object's (key, value start, value end) in `text`, and the offset past it."""
    members: list[tuple[str, int, int]] = []
    index = _SPACE.match(text, index + 1).end()
    while text[index] != "}":
        key, index = scanstring(text, index + 1)
        index = _SPACE.match(text, _SPACE.match(text, index).end() + 1).end()  # past ':'
        _, end = _DECODER.raw_decode(text, index)
        members.append((key, index, end))
        index = _SPACE.match(text, end).end()
        if text[index] == ",":
            index = _SPACE.match(text, index + 1).end()
    return members, index + 1


def _elements(text: str, index: int) -> list[tuple[int, int]]:
    """An array's (element start, element end) in `text`."""
    elements = []
    index = _SPACE.match(text, index + 1).end()
    while text[index] != "]":
        _, end = _DECODER.raw_decode(text, index)
        elements.append((index, end))
        index = _SPACE.match(text, end).end()
        if text[index] == ",":
            index = _SPACE.match(text, index + 1).end()
    return elements


# --- the run's hooks ------------------------------------------------------------------------------


def read(source: bytes, shown: str) -> Notebook | FileError:
    try:
        return Notebook.parse(source, shown)
    except NotebookError as exc:
        return FileError(shown, str(exc))


def in_cells(result: FileResult, cells: Cells) -> FileResult:
    """A result on the joined code placed in the cells: findings (their related places, fix
    edits, the lines their message and `growth_lines` name), the position a syntax error names
    and the line a warning names (`path:12: ...`)."""
    result.findings = [_finding_in_cells(f, cells) for f in result.findings]
    if result.error is not None:
        message = re.sub(
            r"(syntax error at )(\d+):(\d+)",
            lambda m: m[1] + cells.to_cell(Span(int(m[2]), int(m[3]), int(m[2]), int(m[3]))).where,
            result.error.message,
        )
        result.error = FileError(result.error.path, message)
    named = re.compile(re.escape(result.path) + r":(\d+):")
    placed = [
        named.sub(lambda m: f"{result.path}:{cells.line_label(int(m[1]))}:", warning, count=1)
        for warning in result.warnings
    ]
    result.warnings = [*cells.warnings, *placed]
    return result


_LINES_NAMED = re.compile(r"\((lines?) (\d+(?:, \d+)*)\)")  # a message's "(lines 11, 14)"


def _message_in_cells(message: str, cells: Cells) -> str:
    """`(lines 11, 14)` in a message, as the cells number them: `(cell 3, lines 5, 8)`."""

    def placed(match: re.Match) -> str:
        spans = [cells.to_cell(Span(int(n), 1, int(n), 1)) for n in match.group(2).split(", ")]
        if len({s.cell for s in spans}) == 1:
            return f"(cell {spans[0].cell}, {match.group(1)} {', '.join(str(s.line) for s in spans)})"
        return "(" + ", ".join(f"cell {s.cell} line {s.line}" for s in spans) + ")"

    return _LINES_NAMED.sub(placed, message)


def _finding_in_cells(finding: Finding, cells: Cells) -> Finding:
    span = cells.to_cell(finding.span)
    statement = (
        cells.to_cell(Span(finding.statement_line, 1, finding.statement_line, 1)).line if finding.statement_line else 0
    )
    fix = finding.fix and replace(
        finding.fix, edits=tuple(Edit(cells.to_cell(e.span), e.text) for e in finding.fix.edits)
    )
    related = tuple(Related(cells.to_cell(r.span), r.message) for r in finding.related)
    message = _message_in_cells(finding.message, cells)
    properties = finding.properties
    if "growth_lines" in properties:  # as lines within cells, the cells alongside
        grown = [cells.to_cell(Span(n, 1, n, 1)) for n in properties["growth_lines"]]
        properties = {**properties, "growth_lines": [g.line for g in grown], "growth_cells": [g.cell for g in grown]}
    return replace(
        finding,
        message=message,
        span=span,
        statement_line=statement,
        related=related,
        fix=fix,
        suggestion=_message_in_cells(finding.suggestion, cells),
        properties=properties,
    )


@functools.lru_cache(maxsize=16)
def _load(path: str, stamp: tuple[int, int]) -> Notebook | None:
    try:
        return Notebook.parse(Path(path).read_bytes())
    except (OSError, NotebookError):
        return None


def load(path: str) -> Notebook | None:
    """The notebook at `path` as it is on disk now, for the reporters (read once per version)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return _load(path, (status.st_mtime_ns, status.st_size))


def source_line(path: str, span: Span) -> str:
    """The reported line of a notebook cell, for the text output."""
    notebook = load(path)
    return notebook.line(span.cell, span.line) if notebook is not None else ""


def file_span(path: str, span: Span) -> Span:
    """Where a cell span is in the notebook file's JSON text (SARIF, GitHub annotations)."""
    notebook = load(path) if span.cell else None
    return notebook.file_span(span) if notebook is not None else span
