"""One run: discover files, analyze each, filter by per-file ignores. CLI and LSP share it.

The order of work, cheapest first: read the file (at most MAX_FILE_BYTES), the result
cache, the textual pre-check (a file holding none of the selected rules' triggers is not
parsed; one that is runs only the rules whose triggers it holds), and only then a LibCST
parse, in a process pool when there is enough to parse.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from chatbound.findings import FileError, FileResult, Finding, one_line, with_fingerprints
from chatbound.fixes.dependencies import with_declared_engine
from chatbound.run.cache import Cache
from chatbound.run.config import Settings, check_options
from chatbound.run.discovery import below, discover, display_path  # noqa: F401  (display_path: the runner's callers print it)
from chatbound.run.notebooks import MAX_NOTEBOOK_BYTES, Cells, in_cells, is_notebook, read
from chatbound.run.registry import all_rules, matches, select_rules

if (
    TYPE_CHECKING
):  # LibCST, the rules and process pools load where a file is parsed: a run served from the cache loads none
    from concurrent.futures import Future, ProcessPoolExecutor

    from chatbound.analysis.project.users import WorkspaceLinks
    from chatbound.analysis.rule import Rule
    from chatbound.vocabulary.summaries import Linked, Links

MAX_FILE_BYTES = 2 * 1024 * 1024  # larger files (generated code, data) are reported, not parsed
PARALLEL_MIN_BYTES = 512 * 1024  # less to parse than this runs in this process
POOL_PRECHECK_BYTES = 8 * 1024 * 1024  # more to pre-check than this is pre-checked in the pool too
PROGRESS_MIN_FILES = 200
MB = 1 << 20


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: int = 0
    parsed: list[str] = field(default_factory=list)  # files parsed by LibCST in this run
    cached: int = 0  # files whose result came from the cache
    linked: int = 0  # files whose result rests on other modules (linked through their imports, or checked against them)
    project_seconds: float = 0.0  # spent by the project pass (linking, summaries), over all processes
    notes: list[str] = field(default_factory=list)  # what the run left out, and how to have it

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


@dataclass(frozen=True)
class _Job:
    """A file to parse, as plain data for a worker process."""

    index: int
    shown: str
    directory: str
    source: bytes
    rules: tuple[type[Rule], ...]  # those that may report on the file
    narrowed: bool  # True: `rules` are already those whose triggers occur in the file
    valid: bool = False  # True: CPython parsed the file while narrowing (no syntax check left)
    cells: Cells | None = None  # a notebook: `source` is its joined code, placed back in cells
    project: tuple[str, str] | None = None  # (root, cache key): link the file through its imports
    linked: Linked | None = None  # what the project pass linked for it (chatbound.analysis.project)
    links: Links | None = None  # what its importers say about its names (chatbound.analysis.project.users)


def rule_options(settings: Settings) -> dict:
    return {**settings.options, "encoding": settings.encoding, "turn-tokens": settings.turn_tokens}


def _folder(path: Path, known: dict[str, str]) -> str:
    """The folder of the file, through symlinks (`path.resolve().parent`), resolved once per
    folder: a tree of thousands of files has a few hundred folders."""
    if os.path.islink(path):
        return str(path.resolve().parent)
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in known:
        known[folder] = os.path.realpath(folder)
    return known[folder]


def read_source(path: Path, shown: str) -> bytes | FileError:
    """The file's bytes, or why they cannot be had: missing, unreadable, a symlink loop,
    not a regular file (a FIFO would block the run), or larger than MAX_FILE_BYTES (a
    notebook: MAX_NOTEBOOK_BYTES, most of it outputs; its code is held to MAX_FILE_BYTES)."""
    limit = MAX_NOTEBOOK_BYTES if is_notebook(shown) else MAX_FILE_BYTES
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            status = os.fstat(handle)
            if not stat.S_ISREG(status.st_mode):
                return FileError(shown, "not a regular file")
            if status.st_size > limit:
                return _too_large(shown, status.st_size, limit)
            chunks = [os.read(handle, status.st_size + 1)]  # all of it, unless it grew since fstat
            while chunks[-1]:
                chunks.append(os.read(handle, 1 << 20))
            return chunks[0] if len(chunks) == 2 else b"".join(chunks)  # no copy of an unchanged file
        finally:
            os.close(handle)
    except OSError as exc:
        return FileError(shown, f"cannot read: {one_line(exc.strerror or exc)}")


def _regular(path: str) -> os.stat_result | None:
    """The stat of a regular file, taken before it is read (`StatIndex.record`); None for
    anything else, which `read_source` reports."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status if stat.S_ISREG(status.st_mode) else None


