"""The project pass: link module summaries through imports, one importing file at a time.

`ProjectIndex.link(importer, source)` reads the file's imports (`imports`), finds the
project files they name, and gives what the file sees of them (`Linked`): each imported
function or method, keyed by the name the file's chat facts spell, with the parameters that
reach a model whole (through any number of wrapper modules) and the whole history it
returns, and each imported text constant (a prompt kept in another module) and tool list
(or helper returning one, with its size). Re-exports are
followed (`from .llm import chat` in a package's `__init__`).

Summaries are computed lazily, only for modules a linked file imports and only when their
bytes pass `may_export` (a cheap test: the shape of a model call, or a chat word); each is
kept by content hash, in memory and in the result cache's folder, so an unchanged module is
summarised once. A file with no model call, prompt or tool list of its own is linked only
when its imports reach a module that may call a model (`reaches_a_model`): without one, a
history it grows reaches no model through them. `seconds` and `summarised` measure the pass
apart from the analysis.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from chatbound.analysis.project.demand import asked, defined
from chatbound.analysis.project.imports import Resolver, imports_of
from chatbound.analysis.project.lists import module_lists
from chatbound.databases import WRITE_SHAPE
from chatbound.syntax.datafiles import folder_holding, read_data_file
from chatbound.vocabulary.summaries import (
    Linked,
    ModuleSummary,
    Place,
    RemoteFunction,
    RemoteHistory,
    RemoteRetrieval,
    RemoteSend,
    RemoteText,
    RemoteToolList,
    TextSummary,
)

# `to_input_list`: an Agents SDK run's conversation replayed (openai-agents 0.24 RunResult); `chat`: a chat
# engine or session object the file hands to another module's function to send with
CHAT_WORDS = (b"role", b"message", b"history", b"conversation", b"dialog", b"transcript", b"to_input_list", b"chat")
GROWTH = re.compile(rb"\.(?:append|extend|insert|add\w*)\s*\(|\+=|\+\s*\[")  # grows, or asks another module to
# asks a repository module to store a turn (`add_message_to_history(uid, ...)`, `db.save_message(...)`)
STORE_CALL = re.compile(
    rb"(?<!\w)(?:add|append|push|save|store|insert|set|put|write)_\w*(?:message|history|turn|dialog|chat|conversation)\w*\s*\(",
    re.I,
)
MAX_DEPTH = 4  # wrapper modules followed from a call to the model call


def _has_chat_word(source: bytes) -> bool:
    lowered = source.lower()
    return any(word in lowered for word in CHAT_WORDS)


def may_export(source: bytes, sends: Callable[[bytes], bool]) -> bool:
    """Whether a module can offer a send, a whole chat history or a value a rule sizes: `sends`
    tests the shape of a model call (the cross-module rules' pre-check) or of such a value (a
    rule's `may_offer`); a history it returns grows there."""
    return (_grows(source) and _has_chat_word(source)) or sends(source)


def may_call_model(source: bytes) -> bool:
    """Whether a module can hold a model call, so that a parameter of its functions may reach
    one: the shape of a model call, a chat memory or a framework's in its text (the triggers of
    the rules that follow a history to its model) and, on CPython's tree, a call that may chat
    (`chatbound.analysis.chat.may_chat_tree`). A module CPython cannot parse may."""
    from chatbound.analysis.chat import may_chat_tree
    from chatbound.run.precheck import occurs
    from chatbound.syntax.parse import no_gc, python_tree
    from chatbound.syntax.stdlib_tree import PythonTree

    if not occurs(source, _model_shapes()):
        return False
    with no_gc():
        tree = python_tree(source)
        calls = isinstance(tree, str) or may_chat_tree(PythonTree(tree))
        del tree  # freed before the collector is back
    return calls


@functools.cache
def _model_shapes() -> tuple:
    """The triggers of a model call's shape, as the rules that follow a history declare them."""
    from chatbound import frameworks
    from chatbound.vocabulary.sinks import triggers

    return (*triggers(), *frameworks.TRIGGERS)


def may_import_chat(source: bytes) -> bool:
    """Whether a file no rule parses for itself can still hold a history that an imported
    function sends: it speaks of messages or a history. Growth is not asked for: a graph's
    reducer, a chat UI or a framework's session grows what the file only reads
    (`send(llm, state["messages"])`, Gradio's `history`), so its imports decide
    (`ProjectIndex.reaches_a_model`)."""
    return _has_chat_word(source)


def _grows(source: bytes) -> bool:
    """It grows something: a list, a database history, or asks a repository to."""
    return any(shape.search(source) for shape in (GROWTH, WRITE_SHAPE, STORE_CALL))


class ProjectIndex:
    def __init__(
        self,
        root: str,
        sends: Callable[[bytes], bool],
        shown: Callable[[str], str],
        store=None,
        sources: dict[str, bytes] | None = None,
    ) -> None:
        self.resolver = Resolver(root)
        self.sends = sends
        self.shown = shown
        self.store = store  # the result cache, where summaries are kept by content hash
        self.sources = sources if sources is not None else {}  # texts that override the files, by absolute path
        self._summaries: dict[str, ModuleSummary] = {}  # by content hash
        self._by_path: dict[
            str, tuple[bytes | tuple[int, int] | None, ModuleSummary]
        ] = {}  # (what it was read from, summary)
        self._shapes: dict[str, tuple[bytes | tuple[int, int] | None, tuple[bool, list]]] = {}  # (read from, `_shape`)
        self._definitions: dict[
            str, tuple[bytes | tuple[int, int] | None, frozenset[str]]
        ] = {}  # (read from, `defined`)
        self._offers: dict[str, tuple[bytes | tuple[int, int] | None, bool]] = {}  # (read from, `imports_offer`'s test)
        # (path, name) -> (the function as importers see it, the modules that rests on); None while linking
        self._remotes: dict[tuple[str, str], tuple[RemoteFunction | None, frozenset[str]] | None] = {}
        self._reach: dict[tuple[str, int], tuple[bool, frozenset[str]]] = {}  # `_reaches`, for this run
        self._rests_on: dict[
            str, frozenset[str]
        ] = {}  # a module found to wrap no model: the modules that says rests on
        self.seconds = 0.0
        self.summarised = 0

    def link(self, importer: str, source: bytes) -> Linked:
        start = time.perf_counter()
        functions: dict[str, RemoteFunction] = {}
        texts: dict[str, RemoteText] = {}
        tool_lists: dict[str, RemoteToolList] = {}
        lists: dict[str, Place] = {}
        modules: set[str] = set()
        importer = os.path.abspath(importer)
        used = asked(source)
        for bound, target in imports_of(source):
            found = self.resolver.module(importer, target)
            if found is not None and found[0] != importer:
                path, rest = found
                modules.add(path)
                if (
                    used is not None
                    and bound != "*"
                    and bound not in used.called
                    and (
                        bound not in used.read
                        or len(rest) == 1
                        and rest[0] in self._known(self._definitions, path, defined)
                    )
                ):
                    continue  # only annotated with, a base class, or a class or function only read: no summary asked
                exports = self._exports(target, path, rest, modules, 0)
                if bound == "*":  # `from store import *`: the file calls them by their bare names
                    exports = {name[len(target) + 1 :]: remote for name, remote in exports.items()}
                functions.update(exports)
                for name, (text, where) in self._constants("texts", target, path, rest, modules, 0).items():
                    remote = self._remote_text(text, where, modules)
                    if remote is not None:
                        texts[name] = remote
                for name, (tools, where) in self._constants("tool_lists", target, path, rest, modules, 0).items():
                    tool_lists[name] = RemoteToolList(tools, Place(self.shown(where), tools.span))
                for name, (span, where) in self._constants("lists", target, path, rest, modules, 0).items():
                    lists[name] = Place(self.shown(where), span, "the list is bound here")
        self.seconds += time.perf_counter() - start
        return Linked(functions, texts, tool_lists, tuple(sorted(modules)), lists=lists)

    def _remote_text(self, text: TextSummary, where: str, modules: set[str]) -> RemoteText | None:
        """A text another module defines; one it reads from a data file is read here, from that
        module's folder, and the importer's result rests on the file too."""
        place = Place(self.shown(where), text.span)
        if not text.read_from:
            return RemoteText(text.value, text.partial, place, text.returned, defaults=text.defaults)
        folder = folder_holding(os.path.dirname(where), text.read_from)
        value = read_data_file(folder, text.read_from)
        if value is None:
            return None
        data = os.path.normpath(os.path.join(folder, text.read_from))
        modules.add(data)
        return RemoteText(value, text.partial, place, text.returned, self.shown(data), text.defaults)

    def link_buffer(self, importer: str, source: bytes, buffers: dict[str, bytes]) -> Linked:
        """The language server's link: the open buffers' texts stand for their files, and the
        links are made anew (an edit to one module changes what its importers see); the
        summaries of unchanged modules are reused."""
        self.sources = buffers
        self._remotes.clear()
        self._reach.clear()
        return self.link(importer, source)

    def reaches_a_model(self, importer: str, source: bytes, depth: int = MAX_DEPTH) -> tuple[bool, tuple[str, ...]]:
        """Whether a project module the file imports, or one that module imports, as deep as
        wrappers are followed, may call a model (`may_call_model`); and the modules looked at.
        A file with no model call of its own hands a history to a model only through such a
        module, so when none is reachable it needs no summary: its result rests on the modules
        looked at (one may gain a model call)."""
        importer = os.path.abspath(importer)
        looked_at: set[str] = set()
        for path in self._imported(importer, source):
            reaches, seen = self._reaches(path, depth)
            if reaches:
                return True, ()
            looked_at |= seen
        looked_at.discard(importer)
        return False, tuple(sorted(looked_at))

    def imports_offer(
        self, importer: str, source: bytes, offers: Callable[[bytes], bool]
    ) -> tuple[bool, tuple[str, ...]]:
        """Whether a project module the file imports passes `offers` (the pre-check of the rules
        whose modules hand their importers a value to follow: a retrieval asking for many
        results), so the file is worth linking though it shows nothing of its own; and, when none
        does, the modules looked at (one may gain such a retrieval). Direct imports only."""
        looked_at: set[str] = set()
        for path in self._imported(os.path.abspath(importer), source):
            if self._known(self._offers, path, offers, False):
                return True, ()
            looked_at.add(path)
        return False, tuple(sorted(looked_at))

    def _imported(self, importer: str, source: bytes) -> Iterator[str]:
        """The project modules the file imports (the file itself left out)."""
        for _, target in imports_of(source):
            found = self.resolver.module(importer, target)
            if found is not None and found[0] != importer:
                yield found[0]

    def _reaches(self, path: str, depth: int) -> tuple[bool, frozenset[str]]:
        """Whether the module, or one it imports at most `depth` imports further, may call a
        model; when none does, the modules looked at. Once per module and depth in a run: a big
        tree's importers share most of what they import."""
        key = (path, depth)
        known = self._reach.get(key)
        if known is None:
            calls, imported = self._shape(path)
            seen = {path}
            for _, target in imported if not calls and depth else ():
                found = self.resolver.module(path, target)
                if found is None or found[0] == path:
                    continue
                calls, deeper = self._reaches(found[0], depth - 1)
                if calls:
                    break
                seen |= deeper
            known = self._reach[key] = (calls, frozenset() if calls else frozenset(seen))
        return known

    def _shape(self, path: str) -> tuple[bool, list[tuple[str, str]]]:
        """Whether the module may call a model, and its imports."""
        return self._known(self._shapes, path, lambda source: (may_call_model(source), imports_of(source)), (False, []))

    def _known(self, table: dict, path: str, compute: Callable[[bytes], Any], unread: Any = frozenset()) -> Any:
        """`compute` of the module's text, once per content (`unread`: the module cannot be read)."""
        stamp = self._stamp(path)
        known = table.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        source = self._read(path, stamp)
        found = unread if source is None else compute(source)
        table[path] = (stamp, found)
        return found

    # --- summaries -----------------------------------------------------------------------

    def summary(self, path: str) -> ModuleSummary:
        """The module's summary, looked up once per content: a module reached from many
        importers (a package's `__init__`, a shared helper) is read, tested and hashed again
        only when its text (an editor's buffer) or its file (size, modification time) changed."""
        stamp = self._stamp(path)
        known = self._by_path.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        source = self._read(path, stamp)
        if source is None:
            return ModuleSummary()
        found = self._summary_of(source, path)
        self._by_path[path] = (stamp, found)
        return found

    def _stamp(self, path: str) -> bytes | tuple[int, int] | None:
        """What the module is read from: an editor's unsaved text, else the file's size and
        modification time (None: it cannot be read)."""
        source = self.sources.get(path)
        if source is not None:
            return source
        try:
            status = os.stat(path)
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size

    @staticmethod
    def _read(path: str, stamp: bytes | tuple[int, int] | None) -> bytes | None:
        """The module's text as stamped: the editor's, else the file's (None: unreadable)."""
        if stamp is None or isinstance(stamp, bytes):
            return stamp
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def _summary_of(self, source: bytes, path: str) -> ModuleSummary:
        if not (may_export(source, self.sends) or self._wraps(path, source)):
            # a package's re-exports, read from its text, and the lists it declares for its importers
            return ModuleSummary(imports=dict(imports_of(source)), lists=module_lists(source))
        digest = hashlib.sha256(source).hexdigest()
        found = self._summaries.get(digest)
        if found is None and self.store is not None:
            found = self.store.summary(digest)
        if found is None:
            from chatbound.analysis.project.summary import summarize  # LibCST loads only where a module is summarised

            found = summarize(source)
            self.summarised += 1
            if self.store is not None:
                self.store.put_summary(digest, found)
        self._summaries[digest] = found
        return found

    def _wraps(self, path: str, source: bytes) -> bool:
        """Whether a module with no model call's shape may still pass a parameter on to one: it
        defines a function and imports a project module from which a model is reachable
        (`def respond(items): return backend.complete(items)`, a wrapper of a wrapper). When it
        does not, what it rests on is kept: one of those modules may gain a model call."""
        if b"def " not in source:
            return False
        reaches, looked_at = self.reaches_a_model(path, source, MAX_DEPTH - 1)
        if not reaches:
            self._rests_on[path] = frozenset(looked_at)
        return reaches

    # --- linking -------------------------------------------------------------------------

    def _exports(
        self, target: str, path: str, rest: tuple[str, ...], modules: set[str], depth: int
    ) -> dict[str, RemoteFunction]:
        """What `target` (a module, or `rest` inside the module at `path`) offers, keyed by
        the names an importer calls it by."""
        if depth > MAX_DEPTH:
            return {}
        summary = self.summary(path)
        modules.update(self._rests_on.get(path, ()))
        found: dict[str, RemoteFunction] = {}
        if not rest:
            for name in summary.functions:
                remote = self._remote(path, name, summary, modules, depth)
                if remote is not None:
                    found[f"{target}.{name}"] = remote
            for instance, klass in summary.instances.items():
                found.update(self._methods(f"{target}.{instance}", path, klass, summary, modules, depth))
            for name, imported in summary.imports.items():  # `import chat; chat.complete(h)`, re-exported there
                if name != "*" and f"{target}.{name}" not in found:
                    found.update(self._reexport(f"{target}.{name}", path, imported, (), modules, depth))
            return found
        name, deeper = rest[0], rest[1:]
        head = target[: len(target) - sum(len(part) + 1 for part in deeper)] if deeper else target
        if name in summary.functions and not deeper:
            remote = self._remote(path, name, summary, modules, depth)
            if remote is not None:
                found[head] = remote
        elif name in summary.classes or name in summary.instances:
            found.update(self._methods(head, path, summary.instances.get(name, name), summary, modules, depth))
        elif name in summary.imports:
            found.update(self._reexport(head, path, summary.imports[name], (), modules, depth))
        return found

    def _constants(
        self, kind: str, target: str, path: str, rest: tuple[str, ...], modules: set[str], depth: int
    ) -> dict[str, tuple]:
        """The constants of `kind` (the summary's `texts` or `tool_lists`) that `target` names,
        each with the path of its module: all of a module's (`from . import prompts`), or the one
        imported by name (`from .prompts import SYSTEM_PROMPT`, also through a package's
        re-export)."""
        table = getattr(self.summary(path), kind)
        if not rest:
            return {f"{target}.{name}": (value, path) for name, value in table.items()}
        if len(rest) > 1 or depth > MAX_DEPTH:
            return {}
        if rest[0] in table:
            return {target: (table[rest[0]], path)}
        methods = {name: value for name, value in table.items() if name.startswith(f"{rest[0]}.")}
        if methods:  # an imported class: what its methods return (`MCPClient.start`)
            return {f"{target}.{name.partition('.')[2]}": (value, path) for name, value in methods.items()}
        imported = self.summary(path).imports.get(rest[0])
        resolved = self.resolver.module(path, imported) if imported is not None else None
        if resolved is None:
            return {}
        modules.add(resolved[0])
        found = list(self._constants(kind, imported, *resolved, modules, depth + 1).values())
        return {target: found[-1]} if found else {}  # the re-exported name: the last constant it stands for

    def _reexport(self, head: str, path: str, imported: str, rest: tuple[str, ...], modules: set[str], depth: int):
        resolved = self.resolver.module(path, imported)
        if resolved is None:
            return {}
        modules.add(resolved[0])
        return self._exports(head, resolved[0], resolved[1] + rest, modules, depth + 1)

    def _methods(self, head: str, path: str, klass: str, summary: ModuleSummary, modules: set[str], depth: int):
        """The class's methods that offer something; where its own offers nothing (an interface's
        `def get(self, uid): pass`), a subclass's of the same module, which may be what runs
        (`memory: MemoryInterface` given a `Memory(MemoryInterface)`)."""
        subclasses = sorted(name for name, bases in summary.bases.items() if klass in bases)
        found = {}
        for owner in (klass, *subclasses):
            prefix = f"{owner}."
            for name in summary.functions:
                key = f"{head}.{name[len(prefix) :]}"
                if not name.startswith(prefix) or key in found:
                    continue
                remote = self._remote(path, name, summary, modules, depth)
                if remote is not None:
                    found[key] = remote
        return found

    def _remote(
        self, path: str, name: str, summary: ModuleSummary, modules: set[str], depth: int
    ) -> RemoteFunction | None:
        """The function as importers see it, or None when it offers nothing (once per run)."""
        function = summary.functions[name]
        if (
            not (function.sends or function.forwards or function.returns or function.writes or function.retrieves)
            and not function.keeps
            and not function.tool_params
            and not function.continued
            and not function.system_params
            and not function.relays
        ):
            return None
        key = (path, name)
        if key not in self._remotes:
            self._remotes[key] = None  # a cycle of wrappers ends here
            used: set[str] = set()
            remote = self._linked_function(path, name, function, used, depth)
            self._remotes[key] = (remote, frozenset(used))
        done = self._remotes[key]
        if done is None:
            return None
        modules.update(done[1])
        return done[0]

    def _linked_function(self, path: str, name: str, function, modules: set[str], depth: int) -> RemoteFunction | None:
        shown = self.shown(path)
        sends = [
            RemoteSend(s.param, s.api, s.framework, Place(shown, s.span, s.api), s.position, s.agent, s.receiver)
            for s in function.sends
        ]
        for forward in function.forwards:  # a wrapper: the parameter goes on to a function of another module
            if any(s.param == forward.param for s in sends):
                continue
            resolved = self.resolver.module(path, forward.target)
            if resolved is None:
                continue
            reaches, looked_at = self._reaches(resolved[0], MAX_DEPTH)
            if not reaches:  # no module it may pass the parameter on to calls a model: no summary needed
                modules.update(looked_at)
                continue
            modules.add(resolved[0])
            callee = self._exports(forward.target, resolved[0], resolved[1], modules, depth + 1).get(forward.target)
            if callee is None:
                continue
            param = parameter_at(callee.params, forward.argument)
            sends.extend(
                RemoteSend(forward.param, s.api, s.framework, s.place, s.position if param.startswith("*") else 0)
                for s in callee.sends
                if s.param == param
            )
        returned = RemoteHistory(function.returns, shown) if function.returns is not None else None
        retrieves = function.retrieves
        retrieved = RemoteRetrieval(retrieves, Place(shown, retrieves.span, retrieves.label)) if retrieves else None
        kept = Place(shown, function.keeps, "a conversation object") if function.keeps is not None else None
        if not (
            sends
            or returned
            or function.writes
            or retrieved
            or kept
            or function.grows
            or function.system_params
            or function.relays
        ):
            return None
        return RemoteFunction(
            shown,
            name,
            function.params,
            tuple(sends),
            returned,
            function.writes,
            retrieved,
            kept,
            function.tool_params,
            function.continued,
            function.grows,
            function.system_params,
            function.relays,
        )


def parameter_at(params: tuple[str, ...], argument: int | str) -> str | None:
    """The parameter an argument binds (a method's `self` is bound by the instance)."""
    if isinstance(argument, str):
        return argument if argument in params else None
    offset = 1 if params and params[0] in ("self", "cls") else 0
    index = argument + offset
    return params[index] if index < len(params) else None


_INDEXES: dict[tuple, ProjectIndex] = {}


def new_run() -> None:
    """Each run of this process links anew (a module may have changed since the last run);
    the summaries stay, kept by content."""
    for index in _INDEXES.values():
        index._remotes.clear()
        index._reach.clear()


def project_index(root: str, cache_key: str, rules, options: dict) -> ProjectIndex:
    """This process's index for the run (a worker keeps its summaries across its files);
    `rules` are the cross-module rules, whose triggers say which modules may send."""
    key = (root, cache_key, tuple(rule.ID for rule in rules), json.dumps(options, sort_keys=True, default=repr))
    index = _INDEXES.get(key)
    if index is None:
        from chatbound.run.cache import Cache
        from chatbound.run.discovery import display_path
        from chatbound.run.precheck import rules_for

        store = Cache(Path(root), cache_key) if cache_key else None
        index = _INDEXES[key] = ProjectIndex(
            root,
            lambda source: bool(rules_for(source, rules, options)) or any(r.may_offer(source, options) for r in rules),
            lambda path: display_path(Path(path)),
            store,
        )
    return index
