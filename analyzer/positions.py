"""Where a node is, computed for the statement that holds it, not for the whole module.

LibCST's PositionProvider generates the whole module's code with position tracking, about
twice the cost of the parse; the rules ask where a few hundred nodes are. `Positions` runs
the same codegen (LibCST's own position-tracking state, so the answers are the same) over
the innermost top-level statement, method or class body statement holding the node,
started at that statement's line and indentation, and keeps what it found. A statement's
line comes from the plain code of the statements before it.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata.position_provider import NEWLINE_RE
from libcst._position import CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState


class _Recorder:
    """What the codegen state writes into: the provider's `_computed`."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class Positions(Mapping):
    """`node -> CodeRange`, as PositionProvider maps it, each statement computed when asked."""

    def __init__(self, module: cst.Module, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self.module = module
        self.parents = parents
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
            starts, line = {}, first
            for item in body:
                starts[id(item)] = line
                line += self._lines(item)
            self.starts[id(owner)] = starts
        return starts.get(id(statement))
