"""`chatbound.positions` gives every node but the tokens (which no rule reports) the position
LibCST's PositionProvider gives it."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.positions import Positions
from chatbound.visitors import TOKEN_CLASSES, parents

from conftest import FIXTURES


def _compare(module, order):
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    mine = Positions(module, parents(module))
    nodes = [node for node in expected if type(node) not in TOKEN_CLASSES]
    order(nodes)  # asked in any order: each statement is computed when first needed
    for node in nodes:
        assert mine[node] == expected[node], (type(node).__name__, module.code_for_node(node)[:60])
    return len(nodes)


@pytest.mark.parametrize("order", [lambda nodes: None, lambda nodes: nodes.reverse(),
                                   lambda nodes: random.Random(7).shuffle(nodes)], ids=["forward", "reverse", "shuffled"])
def test_every_node_of_every_fixture_has_libcsts_position(order):
    checked = sum(_compare(cst.parse_module(path.read_bytes()), order) for path in sorted(FIXTURES.rglob("*.py")))
    assert checked > 40_000


@pytest.mark.parametrize("code", [
    "#!/usr/bin/env python\n# header comment\n\nimport os\n\n\nclass A(B):\n    '''doc'''\n\n    @dec\n    def m(self, x):\n        if x:\n            return [\n                x,\n            ]\n        # trailing comment\n\n    x = 1\n# footer\n",
    "def f():\r\n    return 1\r\n\r\nclass C:\r\n    def g(self): return 2\r\n",
    "class C:\n\tdef f(self):\n\t\treturn '''a\nb'''\n\tdef g(self):\n\t\tpass\n",
    "class C: x = 1\ndef f(): return 2\nasync def g():\n    async with a as b:\n        await b\n",
    "",
])
def test_corners(code):
    module = cst.parse_module(code)
    _compare(module, lambda nodes: nodes.reverse())
    mine = Positions(module, parents(module))
    with pytest.raises(KeyError):
        mine[cst.Name("elsewhere")]
