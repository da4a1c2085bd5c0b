"""What system prompt a module sends and how many tokens it holds: `SystemPrompts.oversized(module)`.

A system prompt is a text the code sends as one: a `{"role": "system" | "developer",
"content": ...}` message, a system keyword of a model or agent call (`system=`,
`instructions=`...), LangChain's `SystemMessage(...)` and `("system", ...)` templates,
`create_react_agent(prompt=...)`, the instruction of an agent a framework serves across turns
(ADK's `root_agent` and its sub-agents: `chatbound.frameworks.served_agents`), or one a
framework assembles from parts (CrewAI's role, goal and backstory, inline or in its YAML
config). Its text is resolved without running the code (`chatbound.syntax.texts`); a text kept
in another module is read there by the project pass, and counted here when it is sent whole
or opens a list that carries a conversation. Tokens are counted in the run's `encoding`.

The prompt rule feeds `SystemPrompts` the nodes of its one traversal (`collect_*`) and asks it
in `leave_Module`, while the metadata is live.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from chatbound import frameworks
from chatbound.analysis.project.imports import imports_of
from chatbound.compaction.tokens import DEFAULT_ENCODING, get_encoder
from chatbound.findings import Span
from chatbound.syntax.bytescan import literal_bytes
from chatbound.syntax.datafiles import folder_holding
from chatbound.syntax.messages import ast_callee_name, callee_name, string
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.texts import Frame, Text, text_of, text_root
from chatbound.syntax.tree import ModuleTree
from chatbound.syntax.values import bound_expression
from chatbound.vocabulary.sinks import dotted
from chatbound.vocabulary.summaries import Place, RemoteText

SYSTEM_ROLES = ("system", "developer")
SYSTEM_KEYWORDS = ("system", "system_prompt", "system_instruction", "system_message", "instructions")
# LangGraph/LangChain: prompt= (langgraph-supervisor 0.0.31's create_supervisor too)
PROMPT_KEYWORD_CALLS = ("create_react_agent", "create_agent", "create_supervisor")
SYSTEM_MESSAGE_CALLS = ("SystemMessage", "from_template")
READS_FILE = re.compile(rb"\bread(?:_text)?\s*\(")  # a prompt read from a data file (chatbound.syntax.texts)
IMPORTS = re.compile(rb"^[ \t]*(?:from|import)[ \t]", re.M)  # a prompt kept in another module
# a system prompt a framework assembles (CrewAI role, goal, backstory), for the rule's pre-check
FRAMEWORK_PROMPT_TRIGGERS = frameworks.PROMPT_TRIGGERS


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_contents(call: ast.Call) -> list[ast.AST]:
    """What `visit_Call` below takes a system prompt from, on CPython's tree."""
    name = ast_callee_name(call)
    if name == "count_tokens":
        return []
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    found = [keywords[k] for k in (*SYSTEM_KEYWORDS, *frameworks.INSTRUCTIONS) if k in keywords]
    for unpacked in (k.value for k in call.keywords if k.arg is None):  # `**config`: its system entries
        if type(unpacked) is ast.Dict:
            found.extend(v for k, v in zip(unpacked.keys, unpacked.values) if _text(k) in SYSTEM_KEYWORDS)
        elif type(unpacked) is ast.Name:
            found.append(unpacked)  # a place when the module binds the name (to a dict, maybe)
    if _text(keywords.get("role")) in SYSTEM_ROLES and "content" in keywords:  # dict(...), a message class
        found.append(keywords["content"])
    config = keywords.get("config")  # google-genai's config as a dict
    if type(config) is ast.Dict:
        found.extend(v for k, v in zip(config.keys, config.values) if _text(k) == "system_instruction")
    elif type(config) is ast.Name:
        found.append(config)  # a place when the module binds the name (to a dict, maybe)
    if name in PROMPT_KEYWORD_CALLS and "prompt" in keywords:
        found.append(keywords["prompt"])
    if name in SYSTEM_MESSAGE_CALLS:
        found.append(call)  # its content, if any: a literal or a name
    if any(k in keywords for k in frameworks.PROMPT_KEYWORDS):
        found.append(call)  # a framework assembles the prompt from parts (CrewAI's backstory, its YAML config)
    return found


