"""`chatbound.visitors.parents` is LibCST's ParentNodeProvider, computed faster: same mapping."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from chatbound.visitors import parents

from conftest import FIXTURES


def test_parents_equal_libcsts_provider_on_every_fixture_file():
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        module = cst.parse_module(path.read_bytes())
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ParentNodeProvider)
        found = parents(module)
        assert len(found) == len(expected), path
        assert all(found[node] is parent for node, parent in expected.items()), path
        checked += len(found)
    assert checked > 50_000


def test_the_module_has_no_parent_and_arguments_belong_to_their_call():
    module = cst.parse_module("x = f(a, *b)\n")
    found = parents(module)
    call = module.body[0].body[0].value
    assert found[call].value is call and module not in found
    assert [type(found[arg]).__name__ for arg in call.args] == ["Call", "Call"]
