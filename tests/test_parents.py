"""`chatbound.syntax.visitors`: parents and the batched traversal, as LibCST gives them, computed faster."""

from __future__ import annotations

import libcst as cst
import pytest
from conftest import FIXTURES
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from chatbound.syntax.visitors import TOKEN_CLASSES, parents


def test_parents_equal_libcsts_provider_on_every_fixture_file_but_for_tokens():
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        module = cst.parse_module(path.read_bytes())
        every = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
        expected = {node: parent for node, parent in every.items() if type(node) not in TOKEN_CLASSES}
        found = parents(module)
        assert len(found) == len(expected), path
        assert all(found[node] is parent for node, parent in expected.items()), path
        checked += len(found)
    assert checked > 40_000


def test_the_module_has_no_parent_and_arguments_belong_to_their_call():
    module = cst.parse_module("x = f(a, *b)\n")
    found = parents(module)
    call = module.body[0].body[0].value
    assert found[call].value is call and module not in found
    assert [type(found[arg]).__name__ for arg in call.args] == ["Call", "Call"]


class _Recorder(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.order = []

    def on_visit(self, node):
        self.order.append(("visit", node))
        return True

    def on_leave(self, original_node):
        self.order.append(("leave", original_node))


def test_visit_batched_meets_every_node_but_the_tokens_in_libcsts_order_without_rebuilding_it():
    from chatbound.syntax.visitors import visit_batched

    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        module = cst.parse_module(path.read_bytes())
        theirs = _Recorder()
        module.visit(theirs)
        theirs.order = [(step, node) for step, node in theirs.order if type(node) not in TOKEN_CLASSES]
        ours = []
        kinds = {type(node).__name__ for _, node in theirs.order}

        class Every:
            def get_visitors(self):
                table = {f"visit_{kind}": lambda node: ours.append(("visit", node)) for kind in kinds}
                table.update({f"leave_{kind}": lambda node: ours.append(("leave", node)) for kind in kinds})
                return table

        visit_batched(module, [Every()])
        assert [(step, id(node)) for step, node in ours] == [(step, id(node)) for step, node in theirs.order], path
        checked += len(ours)
    assert checked > 80_000


ORDERED = (
    cst.Name,
    cst.Call,
    cst.Attribute,
    cst.Subscript,
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.For,
    cst.While,
    cst.If,
    cst.Del,
    cst.Return,
)


def test_preorder_ranks_follow_the_source_text():
    from libcst.metadata import PositionProvider

    from chatbound.syntax.visitors import preorder

    for path in sorted(FIXTURES.rglob("*.py")):
        module = cst.parse_module(path.read_bytes())
        ranks = preorder(module)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        # the nodes the chat facts put in order (leading blank lines and decorators, which a
        # statement's position leaves out, are not among them)
        starts = sorted((n for n in positions if isinstance(n, ORDERED)), key=lambda node: ranks[node])
        # in rank order the start positions never go back, and an ancestor ranks before what it holds
        assert all(
            (positions[a].start.line, positions[a].start.column) <= (positions[b].start.line, positions[b].start.column)
            for a, b in zip(starts, starts[1:])
        ), path
        found = parents(module)
        assert all(ranks[found[node]] < ranks[node] for node in found), path


def test_the_tokens_the_walks_skip_are_whitespace_punctuation_operators_and_brackets():
    names = {cls.__name__ for cls in TOKEN_CLASSES}
    assert {
        "SimpleWhitespace",
        "Comment",
        "EmptyLine",
        "Comma",
        "Dot",
        "AssignEqual",
        "Add",
        "Not",
        "In",
        "AddAssign",
        "LeftParen",
        "RightSquareBracket",
        "LeftCurlyBrace",
        "ImportStar",
    } <= names
    assert not names & {
        "Name",
        "Call",
        "Attribute",
        "SimpleString",
        "Param",
        "ImportAlias",
        "Arg",
        "Element",
        "BinaryOperation",
        "UnaryOperation",
        "Comparison",
        "ComparisonTarget",
        "Asynchronous",
    }


def test_no_rule_visits_a_token():
    from chatbound.run.registry import select_rules
    from chatbound.syntax.visitors import _method_names

    tokens = {cls.__name__ for cls in TOKEN_CLASSES}
    for rule in select_rules():
        visited = {name.split("_", 1)[1] for name in _method_names(rule)}  # LibCST's no-op defaults left out
        assert visited and not visited & tokens, rule.ID


def test_the_unchecked_parse_gives_libcsts_tree_and_leaves_checks_on_for_nodes_built_later():
    import gc

    from chatbound.run.pipeline import analyze_source
    from chatbound.syntax.parse import parse

    for path in sorted(FIXTURES.rglob("*.py")):
        source = path.read_bytes()
        assert parse(source).deep_equals(cst.parse_module(source)), path
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")  # what a fix builds is still validated
    assert gc.isenabled()
    analyze_source(b"x = 1\n", "x.py", [])
    assert gc.isenabled()  # the collector is back on after a file


def test_the_parents_and_ranks_a_rule_reads_in_leave_module_come_from_the_traversal_and_are_whole(monkeypatch):
    """The rules' traversal records them as it walks (no walk of their own): asked in `leave_Module`, they are ParentNodeProvider's mapping (tokens aside) and
    each node's place in the visit order."""
    from chatbound.syntax import visitors
    from chatbound.syntax.visitors import preorder, visit_batched

    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        module = cst.parse_module(path.read_bytes())
        every = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
        expected = {node: parent for node, parent in every.items() if type(node) not in TOKEN_CLASSES}
        visited, seen = [], {}

        class Asks:
            def get_visitors(self):
                table = {
                    f"visit_{cls.__name__}": visited.append for cls in {type(n) for n in expected} | {type(module)}
                }
                table["leave_Module"] = lambda node: seen.update(parents=parents(module), ranks=preorder(module))
                return table

        walked = []
        with monkeypatch.context() as patched:
            patched.setattr(
                visitors, "children", lambda node, step=visitors.children: walked.append(node) or step(node)
            )
            visit_batched(module, [Asks()])
        assert len(walked) == len(visited), path  # each node's children read once: one walk
        assert len(seen["parents"]) == len(expected), path
        assert all(seen["parents"][node] is parent for node, parent in expected.items()), path
        assert seen["ranks"] == {node: rank for rank, node in enumerate(visited, 1)}, path
        checked += len(visited)
    assert checked > 40_000
