"""One run: discover files, analyze each, filter by per-file ignores. CLI and LSP share it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pathspec

from .analysis import FileResult, analyze_source
from .config import Settings
from .discovery import discover
from .findings import FileError, Finding
from .registry import matches, select_rules
from .rule import Rule


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


def display_path(path: Path) -> str:
    """Relative to the working directory when below it, as ruff prints paths."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def rule_options(settings: Settings) -> dict:
    return {**settings.options, "encoding": settings.encoding, "turn-tokens": settings.turn_tokens}


def check_file(path: Path, rules: Sequence[type[Rule]], options: dict) -> FileResult:
    shown = display_path(path)
    try:
        source = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, error=FileError(shown, f"cannot read: {exc.strerror or exc}"))
    return analyze_source(source, shown, rules, options, directory=str(path.resolve().parent))


def per_file_ignored(settings: Settings, finding: Finding, path: Path) -> bool:
    for glob, codes in settings.per_file_ignores.items():
        try:
            relative = path.resolve().relative_to(settings.root).as_posix()
        except ValueError:
            relative = path.as_posix()
        if pathspec.GitIgnoreSpec.from_lines([glob]).match_file(relative) and any(
            matches(finding.rule_id, code) for code in codes
        ):
            return True
    return False


def run(paths: list[Path], settings: Settings, force_exclude: bool = False) -> RunResult:
    rules = select_rules(settings.select, settings.ignore)
    found = discover(paths, settings.root, settings.excludes, force_exclude)
    result = RunResult(errors=list(found.errors), files=len(found.files))
    options = rule_options(settings)
    for path in found.files:
        file_result = check_file(path, rules, options)
        if file_result.error:
            result.errors.append(file_result.error)
        result.warnings.extend(file_result.warnings)
        result.findings.extend(f for f in file_result.findings if not per_file_ignored(settings, f, path))
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def check_source(source: bytes | str, path: Path, settings: Settings) -> FileResult:
    """One file's findings from text that may be unsaved (the language server's view),
    with the same rules, options and per-file ignores as `run`."""
    rules = select_rules(settings.select, settings.ignore)
    directory = str(path.resolve().parent)
    result = analyze_source(source, display_path(path), rules, rule_options(settings), directory=directory)
    result.findings = [f for f in result.findings if not per_file_ignored(settings, f, path)]
    return result
