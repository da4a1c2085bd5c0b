"""`chatbound lsp`: the language server (pygls 2) that puts findings in the editor.

It calls the runner the CLI calls (`runner.check_source` on the buffer's text, with the
`[tool.chatbound]` settings found from the document's path), so the problem panel and
`chatbound check` agree. Diagnostics are published on open, on save and, debounced, on
change; a finding with a `fix` offers it as a quick fix, and every finding offers an
`# chatbound: ignore[ID]` comment.

The analyses run one at a time on a thread of their own, so the server reads the editor's
messages while one runs: an edit stops the analysis of the text it replaced (at its next step:
parse, rules, projections, fixes) and what that analysis found is never published.

The project: a buffer is linked through its imports as `chatbound check` links a file, by
an index this process keeps warm (each other module summarised once per content, the open
buffers standing for their files, unsaved edits included); a finding resting on another
module names it in its related information. An edit to a module re-checks the open documents
whose findings rested on it.

Notebooks: the server takes part in LSP 3.17 notebook sync, so an editor that shows a notebook as
cells (VS Code) sends them and gets each finding on its cell, with its quick fixes, the
notebook checked as `chatbound check` checks the .ipynb file; a notebook opened as its JSON
text gets its diagnostics on the lines of that text that hold the code, and no code actions
(an edit there would have to rewrite JSON strings).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from chatbound.findings import Finding, Related, Severity, Span
from chatbound.run.config import ConfigError, load_settings
from chatbound.run.discovery import discover
from chatbound.run.noqa import commented_lines
from chatbound.run.notebooks import Notebook, NotebookError, python_lines
from chatbound.run.pipeline import Cancelled
from chatbound.run.registry import rule_by_id
from chatbound.run.runner import check_source
from chatbound.version import __version__

DEBOUNCE_SECONDS = 0.3
SEVERITIES = {
    Severity.HIGH: types.DiagnosticSeverity.Error,
    Severity.MEDIUM: types.DiagnosticSeverity.Warning,
    Severity.LOW: types.DiagnosticSeverity.Information,
}
log = logging.getLogger(__name__)


class ChatboundServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "chatbound",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")]),
                ]
            ),
        )
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.shown_errors: set[str] = set()
        self.rests_on: dict[str, list[str]] = {}  # an open document's uri -> the modules its findings rest on
        # One thread analyses, so the project index this process keeps is only ever used by one.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatbound-analysis")
        self.analyses: dict[str, threading.Event] = {}  # a uri -> the stop of its analysis asked for last
        self.published: dict[str, tuple[int | None, list[Finding]]] = {}  # a uri -> its version and findings shown


@dataclass
class Checked:
    """What one analysis found, handed from the analysis thread to the server's loop."""

    findings: list[Finding]
    modules: list[str]  # the other modules the findings rest on
    problem: str = ""  # a configuration error, shown once


server = ChatboundServer()


def to_range(span: Span, document: TextDocument) -> types.Range:
    """Our 1-based line and column (code points) to LSP's 0-based position in the client's
    units (UTF-16 unless negotiated): the one place that conversion happens. A notebook cell's
    span is first placed in the notebook's JSON text, which is what the editor shows."""
    if span.cell:
        notebook = _notebook(document.source)
        span = notebook.file_span(span) if notebook is not None else Span(1, 1, 1, 1)
    points = types.Range(
        start=types.Position(line=span.line - 1, character=span.col - 1),
        end=types.Position(line=span.end_line - 1, character=span.end_col - 1),
    )
    return document.position_codec.range_to_client_units(document.lines, points)


@functools.lru_cache(maxsize=4)
def _notebook(text: str) -> Notebook | None:
    try:
        return Notebook.parse(text)
    except NotebookError:
        return None


def document_path(document: TextDocument) -> Path:
    path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
    return Path(path) if path else Path.cwd() / (document.filename or "untitled.py")


