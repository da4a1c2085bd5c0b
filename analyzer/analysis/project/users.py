"""The links that run against the imports: what a module's importers say about its names.

Frameworks split an application so that the module holding a fact cannot see the module
that decides whether it matters: agents with handoffs in `agents.py`, run on a continuing
conversation in `server.py`; a LangGraph node in `nodes.py`, registered in a graph compiled
with a checkpointer in `graph.py` (or served by the platform through `langgraph.json`), its
state class in `state.py`. `project_links(sources, ...)` reads every file whose bytes a
framework's `PROJECT_TRIGGERS` match, once, with the stdlib `ast` (a fraction of LibCST's
cost), and asks the framework modules:

- `defines(tree)`: tags for the module's own top-level names (a message-state class);
- `uses(tree, imported, own)`: tags the module gives names it imports (`imported`: local
  name -> import target; `own`: the mentions deployment files make of the module itself);
- `exports(tree)`: tags for the module's own top-level functions, which an importer sees by
  the name it imports (`make_node`) or as an attribute of the imported module
  (`factory.make_node`); unlike definitions, no subclass inherits them;
- `DEPLOYMENT_FILE` and `deployed(data)`: the modules a deployment file names, with a tag.

Each file gets the `Links` of what was said about its names (`given`), what the
definitions of the names it imports are (`seen`), and the files that says so (its cached
result rests on them). Limit: a file added later that imports an unchanged module does not
re-check that module until it changes (the cache keys a result by the files it rested on).
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable

from chatbound.analysis.project.imports import Resolver, imports_of
from chatbound.findings import Span
from chatbound.vocabulary.summaries import Links, Mention, Place


def _frameworks():
    from chatbound import frameworks  # the framework modules import LibCST; loaded only when a tree needs links

    return frameworks.MODULES


def triggered(sources: dict[str, bytes]) -> dict[str, bytes]:
    """The files a framework's `PROJECT_TRIGGERS` match: those `project_links` reads."""
    triggers = [t for m in _frameworks() for t in getattr(m, "PROJECT_TRIGGERS", ())]
    return {path: source for path, source in sources.items() if any(t.search(source) for t in triggers)}


def project_links(
    sources: dict[str, bytes], root: str, shown: Callable[[str], str], read: dict[str, bytes] | None = None
) -> dict[str, Links]:
    """`Links` for each file something is said about, keyed like `sources` (absolute paths);
    `read`: `triggered(sources)`, when the caller keeps it."""
    modules = _frameworks()
    read = triggered(sources) if read is None else read
    if not read:
        return {}
    resolver = Resolver(root)
    given: dict[str, dict[str, list[Mention]]] = {}
    defined: dict[str, dict[str, list[Mention]]] = {}
    rests_on: dict[str, set[str]] = {}
    for path, name, mention, source in _deployments(modules, read, root, shown):
        given.setdefault(path, {}).setdefault(name, []).append(mention)
        rests_on.setdefault(path, set()).add(source)
    exported: dict[str, dict[str, list[Mention]]] = {}
    trees: dict[str, ast.Module] = {}
    for path, source in read.items():
        try:
            trees[path] = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # its own check says why
        for module in modules:
            for name, tag, node in getattr(module, "defines", lambda tree: ())(trees[path]):
                defined.setdefault(path, {}).setdefault(name, []).append(Mention(tag, _place(shown(path), node)))
            for name, tag, node in getattr(module, "exports", lambda tree: ())(trees[path]):
                exported.setdefault(path, {}).setdefault(name, []).append(Mention(tag, _place(shown(path), node)))
    based_on = _inherit(defined, trees, sources, resolver, shown)
    for path, tree in trees.items():
        targets = _imported(resolver, path, read[path])
        own = given.get(path, {}).get("", ())
        imported = {local: target for local, target in imports_of(read[path])}
        for module in modules:
            for local, tag, node in getattr(module, "uses", lambda *args: ())(tree, imported, own):
                target = targets.get(local) or _module_attribute(resolver, path, imported, local)
                if target is None:
                    continue
                module_path, name = target
                place = node if isinstance(node, Place) else _place(shown(path), node)
                given.setdefault(module_path, {}).setdefault(name, []).append(Mention(tag, place))
                rests_on.setdefault(module_path, set()).add(path)
    seen: dict[str, dict[str, list[Mention]]] = {}
    named = {name.encode() for found in (*defined.values(), *exported.values()) for name in found}
    for path in (
        (set(trees) | set(given) | {p for p, source in sources.items() if any(n in source for n in named)})
        & set(sources)
        if defined or exported
        else ()
    ):  # a node module, or a module handing a function to a chat UI, need not name the framework
        for local, (module_path, name) in _imported(resolver, path, sources[path]).items():
            for mention in (*defined.get(module_path, {}).get(name, ()), *exported.get(module_path, {}).get(name, ())):
                seen.setdefault(path, {}).setdefault(local, []).append(mention)
                rests_on.setdefault(path, set()).update({module_path, *based_on.get(module_path, ())})
        for local, module_path in _imported_modules(resolver, path, sources[path]).items() if exported else ():
            for name, mentions in exported.get(module_path, {}).items():
                seen.setdefault(path, {}).setdefault(f"{local}.{name}", []).extend(mentions)
                rests_on.setdefault(path, set()).add(module_path)
    return {
        path: Links(
            {k: tuple(v) for k, v in given.get(path, {}).items()},
            {k: tuple(v) for k, v in seen.get(path, {}).items()},
            tuple(sorted(rests_on.get(path, ()))),
        )
        for path in set(given) | set(seen)
    }


