"""Where a fixed project declares what its fixes import, and the edit that declares it.

A fix that adds `from chatbound.compaction import ...` breaks the deploy unless the project
also declares the engine's distribution. The project is the nearest folder above the fixed
file (up to the repository, else the checked root) holding a pyproject.toml, a
requirements*.txt, a setup.py, a setup.cfg or a Pipfile. In it, exactly one runtime
declaration is edited: PEP 621 `[project].dependencies`, Poetry's
`[tool.poetry.dependencies]`, or the runtime requirements file. None, or several with no way to tell which one the runtime installs,
makes the fix unsafe, and its description says what to add and where.

A lock file governing the declaration (Poetry's poetry.lock, uv's uv.lock, a requirements file
compiled by pip-tools or `uv pip compile`) is never left stale: updating it resolves against an
index, which a linter must not do, so the fix is unsafe and says the one command that adds the
engine and locks it (`poetry add chatbound-compaction`, `uv add chatbound-compaction`, or the
line for requirements.in and the compile command the lock's header names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from chatbound.findings import Edit, Finding, Fix, Span, fix_command, one_line

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ENGINE = "chatbound.compaction"  # the module fixes import
DISTRIBUTION = "chatbound-compaction"
REQUIREMENT = f"{DISTRIBUTION}>=0.1.0"
NOT_RUNTIME = re.compile(r"dev|test|doc|lint|typ|ci\b|build|bench|example|optional", re.I)
OTHER_DECLARATIONS = ("setup.py", "setup.cfg", "Pipfile")  # declared there: not edited by chatbound
NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
INSTALLS_PROJECT = re.compile(r"\s*(-e\s+|--editable\s+)?(\.|file:\.)(\[[^\]]*\])?/?\s*(#.*)?$")


@dataclass(frozen=True)
class Declaration:
    """The file a project's runtime dependencies are declared in, as far as one can tell.

    `path` is the file to edit (None when none can be chosen: `problem` says why);
    `declared` is True when some declaration of the project already names the engine."""

    folder: Path
    path: Path | None = None
    kind: str = ""  # "pep621", "poetry" or "requirements"
    declared: bool = False
    problem: str = ""
    locked: str = ""  # what to run where a lock file governs the declaration (then no edit is made)

    @property
    def where(self) -> str:
        if self.kind == "poetry":
            return f"[tool.poetry.dependencies] of {shown(self.path)}"
        if self.kind == "pep621":
            return f"[project].dependencies of {shown(self.path)}"
        return shown(self.path)

    @property
    def by_hand(self) -> bool:
        """Whether the user declares the engine (no file can be chosen, or a lock governs it)."""
        return bool(self.problem or self.locked)

    def advice(self) -> str:
        """What the user has to do by hand, or what `--fix` does."""
        if self.locked:
            return self.locked
        if self.problem:
            return f"add `{REQUIREMENT}` to the app's runtime dependencies by hand: {self.problem}"
        return f"`--fix` also declares `{REQUIREMENT}` in {self.where}"


def shown(path: Path) -> str:
    """``path`` relative to the working directory when below it (as findings show paths)."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else Path(relative).as_posix()


def _project(folder: Path) -> str:
    """The project folder in words: "the project" for the working directory, not "."."""
    where = shown(folder)
    return "the project" if where == "." else f"the project in {where}"


def needs_engine(fix: Fix | None) -> bool:
    """Whether applying ``fix`` makes its file import the engine."""
    return fix is not None and any(ENGINE in edit.text for edit in fix.edits)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(lines: Iterable[str]) -> set[str]:
    found = set()
    for line in lines:
        match = NAME.match(line)
        if match and not line.lstrip().startswith(("#", "-")):
            found.add(normalized(match.group(1)))
    return found


def project_folder(file: Path, root: Path) -> Path | None:
    """The nearest folder above ``file`` holding a dependency declaration, searched up to the
    repository (the folder with `.git`), else up to ``root`` when the file lies below it."""
    folders = list(file.resolve().parents)
    repository = next((i for i, folder in enumerate(folders) if (folder / ".git").exists()), None)
    if repository is not None:
        folders = folders[: repository + 1]
    else:
        resolved = root.resolve()
        folders = folders[: folders.index(resolved) + 1] if resolved in folders else folders[:1]
    for folder in folders:
        if (
            (folder / "pyproject.toml").is_file()
            or any(folder.glob("requirements*.txt"))
            or any((folder / name).is_file() for name in OTHER_DECLARATIONS)
        ):
            return folder
    return None