def buffers(ls: ChatboundServer) -> dict[str, bytes]:
    """The open Python files' texts, unsaved edits included, by resolved path: the project
    pass reads them instead of the files."""
    return {
        str(document_path(d).resolve()): d.source.encode("utf-8", "surrogatepass")
        for d in list(ls.workspace.text_documents.values())
        if d.uri.startswith("file:") and d.uri.endswith(".py")
    }


def check_at(path: Path, source: str, open_buffers: dict[str, bytes], cancelled: Callable[[], bool]) -> Checked:
    """The active findings `chatbound check` would report for this text at `path` (on the
    analysis thread: it reads nothing of the server)."""
    try:
        settings = load_settings([path])
    except ConfigError as exc:
        return Checked([], [], str(exc))
    if path.exists() and not discover([path], settings.root, settings.excludes, True, settings.notebooks).files:
        return Checked([], [])  # excluded by the configuration, as pre-commit's --force-exclude would
    result = check_source(source, path, settings, open_buffers, cancelled)
    if result.error is not None:
        log.info("%s", result.error)
    return Checked([f for f in result.findings if f.suppressed is None], result.modules)


def taken(ls: ChatboundServer, uri: str, checked: Checked) -> list[Finding]:
    """An analysis's findings, once the server has noted what they rest on and shown its problem."""
    if checked.problem:
        report_once(ls, checked.problem)
    else:
        ls.rests_on[uri] = checked.modules
    return checked.findings


def stop_analysis(ls: ChatboundServer, uri: str) -> None:
    """The text an analysis of `uri` reads is no longer the buffer's: stop it, drop what it finds."""
    stop = ls.analyses.pop(uri, None)
    if stop is not None:
        stop.set()


def analyse(ls: ChatboundServer, uri: str, compute: Callable[[Callable[[], bool]], Checked], deliver) -> None:
    """`compute(stopped)` on the analysis thread, then `deliver(checked)` on the server's loop,
    unless an edit (or a newer analysis of `uri`) came first: then it is stopped and dropped."""
    stop_analysis(ls, uri)
    stop = ls.analyses[uri] = threading.Event()
    loop = asyncio.get_running_loop()

    def done(future: Future) -> None:
        loop.call_soon_threadsafe(_deliver, ls, uri, stop, future, deliver)

    ls.worker.submit(compute, stop.is_set).add_done_callback(done)


def _deliver(ls: ChatboundServer, uri: str, stop: threading.Event, future: Future, deliver) -> None:
    if ls.analyses.get(uri) is stop:
        del ls.analyses[uri]
    try:
        checked = future.result()
    except Cancelled:
        ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Log, message=f"chatbound: stopped checking {uri}: it changed")
        )
        return
    except Exception:  # a bug of ours: the editor keeps working, the log says what happened
        log.exception("chatbound: checking %s failed", uri)
        return
    if not stop.is_set():
        deliver(checked)


def report_once(ls: ChatboundServer, message: str) -> None:
    if message not in ls.shown_errors:
        ls.shown_errors.add(message)
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"chatbound: {message}"))


def in_document(document: TextDocument):
    """Where a span of this document is, as LSP names a place."""
    return lambda span: types.Location(uri=document.uri, range=to_range(span, document))


def diagnostic(finding: Finding, locate) -> types.Diagnostic:
    rule = rule_by_id(finding.rule_id)
    message = finding.message + (f"\n{finding.suggestion}" if finding.suggestion else "")
    return types.Diagnostic(
        range=locate(finding.span).range,
        message=message,
        severity=SEVERITIES[finding.severity],
        code=finding.rule_id,
        code_description=types.CodeDescription(href=rule.help_url()) if rule else None,
        source="chatbound",
        related_information=[
            types.DiagnosticRelatedInformation(location=related_location(r, locate), message=r.message)
            for r in finding.related
        ]
        or None,
        data={"fingerprint": finding.fingerprint},
    )


