"""MEMORY-WINDOW-SPLITS-TURN: a history bounded by a plain message count that holds tool
traffic or a system message, so the window can cut a turn in two."""

from __future__ import annotations

import ast
import re

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.chat import ChatRule
from chatbound.analysis.histories import ChatFacts, History, walk
from chatbound.analysis.rule import Invalid
from chatbound.findings import Severity
from chatbound.syntax.messages import (
    ROLE_CLASSES,
    ast_callee_name,
    callee_name,
    is_count_slice,
    slice_of,
    string,
    window_triggers,
)
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.sinks import keyword, positional, triggers

LIST_COPIES = ("list", "tuple", "copy", "deepcopy")
TOOL_CALLS = ("bind_tools", "bind_functions", "create_tool_calling_agent", "create_react_agent")
SUGGESTION = (
    "Cut at a turn boundary instead of a message count: `bounded_view({history}, last_turns=10)` "
    "(`from chatbound.compaction import bounded_view`) keeps the system message and whole turns, so a tool "
    "result never loses its call."
)
TRIM_SUGGESTION = (
    'Pass `start_on="human"` and `include_system=True` so the window starts at a user turn and keeps the system prompt.'
)


def has_count_window(tree: PythonTree) -> bool:
    """Whether the file holds a count window the rule can report, on CPython's tree: a slice
    from a negative start (`h[-N:]`, `is_count_slice`), a `del h[:N]`, a `deque(maxlen=N)`
    (`is_ring`) or a `trim_messages` call: every window the chat facts record is one of these."""
    for node in tree.nodes(ast.Subscript, ast.Call, ast.Delete):
        kind = type(node)
        if kind is ast.Subscript and _negative_start(node.slice):
            return True
        if kind is ast.Call and (name := ast_callee_name(node)) in ("trim_messages", "deque"):
            if name == "trim_messages" or len(node.args) > 1 or any(k.arg == "maxlen" for k in node.keywords):
                return True
        if kind is ast.Delete:
            for target in node.targets:
                for item in target.elts if isinstance(target, ast.Tuple) else (target,):
                    part = item.slice if isinstance(item, ast.Subscript) else None
                    if isinstance(part, ast.Slice) and part.lower is None and part.upper is not None:
                        return True
    return False


def _negative_start(part: ast.expr) -> bool:
    return isinstance(part, ast.Slice) and isinstance(part.lower, ast.UnaryOp) and isinstance(part.lower.op, ast.USub)


