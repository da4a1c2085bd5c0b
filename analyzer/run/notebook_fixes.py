"""`--fix` and `--diff` on a notebook: tried and checked on the joined code like any fix, then
the kept edits made in the cells' own text and written into the file's JSON text
(`Notebook.with_cells`: only the changed cells' `source` values are replaced)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from chatbound.findings import Edit, FileError, Finding
from chatbound.fixes.apply import FileFix, apply_edits
from chatbound.run.notebooks import Cells, Notebook, NotebookError, read
from chatbound.run.trial import fix_source


@dataclass
class CellChange:
    number: int
    before: str
    after: str


@dataclass
class NotebookFix(FileFix):
    """`original` and `fixed` are the file's JSON text; the diff is shown per cell, as ruff
    shows it (`a/chat.ipynb:cell 3`)."""

    changes: list[CellChange] = field(default_factory=list)

    def diff(self) -> str:
        """A unified diff per changed cell; a cell's last line has no newline (nbformat keeps
        none), marked as git marks it."""
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for change in self.changes
            for line in difflib.unified_diff(
                change.before.splitlines(keepends=True),
                change.after.splitlines(keepends=True),
                f"a/{self.path}:cell {change.number}",
                f"b/{self.path}:cell {change.number}",
            )
        )


def fix_notebook(
    source: bytes, path: str, findings: Sequence[Finding], rules, options, unsafe: bool = False, directory: str = ""
) -> FileFix:
    notebook = read(source, path)
    if isinstance(notebook, FileError):
        return FileFix(path, error=notebook.message)
    cells = notebook.index
    joined, dropped, original_of = [], [], {}
    for finding in findings:
        moved = _in_joined(finding, cells)
        if moved.fix is not None and any(cells.touches_placeholder(e.span) for e in moved.fix.edits):
            dropped.append((finding, "its edit touches a line magic or shell escape"))
            moved = replace(moved, fix=None)
        original_of[id(moved)] = finding
        joined.append(moved)
    tried = fix_source(notebook.code.encode("utf-8"), path, joined, rules, options, unsafe, directory)
    result = NotebookFix(
        path,
        original=notebook.text,
        fixed=notebook.text,
        error=tried.error,
        applied=[original_of[id(f)] for f in tried.applied],
        dropped=dropped + [(original_of[id(f)], reason) for f, reason in tried.dropped],
    )
    if tried.error or not result.applied:
        return result
    by_cell: dict[int, list[Edit]] = {}
    for edit in tried.edits:
        span = cells.to_cell(edit.span)
        by_cell.setdefault(span.cell, []).append(Edit(replace(span, cell=0), edit.text))
    texts = {number: apply_edits(notebook.sources[number], edits) for number, edits in by_cell.items()}
    result.changes = [CellChange(number, notebook.sources[number], texts[number]) for number in sorted(texts)]
    result.fixed = notebook.with_cells(texts)
    try:  # what is written must read back as the code the fixes were checked on
        same = Notebook.parse(result.fixed).code == tried.fixed
    except NotebookError:
        same = False
    if not same:
        result.error = "not fixed: the edited notebook would not read back as the checked code (please report it)"
        result.fixed, result.applied, result.changes = notebook.text, [], []
    return result


def _in_joined(finding: Finding, cells: Cells) -> Finding:
    """The finding with its fix's edits placed in the joined code (where `fix_source` applies them)."""
    if finding.fix is None:
        return finding
    edits = tuple(Edit(cells.to_joined(e.span), e.text) for e in finding.fix.edits if not e.path)  # declared apart
    return replace(finding, fix=replace(finding.fix, edits=edits))
