"""A LangGraph graph across a project's modules and its `langgraph.json`: what the project pass
(`chatbound.analysis.project.users`) reads of each file with the stdlib `ast`, as tags that
`graphs.py` reads back for the module they name.

Checked against langgraph 1.2.24 and langgraph-cli 0.4.40 (config.py).

- `defines(tree)`: a state class in the app's `state.py` (or a subclass there of a state class of a third
  module) whose key a message reducer reduces (`STATE_TAG` + the key).
- `uses(tree, imported, own)`: nodes in `nodes.py` registered with `add_node` in `graph.py`, which
  compiles the graph with a checkpointer (`NODE_TAG`, `SAVER_TAG`), and what a node factory of
  another module is given (`FACTORY_TAG`).
- `compiled_graphs(tree)`: module-level graphs compiled from a `StateGraph` the module builds
  (`COMPILED_TAG`), which an importer runs (`graph.invoke(...)`) without calling a model itself.
- `deployed(config)`: a graph named in `langgraph.json`'s `"graphs"` (`SERVED_TAG`), which the
  LangGraph platform serves with its own checkpointer, persisting every thread, whatever the code
  compiles.
"""

from __future__ import annotations

import ast
import re

from chatbound.frameworks.langgraph.graphs import (
    COMPILED_TAG,
    FACTORY_TAG,
    MESSAGE_REDUCER,
    MESSAGE_STATE_NAMES,
    NODE_TAG,
    SAVER_TAG,
    SERVED_TAG,
    STATE_TAG,
)

PROJECT_TRIGGERS = (re.compile(rb"\blanggraph\b|Annotated\[[^\]]*Message[^\]]*\]\s*,\s*(?:operator\.)?add\s*\]"),)


# --- what the project pass reads (stdlib ast, chatbound.analysis.project.users) -------------------------


def deployed(config: dict) -> list[tuple[str, str, str]]:
    """The modules a `langgraph.json` serves, as (path from its folder, tag, the text naming it):
    the platform keeps every thread with its own checkpointer (langgraph-cli 0.4.40 config.py).
    A module with a `/` is a file (`"./src/agent/graph.py:graph"`); any other is imported by
    its dotted name (`"agent.graph:graph"`, `_update_graph_paths`) from the local packages of
    `"dependencies"` (`["."]` here): each place that name can be a file in is listed."""
    if not isinstance(config, dict):
        return []
    local = [d for d in config.get("dependencies") or () if isinstance(d, str) and d.startswith(".")]
    found = []
    for spec in (config.get("graphs") or {}).values():
        text = spec.get("path") if isinstance(spec, dict) else spec
        module, _, variable = text.partition(":") if isinstance(text, str) else ("", "", "")
        if "/" in module or "\\" in module or module.endswith(".py"):
            found.append((module, SERVED_TAG + variable, text))
        elif re.fullmatch(r"\w+(?:\.\w+)*", module):
            path = module.replace(".", "/")
            found.extend(
                (f"{folder}/{layout}{path}{ending}", SERVED_TAG + variable, text)
                for folder in local
                for layout in ("", "src/")
                for ending in (".py", "/__init__.py")
            )
    return found


