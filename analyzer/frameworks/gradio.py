"""Gradio chat UIs built in one module and given their model function by another: a
`gr.Blocks` subclass (or a factory function) whose event handler passes the value of a
`gr.Chatbot` to the callable the caller handed in (`ChatUI(respond)`, then inside
`.then(bot, [chatbot, system], chatbot)` with `def bot(history, system): ... fn(history, system)`).
That callable gets the whole chat every turn, as a `gr.ChatInterface` function does.

Gradio 5 (events.py `EventListener`: `fn` receives the `inputs` components' values in order; a
`gr.Chatbot` value is the chat's message list, and the handler returning it with more messages
to the same component as an output is how the chat grows; `gr.ChatInterface(fn)` calls
`fn(message, history)`).

- `defines(tree)` (the project pass, `chatbound.analysis.project.users`): a top-level class or
  function handing a chat history to one of its parameters, as `CALLBACK_TAG` + the parameter's
  position and name + the position the history is passed at.
- `history_callbacks(facts)`: the functions an importer hands such a class or function, and the
  parameter of each that receives the chat.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from chatbound.frameworks.vocabulary import links

PROJECT_TRIGGERS = (re.compile(rb"^\s*(?:import|from)\s+gradio\b", re.M),)
CALLBACK_TAG = "gradio.history_callback:"
EVENTS = frozenset("submit click change then input".split())  # Gradio 5 event listeners: (fn, inputs, outputs)
# components whose value lasts between events when an event writes it back (Gradio 5 components/chatbot.py,
# components/state.py): a handler given one as an input gets the kept chat
KEPT = ("Chatbot", "State")


# --- what the project pass reads (stdlib ast) -----------------------------------------------------


def defines(tree: ast.Module) -> list[tuple[str, str, ast.AST]]:
    if not _imports_gradio(tree):
        return []
    found: list[tuple[str, str, ast.AST]] = []
    for top in tree.body:
        entry: ast.FunctionDef | ast.AsyncFunctionDef | None
        if isinstance(top, ast.ClassDef):
            init = next((f for f in top.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            entry, params = init, _params(init)[1:] if init is not None else []
        elif isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            entry, params = top, _params(top)
        else:
            continue
        if entry is None:
            continue
        held = {**{p: p for p in params}, **_held_on_self(entry, params)}
        for handler, history in _chat_handlers(top):
            for call in (n for n in ast.walk(handler) if isinstance(n, ast.Call)):
                param = held.get(_callee(call))
                passed = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == history), None)
                if param is not None and passed is not None:
                    found.append((top.name, f"{CALLBACK_TAG}{params.index(param)}:{param}:{passed}", call))
    return found


def _imports_gradio(tree: ast.Module) -> bool:
    for node in tree.body:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(n.split(".")[0] == "gradio" for n in names):
            return True
    return False


def _params(function) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def _held_on_self(init, params: list[str]) -> dict[str, str]:
    """`self.fn = fn` in `__init__`: `self.fn` holds the parameter."""
    return {
        f"self.{t.attr}": node.value.id
        for node in ast.walk(init)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params
        for t in node.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _chat_handlers(owner: ast.AST) -> list[tuple[ast.AST, str]]:
    """(handler, its parameter holding the chat) for each handler registered in `owner`: an
    event's function whose input at that position is a `gr.Chatbot` that some event writes
    back (an output), or a `gr.ChatInterface` function's second parameter."""
    functions = {
        f.name: f for f in ast.walk(owner) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f is not owner
    }
    calls = [n for n in ast.walk(owner) if isinstance(n, ast.Call)]
    chatbots = {
        t.id
        for node in ast.walk(owner)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _name(node.value.func) == "Chatbot"
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    written = {n.id for call in calls if _name(call.func) in EVENTS for n in _listed(_argument(call, 2, "outputs"))}
    found: list[tuple[ast.AST, str]] = []
    for call in calls:
        handler = functions.get(_handler_name(_argument(call, 0, "fn")))
        if handler is None:
            continue
        params = [p for p in _params(handler) if p not in ("self", "cls")]
        if _name(call.func) == "ChatInterface" and len(params) > 1:
            found.append((handler, params[1]))
        elif _name(call.func) in EVENTS:
            inputs = _listed(_argument(call, 1, "inputs"))
            for param, given in zip(params, inputs, strict=False):
                if given.id in chatbots and given.id in written:
                    found.append((handler, param))
    return found


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    given = next((k.value for k in call.keywords if k.arg == keyword), None)
    return given if given is not None else call.args[position] if len(call.args) > position else None


def _handler_name(fn: ast.AST | None) -> str:
    """`bot` or `self.bot`: a function of the owner."""
    if isinstance(fn, ast.Name):
        return fn.id
    if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "self":
        return fn.attr
    return ""


def _listed(value: ast.AST | None) -> list[ast.Name]:
    """The components an `inputs=` / `outputs=` names: one, or a list of them."""
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value] if value is not None else []
    return [i for i in items if isinstance(i, ast.Name)]


# --- what the chat facts read of an importer --------------------------------------------------------


def history_callbacks(facts) -> list[tuple[cst.FunctionDef, str]]:
    """(function, parameter): a function of this module handed to an imported chat UI
    (`ChatUI(respond)`) whose parameter there receives the UI's whole chat each turn."""
    seen = links(facts).seen
    if not seen:
        return []
    found = []
    for call in facts.nodes.calls:
        for mention in seen.get(facts.code(call.func), ()):
            if not mention.tag.startswith(CALLBACK_TAG):
                continue
            position, name, passed = mention.tag[len(CALLBACK_TAG) :].split(":")
            fn = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            if fn is None and int(position) < len(positional):
                fn = positional[int(position)]
            if not isinstance(fn, cst.Name):
                continue
            for function in facts.functions.get(fn.value, []):
                params = [p.name.value for p in facts._params(function)]
                if int(passed) < len(params):
                    found.append((function, params[int(passed)]))
    return found