def _inherit(defined, trees, sources, resolver, shown) -> dict[str, set[str]]:
    """Define a class whose base is a defined class of another module as its base is (a
    subclass of a message-state class is one), through any number of modules; returns the
    modules each such definition rests on. A module that names no framework is read for this
    only when its text names a defined class."""
    based_on: dict[str, set[str]] = {}
    changed = bool(defined)
    while changed:
        changed = False
        names = {name.encode() for found in defined.values() for name in found}
        for path, source in sources.items():
            if not any(name in source for name in names):
                continue
            bases = {
                local: target
                for local, target in _imported(resolver, path, source).items()
                if defined.get(target[0], {}).get(target[1])
            }
            tree = trees.get(path) or _parsed(source) if bases else None
            for klass in (node for node in tree.body if isinstance(node, ast.ClassDef)) if tree else ():
                used = [bases[b.id] for b in klass.bases if isinstance(b, ast.Name) and b.id in bases]
                if used and klass.name not in defined.get(path, {}):
                    defined.setdefault(path, {})[klass.name] = [
                        m for module, name in used for m in defined[module][name]
                    ]
                    for module, _ in used:
                        based_on.setdefault(path, set()).update({module, *based_on.get(module, ())})
                    changed = True
    return based_on


def _parsed(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None  # its own check says why


def _imported(resolver: Resolver, path: str, source: bytes) -> dict[str, tuple[str, str]]:
    """Local name -> (the project file it comes from, its name there), for `from m import n`."""
    found = {}
    for local, target in imports_of(source):
        resolved = resolver.module(path, target)
        if resolved is not None and len(resolved[1]) == 1 and resolved[0] != path:
            found[local] = (resolved[0], resolved[1][0])
    return found


def _imported_modules(resolver: Resolver, path: str, source: bytes) -> dict[str, str]:
    """Local name -> the project file, for an imported module (`from app.assistants import factory`)."""
    found = {}
    for local, target in imports_of(source):
        resolved = resolver.module(path, target)
        if resolved is not None and not resolved[1] and resolved[0] != path and "." not in local:
            found[local] = resolved[0]
    return found


def _module_attribute(resolver: Resolver, path: str, imported: dict[str, str], local: str) -> tuple[str, str] | None:
    """(the project file, the name) `factory.make_node` names where `factory` is an imported
    module (`from app.assistants import factory`, `import factory`); None otherwise (`import
    a.b` binds `a`, not the module `a.b`)."""
    head, _, name = local.partition(".")
    target = imported.get(head, "").lstrip(".")
    if not name or "." in name or not target or "." in target and target.split(".", 1)[0] == head:
        return None
    resolved = resolver.module(path, f"{imported[head]}.{name}")
    if resolved is None or resolved[1] != (name,) or resolved[0] == path:
        return None
    return resolved[0], name


def _deployments(modules, read: dict[str, bytes], root: str, shown):
    """(module path, "", mention, the deployment file) for each module a deployment file
    (`langgraph.json`) in the root or a folder holding a read file, or above it, names."""
    folders = {os.path.abspath(root)}
    for path in read:
        folder = os.path.dirname(path)
        while folder.startswith(os.path.abspath(root)) and folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    for module in modules:
        name = getattr(module, "DEPLOYMENT_FILE", None)
        for folder in sorted(folders) if name else ():
            file = os.path.join(folder, name)
            if not os.path.isfile(file):
                continue
            try:
                with open(file, "rb") as handle:
                    data = handle.read()
                entries = module.deployed(json.loads(data))
            except (OSError, ValueError):
                continue  # not ours to report: the deployment tool says what is wrong with it
            for relative, tag, text in entries:
                target = os.path.normpath(os.path.join(folder, relative))
                if not os.path.isfile(target):
                    continue  # one of the places a dotted module name may be in
                line = next(
                    (n for n, row in enumerate(data.decode("utf-8", "replace").splitlines(), 1) if text in row), 1
                )
                yield target, "", Mention(tag, Place(shown(file), Span(line, 1, line, 1), name)), file


def _place(shown: str, node: ast.AST) -> Place:
    line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
    return Place(
        shown,
        Span(
            line, col + 1, getattr(node, "end_lineno", line) or line, (getattr(node, "end_col_offset", col) or col) + 1
        ),
    )


class WorkspaceLinks:
    """`project_links` for the language server: the project's files read once, the open
    buffers standing for theirs (a buffer's text is kept as the file's once seen, so a saved
    and closed file stays current), the links made again only when a buffer changed."""

    def __init__(self, files: dict[str, bytes], root: str, shown: Callable[[str], str]) -> None:
        self.files = files
        self.read = triggered(files)
        self.root = root
        self.shown = shown
        self._seen: dict[str, bytes] | None = None
        self._links: dict[str, Links] = {}

    def links(self, buffers: dict[str, bytes]) -> dict[str, Links]:
        if buffers != self._seen:
            self.files.update(buffers)
            matched = triggered(buffers)
            for path in buffers:
                if path in matched:
                    self.read[path] = matched[path]
                else:
                    self.read.pop(path, None)
            self._links = project_links(self.files, self.root, self.shown, self.read)
            self._seen = dict(buffers)
        return self._links
