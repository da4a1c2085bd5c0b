"""Shared chat facts for rules: subclass `ChatRule`, then call `self.chat_facts()` in `leave_Module`.

`ChatRule` collects, during the one batched traversal, the few node kinds the chat facts
need (calls, assignments, `del`, returns, functions, classes, imports). The first rule of
a file to ask builds `chatbound.analysis.histories.ChatFacts` from them; the others reuse it. A
subclass that defines its own `visit_Call` etc. must call `super()`.

What the facts answer (documented in `chatbound.analysis.histories` and `chatbound.vocabulary.sinks`):

- `facts.sinks`: every model call, as `Sink(call, api, framework, content)`;
  `chatbound.vocabulary.sinks.sink_of(call, facts.qualified)` classifies one call ("is this a model or
  agent sink, which client").
- `facts.whole_history_in(expr)`: the whole histories an expression carries (the history
  itself, a copy, `h[1:]`, a comprehension, a join, an f-string loop, a local derived from
  it, a `transcript()` helper returning it); `[]` for bounded views such as `h[-10:]`.
- `facts.storage_of(expr)`: the lasting state an expression names (attribute, module name,
  session-keyed entry, Streamlit/Chainlit/Flask session, Gradio history, chat-loop list).
- `facts.histories[key]`: growth sites, trims, count windows, tool traffic, system prompt.
- `facts.flows()`: every (history, send site) pair where a whole history reaches a model.
- `facts.client_of(receiver)`: qualified names of the constructors a client was built by.

Query the facts inside `leave_Module` (they read LibCST metadata, which is only live during
the traversal). `self.may_chat()` is a cheap test on the collected calls: when it is False
no model call or chat memory is possible and the facts need not be built.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.histories import GROWTH_METHODS, INPUT_CALLS, ChatFacts
from chatbound.analysis.rule import Rule
from chatbound.syntax.messages import ast_callee_name, callee_name
from chatbound.syntax.qualified import bind_import, dotted_name
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.sinks import CALLEE_NAMES, SHAPES

TRIM_METHODS = ("pop", "popleft", "clear", "reduce")
# every callee name a sink, a chat object or a count window can have (the sinks' own names
# come from chatbound.vocabulary.sinks, so that a new sink cannot be missed here)
CHAT_CALLS = (
    CALLEE_NAMES
    | {tail[-1] for tail, _, _ in SHAPES}
    | frozenset(
        """create parse stream complete complete_async stream_async acomplete stream_complete completion
    acompletion text_completion chat achat stream_chat astream_chat invoke ainvoke astream batch abatch
    predict_messages generate_content generate_content_async generate_content_stream start_chat
    send_message send_message_stream converse converse_stream generate chat_completion text_generation run run_sync
    run_streamed run_stream iter get_chat_message_content get_chat_message_contents
    get_streaming_chat_message_content get_streaming_chat_message_contents create_stream
    invoke_model invoke_model_with_response_stream post
    ConversationChain RunnableWithMessageHistory trim_messages deque""".split()
    )
    | frameworks.CALLS
)


def may_chat_through(name: str) -> bool:
    """Whether a call of this callee name may send to a model or build a chat memory."""
    return name in CHAT_CALLS or name.endswith(("Memory", "Session", "History"))


def may_chat_tree(tree: PythonTree) -> bool:
    """`ChatRule.may_chat` on CPython's tree, for a rule's `may_report_tree`: a `del` or a
    call that may chat. (What another module offers is linked after the pre-check, and
    re-adds the cross-module rules: see `chatbound.run.runner`.)"""
    return (
        bool(tree.nodes(ast.Delete))
        or any(may_chat_through(ast_callee_name(call)) or _hands_on_chat(call) for call in tree.nodes(ast.Call))
        or any(_aliases_chat(a) for a in tree.nodes(ast.Assign))
    )


def _hands_on_chat(call: ast.Call) -> bool:
    """A model call's method handed to a runner with its arguments: `with_retries(client.chat.completions.create, ...)`
    (a method reached through an attribute of its client, as the SDKs spell it: `self.stream` is not one)."""
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Attribute) and isinstance(first.value, ast.Attribute) and may_chat_through(first.attr)


def _aliases_chat(node: ast.AST) -> bool:
    """A second name for a model call's method: `create = client.chat.completions.create`."""
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and may_chat_through(node.value.attr)


