"""PythonTree: one walk of CPython's tree for every rule's pre-check."""

import ast

from chatbound.syntax.stdlib_tree import PythonTree

SOURCE = """\
import os
def f(history, *, k=20):
    del history[:-4]
    history.append({"role": "system", "content": f"hi {os.name}"})
    return [g(x)[-3:] for x in history if x] or (lambda: h(k=k))
@agent.tool
async def search(ctx, q):
    async with client as c:
        return await c.chat.completions.create(messages=[q], tools=TOOLS)
"""


def test_the_nodes_of_each_type_are_those_ast_walk_finds():
    module = ast.parse(SOURCE)
    tree = PythonTree(module)
    for kind in (
        ast.Call,
        ast.Subscript,
        ast.Delete,
        ast.Dict,
        ast.Constant,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Name,
        ast.keyword,
        ast.Lambda,
        ast.JoinedStr,
    ):
        expected = {id(node) for node in ast.walk(module) if type(node) is kind}
        assert {id(node) for node in tree.nodes(kind)} == expected, kind
    assert len(tree.nodes(ast.Call)) == 4 and len(tree.nodes(ast.Subscript)) == 2


def test_several_types_at_once_and_contexts_left_out():
    tree = PythonTree(ast.parse(SOURCE))
    assert len(tree.nodes(ast.Delete, ast.Call)) == 5
    assert tree.nodes(ast.Load) == [] and tree.nodes(ast.Store) == []
