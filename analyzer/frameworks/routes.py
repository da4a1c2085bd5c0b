"""Web routes and bot handlers across modules: a route of `server.py` calling `chat.reply(...)`
of a module that imports no server package serves every user through that function too. What
the project pass (`chatbound.analysis.project.users`) says of such a function is `SERVED_TAG`;
the decorators are those of `chatbound.vocabulary.servers`, checked there in each framework's source.
"""

from __future__ import annotations

import ast
import re

from chatbound.vocabulary.servers import DECORATOR_VERBS, SERVED_TAG, SERVER_PACKAGES

PROJECT_TRIGGERS = (
    re.compile(rb"^\s*(?:import|from)\s+(?:" + b"|".join(p.encode() for p in sorted(SERVER_PACKAGES)) + rb")\b", re.M),
)


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, ast.AST]]:
    """Each imported function a route or handler of the module calls (`reply(text)`, `chat.reply(text)`)."""
    if not any(target.lstrip(".").split(".")[0] in SERVER_PACKAGES for target in imported.values()):
        return []
    found: list[tuple[str, str, ast.AST]] = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not any(
            _serves(d) for d in function.decorator_list
        ):
            continue
        for node in ast.walk(function):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Name) and func.id in imported:
                found.append((func.id, SERVED_TAG, node))
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imported:
                found.append((f"{func.value.id}.{func.attr}", SERVED_TAG, node))
    return found


def _serves(decorator: ast.expr) -> bool:
    """`@app.post("/chat")`, `@router.get(...)`, `@bot.command()`: a called decorator whose verb serves."""
    return (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr in DECORATOR_VERBS
    )
