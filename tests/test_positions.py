"""`chatbound.syntax.positions` gives every node but the tokens (which no rule reports) the position
LibCST's PositionProvider gives it: with the module's text (statements' lines read from
CPython's parse) and without it (from LibCST's codegen)."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from conftest import FIXTURES
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.syntax.positions import Positions
from chatbound.syntax.visitors import TOKEN_CLASSES, parents

ORDERS = {  # asked in any order: each statement is computed when first needed
    "forward": lambda nodes: None,
    "reverse": lambda nodes: nodes.reverse(),
    "shuffled": lambda nodes: random.Random(7).shuffle(nodes),
}


def _compare(module, orders, source=""):
    """LibCST's positions are resolved once per module (the costly part) and checked against a
    fresh `Positions` asked in each order."""
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = [node for node in expected if type(node) not in TOKEN_CLASSES]
    for name, order in orders.items():
        mine = Positions(module, parents(module), source)
        asked = list(nodes)
        order(asked)
        for node in asked:
            assert mine[node] == expected[node], (name, type(node).__name__, module.code_for_node(node)[:60])
    return len(nodes)


@pytest.mark.parametrize("with_source", [True, False], ids=["cpython-lines", "codegen-lines"])
def test_every_node_of_every_fixture_has_libcsts_position(with_source):
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        source = path.read_bytes()
        checked += _compare(cst.parse_module(source), ORDERS, source if with_source else "")
    assert checked > 40_000


@pytest.mark.parametrize(
    "code",
    [
        "#!/usr/bin/env python\n# header comment\n\nimport os\n\n\nclass A(B):\n    '''doc'''\n\n    @dec\n    def m(self, x):\n        if x:\n            return [\n                x,\n            ]\n        # trailing comment\n\n    x = 1\n# footer\n",
        "def f():\r\n    return 1\r\n\r\nclass C:\r\n    def g(self): return 2\r\n",
        "class C:\n\tdef f(self):\n\t\treturn '''a\nb'''\n\tdef g(self):\n\t\tpass\n",
        "class C: x = 1\ndef f(): return 2\nasync def g():\n    async with a as b:\n        await b\n",
        "# lead\n\n@one\n# between\n\n@two(\n    3,\n)\n\nasync def f(): a = 1; b = 2\n\n\n@(\n    dec\n)\nclass C:\n\n    # c\n    @property\n\n    def p(self):\n        x = 1; y = (\n            2)\n        return x\n    # end of class\n",
        "x = 1; y = 2\nz = (\n    3\n)  # tail\n\\\n\nif x:\n    pass\n",
        "",
    ],
)
@pytest.mark.parametrize("with_source", [True, False], ids=["cpython-lines", "codegen-lines"])
def test_corners(code, with_source):
    module = cst.parse_module(code)
    _compare(module, {"reverse": ORDERS["reverse"]}, code if with_source else "")
    mine = Positions(module, parents(module))
    with pytest.raises(KeyError):
        mine[cst.Name("elsewhere")]
