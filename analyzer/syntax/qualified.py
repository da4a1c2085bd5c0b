"""What a dotted name stands for through the module's imports: LibCST's QualifiedNameProvider,
reduced to what the rules ask of it.

The rules ask whether a callee is a framework's (`Agent` imported from `crewai`, `litellm`'s
`trim_messages`), so only imported names matter. The provider resolves the whole module's
scopes first (seconds on a large file); this reads only its import statements, found by a
walk over statements (imports anywhere, also inside functions, `try` and `if` blocks), and
keeps the provider's spelling (`from .llm import chat as send` -> `.llm.chat`, `import a.b`
binds `a`). A local name shadowing an import is not told apart.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedName, QualifiedNameSource


def dotted_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


def bind_import(statement: cst.Import | cst.ImportFrom, bindings: dict[str, set[str]]) -> None:
    """Add what one import statement binds (name -> what it stands for) to `bindings`."""
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            full = dotted_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bindings.setdefault(alias.asname.name.value, set()).add(full)
            else:  # `import a.b` binds `a`
                head = full.split(".", 1)[0]
                bindings.setdefault(head, set()).add(head)
        return
    if isinstance(statement.names, cst.ImportStar):
        return
    base = "." * len(statement.relative) + (dotted_name(statement.module) if statement.module is not None else "")
    for alias in statement.names:
        bound = alias.asname.name if alias.asname is not None else alias.name
        if isinstance(alias.name, cst.Name) and isinstance(bound, cst.Name):
            joined = f"{base}.{alias.name.value}" if base and not base.endswith(".") else base + alias.name.value
            bindings.setdefault(bound.value, set()).add(joined)


def import_bindings(module: cst.Module) -> dict[str, set[str]]:
    """Name an import binds anywhere in the module -> what it stands for."""
    bindings: dict[str, set[str]] = {}
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    bind_import(small, bindings)
            continue
        for name in ("body", "orelse", "handlers", "finalbody", "cases"):  # compound statements' parts
            part = getattr(statement, name, None)
            if isinstance(part, cst.IndentedBlock):
                pending.extend(part.body)
            elif isinstance(part, cst.CSTNode):  # a one-line suite, `else`, `elif`, `finally`
                pending.append(part)
            elif isinstance(part, (list, tuple)):  # except handlers, match cases
                pending.extend(part)
    return bindings


class QualifiedNames:
    """The mapping `get_metadata(QualifiedNameProvider, node)` reads: node -> qualified names."""

    def __init__(self, module: cst.Module) -> None:
        self.bindings = import_bindings(module)

    def get(self, node: cst.CSTNode, default=frozenset()) -> set[QualifiedName]:
        names = self[node]
        return names if names else default

    def __getitem__(self, node: cst.CSTNode) -> set[QualifiedName]:
        dotted = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else ""
        head, _, tail = dotted.partition(".")
        suffix = f".{tail}" if tail else ""
        return {QualifiedName(bound + suffix, QualifiedNameSource.IMPORT) for bound in self.bindings.get(head, ())}