class MemoryWindowSplitsTurn(ChatRule):
    """
    ## What it does
    Flags a chat history bounded by a plain count of messages (`history[-N:]`,
    `del history[:-N]`, `deque(maxlen=N)`, LangChain `trim_messages` without
    `start_on="human"` or with `include_system=False`) when that history holds tool traffic
    (`role: "tool"` messages, `ToolMessage`, assistant messages with `tool_calls`, Anthropic
    `tool_result` blocks) or a system message at index 0, and the window is what a model gets
    as messages: a window stored back (`del`, `deque(maxlen=N)`, `h = h[-N:]`) of a history
    sent whole, or a slice sent as the messages (copies aside); not one turned into a search
    query or joined into text. Reported at the bounding expression. OpenAI's legacy `{"role": "function", "name": ...}` results are not tool
    traffic here: they name no call, so the API cannot reject one whose call was cut.

    ## Why is this bad?
    A count does not know where a turn starts. The window can begin with a tool result whose
    call was cut away, which OpenAI, Anthropic and Gemini all reject with a 400, or it can
    drop the system prompt at index 0 and the assistant forgets its instructions mid-session.
    It works in testing, with short sessions, and fails in production on the longest ones.
    `chatbound verify` runs the window over simulated sessions with tool loops and shows the
    first turn where it breaks.

    ## Example
    ```python
    class Agent:
        def __init__(self, client):
            self.client = client
            self.messages = [{"role": "system", "content": "You are a support agent."}]

        def step(self, call, result):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            return self.client.chat.completions.create(model="gpt-4o", messages=self.messages[-20:], tools=TOOLS)
    ```
    chatbound reports it at the window:
    ```text
    app.py:8:77: MEMORY-WINDOW-SPLITS-TURN `self.messages[-20:]` bounds the history by a plain message count; `self.messages` holds tool calls and their results, so the window can start with a tool result whose call was cut (the API answers 400).
    ```

    ## Use instead
    ```python
    from chatbound.compaction import bounded_view

    class Agent:
        def __init__(self, client):
            self.client = client
            self.messages = [{"role": "system", "content": "You are a support agent."}]

        def step(self, call, result):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            return self.client.chat.completions.create(
                model="gpt-4o", messages=bounded_view(self.messages, last_turns=10), tools=TOOLS
            )
    ```
    `bounded_view` keeps the system message and whole turns, so a tool result never loses its
    call. With LangChain, `trim_messages(..., strategy="last", start_on="human",
    include_system=True)`.

    ## Fix
    Unsafe (`--fix --unsafe-fixes`): a count slice `h[-N:]` becomes
    `bounded_view(h, last_events=N)`: at most N messages besides the system message, which
    stays, cut at a turn boundary. It is unsafe because fewer messages may be kept, as whole
    turns. For `trim_messages` the message names the
    missing `start_on="human"` and `include_system=True`.

    ## Frameworks covered
    Message lists of OpenAI, Anthropic and any SDK sent through a model call chatbound knows
    (see MEMORY-UNBOUNDED-HISTORY), `collections.deque`, and LangChain `trim_messages` and
    `ToolMessage`.

    Frameworks that keep the conversation themselves are modelled one module each: [Frameworks](https://github.com/chatbound/chatbound/blob/main/docs/frameworks.md)
    lists what each is checked for under this rule, what counts as bounded, and the versions
    checked.
    """

    ID = "MEMORY-WINDOW-SPLITS-TURN"
    TRIGGERS = (*triggers(), *window_triggers())  # a model call, a chat memory, or a window over messages
    CROSS_MODULE = True  # the windowed history may be sent by a function of another module

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a model call hold no count window, and nothing to report here."""
        return has_count_window(tree)

    NAME = "memory-window-splits-turn"
    SEVERITY = Severity.MEDIUM
    SUMMARY = "A message-count window can cut a tool call from its result or drop the system prompt."
    TAGS = ("correctness", "llm", "memory")

    VALID = [
        # plain user/assistant turns, no system message in the list: a count cannot cut a tool call
        """\
