"""Applying fixes: edit, re-parse, re-analyze, keep only what fixed its finding, write atomically.

Each fix is tried on top of the ones already kept, always on the original text (the spans
refer to it). A fix stays only when the edited file parses and the same rule no longer
flags the same history in the same scope; otherwise it is dropped with the reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .dependencies import DISTRIBUTION, ENGINE, declaration_for, declared_text, needs_engine
from .findings import Edit, FileError, FileResult, Finding
from .notebooks import is_notebook
from .runner import read_source

if TYPE_CHECKING:  # LibCST loads when a fix is tried: the CLI imports this module on every run
    from .rule import Rule

@dataclass
class FileFix:
    """What fixing one file did: the text before and after, the findings fixed and dropped."""

    path: str
    original: str = ""
    fixed: str = ""
    applied: list[Finding] = field(default_factory=list)
    dropped: list[tuple[Finding, str]] = field(default_factory=list)
    error: str = ""
    encoding: str = "utf-8"  # LibCST's: "utf-8-sig" writes the BOM back
    edits: list[Edit] = field(default_factory=list)  # those of the fixes kept, as made

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def diff(self) -> str:
        """A unified diff that `git apply` and `patch` read, a last line without its newline
        marked as git marks it."""
        import difflib  # loaded where a diff is made: `fix_summary` is on every text report's path

        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True), self.fixed.splitlines(keepends=True), f"a/{self.path}", f"b/{self.path}"
        )
        return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)

    def data(self) -> bytes:
        return self.fixed.encode(self.encoding)


def fixable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and finding.suppressed is None and (finding.fix.safe or unsafe)


def apply_edits(code: str, edits: Iterable[Edit]) -> str:
    """``code`` with every edit made; identical edits count once, insertions at one place keep
    their order, overlapping edits raise."""
    from .edits import source_lines

    starts = [0]
    for line in source_lines(code):
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[min(line, len(starts)) - 1] + col - 1

    spans = sorted(
        dict.fromkeys((offset(e.span.line, e.span.col), offset(e.span.end_line, e.span.end_col), e.text) for e in edits),
        key=lambda item: (item[0], item[1]),
    )
    out, position = [], 0
    for start, end, text in spans:
        if start < position:
            raise ValueError("edits overlap")
        out += [code[position:start], text]
        position = end
    return "".join(out) + code[position:]


def _imported_already(edit: Edit, kept: Sequence[Edit]) -> bool:
    """An import a kept fix already inserts: fixes are tried top down, so that one sits above
    this fix's use too (an import is placed above its use: `fixes.import_edit`)."""
    inserts = edit.span.line == edit.span.end_line and edit.span.col == edit.span.end_col
    return inserts and edit.text.startswith(("from ", "import ")) and any(k.text == edit.text for k in kept)


def _key(finding: Finding) -> tuple:
    return (finding.rule_id, finding.scope, str(finding.properties.get("history", "")))


def _still_flagged(finding: Finding, before: Sequence[Finding], after: FileResult) -> bool:
    """The same rule still flags the same history in the same scope as often as before."""
    key = _key(finding)
    was = Counter(_key(f) for f in before if f.suppressed is None)[key]
    now = Counter(_key(f) for f in after.findings if f.suppressed is None)[key]
    return now >= was


def fix_source(
    source: bytes,
    path: str,
    findings: Sequence[Finding],
    rules: Sequence[type[Rule]],
    options: dict[str, Any],
    unsafe: bool = False,
    directory: str = "",
) -> FileFix:
    """Try the fixes of ``findings`` (one file) in order and keep those that hold."""
    import libcst as cst

    from .analysis import analyze_source, describe_error

    result = FileFix(path)
    try:
        module = cst.parse_module(source)
    except Exception as exc:
        result.error = describe_error(exc, source)
        return result
    result.encoding = module.encoding
    result.original = result.fixed = module.code
    kept: list[Edit] = []
    for finding in (f for f in findings if fixable(f, unsafe)):
        trial = kept + [edit for edit in finding.fix.edits if not edit.path and not _imported_already(edit, kept)]
        try:
            text = apply_edits(module.code, trial)
        except ValueError:
            result.dropped.append((finding, "its edit overlaps another fix"))
            continue
        after = analyze_source(text, path, rules, options, directory=directory)
        if after.error is not None:
            result.dropped.append((finding, f"the edited file does not parse ({after.error.message})"))
        elif _still_flagged(finding, findings, after):
            result.dropped.append((finding, "the edited file is still flagged for the same history"))
        else:
            kept, result.fixed = trial, text
            result.applied.append(finding)
    result.edits = kept
    return result