def _hands_on(call: cst.Call) -> bool:
    """`_hands_on_chat` on LibCST's tree."""
    first = call.args[0].value if call.args else None
    return (
        isinstance(first, cst.Attribute)
        and isinstance(first.value, cst.Attribute)
        and may_chat_through(first.attr.value)
    )


@dataclass
class ChatNodes:
    """What one traversal collects for the chat facts."""

    calls: list[cst.Call] = field(default_factory=list)
    growth_calls: list[cst.Call] = field(default_factory=list)
    trim_calls: list[cst.Call] = field(default_factory=list)
    input_calls: list[cst.Call] = field(default_factory=list)
    assigns: list[cst.CSTNode] = field(default_factory=list)
    dels: list[cst.Del] = field(default_factory=list)
    returns: list[cst.Return] = field(default_factory=list)
    functions: list[cst.FunctionDef] = field(default_factory=list)
    classes: list[cst.ClassDef] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)
    bindings: dict[str, set[str]] = field(default_factory=dict)  # name an import binds -> what it stands for
    # local name -> (growth site, operand) for `x.append(v)`, `x.extend(v)`, `x += v`
    growth_by_name: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression | None]]] = field(default_factory=dict)


_FACTS: dict[int, tuple[cst.Module, ChatFacts]] = {}


class ChatRule(Rule):
    """A rule that reads the shared chat facts of its module."""

    def __init__(self, context) -> None:
        super().__init__(context)
        self.nodes = ChatNodes()

    def may_chat(self) -> bool:
        """False when no call in the module can send to a model or build a chat memory, so the
        facts (and the scope and qualified-name metadata they need) are not computed at all.
        A file that imports a function of another module that sends, returns or stores a
        history (`chatbound.analysis.project`) may chat through it."""
        linked = self.context.project
        return (
            bool(self.nodes.dels)
            or bool(linked is not None and linked.functions)
            or any(may_chat_through(callee_name(call)) or _hands_on(call) for call in self.nodes.calls)
            or any(  # a second name for a model call's method: `create = client.chat.completions.create`
                isinstance(node, cst.Assign)
                and isinstance(node.value, cst.Attribute)
                and may_chat_through(node.value.attr.value)
                for node in self.nodes.assigns
            )
        )

    def chat_facts(self) -> ChatFacts:
        """The module's facts, built once per file whichever chat rule asks first."""
        cached = _FACTS.get(id(self.context))
        if cached is not None and cached[0] is self.context.module:
            return cached[1]
        facts = ChatFacts(self, self.nodes)
        _FACTS.clear()  # one file at a time: never keep an old tree alive
        _FACTS[id(self.context)] = (self.context.module, facts)
        return facts

    def visit_Call(self, node: cst.Call) -> None:
        nodes = self.nodes
        nodes.calls.append(node)
        name = callee_name(node)
        if isinstance(node.func, cst.Attribute):
            if name in GROWTH_METHODS:
                nodes.growth_calls.append(node)
                receiver = node.func.value
                if isinstance(receiver, cst.Name):
                    operand = node.args[-1].value if node.args else None
                    nodes.growth_by_name.setdefault(receiver.value, []).append((node, operand))
            elif name in TRIM_METHODS:
                nodes.trim_calls.append(node)
        if INPUT_CALLS.match(name):
            nodes.input_calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.nodes.assigns.append(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.nodes.assigns.append(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.nodes.assigns.append(node)
        if isinstance(node.target, cst.Name):
            self.nodes.growth_by_name.setdefault(node.target.value, []).append((node, node.value))

    def visit_Del(self, node: cst.Del) -> None:
        self.nodes.dels.append(node)

    def visit_Return(self, node: cst.Return) -> None:
        self.nodes.returns.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nodes.functions.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.nodes.classes.append(node)

    def visit_Import(self, node: cst.Import) -> None:
        self.nodes.imports.update(dotted_name(alias.name) for alias in node.names)
        bind_import(node, self.nodes.bindings)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None:
            self.nodes.imports.add("." * len(node.relative) + dotted_name(node.module))
        bind_import(node, self.nodes.bindings)
