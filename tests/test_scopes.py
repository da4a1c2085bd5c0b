"""`chatbound.syntax.scopes` answers what the rules ask of LibCST's ScopeProvider, the same way."""

from __future__ import annotations

import libcst as cst
import pytest
from conftest import FIXTURES
from libcst.metadata import ClassScope, ComprehensionScope, FunctionScope, GlobalScope, MetadataWrapper, ScopeProvider

from chatbound.syntax.scopes import CLASS, COMPREHENSION, FUNCTION, MODULE, scopes

KINDS = {GlobalScope: MODULE, FunctionScope: FUNCTION, ClassScope: CLASS, ComprehensionScope: COMPREHENSION}


def _theirs(scope, name):
    return {
        id(a.node)
        for a in scope[name]
        if getattr(a, "node", None) is not None and not type(a.scope).__name__ == "BuiltinScope"
    }


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: set[int] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(id(node))


def _compare(module):
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    mine = scopes(module)
    names = _Names()
    module.visit(names)
    compared = 0
    for node, scope in expected.items():
        # LibCST also scopes the names it parses out of string annotations (`Mapped[list["Turn"]]`):
        # those nodes are not in the module's tree, so no rule ever meets them
        if not isinstance(node, cst.Name) or scope is None or id(node) not in names.found:
            continue
        ours = mine[node]
        assert ours.kind == KINDS[type(scope)], (node.value, type(scope).__name__)
        assert {id(b.node) for b in ours[node.value]} == _theirs(scope, node.value), node.value
        assert {KINDS[type(a.scope)] for a in scope[node.value] if type(a.scope) in KINDS} == {
            b.scope.kind for b in ours[node.value]
        }, node.value
        compared += 1
    return compared


def test_every_name_in_every_fixture_sees_the_bindings_libcst_gives():
    compared = sum(_compare(cst.parse_module(path.read_bytes())) for path in sorted(FIXTURES.rglob("*.py")))
    assert compared > 5_000


@pytest.mark.parametrize(
    "code",
    [
        "h = []\ndef f():\n    global h\n    h = h + [1]\n    return h\n",
        "def outer():\n    n = 0\n    def inner():\n        nonlocal n\n        n += 1\n    return inner\n",
        "class C:\n    x = 1\n    def m(self):\n        return x\n    y = [x for _ in range(3)]\n",
        "import a.b as c, d.e\nfrom f import g as h, i\nfor j, (k, *l) in z:\n    pass\nwith o() as (p, q):\n    pass\n",
        "try:\n    pass\nexcept E as err:\n    print(err)\nlam = lambda u, v=w: u + v\n",
        "rows = [x for x in xs if x]\nd = {k: v for k, v in pairs}\ng = (i for i in range(n) for j in i)\n",
        "def f(a, *b, c=1, **d):\n    e: int = a\n    e += 1\n    return a, b, c, d, e\n",
    ],
)
def test_scoping_corners(code):
    assert _compare(cst.parse_module(code)) > 0


def test_a_walrus_in_a_comprehension_binds_in_the_enclosing_scope():
    module = cst.parse_module("rows = [y for x in xs if (y := f(x))]\nprint(y)\n")
    found = scopes(module)
    read = module.body[1].body[0].value.args[0].value
    [binding] = found[read][read.value]
    assert binding.scope.kind == MODULE and binding.node.value == "y"  # LibCST files it under the comprehension
