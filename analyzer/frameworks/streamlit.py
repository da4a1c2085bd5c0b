"""Streamlit scripts: every browser session reruns the script, so what the script calls in
another module runs for every user (streamlit 1.40: the script runs once per session and
rerun; imported modules are loaded once per process, so what they keep is shared). What the
project pass (`chatbound.analysis.project.users`) says of those functions is `SERVED_TAG`.
"""

from __future__ import annotations

import ast
import re

from chatbound.vocabulary.servers import SERVED_TAG

PROJECT_TRIGGERS = (re.compile(rb"^\s*(?:import|from)\s+streamlit\b", re.M),)


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, ast.AST]]:
    """Each imported function a Streamlit script calls (`run_agent(prompt)`, `agent.run_agent(...)`)."""
    if not any(target.split(".")[0] == "streamlit" for target in imported.values()):
        return []
    found: list[tuple[str, str, ast.AST]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in imported:
            found.append((func.id, SERVED_TAG, node))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imported:
            if not imported[func.value.id].startswith("streamlit"):
                found.append((f"{func.value.id}.{func.attr}", SERVED_TAG, node))
    return found