@dataclass
class FixReport:
    files: list[FileFix] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if not f.error)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files if f.changed)


def fix_findings(
    findings: Sequence[Finding],
    rules: Sequence[type[Rule]],
    options: dict[str, Any],
    unsafe: bool = False,
    write: bool = True,
    roots: Sequence[Path] = (),
    project: Path | None = None,
) -> FixReport:
    """Fix every file that has fixable findings, and declare the engine where a fix imports
    it (``project``: the checked root, where the search for a declaration stops without a
    repository); write them unless ``write`` is False."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if fixable(finding, unsafe):
            by_path.setdefault(finding.path, [])
    for finding in findings:
        if finding.path in by_path:
            by_path[finding.path].append(finding)
    report = FixReport()
    memo: dict = {}
    declarations = {}
    for shown, file_findings in by_path.items():
        path = Path(shown)
        source = read_source(path, shown)
        if isinstance(source, FileError):
            report.errors.append(str(source))
            continue
        fixer = fix_source
        if is_notebook(shown):
            from .notebook_fixes import fix_notebook as fixer
        fixed = fixer(source, shown, file_findings, rules, options, unsafe, str(path.resolve().parent))
        if fixed.error:
            report.errors.append(f"{shown}: {fixed.error}")
            continue
        if any(needs_engine(f.fix) for f in fixed.applied):
            found = declaration_for(path, project or Path.cwd(), memo)
            if found.problem and not found.declared:
                report.warnings.append(f"{shown}: the fixes import {ENGINE}: {found.advice()}")
            elif not found.declared:
                declarations[found.path] = found
        if write and fixed.changed and not _written(path, fixed.data(), roots, report, shown):
            continue
        report.files.append(fixed)
    for found in declarations.values():
        report.files.extend(_declared(found, write, roots, report))
    return report


def _written(path: Path, data: bytes, roots: Sequence[Path], report: FixReport, shown: str) -> bool:
    from .atomic import write_atomic

    try:
        write_atomic(path, data, roots or [Path.cwd()])
    except OSError as exc:
        report.errors.append(f"{shown}: {exc.strerror or exc}")
        return False
    return True


def _declared(found, write: bool, roots: Sequence[Path], report: FixReport) -> list[FileFix]:
    """The declaration file with the engine added (written unless ``write`` is False)."""
    from .runner import display_path

    shown = display_path(found.path)
    try:
        raw = found.path.read_bytes()
        original = raw.decode("utf-8")
        fixed = FileFix(shown, original, declared_text(found, original))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        report.errors.append(f"{shown}: cannot declare {DISTRIBUTION}: {exc}")
        return []
    if write and not _written(found.path, fixed.data(), [*roots, found.path], report, shown):
        return []
    return [fixed]


def fix_run(
    result, settings, paths: Sequence[Path], unsafe: bool, write: bool, force_exclude: bool = False, cache: bool = False
):
    """`check --fix` / `--diff`: fix the run's findings, then re-run when files changed (the
    unchanged files come from the cache when ``cache``)."""
    from .registry import select_rules
    from .runner import rule_options, run

    rules = select_rules(settings.select, settings.ignore)
    report = fix_findings(result.active, rules, rule_options(settings), unsafe, write, roots=paths, project=settings.root)
    if write and report.applied:
        result = run(list(paths), settings, force_exclude=force_exclude, cache=cache)
    return result, report


def fix_messages(report: FixReport) -> list[str]:
    """One line per fix that was dropped or file that could not be fixed."""
    lines = [f"error: {error}" for error in report.errors]
    lines += [f"warning: {warning}" for warning in report.warnings]
    for file in report.files:
        for finding, reason in file.dropped:
            lines.append(
                f"warning: {finding.path}:{finding.span.where}: "
                f"fix for {finding.rule_id} not applied: {reason}"
            )
    return lines


def fix_summary(findings: Sequence[Finding], report: FixReport | None) -> str:
    """`Fixed 2 findings. 1 fixable with --fix; 1 more with --unsafe-fixes.` ("" when nothing to say)."""
    parts = []
    if report is not None and report.applied:
        parts.append(f"Fixed {report.applied} finding{'s' if report.applied != 1 else ''}.")
    tried = {f.fingerprint for file in (report.files if report else ()) for f, _ in file.dropped}
    left = [f for f in findings if f.fingerprint not in tried]
    safe = sum(1 for f in left if fixable(f, False))
    more = sum(1 for f in left if fixable(f, True)) - safe
    if safe:
        parts.append(f"{safe} fixable with `--fix`.")
    if more:
        parts.append(f"{more} more with `--unsafe-fixes`." if safe else f"{more} fixable with `--fix --unsafe-fixes`.")
    return " ".join(parts)