def defines(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    """The module's message-state classes: `STATE_TAG + key` for each key `add_messages` reduces."""
    states = {
        name
        for name, target in _ast_imports(tree).items()
        if target.startswith(("langgraph", "langchain")) and name in MESSAGE_STATE_NAMES
    }
    keys: dict[str, set[str]] = {name: {"messages"} for name in states}
    found = []
    for klass in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        own = {
            s.target.id: s
            for s in klass.body
            if isinstance(s, ast.AnnAssign)
            and isinstance(s.target, ast.Name)
            and MESSAGE_REDUCER.search(ast.unparse(s.annotation))
        }
        inherited = set().union(*(keys.get(_ast_name(base), set()) for base in klass.bases))
        if own or inherited:
            keys[klass.name] = set(own) | inherited
            found.extend((klass.name, STATE_TAG + key, own.get(key, klass)) for key in sorted(keys[klass.name]))
    return found


def uses(tree: ast.Module, imported: dict[str, str], own) -> list[tuple[str, str, object]]:
    """Imported functions this module registers as graph nodes (`NODE_TAG`), and, when it
    compiles the graph with a checkpointer or the platform serves it, that checkpointer
    (`SAVER_TAG`) for each of them. A node an imported factory makes (`add_node("triage",
    factory.make_node(chain))`, or a name bound to that call) gives the factory the checkpointer
    and, for each argument made by another function of the factory's module (`chain =
    factory.build_assistant(...)`), `FACTORY_TAG` + "position:function"."""
    if not any(target.startswith("langgraph") for target in imported.values()):
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    savers = [
        c
        for c in calls
        if c.func.attr == "compile"
        and any(
            k.arg == "checkpointer" and not (isinstance(k.value, ast.Constant) and k.value.value in (None, False))
            for k in c.keywords
        )
    ]
    served = {m.tag[len(SERVED_TAG) :]: m.place for m in own if m.tag.startswith(SERVED_TAG)}
    builders = {_ast_builder(tree, var): place for var, place in served.items()}
    found = []
    for call in (c for c in calls if c.func.attr == "add_node"):
        builder = call.func.value.id if isinstance(call.func.value, ast.Name) else None
        savers_here = savers + [builders[builder]] if builder in builders else savers
        for arg in [*call.args, *(k.value for k in call.keywords if k.arg in ("node", "action"))]:
            if isinstance(arg, ast.Name) and arg.id in imported:
                found.append((arg.id, NODE_TAG, call))
                found.extend((arg.id, SAVER_TAG, saver) for saver in savers_here[:1])
                continue
            made = _ast_call_of(tree, arg, call)
            factory = _ast_target(made.func, imported) if made is not None else None
            if factory is None:
                continue
            local = _ast_dotted(made.func)
            found.extend((local, SAVER_TAG, saver) for saver in savers_here[:1])
            for position, value in enumerate(made.args):
                argument = _ast_call_of(tree, value, made)
                target = _ast_target(argument.func, imported) if argument is not None else None
                if target is not None and target.rpartition(".")[0] == factory.rpartition(".")[0]:
                    found.append((local, f"{FACTORY_TAG}{position}:{target.rpartition('.')[2]}", call))
    return found


def compiled_graphs(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    """`graph = builder.compile(...)` at module level, where `builder = StateGraph(...)` is bound
    at module level too: `COMPILED_TAG` for `graph` (langgraph 1.2 `StateGraph.compile` returns
    the `CompiledStateGraph` whose `invoke` runs the nodes)."""
    builders = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and _ast_name(node.value.func) == "StateGraph"
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    return [
        (t.id, COMPILED_TAG, node)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "compile"
        and _ast_name(node.value.func.value) in builders
        for t in node.targets
        if isinstance(t, ast.Name)
    ]


def _ast_call_of(tree: ast.Module, value: ast.expr, user: ast.Call) -> ast.Call | None:
    """The call `value` is, or the call last assigned to the name `value` before `user` in the
    function holding `user` (a name bound in a loop counts)."""
    if isinstance(value, ast.Call):
        return value
    if not isinstance(value, ast.Name):
        return None
    scopes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.lineno <= user.lineno <= (node.end_lineno or node.lineno)
    ]
    scope = max(scopes, key=lambda node: node.lineno, default=tree)
    bound = [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign)
        and node.lineno <= user.lineno
        and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)
    ]
    last = max(bound, key=lambda node: (node.lineno, node.col_offset), default=None)
    return last.value if last is not None and isinstance(last.value, ast.Call) else None


def _ast_dotted(func: ast.expr) -> str | None:
    """`make_node` or `factory.make_node`: a callee as a dotted local name."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _ast_target(func: ast.expr, imported: dict[str, str]) -> str | None:
    """The import target a callee names (`factory.make_node` -> `app.assistants.factory.make_node`),
    or None for a callee this module does not import."""
    dotted = _ast_dotted(func)
    head, _, rest = (dotted or "").partition(".")
    if head not in imported:
        return None
    return f"{imported[head]}.{rest}" if rest else imported[head]


def _ast_builder(tree: ast.Module, var: str) -> str | None:
    """`builder` of `var = builder.compile(...)`: the graph langgraph.json serves as `var`."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == var for t in node.targets)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "compile"
            and isinstance(node.value.func.value, ast.Name)
        ):
            return node.value.func.value.id
    return None


def _ast_imports(tree: ast.Module) -> dict[str, str]:
    return {
        alias.asname or alias.name: f"{node.module}.{alias.name}"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def _ast_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