class Bot:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-20:]])
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
        # the same turns added through a helper method: still no tool traffic
        """\
class Bot:
    def _add(self, item):
        self.messages.append(item)

    def ask(self, text):
        self._add({"role": "user", "content": text})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-20:]])
        self._add({"role": "assistant", "content": reply.choices[0].message.content})
""",
        # the system message is put back in front of the window
        """\
class Bot:
    def __init__(self):
        self.messages = [{"role": "system", "content": "Be brief."}]

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        return self.client.chat.completions.create(model="gpt-4o", messages=[self.messages[0], *self.messages[-10:]])
""",
        # trim_messages that starts at a user turn and keeps the system prompt
        """\
class Billing:
    def ask(self, text):
        self.messages.append(HumanMessage(text))
        reply = llm.invoke(trim_messages(self.messages, max_tokens=3000, token_counter=llm, strategy="last", start_on="human", include_system=True))
        self.messages.append(reply)
        self.messages.append(ToolMessage(content="ok", tool_call_id="1"))
""",
        # a turn-aware window
        """\
from chatbound.compaction import bounded_view
class Agent:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=bounded_view(self.messages, last_turns=8), tools=TOOLS)
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
""",
        # a count window over plain turns kept in a deque
        """\
from collections import deque
class Trivia:
    def __init__(self):
        self.turns = deque(maxlen=20)

    def ask(self, text):
        self.turns.append({"role": "user", "content": text})
        return claude.messages.create(model="claude-3-5-haiku-latest", max_tokens=300, messages=list(self.turns))
""",
        # the count window is moved forward to a user turn before the send
        """\
class Agent:
    def ask(self, q):
        self.messages.append({"role": "user", "content": q})
        window = self.messages[-20:]
        while window and window[0]["role"] != "user":
            window = window[1:]
        r = self.client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *window], tools=TOOLS)
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
""",
        # legacy function results name no call, so no window can cut one from its call
        """\
class Bot:
    def ask(self, chat, name, result):
        self.history[chat].append({"role": "function", "name": name, "content": result})
        window = self.history[chat][-self.max_size:]
        return self.client.chat.completions.create(model="gpt-4o", messages=window, functions=SPECS)
""",
        # the window only shapes a memory search query: the model gets the search's results
        """\
class Recall:
    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        memories = self.store.search(query=str([m["content"] for m in self.messages[-3:]]))
        system = f"Known about the user: {memories}"
        reply = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "system", "content": system}, *self.messages], tools=TOOLS)
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
""",
        # a count-trimmed log that no model call is sent: each call sends only the new text
        """\
class Audit:
    def __init__(self):
        self.log = [{"role": "system", "content": "Audit trail."}]

    def ask(self, text):
        self.log.append({"role": "user", "content": text})
        del self.log[:-16]
        return self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
""",
        # the slice is for display only
        """\
class Agent:
    def ask(self, text):
        self.messages.append({"role": "tool", "tool_call_id": "1", "content": text})
        for message in self.messages[-5:]:
            print(message)
""",
    ]
    INVALID = [
        # a count window over LangGraph state in a graph whose ToolNode adds tool results
        Invalid(
            """\
from langgraph.graph import MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

def agent(state: MessagesState):
    return {"messages": [model.invoke(state["messages"][-10:])]}

graph = StateGraph(MessagesState)
graph.add_node("agent", agent)
graph.add_node("tools", ToolNode(TOOLS))
""",
            5,
            39,
            5,
            62,
        ),
        # tool results added through a helper method the loop calls
        Invalid(
            """\
class Agent:
    def __init__(self, client):
        self.client = client
        self.messages = []

    def _add(self, item):
        self.messages.append(item)

    def step(self, call, result):
        self._add({"role": "tool", "tool_call_id": call.id, "content": result})
        return self.client.chat.completions.create(model="gpt-4o", messages=self.messages[-20:], tools=TOOLS)
""",
            11,
            77,
            11,
            96,
        ),
        # a slice at the send over tool traffic
        Invalid(
            """\
class Triage:
    def handle(self, text):
        self.messages.append({"role": "user", "content": text})
        response = self.client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-20:]], tools=TOOLS)
        self.messages.append(response.choices[0].message)
        self.messages.append({"role": "tool", "tool_call_id": "call_1", "content": "done"})
""",
            4,
            91,
            4,
            110,
        ),
        # deque(maxlen=N) holding Anthropic tool_use / tool_result turns
        Invalid(
            """\
from collections import deque
class Floor:
    def __init__(self):
        self.turns = deque(maxlen=24)

    def ask(self, question):
        self.turns.append({"role": "user", "content": question})
        response = self.client.messages.create(model="claude-3-5-haiku-latest", max_tokens=800, tools=TOOLS, messages=list(self.turns))
        self.turns.append({"role": "assistant", "content": response.content})
        results = [{"type": "tool_result", "tool_use_id": b.id, "content": "ok"} for b in response.content]
        self.turns.append({"role": "user", "content": results})
""",
            4,
            22,
            4,
            38,
        ),
        # del h[:-N] on a list whose index 0 is the system message
        Invalid(
            """\
class Buddy:
    def __init__(self):
        self.history = [{"role": "system", "content": "You are a writing buddy."}]

    def send(self, text):
        self.history.append({"role": "user", "content": text})
        del self.history[:-16]
        return self.client.chat.completions.create(model="gpt-4o", messages=self.history)
""",
            7,
            9,
            7,
            31,
        ),
        # a reassigned window per session over tool messages
        Invalid(
            """\
SESSIONS = {}
async def handle(session_id, text):
    SESSIONS.setdefault(session_id, []).append({"role": "user", "content": text})
    SESSIONS[session_id] = SESSIONS[session_id][-WINDOW:]
    response = await litellm.acompletion(model="gpt-4o-mini", messages=SESSIONS[session_id], tools=TOOLS)
    SESSIONS[session_id].append({"role": "tool", "tool_call_id": "1", "content": "ok"})
""",
            4,
            28,
            4,
            58,
        ),
        # trim_messages without start_on over tool messages
        Invalid(
            """\
class Shipping:
    def _context(self):
        return [GUIDE, *trim_messages(self.messages, max_tokens=3000, strategy="last", token_counter=count_tokens_approximately)]

    def ask(self, text):
        self.messages.append(HumanMessage(text))
        reply = llm.invoke(self._context())
        self.messages.append(reply)
        self.messages.append(ToolMessage(content="ok", tool_call_id="1"))
""",
            3,
            25,
            3,
            129,
        ),
        # trim_messages with include_system=False while the list starts with a SystemMessage
        Invalid(
            """\
class Coach:
    def turn(self, text):
        if not self.history:
            self.history = [SystemMessage(content="Speak Spanish.")]
        self.history.append(HumanMessage(content=text))
        window = trim_messages(self.history, max_tokens=2000, strategy="last", token_counter=llm, start_on="human", include_system=False)
        return llm.invoke(window)
""",
            6,
            18,
            6,
            138,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.may_chat():
            return
        facts = self.chat_facts()
        seen: set[int] = set()
        for site, sink in facts.sites():
            for arg in sink.content:
                for key, node in facts.bounded_views_in(arg):
                    history = facts.histories.get(key)
                    if (
                        history is not None
                        and isinstance(node, cst.Subscript)
                        and is_count_slice(node)
                        and self._sent_as_messages(facts, node, site)
                    ):
                        self._check(facts, history, node, self._sent_value(facts, arg), seen)
        sent = {flow.history.storage.key for flow in facts.flows()}
        for history in list(facts.histories.values()):
            for node in history.windows if history.storage.key in sent else ():
                self._check(facts, history, node, self._statement_value(facts, node), seen)
        for call in facts.nodes.calls:
            if callee_name(call) == "trim_messages" and id(call) not in seen:
                seen.add(id(call))
                self._check_trim(facts, call)
        for window in frameworks.windows(facts):
            if id(window.node) not in seen:
                seen.add(id(window.node))
                self._report_window(facts, window)

    def _report_window(self, facts: ChatFacts, window: frameworks.Window) -> None:
        """A count cut written back into a conversation a framework keeps with tool calls in it."""
        bound = facts.code(window.node)
        self.report(
            window.node,
            f"`{bound}` bounds the history by a plain message count; {window.why}, so the window can start with a "
            "tool result whose call was cut (the API answers 400).",
            suggestion=window.advice,
            properties={"history": window.history, "bound": bound, "tool_traffic": True, "system_first": False},
        )

    @staticmethod
    def _sent_value(facts: ChatFacts, arg: cst.BaseExpression) -> cst.BaseExpression:
        """What the send's argument holds, through the locals and containers it was put in
        (`window = [h[0], *h[-10:]]` ... `messages=window`): where a pinned head is looked for."""
        seen: set[int] = set()
        while id(arg) not in seen:
            seen.add(id(arg))
            value = facts.assignment_before(arg) if isinstance(arg, cst.Name) else facts.carried(arg)
            if not isinstance(value, cst.BaseExpression):
                break
            arg = value
        return arg

    @staticmethod
    def _sent_as_messages(facts: ChatFacts, view: cst.CSTNode, site: cst.Call) -> bool:
        """Whether the window itself is what a model gets, not an input of another call whose
        result is sent (`asearch(query=str(h[-3:]))`: the search's results reach the model)
        nor text (`"\n".join(...)`: no API rejects a cut turn in text). Only copies of the
        list (`list(...)`, `tuple(...)`) stand between the window and its statement or send."""
        for parent in facts.ancestors(view):
            if parent is site or isinstance(parent, cst.BaseStatement):
                return True
            if (
                isinstance(parent, cst.Call)
                and callee_name(parent) not in LIST_COPIES
                and not facts.builds_record(parent)
            ):
                return False  # (a record's field, `Box(h[-N:])` ... `box.items`, is the window itself)
        return True

    def _statement_value(self, facts: ChatFacts, node: cst.CSTNode) -> cst.CSTNode:
        for parent in facts.ancestors(node):
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is not None:
                return parent.value
            if isinstance(parent, cst.BaseStatement):
                break
        return node

    def _check(
        self, facts: ChatFacts, history: History, node: cst.CSTNode, context: cst.CSTNode, seen: set[int]
    ) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if self._snapped_to_turn(facts, node):
            return
        bound = facts.code(node)
        name = history.storage.label
        if history.tool_traffic:
            why = (
                f"`{name}` holds tool calls and their results, so the window can start with a tool result "
                "whose call was cut (the API answers 400)"
            )
        elif history.system_first and not self._keeps_head(facts, history, context):
            why = f"`{name}` starts with its system message, so the window drops the system prompt"
        else:
            return
        self.report(
            node,
            f"`{bound}` bounds the history by a plain message count; {why}.",
            suggestion=SUGGESTION.format(history=name),
            related=[self.related(d, f"`{name}` is defined here") for d in history.definitions[:1]],
            properties={
                "history": name,
                "bound": bound,
                "tool_traffic": history.tool_traffic,
                "system_first": history.system_first,
            },
        )

    def _snapped_to_turn(self, facts: ChatFacts, node: cst.CSTNode) -> bool:
        """`window = h[-N:]` then `while window and window[0]["role"] != "user": ...`: the
        window is moved to a turn start after the count cut."""
        parent = facts.parent(node)
        holder = facts.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
        if not isinstance(holder, cst.Assign) or holder.value is not node:
            return False
        names = {facts.code(t.target) for t in holder.targets}
        function = facts.function_of(node)
        for loop in walk(function) if function is not None else ():
            if isinstance(loop, (cst.While, cst.If)) and facts.order(loop) > facts.order(node):
                test = facts.code(loop.test)
                if any(f"{n}[0]" in test for n in names) and re.search(r"role|tool|user|human|Tool|Human", test):
                    return True
        return False

    def _keeps_head(self, facts: ChatFacts, history: History, context: cst.CSTNode) -> bool:
        """`[h[0], *h[-N:]]` / `h[:1] + h[-N:]`: the system message is put back in front."""
        for node in walk(context):
            if isinstance(node, cst.Subscript) and facts.storage_of(node.value) is not None:
                if facts.storage_of(node.value).key != history.storage.key:
                    continue
                part = slice_of(node)
                index = node.slice[0].slice if len(node.slice) == 1 else None
                if part is not None and part.lower is None and isinstance(part.upper, cst.Integer):
                    return True
                if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0":
                    return True
        return False

    def _check_trim(self, facts: ChatFacts, call: cst.Call) -> None:
        start_on = keyword(call, "start_on")
        include = keyword(call, "include_system")
        starts_at_turn = start_on is not None and (
            string(start_on.value) in ("human", "user") or not string(start_on.value)
        )
        keeps_system = include is not None and isinstance(include.value, cst.Name) and include.value.value == "True"
        messages = positional(call, 0) or keyword(call, "messages")
        if messages is not None:
            histories = [
                facts.histories[u.storage.key]
                for u in facts.whole_history_in(messages.value)
                if u.storage.key in facts.histories
            ]
            tools = any(h.tool_traffic for h in histories)
            system = any(h.system_first for h in histories)
        else:
            tools, system = self._module_evidence(facts)
        if tools and not starts_at_turn:
            why = "the history holds tool calls and results and nothing makes the window start at a user turn"
        elif system and not keeps_system:
            why = "the history starts with a system message and `include_system` is not True, so it is trimmed away"
        else:
            return
        self.report(
            call,
            f"`trim_messages` cuts by count of tokens or messages; {why}.",
            suggestion=TRIM_SUGGESTION,
            properties={"bound": "trim_messages", "tool_traffic": tools, "system_first": system},
        )

    def _module_evidence(self, facts: ChatFacts) -> tuple[bool, bool]:
        names = {callee_name(c) for c in facts.nodes.calls}
        tools = any(h.tool_traffic for h in facts.histories.values()) or bool(
            names & ({n for n, r in ROLE_CLASSES.items() if r == "tool"} | set(TOOL_CALLS))
        )
        system = "SystemMessage" in names
        return tools, system
