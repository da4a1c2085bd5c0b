"""A module's imports read from its bytes, and where on disk each one leads.

`imports_of(source)` lists what each import binds, spelled as the chat facts spell a
qualified name (`from .llm import chat as send` binds `send` to `.llm.chat`; `import app.db`
binds `app`, through which `app.db.f` is named). It is a textual read (imports at any indentation, parenthesised
lists), so it over-approximates: an `import` line inside a docstring counts too, which only
widens what a file's cached result depends on. Dynamic imports (`importlib.import_module`,
`__import__`) are not imports here.

`Resolver.module(importer, target)` finds the project file a target names: relative targets
from the importer's package, absolute ones from the folder above the importer's top package,
the importer's own folder (a script's imports), the folders between it and the project root
(a top package run from a subfolder, with namespace folders on the way) and the project root
(and its `src/`); where
several hold a prefix of it, the longest prefix (`app/assistants/factory.py` over a script's
neighbour `app/app.py` for `app.assistants.factory`).
"""

from __future__ import annotations

import os
import re

IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\r\n#;]*)|import[ \t]+([^\r\n#;]*))",
    re.M,
)
ALIAS = re.compile(r"^([\w.]+)(?:\s+as\s+(\w+))?$")


def imports_of(source: bytes) -> list[tuple[str, str]]:
    """(bound name, target) for every import of the module, in order."""
    found: list[tuple[str, str]] = []
    for dots, module, names, plain in IMPORT.findall(source):
        if plain:
            for name, bound in _aliases(plain):  # `import a.b` binds `a`; `a.b.f` is named through it
                found.append((bound or name.split(".", 1)[0], name))
            continue
        base = dots.decode() + module.decode()
        if names.strip() == b"*":  # every public name of the module, each bound by its own name
            found.append(("*", base))
            continue
        for name, bound in _aliases(names.strip(b"()")):
            if "." in name:
                continue
            target = f"{base}.{name}" if base and not base.endswith(".") else base + name
            found.append((bound or name, target))
    return found


def _aliases(text: bytes) -> list[tuple[str, str]]:
    aliases = []
    for part in text.decode("utf-8", "replace").replace("\\", " ").split(","):
        match = ALIAS.match(" ".join(part.split()))
        if match:
            aliases.append((match.group(1), match.group(2) or ""))
    return aliases


class Resolver:
    """Finds the project files import targets name; every file-system answer is remembered."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self._files: dict[str, bool] = {}
        self._tops: dict[str, str] = {}
        self._modules: dict[tuple[str, str], tuple[str, tuple[str, ...]] | None] = {}  # by (importer's folder, target)

    def module(self, importer: str, target: str) -> tuple[str, tuple[str, ...]] | None:
        """(the file of the longest prefix of `target` that is a module, the names after it)."""
        folder = os.path.dirname(os.path.abspath(importer))
        key = (folder, target)
        if key not in self._modules:  # a big tree asks the same few thousand questions again and again
            self._modules[key] = self._module(folder, target)
        return self._modules[key]

    def _module(self, folder: str, target: str) -> tuple[str, tuple[str, ...]] | None:
        level = len(target) - len(target.lstrip("."))
        parts = tuple(p for p in target[level:].split(".") if p)
        if level:
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            bases = [folder]
        else:
            bases = [self._top(folder), folder, *self._ancestors(folder), self.root, os.path.join(self.root, "src")]
            if parts and parts[0] == os.path.basename(self.root):  # `backend.services.x` checked from inside `backend/`
                bases.append(os.path.dirname(self.root))
        best = None
        for base in dict.fromkeys(bases):  # the longest module path wins: `app/app.py` holds no `app.state`
            for cut in range(len(parts), -1 if level else 0, -1):
                path = self._file(base, parts[:cut])
                if path is not None:
                    if best is None or cut > len(parts) - len(best[1]):
                        best = path, parts[cut:]
                    break
        return best

    def _ancestors(self, folder: str) -> list[str]:
        """The folders between the importer's and the project root, nearest first: where a program run
        from one of them finds its top package when the folders below hold no `__init__.py`
        (`backend/app/api/routes/chat.py` importing `app.agent` of `backend/app/`)."""
        found = []
        while folder != self.root and folder.startswith(self.root + os.sep):
            folder = os.path.dirname(folder)
            if folder != self.root:
                found.append(folder)
        return found

    def _file(self, base: str, parts: tuple[str, ...]) -> str | None:
        stem = os.path.join(base, *parts)
        for path in (
            (stem + ".py", os.path.join(stem, "__init__.py")) if parts else (os.path.join(base, "__init__.py"),)
        ):
            known = self._files.get(path)
            if known is None:
                known = self._files[path] = os.path.isfile(path)
            if known:
                return path
        return None

    def _top(self, folder: str) -> str:
        """The folder above the importer's top-level package (its own folder when it is none)."""
        top = self._tops.get(folder)
        if top is None:
            parent = os.path.dirname(folder)
            inside = parent != folder and self._file(folder, ()) is not None
            top = self._tops[folder] = self._top(parent) if inside else folder
        return top