def related_location(related: Related, locate) -> types.Location:
    """In the checked document, or in the other module it names (placed without that file's
    text: code points as UTF-16 units, exact for the ASCII code such places nearly always are)."""
    if not related.path:
        return locate(related.span)
    span = related.span
    points = types.Range(
        start=types.Position(line=span.line - 1, character=span.col - 1),
        end=types.Position(line=span.end_line - 1, character=span.end_col - 1),
    )
    return types.Location(uri=(Path.cwd() / related.path).resolve().as_uri(), range=points)


def publish(ls: ChatboundServer, uri: str) -> None:
    ls.pending.pop(uri, None)
    document = ls.workspace.get_text_document(uri)
    path, source, version, open_buffers = document_path(document), document.source, document.version, buffers(ls)

    def deliver(checked: Checked) -> None:
        findings = taken(ls, uri, checked)
        ls.published[uri] = (version, findings)
        diagnostics = [diagnostic(f, in_document(document)) for f in findings]
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        )

    analyse(ls, uri, lambda stopped: check_at(path, source, open_buffers, stopped), deliver)


def publish_later(ls: ChatboundServer, uri: str, publisher=publish) -> None:
    """Publish once the user pauses typing for DEBOUNCE_SECONDS."""
    waiting = ls.pending.pop(uri, None)
    if waiting is not None:
        waiting.cancel()
    ls.pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, publisher, ls, uri)


def notebook_json(cells: list[types.NotebookCell], documents: list[TextDocument]) -> str:
    """An open notebook as its .ipynb file's JSON, from the cells as the editor holds them (a
    cell in another language counts as markdown: not checked)."""
    kinds = [
        "code" if cell.kind == types.NotebookCellKind.Code and document.language_id in ("python", None) else "markdown"
        for cell, document in zip(cells, documents)
    ]
    return json.dumps(
        {
            "cells": [{"cell_type": kind, "source": document.source} for kind, document in zip(kinds, documents)],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def notebook_analysis(ls: ChatboundServer, notebook: types.NotebookDocument):
    """What checking a notebook needs from the server, read on its loop: the cells' documents,
    where a cell span is in them, and the analysis to run (the notebook as its .ipynb text)."""
    documents = [ls.workspace.get_text_document(cell.document) for cell in notebook.cells]
    uri = notebook.uri
    path = Path(to_fs_path(uri)) if uri.startswith("file:") else Path.cwd() / "untitled.ipynb"
    text, open_buffers = notebook_json(notebook.cells, documents), buffers(ls)

    def locate(span: Span) -> types.Location:
        return in_document(documents[span.cell - 1])(replace(span, cell=0))

    return documents, locate, lambda stopped: check_at(path, text, open_buffers, stopped)


def publish_notebook(ls: ChatboundServer, uri: str) -> None:
    """Each cell's diagnostics, from the whole notebook checked as one file."""
    ls.pending.pop(uri, None)
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return
    documents, locate, compute = notebook_analysis(ls, notebook)

    def deliver(checked: Checked) -> None:
        findings = taken(ls, uri, checked)
        for number, document in enumerate(documents, 1):
            diagnostics = [diagnostic(f, locate) for f in findings if f.span.cell == number]
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=document.uri, version=document.version, diagnostics=diagnostics)
            )

    analyse(ls, uri, compute, deliver)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: ChatboundServer, params: types.DidOpenNotebookDocumentParams) -> None:
    publish_notebook(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: ChatboundServer, params: types.DidChangeNotebookDocumentParams) -> None:
    stop_analysis(ls, params.notebook_document.uri)
    publish_later(ls, params.notebook_document.uri, publish_notebook)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: ChatboundServer, params: types.DidSaveNotebookDocumentParams) -> None:
    publish_notebook(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: ChatboundServer, params: types.DidCloseNotebookDocumentParams) -> None:
    forget(ls, params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])


