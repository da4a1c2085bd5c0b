"""PROMPT-OVERSIZED-SYSTEM: a large system prompt resent with every model call."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import replace

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider

from chatbound import frameworks
from chatbound.analysis.project.imports import imports_of
from chatbound.analysis.rule import Invalid, Option, Rule, Valid
from chatbound.compaction.tokens import DEFAULT_ENCODING, get_encoder
from chatbound.findings import Severity
from chatbound.syntax.bytescan import literal_bytes
from chatbound.syntax.messages import ast_callee_name, callee_name, string
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.texts import Text, text_of, text_root
from chatbound.vocabulary.sinks import dotted
from chatbound.vocabulary.summaries import RemoteText

SYSTEM_ROLES = ("system", "developer")
SYSTEM_KEYWORDS = ("system", "system_prompt", "system_instruction", "system_message", "instructions")
PROMPT_KEYWORD_CALLS = ("create_react_agent", "create_agent")  # LangGraph/LangChain: prompt=
SYSTEM_MESSAGE_CALLS = ("SystemMessage", "from_template")
READS_FILE = re.compile(rb"\bread(?:_text)?\s*\(")  # a prompt read from a data file (chatbound.syntax.texts)
IMPORTS = re.compile(rb"^[ \t]*(?:from|import)[ \t]", re.M)  # a prompt kept in another module


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_contents(call: ast.Call) -> list[ast.AST]:
    """What `visit_Call` below takes a system prompt from, on CPython's tree."""
    name = ast_callee_name(call)
    if name == "count_tokens":
        return []
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    found = [keywords[k] for k in (*SYSTEM_KEYWORDS, *frameworks.INSTRUCTIONS) if k in keywords]
    if name == "dict" and _text(keywords.get("role")) in SYSTEM_ROLES and "content" in keywords:
        found.append(keywords["content"])
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
    no text, as in leave_Module."""
    known: set[str] = set()
    places: list[ast.AST] = []
    for node in tree.nodes(ast.Assign, ast.AnnAssign, ast.ImportFrom, ast.Dict, ast.Tuple, ast.Call):
        kind = type(node)
        if kind is ast.Assign or kind is ast.AnnAssign:
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
    return any(type(place) is not ast.Name or place.id in known for place in places)


def _string_key(element: cst.BaseDictElement) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _entries(node: cst.Dict) -> dict[str, cst.BaseExpression]:
    return {key: e.value for e in node.elements if (key := _string_key(e)) is not None}


class PromptOversizedSystem(Rule):
    r"""
    ## What it does
    Flags a system prompt longer than `max-system-tokens` (default 500) tokens in the
    configured tiktoken `encoding` (`cl100k_base` by default).

    A system prompt is a text the code sends as one, never a name alone (a `SYSTEM_PROMPT`
    constant no model receives is no finding):

    - a `{"role": "system" | "developer", "content": ...}` message;
    - Anthropic `system=`, Gemini `system_instruction=`;
    - LangChain `SystemMessage(...)` and `("system", ...)` templates;
    - `Agent(instructions=...)` or `system_prompt=`, `create_react_agent(prompt=...)`;
    - a Google ADK agent's `instruction=` / `global_instruction=`, where the module shows the
      agent holding a conversation: it is served as the app's `root_agent` (or transferred to
      from it through `sub_agents=[...]`). An agent run as a tool (`AgentTool(agent=...)`)
      or as a step of a workflow agent handles one request and is not reported.

    The text is resolved without running the code: constants, implicit concatenation, `+`,
    `"\n".join([...])`, `textwrap.dedent`, `.strip()`, the literal parts of f-strings and
    `.format` templates (the message then says "at least"), and data files read at import
    time by a literal path, relative to the analyzed file
    (`Path(__file__).parent / "prompts" / "system.md"`, `open("prompts/system.md").read()`);
    a file is read as text, never imported. A text kept in another module of the project
    (`from .prompts import SYSTEM_PROMPT`, `prompt.ROOT_PROMPT`) is read there by the project
    pass; one filled in per call (`p = SUPERVISOR_PROMPT.format(day=d)`, then `p += extra`: at
    least its size) counts where it opens a list that carries a conversation
    (`[system] + messages`, `[system, *messages]`). Reported once per text, where it is defined, or where it is sent when it is defined
    in another module (that module's line is the related location); a block marked for
    prompt caching (`cache_control`) is not reported. The message gives the count and the
    encoding.

    ## Why is this bad?
    The system prompt is sent with every call of every turn. An evergreen block that covers
    every case (billing, SSO, seats, security...) costs its full size on each request, even
    when the question needs one paragraph of it, and long instructions dilute the ones that
    matter.

    ## Example
    ```python
    SYSTEM_PROMPT = '''You are Acme's support assistant. Be friendly, concise and accurate.
    Billing: invoices are issued on the first day of each month; refunds within 30 days go to
    the original card, later ones become account credit; never promise a refund over $500.
    Single sign-on: Okta, Azure AD and Google Workspace are supported on the Business plan; SAML
    metadata lives under Settings > Security; SCIM provisioning needs an admin token.
    Seats: admins add seats under Settings > Team; removed seats are credited at the next renewal;
    the Starter plan is limited to five seats and cannot be upgraded mid-cycle.
    Exports: CSV and JSON exports run in the background and are emailed within an hour; exports
    over 2 GB are split into parts; audit-log exports need the Enterprise plan.
    Security: never ask for passwords or full card numbers; direct vulnerability reports to
    security@acme.example; do not confirm whether an email address has an account.
    Outages: check status.acme.example first; apologise, give the incident link, and never
    estimate a fix time that the status page does not state.
    Accounts: email changes need confirmation from both addresses; deleted workspaces can be
    restored by an admin within 14 days, after which every file and message is gone for good.
    Integrations: Slack and Teams apps are installed by a workspace admin; the Jira connector
    syncs every ten minutes; webhooks retry five times with backoff and are disabled after a
    day of failures; API keys are shown once and can be rotated under Settings > Developers.
    Mobile: the iOS and Android apps support offline drafts; push notifications are set per
    device; the apps need the current or previous major OS version.
    Data residency: EU workspaces are hosted in Frankfurt and never leave the EU; moving a
    workspace between regions is a paid migration scheduled by the success team.
    Plans: upgrades apply at once and are prorated; downgrades apply at the next renewal; annual
    plans are refunded pro rata only within the first 30 days; nonprofits get 40% off on request.
    Trials: a trial lasts 14 days, can be extended once by sales, and keeps its data for 30 days
    after it ends; trial workspaces cannot use single sign-on or the public API.
    Tone: no emojis, no marketing language, one short paragraph unless the user asks for steps;
    if you are unsure, say so and offer to open a ticket with a human agent, then ask whether
    the answer solved the problem.
    '''

    def answer(client, history):
        return client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "system", "content": SYSTEM_PROMPT}, *history]
        )
    ```
    chatbound reports it where the text is defined:
    ```text
    prompts.py:1:17: PROMPT-OVERSIZED-SYSTEM System prompt is 519 tokens (cl100k_base) and is sent with every call (max-system-tokens is 500).
    ```

    ## Use instead
    ```python
    SYSTEM_PROMPT = "You are Acme's support assistant. Be concise; cite the article you used."
    # load the topic's rules only when the question is about it (a retrieved snippet or a tool),
    # and mark the stable prefix for prompt caching
    ```

    ## Fix
    None automatic: which instructions a request needs is a design decision.

    ## Frameworks covered
    OpenAI (`system` and `developer` messages, Agents SDK `instructions=`), Anthropic
    (`system=`, `cache_control`), Gemini (`system_instruction=`), Google ADK (`instruction=`
    of served agents), CrewAI (an `Agent`'s `role` + `goal` + `backstory`, inline or in the
    crew's `config/agents.yaml`, measured together), LangChain (`SystemMessage`,
    `("system", ...)` templates, `create_react_agent(prompt=...)`), and any agent class taking
    `instructions=` or `system_prompt=`. Token counts: tiktoken, offline (`cl100k_base` is
    bundled; other encodings are read from `TIKTOKEN_CACHE_DIR`, and counts fall back to
    ceil(characters / 4), marked `chars/4`, when an encoding cannot be loaded).
    """

    ID = "PROMPT-OVERSIZED-SYSTEM"
    NAME = "prompt-oversized-system"
    SEVERITY = Severity.MEDIUM
    SUMMARY = "A large system prompt is paid for again on every model call."
    TAGS = ("cost", "llm", "prompt")
    OPTIONS = {"max-system-tokens": Option(int, 500, "Most tokens in a system prompt before a finding.")}
    TRIGGERS = (
        # a constant named like a system prompt, or a system=/instructions=/prompt= keyword
        re.compile(rb"(?:system|prompt|instruction)[\w\x80-\xff]*[\s)]*(?::[^=\n]*)?=", re.I),
        # {"role": "system"}, dict(role="developer"), ("system", ...)
        re.compile(rb"[\"'](?:system|developer)[\"']"),
        re.compile(rb"SystemMessage"),  # SystemMessage(...), SystemMessagePromptTemplate
        *frameworks.PROMPT_TRIGGERS,  # a system prompt a framework assembles (CrewAI role, goal, backstory)
    )

    CROSS_MODULE = True  # a prompt kept in another module of the project, sent here

    @classmethod
    def may_report(cls, source: bytes, options: dict) -> bool:
        """A text over the limit needs that many bytes of string literals in the file (a token is
        at least a byte), unless it is read from a data file or imported from another module."""
        limit = options.get("max-system-tokens", cls.OPTIONS["max-system-tokens"].default)
        return (
            READS_FILE.search(source) is not None
            or literal_bytes(source) > limit
            or IMPORTS.search(source) is not None
            or any(p.search(source) for p in frameworks.PROMPT_FILES)
        )

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a `prompt = ...` or `system=` send no system prompt; they are not
        worth a LibCST parse."""
        return has_system_prompt_place(tree)

    VALID = [
        'SYSTEM_PROMPT = "You are a helpful support assistant. Answer briefly."',
        # a long text that is not a system prompt: a user message, a help text, a summarizer
        Valid(
            'REPORT = "quarterly numbers " * 3\n'
            'messages = [{"role": "user", "content": "Summarize this long report of many pages"}]',
            options={"max-system-tokens": 3},
        ),
        Valid(
            'HELP_TEXT = """Usage: bot [options] ... many lines of command-line help ..."""',
            options={"max-system-tokens": 3},
        ),
        Valid(
            'SUMMARY_PROMPT = "Summarize the conversation so far in five short bullet points."',
            options={"max-system-tokens": 3},
        ),
        Valid(
            'USER_PROMPT_TEMPLATE = "Customer {customer} asks: {question}. Use the context below."',
            options={"max-system-tokens": 3},
        ),
        # an f-string counts only its literal parts: here they are short
        Valid(
            'def build(rules):\n    return [{"role": "system", "content": f"Rules:\\n{rules}"}]',
            options={"max-system-tokens": 3},
        ),
        # a path that is not a literal cannot be read; never guess
        Valid('SYSTEM_PROMPT = Path(os.environ["PROMPT_FILE"]).read_text()', options={"max-system-tokens": 1}),
        # Anthropic prompt caching: the block is billed at a fraction after the first call
        Valid(
            'SYSTEM_PROMPT = "You are the billing specialist; follow the refund policy in full."\n'
            "reply = client.messages.create(\n"
            '    model="claude-sonnet-4-5", max_tokens=512, messages=messages,\n'
            '    system=[{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}],\n'
            ")\n",
            options={"max-system-tokens": 3},
        ),
        Valid(
            'SYSTEM_PROMPT = "You are a careful assistant. Answer in one paragraph."', options={"max-system-tokens": 12}
        ),
        # a PROMPT constant that interpolates the request is a user-turn template
        Valid(
            'QA_PROMPT = """Context:\n{context_str}\nAnswer the question: {query_str}"""',
            options={"max-system-tokens": 3},
        ),
        # a field whose name says prompt, bound to a builtin
        "from typing import Optional\nclass Image:\n    revised_prompt: Optional[str] = None\nSYSTEM_PROMPT = None\n",
        # named like a system prompt, but no model receives it
        Valid(
            'SYSTEM_PROMPT = "You are a careful assistant. Answer in one paragraph."\nprint(SYSTEM_PROMPT)\n',
            options={"max-system-tokens": 5},
        ),
        # an ADK agent run as a tool of the served coordinator: one request, no conversation
        Valid(
            "from google.adk.agents import LlmAgent\n"
            "from google.adk.tools.agent_tool import AgentTool\n"
            'analyst = LlmAgent(name="analyst", instruction="You are a careful analyst. Answer in one paragraph.")\n'
            'root_agent = LlmAgent(name="coordinator", instruction="Route.", tools=[AgentTool(agent=analyst)])\n',
            options={"max-system-tokens": 5},
        ),
    ]
    INVALID = [
        # CrewAI sends an agent's role, goal and backstory together as its system prompt
        Invalid(
            "from crewai import Agent\n"
            "analyst = Agent(role='Analyst', goal='Size the market.', backstory='You are careful and thorough.')\n",
            2,
            11,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'SYSTEM_PROMPT = """You are a careful assistant. Answer in one paragraph."""\n'
            'reply = client.messages.create(model="claude-haiku-4-5", system=SYSTEM_PROMPT, messages=history)\n',
            1,
            17,
            1,
            76,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'messages = [{"role": "system", "content": "You are a careful assistant. Answer in one paragraph."}]',
            1,
            43,
            options={"max-system-tokens": 5},
        ),
        # implicit concatenation and dedent, defined in a function: reported at the definition
        Invalid(
            "import textwrap\n"
            "def ask(client, q):\n"
            "    rules = textwrap.dedent('''\n"
            "        You are a careful assistant.\n"
            "        Answer in one paragraph.''').strip()\n"
            "    return client.messages.create(model='claude-haiku-4-5', system=rules, messages=[q])\n",
            3,
            29,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            "from langchain_core.messages import SystemMessage\n"
            'msg = SystemMessage(content="You are a careful assistant. " "Answer in one paragraph.")\n',
            2,
            29,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'prompt = ChatPromptTemplate.from_messages([("system", BASE + " Answer in one paragraph."), ("human", "{q}")])\n'
            'BASE = "You are a careful assistant."\n',
            1,
            55,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'agent = Agent(name="triage", instructions=f"You are a careful assistant. Answer in one paragraph. {extra}")',
            1,
            43,
            options={"max-system-tokens": 5},
        ),
        # the ADK app's served agent, and the specialist it transfers the conversation to
        Invalid(
            "from google.adk.agents import LlmAgent\n"
            'BILLING = "You handle billing questions. " + "Answer in one paragraph."\n'
            'billing = LlmAgent(name="billing", instruction=BILLING)\n'
            'coordinator = LlmAgent(name="coordinator", instruction="Route.", sub_agents=[billing])\n'
            "root_agent = coordinator\n",
            2,
            11,
            options={"max-system-tokens": 5},
        ),
    ]

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-system-tokens")
        # (expression, "sent" | "cached", the node that sends it)
        self.candidates: list[tuple[cst.BaseExpression, str, cst.CSTNode]] = []
        self.assigned: set[str] = set()  # names bound by `name = ...` anywhere in the module
        self.agents: set[int] = set()  # ids of the framework agent calls whose conversation is asked about
        self.bindings: dict[str, str] | None = None  # imported name -> target, read when a text is imported
        self.assembled: list[cst.Call] = []  # calls a framework may build a system prompt for from parts

    # --- where system prompts are sent -------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assigned.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.assigned.add(node.target.value)

    def visit_Dict(self, node: cst.Dict) -> None:
        entries = _entries(node)
        if string(entries.get("role")) in SYSTEM_ROLES and "content" in entries:
            self._sent(entries["content"], node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        if len(node.elements) == 2 and string(node.elements[0].value) == "system":
            self._sent(node.elements[1].value, node)

    def visit_Call(self, node: cst.Call) -> None:
        name = callee_name(node)
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name == "count_tokens":
            return
        if name == "dict" and string(keywords.get("role")) in SYSTEM_ROLES and "content" in keywords:
            self._sent(keywords["content"], node)
        for keyword in SYSTEM_KEYWORDS:
            if keyword in keywords:
                self._sent(keywords[keyword], node)
        if name in PROMPT_KEYWORD_CALLS and "prompt" in keywords:
            self._sent(keywords["prompt"], node)
        if name in SYSTEM_MESSAGE_CALLS and (name == "SystemMessage" or self._is_system_template(node)):
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            content = keywords.get("content", keywords.get("template", positional[0] if positional else None))
            if content is not None:
                self._sent(content, node)
        if any(k in keywords for k in frameworks.PROMPT_KEYWORDS):
            self.assembled.append(node)
        instructions = [keywords[k] for k in frameworks.INSTRUCTIONS if k in keywords]
        if instructions and frameworks.instructed_agent(
            {q.name for q in self.get_metadata(QualifiedNameProvider, node.func, ())}
        ):
            self.agents.add(id(node))
            for content in instructions:
                self._sent(content, node)

    @staticmethod
    def _is_system_template(call: cst.Call) -> bool:
        """`SystemMessagePromptTemplate.from_template(...)`."""
        func = call.func
        return isinstance(func, cst.Attribute) and dotted(func.value)[-1] == "SystemMessagePromptTemplate"

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

    def leave_Module(self, original_node: cst.Module) -> None:
        for call in self.assembled:
            self._assembled(call)
        served = frameworks.served_agents(self, original_node) if self.agents else set()
        texts: dict[int, tuple[Text, set[str], list[cst.CSTNode]]] = {}
        imported: dict[RemoteText, tuple[set[str], list[cst.BaseExpression]]] = {}
        for expression, kind, use in self.candidates:
            if id(use) in self.agents and id(use) not in served:
                continue  # an agent whose conversation the module does not show (run as a tool, a step)
            local = not isinstance(expression, cst.Name) or expression.value in self.assigned
            text = text_of(self, expression) if local else None
            if text is None:
                remote = self._imported_text(expression, use)
                if remote is not None:
                    kinds, uses = imported.setdefault(remote, (set(), []))
                    kinds.add(kind)
                    uses.append(expression)
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
            return
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        encoding = encoder.encoding.removesuffix("_offline")
        for text, uses in sent:
            count = encoder(text.value)
            if count > self.limit:
                self._report(text, count, encoding, uses)
        for remote, uses in remote_sent:
            count = encoder(remote.value)
            if count > self.limit:
                self._report_imported(remote, count, encoding, uses[0])

    def _beside_conversation(self, use: cst.CSTNode) -> bool:
        """The system message opens a list that carries a conversation: `[system] + messages`,
        `[system, *messages]` (each call of a tool loop or a chat resends it with the history)."""
        element = self.get_metadata(ParentNodeProvider, use, None)
        listed = self.get_metadata(ParentNodeProvider, element, None) if isinstance(element, cst.Element) else None
        if not isinstance(listed, cst.List):
            return False
        if any(isinstance(e, cst.StarredElement) for e in listed.elements):
            return True
        joined = self.get_metadata(ParentNodeProvider, listed, None)
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

    def _assembled(self, call: cst.Call) -> None:
        """A system prompt a framework builds from parts (inline, or an entry of its config
        file), reported at the call that gives them."""
        module, directory = self.context.module, self.context.directory
        qualified = {q.name for q in self.get_metadata(QualifiedNameProvider, call.func, ())}
        configured = frameworks.system_config(module, qualified, call, directory)
        if configured is not None:
            value, path = configured
            self.context.data_files.append(os.path.normpath(os.path.join(directory, path)))
            text, what = Text(value, call), f"System prompt (`role` + `goal` + `backstory` of its entry in {path})"
        else:
            parts = frameworks.system_parts(qualified, call) or {}
            found = {
                name: text_of(self, expression)
                for name, expression in parts.items()
                if not (isinstance(expression, cst.Name) and expression.value not in self.assigned)
            }
            known = [text for text in found.values() if text is not None]
            if not known:
                return
            text = Text(
                "\n".join(t.value for t in known),
                call,
                partial=len(known) < len(parts) or any(t.partial for t in known),
            )
            what = f"System prompt ({' + '.join(f'`{name}`' for name in parts)} of `{callee_name(call)}(...)`)"
        if not self._may_exceed(text.value):
            return
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        count = encoder(text.value)
        if count > self.limit:
            at_least = "at least " if text.partial else ""
            self._finding(
                call, f"{what} is {at_least}{count} tokens", count, encoder.encoding.removesuffix("_offline"), []
            )

    def _imported_text(self, expression: cst.BaseExpression, use: cst.CSTNode) -> RemoteText | None:
        """The text constant of another module that `expression` names (`SYSTEM_PROMPT` imported
        from `.prompts`, or `prompts.SYSTEM_PROMPT`), as the project pass linked it. One filled
        in (`p = SUPERVISOR.format(day=d)`, then `p += extra`) is a template for one call: it
        counts where that call resends it with a conversation (`[system] + messages`)."""
        project = self.context.project
        if project is None or not project.texts:
            return None
        root = text_root(self, expression)  # `p = SUPERVISOR.format(day=d)`: SUPERVISOR, formatted
        if root is not expression and not self._beside_conversation(use):
            return None
        parts = dotted(root)
        if not parts:
            return None
        if self.bindings is None:
            self.bindings = dict(imports_of(self.context.module.code.encode("utf-8")))
        base = self.bindings.get(parts[0])
        remote = project.texts.get(".".join((base, *parts[1:]))) if base is not None else None
        return replace(remote, partial=True) if remote is not None and root is not expression else remote

    def _report(self, text: Text, count: int, encoding: str, uses: list[cst.CSTNode]) -> None:
        at_least = "at least " if text.partial else ""
        source = f" (read from {text.file})" if text.file else ""
        line = self.span(text.node).line
        related = [
            self.related(use, "sent as the system prompt here")
            for use in uses
            if not isinstance(use, cst.Name) and self.span(use).line != line
        ][:1]
        self._finding(text.node, f"System prompt{source} is {at_least}{count} tokens", count, encoding, related)

    def _report_imported(self, remote: RemoteText, count: int, encoding: str, use: cst.BaseExpression) -> None:
        at_least = "at least " if remote.partial else ""
        where = f"{remote.place.path}:{remote.place.span.line}"
        self._finding(
            use,
            f"System prompt `{self.context.module.code_for_node(use)}` (defined in {where}) is {at_least}{count} tokens",
            count,
            encoding,
            [self.related(remote.place, "the text is defined here")],
        )

    def _finding(self, node: cst.CSTNode, what: str, count: int, encoding: str, related) -> None:
        self.report(
            node,
            f"{what} ({encoding}) and is sent with every call (max-system-tokens is {self.limit}).",
            suggestion="Keep a short stable core; load topic-specific rules only when the request needs "
            "them (a retrieved snippet or a tool), and cache the stable prefix.",
            related=related,
            properties={"tokens": count, "encoding": encoding},
        )
