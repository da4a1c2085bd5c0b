"""CPython's tree of a file, as the rules' pre-checks read it (`Rule.may_report_tree`)."""

from __future__ import annotations

import ast


class PythonTree:
    """CPython's tree of a file, walked once for all the rules' `may_report_tree`: each asks
    for the few node types it reads (`tree.nodes(ast.Call)`). Contexts (`Load`) and operators
    are not walked into: no test asks for them by type."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self._by_type: dict[type, list[ast.AST]] | None = None

    def nodes(self, *kinds: type) -> list[ast.AST]:
        if self._by_type is None:
            self._by_type = self._walk()
        return [node for kind in kinds for node in self._by_type.get(kind, ())]

    def _walk(self) -> dict[type, list[ast.AST]]:
        found: dict[type, list[ast.AST]] = {}
        pending: list[ast.AST] = [self.module]
        while pending:
            node = pending.pop()
            kind = type(node)
            found.setdefault(kind, []).append(node)
            for name in kind._fields:
                if name == "ctx" or name == "op":
                    continue
                value = getattr(node, name, None)
                if type(value) is list:
                    pending.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    pending.append(value)
        return found