def _runtime_requirements(folder: Path) -> tuple[list[Path], list[Path]]:
    """(runtime requirements files, all of them): `requirements.txt` when present, else those
    whose name does not say dev, test, docs, lint, typing, CI, build or bench."""
    every = sorted(p for p in folder.glob("requirements*.txt") if p.is_file())
    plain = [p for p in every if p.name == "requirements.txt"]
    return plain or [p for p in every if not NOT_RUNTIME.search(p.stem[len("requirements") :])], every


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _pyproject(folder: Path, requirements: bool) -> tuple[str, list[Path], bool]:
    """What folder/pyproject.toml declares: its kind ("" when it declares nothing, a
    `[project]` without dependencies beside ``requirements`` files included; "dynamic" when
    setuptools reads them from files, then those files), and whether it names the engine.
    Raises ValueError when it cannot be read."""
    path = folder / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        project, tool = data.get("project"), data.get("tool", {})
        poetry = tool.get("poetry", {}).get("dependencies")
        listed = [*(project or {}).get("dependencies", []), *(poetry or {})]
        dynamic = project is not None and "dependencies" in project.get("dynamic", [])
        files = tool.get("setuptools", {}).get("dynamic", {}).get("dependencies", {}).get("file", []) if dynamic else []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, TypeError) as exc:
        raise ValueError(f"{shown(path)} cannot be read ({one_line(exc)})") from None
    declared = normalized(DISTRIBUTION) in _names(str(item) for item in listed)
    if dynamic:
        return "dynamic", [folder / name for name in ([files] if isinstance(files, str) else files)], declared
    if project is not None and (project.get("dependencies") or not (poetry is not None or requirements)):
        return "pep621", [], declared
    return ("poetry" if poetry is not None else ""), [], declared


def declaration(folder: Path) -> Declaration:
    """Which file of ``folder`` (a project folder) declares its runtime dependencies."""
    requirements, every = _runtime_requirements(folder)
    texts = {p: _read(p) for p in every}
    kind, files, declared = "", [], False
    if (folder / "pyproject.toml").is_file():
        try:
            kind, files, declared = _pyproject(folder, bool(requirements))
        except ValueError as exc:
            return Declaration(folder, problem=str(exc))
    if kind == "dynamic":  # setuptools reads the dependencies from these files
        if len(files) != 1 or not files[0].is_file():
            problem = f"{shown(folder / 'pyproject.toml')} declares its dependencies dynamically"
            return Declaration(folder, declared=declared, problem=problem)
        kind, requirements, texts[files[0]] = "", files, _read(files[0])
    declared = declared or any(normalized(DISTRIBUTION) in _names(text.splitlines()) for text in texts.values())
    candidates = [(folder / "pyproject.toml", kind)] if kind else []
    if candidates and any(INSTALLS_PROJECT.match(line) for p in requirements for line in texts[p].splitlines()):
        requirements = []  # `-e .`: the requirements file installs the project's own declaration
    if len(requirements) > 1:
        names = ", ".join(p.name for p in requirements)
        return Declaration(
            folder, declared=declared, problem=f"{_project(folder)} has several runtime requirements files ({names})"
        )
    candidates += [(p, "requirements") for p in requirements]
    others = [name for name in OTHER_DECLARATIONS if (folder / name).is_file()]
    if others and not candidates:
        return Declaration(
            folder, declared=declared, problem=f"{_project(folder)} declares its dependencies in {others[0]}"
        )
    if not candidates:
        return Declaration(folder, declared=declared, problem=f"{_project(folder)} declares no dependencies")
    if len(candidates) > 1 or others:
        names = ", ".join([p.name for p, _ in candidates] + others)
        return Declaration(
            folder,
            declared=declared,
            problem=f"{_project(folder)} declares dependencies in {names}: which one the runtime installs is not clear",
        )
    path, kind = candidates[0]
    locked = _lock_command(path, kind, texts.get(path, ""))
    if locked:
        return Declaration(folder, path, kind, declared, locked=locked)
    if kind == "requirements" and "--hash" in texts[path]:
        return Declaration(folder, path, kind, declared, f"{shown(path)} pins hashes (add it with its hash)")
    return Declaration(folder, path, kind, declared)


# The header pip-tools (7.x) and uv (0.5-0.9) write atop a compiled requirements file, then the command.
COMPILED = re.compile(r"^#.*autogenerated by (?:pip-compile|uv)\b", re.I | re.M)
COMPILE_COMMAND = re.compile(r"following command:[ \t]*\r?\n(?:#[ \t]*\r?\n)*#[ \t]+(\S[^\r\n]*)", re.I)


