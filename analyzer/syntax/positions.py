"""Where a node is, computed for the statement that holds it, not for the whole module.

LibCST's PositionProvider generates the whole module's code with position tracking, about
twice the cost of the parse; the rules ask where a few hundred nodes are. `Positions` runs
the same codegen (LibCST's own position-tracking state, so the answers are the same) over
the innermost top-level statement, method or class body statement holding the node,
started at that statement's line and indentation, and keeps what it found. A statement's
first line comes from CPython's parse of the module's text (its `lineno`, less the comment and
blank lines LibCST gives the statement), a tenth of the codegen of every statement before it;
where CPython cannot parse the text (syntax newer than this interpreter), from that codegen.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState


class _Recorder:
    """What the codegen state writes into: the provider's `_computed`."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class Positions(Mapping):
    """`node -> CodeRange`, as PositionProvider maps it, each statement computed when asked."""

    def __init__(
        self, module: cst.Module, parents: Mapping[cst.CSTNode, cst.CSTNode], source: bytes | str = ""
    ) -> None:
        self.module = module
        self.parents = parents
        self.source = source  # the module's text, which CPython's parse reads the statements' lines from
        self.twins: dict[int, ast.Module | ast.stmt | None] = {}  # id(module or statement) -> CPython's node
        self.recorder = _Recorder()
        self.starts: dict[int, dict[int, int]] = {}  # id(body owner) -> id(statement) -> first line
        self.body_starts: dict[int, int] = {}  # id(block) -> first line of its body
        self.done: set[int] = set()

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self.recorder._computed.get(node)
        if found is None:
            self._compute(node)
            found = self.recorder._computed[node]  # KeyError: not in this module
        return found

    def __iter__(self):
        return iter(self.recorder._computed)

    def __len__(self) -> int:
        return len(self.recorder._computed)

    def _lines(self, node: cst.CSTNode) -> int:
        return len(NEWLINE_RE.findall(self.module.code_for_node(node)))

    def _compute(self, node: cst.CSTNode) -> None:
        chain = [node]
        while chain[-1] is not self.module:
            parent = self.parents.get(chain[-1])
            if parent is None:
                return  # not a node of this module
            chain.append(parent)
        chain.reverse()  # module, top statement, ..., node
        owner, body, line, indents = self.module, self.module.body, 1 + self._header_lines(), []
        index = 1
        while True:
            statement = chain[index] if index < len(chain) else None
            line = self._start(owner, body, line, statement)
            if line is None:  # the module itself, or a comment line outside any statement
                self._run(self.module, 1, [])
                return
            block = getattr(statement, "body", None)
            if (
                isinstance(statement, (cst.FunctionDef, cst.ClassDef))
                and isinstance(block, cst.IndentedBlock)
                and index + 2 < len(chain)
                and chain[index + 1] is block
            ):
                # the node is inside the body: descend to the body statement holding it
                line = self._body_start(statement, block, line)
                indents = [*indents, self.module.default_indent if block.indent is None else block.indent]
                owner, body, index = block, block.body, index + 2
                continue
            break
        self._run(statement, line, indents)

    def _run(self, node: cst.CSTNode, line: int, indents: list[str]) -> None:
        """LibCST's position-tracking codegen over `node`, started at `line` and `indents`."""
        if id(node) in self.done:
            return
        self.done.add(id(node))
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=self.recorder,
            indent_tokens=list(indents),
            line=line,
            column=0,
        )
        node._codegen(state)

    def _body_start(self, statement: cst.CSTNode, block: cst.IndentedBlock, line: int) -> int:
        """The line the first statement of a def's or class's body starts on."""
        start = self.body_starts.get(id(block))
        if start is None:  # after the header's lines: the def written `...: pass` ends where its body begins
            header = statement.with_changes(body=cst.SimpleStatementSuite(body=[cst.Pass()]))
            start = self.body_starts[id(block)] = line + self._lines(header)
        return start

    def _header_lines(self) -> int:
        return sum(self._lines(line) for line in self.module.header)

    def _start(self, owner: cst.CSTNode, body, first: int, statement: cst.CSTNode | None) -> int | None:
        """The line `statement`'s code (its leading lines included) starts on in `body`."""
        starts = self.starts.get(id(owner))
        if starts is None:
            starts = self.starts[id(owner)] = self._read_starts(owner, body)
        if starts is None:
            starts, line = {}, first
            for item in body:
                starts[id(item)] = line
                line += self._lines(item)
            self.starts[id(owner)] = starts
        return starts.get(id(statement))

    def _read_starts(self, owner: cst.CSTNode, body) -> dict[int, int] | None:
        """Each statement's first line, from CPython's twin of `owner`; None when it has none or
        its statements do not pair with LibCST's one for one (`a; b` is one line of two)."""
        twin = self._twin(owner)
        statements = getattr(twin, "body", None)
        if not isinstance(statements, list):
            return None
        starts, index = {}, 0
        for item in body:
            if index >= len(statements):
                return None
            node = statements[index]
            self.twins[id(item)] = node
            decorators = getattr(item, "decorators", ())
            above = sum(self._lines(d) for d in decorators) + len(getattr(item, "lines_after_decorators", ()))
            starts[id(item)] = node.lineno - above - len(item.leading_lines)
            index += len(item.body) if isinstance(item, cst.SimpleStatementLine) else 1
        return starts if index == len(statements) else None

    def _twin(self, owner: cst.CSTNode) -> ast.Module | ast.stmt | None:
        """CPython's node for the module, or for the def or class whose body `owner` is."""
        if owner is not self.module:
            return self.twins.get(id(self.parents.get(owner)))
        if id(owner) not in self.twins:
            try:
                self.twins[id(owner)] = ast.parse(self.source) if self.source else None
            except (SyntaxError, ValueError):  # newer syntax than this interpreter's, or a NUL byte
                self.twins[id(owner)] = None
        return self.twins[id(owner)]