def forget(ls: ChatboundServer, uri: str, documents: list[str]) -> None:
    """A closed document or notebook: no publish pending for it, no diagnostics left on `documents`."""
    waiting = ls.pending.pop(uri, None)
    if waiting is not None:
        waiting.cancel()
    stop_analysis(ls, uri)
    ls.published.pop(uri, None)
    for document in documents:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=document, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ChatboundServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ChatboundServer, params: types.DidChangeTextDocumentParams) -> None:
    stop_analysis(ls, params.text_document.uri)
    publish_later(ls, params.text_document.uri)
    republish_importers(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ChatboundServer, params: types.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)
    republish_importers(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ChatboundServer, params: types.DidCloseTextDocumentParams) -> None:
    forget(ls, params.text_document.uri, [params.text_document.uri])
    ls.rests_on.pop(params.text_document.uri, None)
    republish_importers(ls, params.text_document.uri)  # they now read the file as saved


def republish_importers(ls: ChatboundServer, uri: str) -> None:
    """The open documents whose findings rested on the module at `uri` (a send in `llm.py` that
    `bot.py` calls) are checked again, debounced like the edited one."""
    if not uri.startswith("file:"):
        return
    path = str(Path(to_fs_path(uri)).resolve())
    for other, modules in list(ls.rests_on.items()):
        if other != uri and path in modules:
            publish_later(ls, other)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def fix_action(finding: Finding, locate, diag: types.Diagnostic) -> types.CodeAction:
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in finding.fix.edits:  # in a notebook, an import may go into another cell
        place = related_location(Related(edit.span, "", edit.path), locate)  # a dependency edit: its own file
        changes.setdefault(place.uri, []).append(types.TextEdit(range=place.range, new_text=edit.text))
    return types.CodeAction(
        title=f"chatbound: {finding.fix.description}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=finding.fix.safe,
        edit=types.WorkspaceEdit(changes=changes),
    )


def ignore_action(finding: Finding, document: TextDocument, diag: types.Diagnostic) -> types.CodeAction | None:
    """`# chatbound: ignore[ID]` where `--add-noqa` would put it (in a notebook cell, on the
    cell's lines, its magics read as Python of no consequence)."""
    try:
        new_lines, _ = commented_lines(
            python_lines(document.source)[0], [replace(finding, span=replace(finding.span, cell=0))]
        )
    except Exception:  # a buffer mid-edit that does not tokenize: offer nothing
        return None
    edits = [
        types.TextEdit(
            range=to_range(Span(n, 1, n, len(document.lines[n - 1].rstrip("\r\n")) + 1), document), new_text=text
        )
        for n, text in new_lines.items()
    ]
    if not edits:
        return None
    return types.CodeAction(
        title=f"chatbound: ignore {finding.rule_id} on this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=types.WorkspaceEdit(changes={document.uri: edits}),
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
async def code_action(ls: ChatboundServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the findings under the cursor, computed on the buffer as it is now (the
    findings published for its version, or an analysis of it on the analysis thread)."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    notebook = ls.workspace.get_notebook_document(cell_uri=document.uri)
    if notebook is None:
        locate = in_document(document)
        version, shown = ls.published.get(document.uri, (None, []))
        if version is not None and version == document.version:
            findings = shown
        else:
            path, source, open_buffers = document_path(document), document.source, buffers(ls)
            checked = await asyncio.wrap_future(ls.worker.submit(check_at, path, source, open_buffers, _never))
            findings = taken(ls, document.uri, checked)
    else:
        documents, locate, compute = notebook_analysis(ls, notebook)
        checked = await asyncio.wrap_future(ls.worker.submit(compute, _never))
        findings = [f for f in taken(ls, notebook.uri, checked) if documents[f.span.cell - 1].uri == document.uri]
    actions = []
    for finding in findings:
        diag = diagnostic(finding, locate)
        if not _overlaps(diag.range, params.range) or (finding.span.cell and notebook is None):
            continue  # a notebook opened as its JSON text: no edits there
        if finding.fix is not None:
            actions.append(fix_action(finding, locate, diag))
        ignore = ignore_action(finding, document, diag)
        if ignore is not None:
            actions.append(ignore)
    return actions


def _never() -> bool:
    return False


def serve() -> None:
    """Speak LSP on stdin/stdout until the client says exit."""
    server.start_io()