def _lock_command(path: Path, kind: str, text: str) -> str:
    """The advice for a declaration a lock file governs, or "": the one command that adds the
    engine and locks it. poetry.lock beside a Poetry or PEP 621 pyproject (Poetry 2 reads
    both) is Poetry's; uv.lock is uv's; a requirements file whose header says pip-compile or
    `uv pip compile` wrote it, or with a requirements.in beside it, is compiled from that."""
    folder = path.parent
    lock = "a stale lock fails the next locked install"
    if kind in ("poetry", "pep621") and (folder / "poetry.lock").is_file():
        return f"run `poetry add {DISTRIBUTION}`: poetry.lock governs {shown(path)}, and {lock}"
    if kind == "pep621" and (folder / "uv.lock").is_file():
        return f"run `uv add {DISTRIBUTION}`: uv.lock governs {shown(path)}, and {lock}"
    if kind != "requirements":
        return ""
    head = text[:2000]
    header = COMPILE_COMMAND.search(head) if COMPILED.search(head) else None
    source = path.with_suffix(".in")
    if header is None and not source.is_file():
        return ""
    command = header.group(1).strip() if header else f"pip-compile {shown(source)}"
    named = next((word for word in command.split() if word.endswith(".in")), None)
    if named is not None:
        source = folder / named
    return (
        f"add the line `{REQUIREMENT}` to {shown(source)}, then run `{command}`: "
        f"{shown(path)} is compiled from it, and an edit would be lost on the next compile"
    )


def declaration_for(file: Path, root: Path, memo: dict | None = None) -> Declaration:
    """The declaration of the project ``file`` belongs to (``memo`` caches it per folder)."""
    folder = project_folder(file, root)
    if folder is None:
        return Declaration(
            file.resolve().parent,
            problem=f"no pyproject.toml, requirements*.txt, setup.py or Pipfile above {shown(file.absolute())}",
        )
    memo = {} if memo is None else memo
    if folder not in memo:
        memo[folder] = declaration(folder)
    return memo[folder]


def with_declared_engine(findings: list[Finding], path: Path, root: Path, memo: dict | None = None) -> list[Finding]:
    """The findings of the file ``path``, their fixes carrying the edit that declares the
    engine (the one `--fix` makes, so SARIF and the editor offer it too), or, when no file can
    be chosen, unsafe and saying what to add by hand."""
    memo = {} if memo is None else memo
    out = []
    for finding in findings:
        if needs_engine(finding.fix):
            found = declaration_for(path, root, memo)
            if not found.declared:
                finding = _declaring(finding, found, memo)
        out.append(finding)
    return out


def _declaring(finding: Finding, found: Declaration, memo: dict) -> Finding:
    fix, suggestion = finding.fix, finding.suggestion
    edit = None if found.by_hand else engine_edit(found, memo)
    if edit is None:
        advice = found.advice() if found.by_hand else f"add `{REQUIREMENT}` to {found.where} by hand"
        suggestion = suggestion.replace(f". {fix_command(True)} ", f". {fix_command(False)} ", 1)
        fix = replace(fix, description=f"{fix.description}; {advice}", safe=False)
        return replace(finding, fix=fix, suggestion=f"{suggestion} {advice[0].upper()}{advice[1:]}.")
    said = f"{fix_command(fix.safe)} also declares `{REQUIREMENT}` in {found.where} ({edit.path}:{edit.span.line})"
    fix = replace(fix, description=f"{fix.description}; {found.advice()}", edits=(*fix.edits, edit))
    return replace(finding, fix=fix, suggestion=f"{suggestion} {said}.")


def engine_edit(found: Declaration, memo: dict) -> Edit | None:
    """The edit of ``found.path`` that declares the engine, as `declared_text` makes it (the
    text between the unchanged start and end), or None when the file cannot be read."""
    key = ("edit", found.path)
    if key not in memo:
        try:
            text = found.path.read_bytes().decode("utf-8")
            memo[key] = _changed_part(text, declared_text(found, text), shown(found.path))
        except (OSError, UnicodeDecodeError, ValueError):
            memo[key] = None
    return memo[key]


def _changed_part(before: str, after: str, path: str) -> Edit:
    start = len(os.path.commonprefix([before, after]))
    end = len(os.path.commonprefix([before[start:][::-1], after[start:][::-1]]))

    def position(offset: int) -> tuple[int, int]:
        lines = re.split(r"\r\n|\r|\n", before[:offset])
        return len(lines), len(lines[-1]) + 1

    (line, col), (end_line, end_col) = position(start), position(len(before) - end)
    return Edit(Span(line, col, end_line, end_col), after[start : len(after) - end], path)


def declared_text(found: Declaration, text: str) -> str:
    """``text`` (the declaration file's) with the engine added."""
    if found.kind == "requirements":
        newline = "\r\n" if "\r\n" in text else "\n"
        return text + ("" if not text or text.endswith(("\n", "\r")) else newline) + REQUIREMENT + newline
    import tomlkit

    document = tomlkit.parse(text)
    if found.kind == "poetry":
        document["tool"]["poetry"]["dependencies"][DISTRIBUTION] = REQUIREMENT[len(DISTRIBUTION) :]
        return tomlkit.dumps(document)
    project = document["project"]
    if "dependencies" not in project:
        project["dependencies"] = tomlkit.array()
    project["dependencies"].append(REQUIREMENT)
    return tomlkit.dumps(document)