def has_system_prompt_place(tree: PythonTree) -> bool:
    """Whether the file sends a text as a system prompt (the visits of PromptOversizedSystem,
    on CPython's tree, without resolving the text): a system message, a system keyword. A
    place holding only a name neither assigned nor imported in the module (a parameter) has
    no text, as in leave_Module, unless it is a parameter of a function of the module, whose
    calls there may give it one (`SystemPrompts._given`)."""
    known: set[str] = set()
    places: list[ast.AST] = []
    helpers: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    called: set[str] = set()
    for node in tree.nodes(
        ast.Assign, ast.AnnAssign, ast.ImportFrom, ast.Dict, ast.Tuple, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef
    ):
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            helpers.append(node)
        elif kind is ast.Assign or kind is ast.AnnAssign:
            known.update(t.id for t in (node.targets if kind is ast.Assign else [node.target]) if type(t) is ast.Name)
        elif kind is ast.ImportFrom:
            known.update(alias.asname or alias.name for alias in node.names)
        elif kind is ast.Dict:
            entries = {_text(k): v for k, v in zip(node.keys, node.values) if k is not None}
            if _text(entries.get("role")) in SYSTEM_ROLES and "content" in entries:
                places.append(entries["content"])
        elif kind is ast.Tuple:
            if len(node.elts) == 2 and _text(node.elts[0]) == "system":
                places.append(node.elts[1])
        elif kind is ast.Call:
            places.extend(_call_contents(node))
            called.add(ast_callee_name(node))
    for helper in helpers:  # a parameter of a helper the module calls: its callers may give it a text
        if helper.name in called:
            arguments = helper.args
            known.update(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
    return any(type(place) is not ast.Name or place.id in known for place in places)


def may_exceed(source: bytes, limit: int) -> bool:
    """Whether a file may send a system prompt over `limit` tokens, on its bytes: enough bytes
    of string literals, a data file read, an import, a framework's config file read."""
    return (
        READS_FILE.search(source) is not None
        or literal_bytes(source) > limit
        or IMPORTS.search(source) is not None
        or any(p.search(source) for p in frameworks.PROMPT_FILES)
    )


def may_hold_text(source: bytes, limit: int) -> bool:
    """Whether a module's string literals can hold a text over `limit` tokens (a token is at
    least a byte), or it reads a data file, which it may hand its importers (`prompts.py`, a
    loader of `prompts/*.md`), whatever the text is named."""
    return literal_bytes(source) > limit or READS_FILE.search(source) is not None


def _at_defaults(call: cst.Call, defaults: tuple[tuple[str, str], ...]) -> bool:
    """Whether every argument of `call` is the default of its parameter, written the same
    (`load("v1")` of `def load(version="v1")`): the call returns the text summarised."""
    code = cst.Module([]).code_for_node
    for index, arg in enumerate(call.args):
        if arg.star:
            return False
        name = arg.keyword.value if arg.keyword is not None else None
        known = (
            dict(defaults).get(name) if name is not None else (defaults[index][1] if index < len(defaults) else None)
        )
        if known is None or code(arg.value) != known:
            return False
    return True


def _string_key(element: cst.BaseDictElement) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _entries(node: cst.Dict) -> dict[str, cst.BaseExpression]:
    return {key: e.value for e in node.elements if (key := _string_key(e)) is not None}


def system_contents(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What a dict, a pair or a call gives a model as its system prompt, read from its own
    syntax: `{"role": "system", "content": c}`, `("system", c)`, `dict(role="system",
    content=c)`, a system keyword (`system=c`, `system_instruction=c`), `SystemMessage(c)`."""
    if isinstance(node, cst.Dict):
        entries = _entries(node)
        return [entries["content"]] if string(entries.get("role")) in SYSTEM_ROLES and "content" in entries else []
    if isinstance(node, cst.Tuple):
        pair = len(node.elements) == 2 and string(node.elements[0].value) == "system"
        return [node.elements[1].value] if pair else []
    if not isinstance(node, cst.Call) or callee_name(node) == "count_tokens":
        return []
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    found = [keywords["content"]] if string(keywords.get("role")) in SYSTEM_ROLES and "content" in keywords else []
    found += [keywords[keyword] for keyword in SYSTEM_KEYWORDS if keyword in keywords]
    name = callee_name(node)
    if name in SYSTEM_MESSAGE_CALLS and (name == "SystemMessage" or _is_system_template(node)):
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        content = keywords.get("content", keywords.get("template", positional[0] if positional else None))
        found += [content] if content is not None else []
    return found


def _is_system_template(call: cst.Call) -> bool:
    """`SystemMessagePromptTemplate.from_template(...)`."""
    func = call.func
    return isinstance(func, cst.Attribute) and dotted(func.value)[-1] == "SystemMessagePromptTemplate"


@dataclass
class Oversized:
    """A system prompt of this module over the limit: `count` tokens of `text` in `encoding`,
    sent at `uses`; `what` says which parts a framework assembled it from (at the call that
    gives them, `text.node`), None for a text written whole."""

    text: Text
    count: int
    encoding: str
    uses: list[cst.CSTNode] = field(default_factory=list)
    what: str | None = None


@dataclass
class OversizedImported:
    """A system prompt of another module over the limit (`remote`): `count` tokens in
    `encoding`, sent here at `use`."""

    remote: RemoteText
    count: int
    encoding: str
    use: cst.BaseExpression


class SystemPrompts:
    """The system prompts one module sends, asked of the prompt rule (`rule` reads the
    metadata); `limit` is the most tokens a prompt may hold."""

    def __init__(self, rule, limit: int) -> None:
        self.rule = rule
        self.context = rule.context
        self.limit = limit
        # (expression, "sent" | "cached", the node that sends it)
        self.candidates: list[tuple[cst.BaseExpression, str, cst.CSTNode]] = []
        self.assigned: set[str] = set()  # names bound by `name = ...` anywhere in the module
        self.agents: set[int] = set()  # ids of the framework agent calls whose conversation is asked about
        self.bindings: dict[str, str] | None = None  # imported name -> target, read when a text is imported
        self.assembled: list[cst.Call] = []  # calls a framework may build a system prompt for from parts
        self.calls: dict[str, list[cst.Call]] = {}  # the module's calls by callee name: a helper's callers
        # `config["system_instruction"] = text` by the dict's name, and the calls given `config=name`
        self.stores: dict[str, list[tuple[cst.Name, cst.BaseExpression]]] = {}
        self.configs: list[tuple[cst.Call, cst.Name]] = []

    # --- where system prompts are sent -------------------------------------------------

    def collect_assign(self, node: cst.Assign) -> None:
        self.assigned.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and string(index.value) == "system_instruction":
                self.stores.setdefault(target.value.value, []).append((target.value, node.value))

    def collect_ann_assign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned.add(node.target.value)

    def collect_dict(self, node: cst.Dict) -> None:
        for content in system_contents(node):
            self._sent(content, node)

    def collect_tuple(self, node: cst.Tuple) -> None:
        for content in system_contents(node):
            self._sent(content, node)

    def collect_call(self, node: cst.Call) -> None:
        name = callee_name(node)
        self.calls.setdefault(name, []).append(node)
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name == "count_tokens":
            return
        for content in system_contents(node):
            self._sent(content, node)
        for unpacked in self._unpacked(node):  # `make_agent(**{"system_prompt": ...})`, `**CONFIG`
            entries = _entries(unpacked)
            for keyword in SYSTEM_KEYWORDS:
                if keyword in entries:
                    self._sent(entries[keyword], node)
        config = keywords.get("config")  # google-genai's config as a dict: `config={"system_instruction": ...}`
        if isinstance(config, cst.Name):
            self.configs.append((node, config))
        config = bound_expression(self.rule, config) if isinstance(config, cst.Name) else config
        if isinstance(config, cst.Dict) and "system_instruction" in (entries := _entries(config)):
            self._sent(entries["system_instruction"], node)
        if name in PROMPT_KEYWORD_CALLS and "prompt" in keywords:
            self._sent(keywords["prompt"], node)
        if any(k in keywords for k in frameworks.PROMPT_KEYWORDS):
            self.assembled.append(node)
        instructions = [keywords[k] for k in frameworks.INSTRUCTIONS if k in keywords]
        if instructions and frameworks.instructed_agent(
            {q.name for q in self.rule.get_metadata(QualifiedNameProvider, node.func, ())}
        ):
            self.agents.add(id(node))
            for content in instructions:
                self._sent(content, node)

    def _unpacked(self, call: cst.Call) -> list[cst.Dict]:
        """The dicts a call unpacks into its keywords: literal, or a name bound once to one."""
        found = []
        for arg in call.args:
            if arg.star != "**":
                continue
            value = bound_expression(self.rule, arg.value) if isinstance(arg.value, cst.Name) else arg.value
            if isinstance(value, cst.Dict):
                found.append(value)
        return found

    def _sent(self, content: cst.BaseExpression, use: cst.CSTNode) -> None:
        """A system content: a text, or a list of content blocks (Anthropic/OpenAI parts)."""
        if not isinstance(content, (cst.List, cst.Tuple)):
            self.candidates.append((content, "sent", use))
            return
        for element in content.elements:
            if isinstance(element.value, cst.Dict):
                entries = _entries(element.value)
                if "text" in entries:
                    kind = "cached" if "cache_control" in entries else "sent"
                    self.candidates.append((entries["text"], kind, use))
            elif not isinstance(element, cst.StarredElement):
                self.candidates.append((element.value, "sent", use))

    # --- one finding per prompt text ------------------------------------------------

    def oversized(self, module: cst.Module) -> list[Oversized | OversizedImported]:
        """The system prompts the module sends that hold more than `limit` tokens, once per text
        (a block marked for prompt caching is not counted): those a framework assembles first."""
        for call, name in self.configs:  # `config["system_instruction"] = text` ... `create(config=config)`
            scope = self.rule.get_metadata(ScopeProvider, name, None)
            for stored, value in self.stores.get(name.value, ()):
                if self.rule.get_metadata(ScopeProvider, stored, None) is scope:
                    self._sent(value, call)
        self._given_to_imported()
        found: list[Oversized | OversizedImported] = [
            prompt for prompt in map(self._assembled, self.assembled) if prompt is not None
        ]
        served = frameworks.served_agents(self.rule, module) if self.agents else set()
        texts: dict[int, tuple[Text, set[str], list[cst.CSTNode]]] = {}
        imported: dict[RemoteText, tuple[set[str], list[cst.BaseExpression]]] = {}
        for expression, kind, use in self.candidates:
            if id(use) in self.agents and id(use) not in served:
                continue  # an agent whose conversation the module does not show (run as a tool, a step)
            for given in self._given(expression):
                text = self._local_text(given)
                if text is None:
                    remote = self._imported_text(given, use)
                    if remote is not None:
                        kinds, uses = imported.setdefault(remote, (set(), []))
                        kinds.add(kind)
                        uses.append(given)
                    continue
                _, kinds, uses = texts.setdefault(id(text.node), (text, set(), []))
                kinds.add(kind)
                uses.append(use)
        sent = [
            (text, uses) for text, kinds, uses in texts.values() if "sent" in kinds and self._may_exceed(text.value)
        ]
        remote_sent = [
            (remote, uses)
            for remote, (kinds, uses) in imported.items()
            if "sent" in kinds and self._may_exceed(remote.value)
        ]
        if not sent and not remote_sent:
            return found
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        encoding = encoder.encoding.removesuffix("_offline")
        for text, uses in sent:
            count = encoder(text.value)
            if count > self.limit:
                found.append(Oversized(text, count, encoding, uses))
        for remote, uses in remote_sent:
            count = encoder(remote.value)
            if count > self.limit:
                found.append(OversizedImported(remote, count, encoding, uses[0]))
        return found

    def _given_to_imported(self) -> None:
        """Texts given to a function of another module that sends that parameter as its system
        prompt (`respond(history, SYSTEM_PROMPT)` of `def respond(history, system_prompt)`, as
        the project pass linked it): sent at the call."""
        project = self.context.project
        if project is None or not project.functions:
            return
        for calls in self.calls.values():
            for call in calls:
                key = self._imported_name(call.func)
                remote = project.functions.get(key) if key is not None else None
                if remote is None:
                    continue
                for param in remote.system_params:
                    argument = ModuleTree.argument_in(call, remote.params, param)
                    if argument is not None:
                        self._sent(argument, call)

    def _imported_name(self, expression: cst.BaseExpression) -> str | None:
        """What a (dotted) name imported here stands for, as the project pass keys what it linked
        (`SYSTEM_PROMPT` of `from .prompts import SYSTEM_PROMPT`: `.prompts.SYSTEM_PROMPT`)."""
        parts = dotted(expression)
        if not parts or "()" in parts:
            return None
        if self.bindings is None:
            self.bindings = dict(imports_of(self.context.module.code.encode("utf-8")))
        base = self.bindings.get(parts[0])
        return ".".join((base, *parts[1:])) if base is not None else None

    def _local_text(self, expression: cst.BaseExpression) -> Text | None:
        local = not isinstance(expression, cst.Name) or expression.value in self.assigned
        return text_of(self.rule, expression, frame=Frame({}, imported=self._imported_field)) if local else None

    def _given(self, expression: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
        """`expression`, or, where it is a parameter of a helper of this module that the module's
        own calls give the text (`def make_agent(config): ... prompt=config["system_prompt"]`
        called as `make_agent({"system_prompt": SQL_PROMPT, ...})`), what each call gives it."""
        found = self._parameter(expression) if depth < 3 else None  # a parameter read has no text of its own
        if found is None:
            return [expression]
        function, param, key = found
        given = []
        for call in self.calls.get(function.name.value, ()):
            if not self._may_run(call, function):
                continue
            argument = ModuleTree.argument_for(call, function, param)
            value = argument if key is None else self._entry(argument, key)
            if value is not None:
                given.extend(self._given(value, depth + 1))
        return given or [expression]

    def _parameter(self, expression: cst.BaseExpression) -> tuple[cst.FunctionDef, str, str | None] | None:
        """The helper, the parameter and the string key (`config["system_prompt"]`) an
        expression reads, where it reads a parameter."""
        key = None
        if isinstance(expression, cst.Subscript) and len(expression.slice) == 1:
            index = expression.slice[0].slice
            key = string(index.value) if isinstance(index, cst.Index) else None
            if key is None:
                return None
            expression = expression.value
        if not isinstance(expression, cst.Name):
            return None
        scope = self.rule.get_metadata(ScopeProvider, expression, None)
        bindings = list(scope[expression.value]) if scope is not None else []
        if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Param):
            return None
        parameters = self.rule.get_metadata(ParentNodeProvider, bindings[0].node, None)
        function = self.rule.get_metadata(ParentNodeProvider, parameters, None) if parameters is not None else None
        return (function, expression.value, key) if isinstance(function, cst.FunctionDef) else None

    def _may_run(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """`make_agent(...)` of a module function, `self.make_agent(...)` of a method."""
        block = self.rule.get_metadata(ParentNodeProvider, function, None)
        method = isinstance(self.rule.get_metadata(ParentNodeProvider, block, None), cst.ClassDef)
        func = call.func
        if method:
            return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        return isinstance(func, cst.Name)

    def _entry(self, argument: cst.BaseExpression | None, key: str) -> cst.BaseExpression | None:
        """The `key` entry of a dict literal given, or of the one a name given is bound to."""
        value = bound_expression(self.rule, argument) if isinstance(argument, cst.Name) else argument
        return _entries(value).get(key) if isinstance(value, cst.Dict) else None

    def _beside_conversation(self, use: cst.CSTNode) -> bool:
        """The system message opens a list that carries a conversation: `[system] + messages`,
        `[system, *messages]`, or a model call's system keyword beside `messages=history` (each
        call of a tool loop or a chat resends it with the history), or an agent's prompt (each step
        of its loop resends it)."""
        if isinstance(use, cst.Call) and (callee_name(use) in PROMPT_KEYWORD_CALLS or id(use) in self.agents):
            return True
        sent = (
            [a.value for a in use.args if a.keyword and a.keyword.value == "messages"]
            if isinstance(use, cst.Call)
            else []
        )
        if sent:
            return not isinstance(sent[0], (cst.List, cst.Tuple)) or any(
                isinstance(e, cst.StarredElement) for e in sent[0].elements
            )
        element = self.rule.get_metadata(ParentNodeProvider, use, None)
        listed = self.rule.get_metadata(ParentNodeProvider, element, None) if isinstance(element, cst.Element) else None
        if not isinstance(listed, cst.List):
            return False
        if any(isinstance(e, cst.StarredElement) for e in listed.elements):
            return True
        joined = self.rule.get_metadata(ParentNodeProvider, listed, None)
        return (
            isinstance(joined, cst.BinaryOperation)
            and isinstance(joined.operator, cst.Add)
            and not isinstance(joined.right if joined.left is listed else joined.left, cst.List)
        )

    def _may_exceed(self, text: str) -> bool:
        """A text of no more bytes than the limit holds no more tokens (a token is at least a
        byte, and the chars/4 estimate is less): it needs no count, and a file whose texts are
        all that short never loads the tokenizer (a third of a second, once per process)."""
        return len(text.encode("utf-8", "surrogatepass")) > self.limit

    def _assembled(self, call: cst.Call) -> Oversized | None:
        """A system prompt a framework builds from parts (inline, or an entry of its config
        file), reported at the call that gives them."""
        module, directory = self.context.module, self.context.directory
        qualified = {q.name for q in self.rule.get_metadata(QualifiedNameProvider, call.func, ())}
        configured = frameworks.system_config(module, qualified, call, directory)
        if configured is not None:
            value, path = configured
            self.context.data_files.append(os.path.normpath(os.path.join(directory, path)))
            text, what = Text(value, call), f"System prompt (`role` + `goal` + `backstory` of its entry in {path})"
        else:
            parts = frameworks.system_parts(qualified, call) or {}
            found = {
                name: text_of(self.rule, expression)
                for name, expression in parts.items()
                if not (isinstance(expression, cst.Name) and expression.value not in self.assigned)
            }
            known = [text for text in found.values() if text is not None]
            if not known:
                return None
            text = Text(
                "\n".join(t.value for t in known),
                call,
                partial=len(known) < len(parts) or any(t.partial for t in known),
            )
            what = f"System prompt ({' + '.join(f'`{name}`' for name in parts)} of `{callee_name(call)}(...)`)"
        if not self._may_exceed(text.value):
            return None
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        count = encoder(text.value)
        if count > self.limit:
            return Oversized(text, count, encoder.encoding.removesuffix("_offline"), what=what)
        return None

    def _imported_field(self, expression: cst.BaseExpression) -> Text | None:
        """The text of another module an f-string's field names (`f"{BASE}\\n{notes}"`, BASE
        imported): counted in the f-string, which is defined here."""
        remote = self._remote(expression, called=False)
        return Text(remote.value, expression, remote.partial) if remote is not None else None

    def _imported_text(self, expression: cst.BaseExpression, use: cst.CSTNode) -> RemoteText | None:
        """The text constant of another module that `expression` names (`SYSTEM_PROMPT` imported
        from `.prompts`, or `prompts.SYSTEM_PROMPT`), or that a function of it returns called
        with no arguments (`system_prompt()`), as the project pass linked it. One filled
        in (`p = SUPERVISOR.format(day=d)`, then `p += extra`) is a template for one call: it
        counts where that call resends it with a conversation (`[system] + messages`)."""
        project = self.context.project
        if project is None or not project.texts:
            return None
        root, filled = text_root(self.rule, expression)  # `p = SUPERVISOR.format(day=d)`: SUPERVISOR, filled in
        if filled and not self._beside_conversation(use):
            return None
        called = isinstance(root, cst.Call)  # `system_prompt()` of `.prompts`
        remote = self._remote(root.func if isinstance(root, cst.Call) else root, called)
        if remote is not None and isinstance(root, cst.Call) and not _at_defaults(root, remote.defaults):
            return None
        return replace(remote, partial=True) if remote is not None and filled else remote

    def _remote(self, expression: cst.BaseExpression, called: bool) -> RemoteText | None:
        """The text of another module's constant a (dotted) name imported here stands for, or,
        `called`, what its function of that name returns."""
        project = self.context.project
        key = self._imported_name(expression) if project is not None and project.texts else None
        remote = project.texts.get(key) if key is not None and project is not None else None
        return remote if remote is not None and remote.returned == called else None


def data_file(context, relative: str) -> Place:
    """Where a data file the module reads its prompt from is (its first line), spelled as the
    module's own path is: the place a reader opens to shorten the text."""
    folder = folder_holding(context.directory, relative)
    beside = os.path.relpath(os.path.join(folder, relative), context.directory or ".")
    return Place(os.path.normpath(os.path.join(os.path.dirname(context.path), beside)), Span(1, 1, 1, 1))