def _every_source(files: list[Path], sources: dict[Path, bytes]) -> dict[Path, bytes]:
    """The bytes of every Python file of the run, in its order, for the project pass: those it
    read, and those the cache knew by their stat, read now."""
    every = {}
    for path in files:
        source = sources.get(path)
        if source is None and not is_notebook(path.name):
            source = read_source(path, path.name)
        if isinstance(source, bytes):
            every[path] = source
    return every


def _too_large(shown: str, size: int, limit: int) -> FileError:
    return FileError(
        shown,
        f"file too large to analyze ({size / 1048576:.1f} MB; the limit is "
        f"{limit // 1048576} MB): generated code or data? exclude it",
    )


def check_file(path: Path, rules: Sequence[type[Rule]], options: dict) -> FileResult:
    shown = display_path(path)
    source = read_source(path, shown)
    if isinstance(source, FileError):
        return FileResult(shown, error=source)
    return _analyze_one(source, shown, rules, options, str(path.resolve().parent))


def _analyze_one(
    source: bytes | str,
    shown: str,
    rules: Sequence[type[Rule]],
    options: dict,
    directory: str,
    linked: Linked | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> FileResult:
    """One file, a notebook's code cells included (`linked`: what the project pass gave a module)."""
    from chatbound.run.pipeline import analyze_source

    asked = {"cancelled": cancelled} if cancelled is not None else {}
    if not is_notebook(shown):
        return analyze_source(source, shown, rules, options, directory=directory, project=linked, **asked)
    notebook = read(source, shown)
    if isinstance(notebook, FileError):
        return FileResult(shown, error=notebook)
    return in_cells(analyze_source(notebook.code, shown, rules, options, directory=directory, **asked), notebook.index)


def per_file_ignores(settings: Settings) -> list[tuple[pathspec.GitIgnoreSpec, list[str]]]:
    """`per-file-ignores` compiled once per run: (glob, the codes it silences)."""
    return [(pathspec.GitIgnoreSpec.from_lines([glob]), codes) for glob, codes in settings.per_file_ignores.items()]


def without_ignored(findings: list[Finding], path: Path, settings: Settings, ignores) -> list[Finding]:
    """The findings of one file that its `per-file-ignores` entries do not silence."""
    if not ignores or not findings:
        return findings
    relative = project_path(path, settings.root)
    codes = [code for spec, codes in ignores if spec.match_file(relative) for code in codes]
    return [f for f in findings if not any(matches(f.rule_id, code) for code in codes)]


def run(
    paths: list[Path],
    settings: Settings,
    force_exclude: bool = False,
    *,
    cache: bool = False,
    precheck: bool = True,
    progress: bool = False,
) -> RunResult:
    """Analyze every Python file under `paths`.

    `cache` reads and writes `.chatbound_cache/` under `settings.root` (the CLI turns it on;
    `--no-cache` turns it off); `precheck=False` parses every file; `progress` shows a bar
    on stderr for long runs when stderr is a terminal.
    """
    found = discover(paths, settings.root, settings.excludes, force_exclude, settings.notebooks)
    result = RunResult(errors=list(found.errors), files=len(found.names))
    options = rule_options(settings)
    store = Cache.open(settings.root, settings.select, settings.ignore, options) if cache else None

    outcomes: list[FileResult | None] = [None] * len(found.names)
    misses: list[tuple[int, Path, str, bytes]] = []
    cwd = os.getcwd()
    module_bytes = 0  # of the modules (notebooks are checked, never imported)
    sources: dict[Path, bytes] = {}
    for index, name in enumerate(found.names):
        shown = display_path(name, cwd)
        status = _regular(name) if store is not None else None
        if status is not None and (hit := store.known(name, shown, status)) is not None:
            outcomes[index] = hit  # unchanged by its stat: not read
            result.cached += 1
            module_bytes += 0 if is_notebook(shown) else status.st_size
            continue
        path = Path(name)
        source = read_source(path, shown)
        if isinstance(source, bytes) and not is_notebook(shown):
            sources[path] = source
            module_bytes += len(source)
        if isinstance(source, FileError):
            outcomes[index] = FileResult(shown, error=source)
        elif store is not None and (hit := store.get(shown, source, name, status)) is not None:
            outcomes[index] = hit
            result.cached += 1
        else:
            misses.append((index, path, shown, source))
    rules: tuple[type[Rule], ...] = ()
    pool = None
    if sum(len(miss[3]) for miss in misses) >= POOL_PRECHECK_BYTES and _workers() > 1:
        pool = _started_pool(_workers())  # its workers load LibCST and the rules while this process reads on
    if misses:  # a run served from the cache loads no rule
        check_options(settings)
        rules = select_rules(settings.select, settings.ignore)
    # the project pass, for trees of up to project-max-mb of modules (read in full when a file is analysed):
    # above it, its summaries of library code cost more than the rest of the run (docs/project-model.md)
    small = settings.project_max_mb > 0 and module_bytes <= settings.project_max_mb * MB
    if module_bytes > settings.project_max_mb * MB > 0:
        result.notes.append(
            f"modules are checked one at a time, not linked through their imports: {module_bytes / MB:.1f} MB of "
            f"Python modules is above project-max-mb = {settings.project_max_mb} (raise it in [tool.chatbound] "
            f"or with --project-max-mb)"
        )
    project = (str(settings.root), store.key if store is not None else "") if small else None
    links = _project_links(_every_source(found.files, sources), settings.root) if project is not None and misses else {}
    if project is not None and misses:
        from chatbound.run.project import new_run

        new_run()
    jobs: list[_Job] = []
    done: list[tuple[_Job, FileResult]] = []
    notebooks: dict[int, bytes] = {}  # a notebook's own bytes, which key its cache entry
    folders: dict[str, str] = {}
    for index, path, shown, source in misses:
        job = _Job(
            index,
            shown,
            _folder(path, folders),
            source,
            rules,
            not precheck,
            project=project,
            links=links.get(str(path.resolve())),
        )
        if is_notebook(shown):
            notebooks[index] = source
        opened = _notebook_job(job) if is_notebook(shown) else job
        if isinstance(opened, FileResult):  # not a notebook we can read
            done.append((job, opened))
        else:
            jobs.append(opened)
    if sum(len(job.source) for job in jobs) < POOL_PRECHECK_BYTES:  # pre-check here: start a pool only to parse
        narrowed = [_prepared(job, options) for job in jobs]
        done += [(job, _check_job(job, options)) for job in narrowed if not job.rules]
        jobs = [job for job in narrowed if job.rules]

    with _progress_bar(len(jobs), enabled=progress and len(found.names) > PROGRESS_MIN_FILES) as advance:
        done.extend(_analyze_all(jobs, options, advance, pool))
    for job, file_result in sorted(done, key=lambda pair: pair[0].index):
        if job.cells is not None:
            file_result = in_cells(file_result, job.cells)
        outcomes[job.index] = file_result
        result.linked += bool(file_result.modules)
        result.project_seconds += file_result.project_seconds
        if file_result.parsed:
            result.parsed.append(job.shown)
        if store is not None and not file_result.transient:  # the same bytes give the same error too
            source = notebooks.get(job.index, job.source)
            if file_result.parsed or file_result.error is not None or file_result.warnings or file_result.modules:
                store.put(job.shown, source, file_result)
            else:
                store.skip(job.shown, source)
    if store is not None:
        store.flush()

    ignores = per_file_ignores(settings)
    declarations: dict = {}  # per project folder, for this run
    for name, file_result in zip(found.names, outcomes):
        if file_result is None:
            continue
        if file_result.error:
            result.errors.append(file_result.error)
        result.warnings.extend(file_result.warnings)
        if file_result.findings:
            path = Path(name)
            findings = with_fingerprints(file_result.findings, project_path(path, settings.root))
            findings = with_declared_engine(findings, path, settings.root, declarations)
            result.findings.extend(without_ignored(findings, path, settings, ignores))
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def check_source(
    source: bytes | str,
    path: Path,
    settings: Settings,
    buffers: dict[str, bytes] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> FileResult:
    """One file's findings from text that may be unsaved (the language server's view),
    with the same rules, options and per-file ignores as `run`, linked through its imports
    by this process's project index for the root (`_workspace_link`). `buffers`: the
    editor's texts of open files, by resolved path, which stand for those files.
    `cancelled`: asked between the steps; when it says yes, `pipeline.Cancelled` is raised."""
    from chatbound.run.pipeline import Cancelled

    rules = select_rules(settings.select, settings.ignore)
    options = rule_options(settings)
    directory = str(path.resolve().parent)
    linked = None if is_notebook(path.name) else _workspace_link(source, path, settings, rules, options, buffers)
    if cancelled is not None and cancelled():
        raise Cancelled(str(path))
    result = _analyze_one(source, display_path(path), rules, options, directory, linked, cancelled)
    result.modules = list(linked.modules) if linked is not None else []
    findings = with_fingerprints(result.findings, project_path(path, settings.root))
    findings = with_declared_engine(findings, path, settings.root)
    result.findings = without_ignored(findings, path, settings, per_file_ignores(settings))
    return result


def _workspace_link(
    source: bytes | str,
    path: Path,
    settings: Settings,
    rules: Sequence[type[Rule]],
    options: dict,
    buffers: dict[str, bytes] | None,
) -> Linked | None:
    """What the file sees of the project. The index and the importer links live as long as the
    process (the language server's): each module is summarised once per content and again only
    when its buffer or its file changes; the project's files are read once; the links
    themselves are made anew on every call."""
    cross = tuple(rule for rule in rules if rule.CROSS_MODULE)
    if not cross or not settings.project_max_mb:
        return None
    from chatbound.run.project import project_index

    root = str(settings.root)
    index = project_index(root, "", cross, options)
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    resolved = str(path.resolve())
    linked = index.link_buffer(resolved, data, buffers or {})
    inside = below(resolved, os.fspath(settings.root.resolve())) is not None
    links = _workspace(settings).links({**(buffers or {}), resolved: data}).get(resolved) if inside else None
    if links is None:
        return linked
    return replace(linked, links=links, modules=tuple(sorted({*linked.modules, *links.modules})))


_WORKSPACES: dict[str, WorkspaceLinks] = {}


def _workspace(settings: Settings) -> WorkspaceLinks:
    """The importer links of the project at `settings.root`, its files read on first use (up to
    project-max-mb: a server started in a home folder with no configuration reads no more)."""
    root = str(settings.root)
    if root not in _WORKSPACES:
        from chatbound.analysis.project.users import WorkspaceLinks

        files: dict[str, bytes] = {}
        read = 0
        for path in discover([settings.root], settings.root, settings.excludes, False, False).files:
            source = read_source(path, str(path))
            if isinstance(source, bytes):
                files[str(path.resolve())] = source
                read += len(source)
            if read > settings.project_max_mb * MB:
                break
        _WORKSPACES[root] = WorkspaceLinks(files, root, lambda path: display_path(Path(path)))
    return _WORKSPACES[root]


def project_path(path: Path, root: Path) -> str:
    """The file's posix path below the project root, else as given: what a finding's identity
    is keyed by, so that a baseline or a code scanning alert does not depend on where the run
    starts."""
    for candidate in (os.path.abspath(path), os.fspath(path.resolve())):  # as named, then through symlinks
        inside = below(candidate, os.fspath(root))
        if inside is not None:
            return inside.replace(os.sep, "/")
    return path.as_posix()


# --- parsing, in this process or a pool ------------------------------------------------


def rules_to_run(source: bytes, rules: Sequence[type[Rule]], options: dict) -> tuple[tuple[type[Rule], ...], bool]:
    """The rules that may report on the file, and whether CPython parsed it to know: those
    whose triggers occur and whose `may_report` allows (precheck.rules_for), then, when each
    of those has a `may_report_tree`, those it allows on the stdlib tree. A file CPython cannot
    parse keeps its rules: LibCST may read newer syntax, and says what is wrong otherwise."""
    from chatbound.run.precheck import rules_for
    from chatbound.syntax.parse import no_gc, python_tree
    from chatbound.syntax.stdlib_tree import PythonTree

    found = rules_for(source, rules, options)
    if not found or any(rule.may_report_tree is None for rule in found):
        return found, False
    with no_gc():
        tree = python_tree(source)
        if isinstance(tree, str):
            return found, False
        walked = PythonTree(tree)
        kept = tuple(rule for rule in found if rule.may_report_tree(walked, options))
        del tree, walked  # freed before the collector is back (see python_syntax_error)
    return kept, True


def _notebook_job(job: _Job) -> _Job | FileResult:
    """The job on the notebook's joined code, or why the notebook cannot be checked."""
    notebook = read(job.source, job.shown)
    if isinstance(notebook, FileError):
        return FileResult(job.shown, error=notebook, parsed=False)
    code = notebook.code.encode("utf-8")
    if len(code) > MAX_FILE_BYTES:
        return FileResult(job.shown, error=_too_large(job.shown, len(code), MAX_FILE_BYTES), parsed=False)
    return replace(job, source=code, cells=notebook.index)


def _narrowed(job: _Job, options: dict) -> _Job:
    """The job with only the rules the pre-check lets run on its file."""
    if job.narrowed:
        return job
    rules, valid = rules_to_run(job.source, job.rules, options)
    return replace(job, rules=rules, narrowed=True, valid=valid)


def _skipped(job: _Job) -> FileResult:
    """A file no selected rule can report on: not worth a LibCST parse, but a syntax error is
    still reported, as ruff does. CPython's parser answers first (cheap, and safe on any
    nesting); a file it rejects is reported only when LibCST cannot parse it either, since the
    running interpreter rejects syntax newer than itself."""
    from chatbound.syntax.parse import syntax_problem

    problem = None if job.valid else syntax_problem(job.source)
    return FileResult(job.shown, error=FileError(job.shown, problem) if problem else None, parsed=False)


def _project_links(sources: dict[Path, bytes], root: Path) -> dict[str, Links]:
    """What importers and deployment files say about each file's names (`chatbound.analysis.project.users`)."""
    from chatbound.analysis.project.users import project_links

    return project_links(
        {str(path.resolve()): source for path, source in sources.items()},
        str(root),
        lambda path: display_path(Path(path)),
    )


def _linked(job: _Job, selected: Sequence[type[Rule]], options: dict) -> _Job:
    """The job linked through its imports when a cross-module rule may need it: one that runs
    on the file anyway, or a file that grows something and speaks of messages or a history
    (`may_import_chat`), which may hand it to an imported function when its imports reach a
    model call (`ProjectIndex.reaches_a_model`), or a file importing a module whose functions
    may return a value to follow (`Rule.LINKS_IMPORTERS`: retrieval results). A file whose
    imports offer something runs the cross-module rules; its result rests on the modules it
    imports (`Linked.modules`)."""
    cross = tuple(rule for rule in selected if rule.CROSS_MODULE)
    if job.project is None or job.linked is not None or job.cells is not None:
        return job
    from chatbound.run.project import may_import_chat, project_index
    from chatbound.vocabulary.summaries import Linked

    readers = [rule for rule in job.rules if rule.CROSS_MODULE or rule.READS_LINKS]
    chat = bool(cross) and may_import_chat(job.source)
    offered = tuple(rule for rule in cross if rule.LINKS_IMPORTERS)
    if not readers and not chat and not offered:
        return replace(job, linked=Linked(modules=job.links.modules, links=job.links)) if job.links else job
    # which modules may send or offer: every cross-module rule's triggers, whichever rules were
    # selected (retrieval results selected alone still reach a model through another module's send)
    index = project_index(*job.project, tuple(r for r in all_rules() if r.CROSS_MODULE), options)
    start = time.perf_counter()
    path = os.path.join(job.directory, os.path.basename(job.shown))
    reaches, looked_at = (True, ()) if readers else index.reaches_a_model(path, job.source) if chat else (False, ())
    if not reaches and offered:  # a file showing nothing itself may send what an imported function returns
        reaches, also = index.imports_offer(
            path, job.source, lambda source: bool(rules_to_run(source, offered, options)[0])
        )
        looked_at = tuple(sorted({*looked_at, *also}))
    linked = index.link(path, job.source) if reaches else Linked(modules=looked_at)
    linked = replace(linked, seconds=time.perf_counter() - start)
    if job.links is not None:
        linked = replace(linked, links=job.links, modules=tuple(sorted({*linked.modules, *job.links.modules})))
    rules = job.rules
    if linked.functions or linked.texts or linked.tool_lists or linked.lists:
        rules = tuple(rule for rule in selected if rule in job.rules or rule in cross)
    return replace(job, linked=linked, rules=rules)


def _prepared(job: _Job, options: dict) -> _Job:
    """Narrowed by the pre-check, then linked by the project pass."""
    return _linked(_narrowed(job, options), job.rules, options)


def _check_job(job: _Job, options: dict) -> FileResult:
    job = _prepared(job, options)
    modules = list(job.linked.modules) if job.linked is not None else []
    if not job.rules:
        result = _skipped(job)
    else:
        from chatbound.run.pipeline import analyze_source

        result = analyze_source(job.source, job.shown, job.rules, options, directory=job.directory, project=job.linked)
    result.modules = modules
    result.project_seconds = job.linked.seconds if job.linked is not None else 0.0
    return result


def _analyze_chunk(jobs: Sequence[_Job], options: dict) -> list[FileResult]:
    """A worker's task: plain data in, plain data out."""
    return [_check_job(job, options) for job in jobs]


def _workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _analyze_all(
    jobs: list[_Job], options: dict, advance: Callable[[int], None], pool: ProcessPoolExecutor | None = None
) -> Iterator[tuple[_Job, FileResult]]:
    """`pool`, when given, was started early (see `_started_pool`)."""
    workers = _workers()
    if pool is None and (
        workers < 2 or len(jobs) < 2 * workers or sum(len(j.source) for j in jobs) < PARALLEL_MIN_BYTES
    ):
        for job in jobs:
            yield job, _analyze_chunk([job], options)[0]
            advance(1)
        return
    yield from _in_pool(jobs, options, workers, advance, pool)


def _chunks(jobs: list[_Job], workers: int) -> list[list[_Job]]:
    """Biggest files first (the slowest finish early), a few files per task."""
    ordered = sorted(jobs, key=lambda job: len(job.source), reverse=True)
    size = max(1, min(16, len(ordered) // (workers * 8)))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def plain_warnings() -> None:
    """Warnings from the libraries we drive (e.g. the token estimator's fallback) as one
    `warning: ...` line on stderr, in the main process and in every worker."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"warning: {one_line(message)}", file=sys.stderr)

    warnings.showwarning = show


def _pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=plain_warnings
    )


def _loaded() -> None:
    """A worker's first task: load what analysing a file needs."""
    from chatbound.run import pipeline as analysis
    from chatbound.run import registry

    registry.all_rules()
    assert analysis


def _started_pool(workers: int) -> ProcessPoolExecutor:
    """A pool whose workers are already loading LibCST and the rules (half a second each),
    while this process reads, selects the rules and prepares the jobs."""
    pool = _pool(workers)
    for _ in range(workers):
        pool.submit(_loaded)
    return pool


def _in_pool(
    jobs: list[_Job],
    options: dict,
    workers: int,
    advance: Callable[[int], None],
    started: ProcessPoolExecutor | None = None,
) -> Iterator[tuple[_Job, FileResult]]:
    """Chunks over a spawn pool (`started`, or a new one). A worker that dies (a crash in
    native code) breaks the pool: the chunks then in flight are retried one file at a time in a
    single-worker pool, where the file that kills its worker is found and reported; the rest
    carry on in a new pool. A pool is left to wind down while the run writes its results."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    pending = deque(_chunks(jobs, workers))
    if started is not None and not pending:
        started.shutdown(wait=False)
    suspects: list[_Job] = []
    while pending:
        pool, started = started or _pool(workers), None
        with _winding_down(pool):
            inflight: dict[Future, list[_Job]] = {}
            try:
                while pending or inflight:
                    while pending and len(inflight) < 2 * workers:
                        chunk = pending.popleft()
                        inflight[pool.submit(_analyze_chunk, chunk, options)] = chunk
                    done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for future in done:
                        chunk = inflight[future]
                        results = _chunk_results(future, chunk)
                        del inflight[future]
                        yield from zip(chunk, results)
                        advance(len(chunk))
            except BrokenProcessPool:
                suspects.extend(job for chunk in inflight.values() for job in chunk)
    yield from _one_by_one(deque(suspects), options, advance)


@contextlib.contextmanager
def _winding_down(pool: ProcessPoolExecutor) -> Iterator[None]:
    """The pool shut down without waiting for its workers to exit (their interpreters take a
    moment to tear down); the interpreter's exit waits for them."""
    try:
        yield
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _chunk_results(future: Future, chunk: list[_Job]) -> list[FileResult]:
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise
    except Exception as exc:  # a result that failed to travel back, say: report, go on
        cause = f"internal error while analyzing: {type(exc).__name__}: {one_line(exc)}"
        return [FileResult(job.shown, error=FileError(job.shown, cause), transient=True) for job in chunk]


def _one_by_one(queue: deque[_Job], options: dict, advance: Callable[[int], None]) -> Iterator[tuple[_Job, FileResult]]:
    """One file at a time in a single worker: a file that kills its worker is the culprit."""
    from concurrent.futures.process import BrokenProcessPool

    while queue:
        with _pool(1) as pool:
            try:
                while queue:
                    job = queue[0]
                    result = _chunk_results(pool.submit(_analyze_chunk, [job], options), [job])[0]
                    yield queue.popleft(), result
                    advance(1)
            except BrokenProcessPool:
                job = queue.popleft()
                cause = "the parser crashed on this file (its worker process died); please report it"
                yield job, FileResult(job.shown, error=FileError(job.shown, cause), transient=True)
                advance(1)


@contextlib.contextmanager
def _progress_bar(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A bar on stderr, only on a terminal: stdout may carry JSON or SARIF."""
    if not enabled or total == 0 or not sys.stderr.isatty():
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("chatbound"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("parse", total=total)
        yield lambda n: bar.advance(task, n)
