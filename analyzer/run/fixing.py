"""Fixing a run's findings: each file's fixes tried and kept only where they hold
(`chatbound.run.trial`, notebooks cell by cell), the files written atomically, and the engine
declared as a dependency where a kept fix imports it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatbound.findings import FileError, Finding
from chatbound.fixes.apply import FileFix, fixable
from chatbound.fixes.dependencies import DISTRIBUTION, ENGINE, declaration_for, declared_text, needs_engine
from chatbound.run.notebooks import is_notebook
from chatbound.run.runner import read_source
from chatbound.run.trial import fix_source

if TYPE_CHECKING:  # LibCST loads when a fix is tried: the CLI imports this module on every run
    from chatbound.analysis.rule import Rule


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
            from chatbound.run.notebook_fixes import fix_notebook as fixer
        fixed = fixer(source, shown, file_findings, rules, options, unsafe, str(path.resolve().parent))
        if fixed.error:
            report.errors.append(f"{shown}: {fixed.error}")
            continue
        if write and fixed.changed and not _written(path, fixed.data(), roots, report, shown):
            continue  # a fix not written declares nothing
        if any(needs_engine(f.fix) for f in fixed.applied):
            found = declaration_for(path, project or Path.cwd(), memo)
            if found.by_hand and not found.declared:
                report.warnings.append(f"{shown}: the fixes import {ENGINE}: {found.advice()}")
            elif not found.declared:
                declarations[found.path] = found
        report.files.append(fixed)
    for found in declarations.values():
        report.files.extend(_declared(found, write, roots, report))
    return report


def _written(path: Path, data: bytes, roots: Sequence[Path], report: FixReport, shown: str) -> bool:
    from chatbound.fixes.atomic import write_atomic

    try:
        write_atomic(path, data, roots or [Path.cwd()])
    except OSError as exc:
        report.errors.append(f"{shown}: {exc.strerror or exc}")
        return False
    return True


def _declared(found, write: bool, roots: Sequence[Path], report: FixReport) -> list[FileFix]:
    """The declaration file with the engine added (written unless ``write`` is False)."""
    from chatbound.run.discovery import display_path

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
    from chatbound.run.registry import select_rules
    from chatbound.run.runner import rule_options, run

    rules = select_rules(settings.select, settings.ignore)
    report = fix_findings(
        result.active, rules, rule_options(settings), unsafe, write, roots=paths, project=settings.root
    )
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
                f"warning: {finding.path}:{finding.span.where}: fix for {finding.rule_id} not applied: {reason}"
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
