"""PROMPT-OVERSIZED-SYSTEM: a large system prompt resent with every model call."""

from __future__ import annotations

import re

import libcst as cst

from chatbound.analysis.prompts import (
    FRAMEWORK_PROMPT_TRIGGERS,
    OversizedImported,
    SystemPrompts,
    data_file,
    has_system_prompt_place,
    may_exceed,
    may_hold_text,
)
from chatbound.analysis.rule import Invalid, Option, Rule, Valid
from chatbound.findings import Severity, Span
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.texts import Text
from chatbound.vocabulary.summaries import Place, RemoteText


class PromptOversizedSystem(Rule):
    r"""
    ## What it does
    Flags a system prompt longer than `max-system-tokens` (default 500) tokens in the
    configured tiktoken `encoding` (`cl100k_base` by default).

    A system prompt is a text the code sends as one, never a name alone (a `SYSTEM_PROMPT`
    constant no model receives is no finding):

    - a `{"role": "system" | "developer", "content": ...}` message, or a message class built
      the same way (`Message(role="system", content=...)`);
    - Anthropic `system=`, Gemini `system_instruction=`;
    - LangChain `SystemMessage(...)` and `("system", ...)` templates;
    - `Agent(instructions=...)` or `system_prompt=`, `create_react_agent(prompt=...)`;
    - a Google ADK agent's `instruction=` / `global_instruction=`, where the module shows the
      agent holding a conversation: it is served as the app's `root_agent` (or transferred to
      from it through `sub_agents=[...]`). An agent run as a tool (`AgentTool(agent=...)`)
      or as a step of a workflow agent handles one request and is not reported.

    The text is resolved without running the code: constants, implicit concatenation, `+`,
    `"\n".join([...])`, `textwrap.dedent`, `.strip()`, `.replace` of literals, the literal parts
    of f-strings and `.format` templates (the message then says "at least") and the texts an
    f-string's fields name (`f"{BASE}\n{EXTRA}"`), a name added to in the same block
    (`p += notes`), class attributes (`self.SYSTEM`), what a function or method of the module
    returns for the call's arguments (`load("prompts/system.md")`), and data files read by a
    literal path, relative to the analyzed file
    (`Path(__file__).parent / "prompts" / "system.md"`, `open("prompts/system.md").read()`);
    a file is read as text, never imported, and sized as the repository holds it (a file the
    application rewrites at run time may hold more or less then). A text kept in another
    module of the project (`from .prompts import SYSTEM_PROMPT`, `prompt.ROOT_PROMPT`, what its
    function returns called with no arguments, `system_prompt()`) is read there by the project
    pass, and so is an imported text an f-string's field names (`f"{BASE}\nUser: {name}"`);
    one filled in per call (`p = SUPERVISOR_PROMPT.format(day=d)`, then `p += extra`: at least
    its size) counts where it opens a list that carries a conversation (`[system] + messages`,
    `[system, *messages]`) or is given beside one (`system=..., messages=history`). Reported
    once per text, where it is defined, or where it is sent when it is defined in another
    module (that module's line is the related location); a block marked for
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
        # a function returning one (`def system_prompt():`), which an importer may call
        re.compile(rb"def[ \t]+\w*(?:system|prompt|instruction)\w*[ \t]*\(", re.I),
        # {"role": "system"}, dict(role="developer"), ("system", ...)
        re.compile(rb"[\"'](?:system|developer)[\"']"),
        re.compile(rb"[\"'](?:system_\w+|instructions)[\"'][ \t]*:"),  # {"system_prompt": ...} unpacked into a call
        re.compile(
            rb"[\"']system_instruction[\"'][ \t]*\][ \t]*="
        ),  # config["system_instruction"] = ..., config=config
        re.compile(rb"SystemMessage"),  # SystemMessage(...), SystemMessagePromptTemplate
        *FRAMEWORK_PROMPT_TRIGGERS,  # a system prompt a framework assembles (CrewAI role, goal, backstory)
    )

    CROSS_MODULE = True  # a prompt kept in another module of the project, sent here

    @classmethod
    def may_report(cls, source: bytes, options: dict) -> bool:
        """A text over the limit needs that many bytes of string literals in the file (a token is
        at least a byte), unless it is read from a data file or imported from another module."""
        limit = options.get("max-system-tokens", cls.OPTIONS["max-system-tokens"].default)
        return may_exceed(source, limit)

    @classmethod
    def may_offer(cls, source: bytes, options: dict) -> bool:
        """A module whose string literals can hold a text over the limit offers it to the
        modules importing it, whatever it is named (`v11 = \"\"\"...\"\"\"` in `prompts.py`)."""
        return may_hold_text(source, options.get("max-system-tokens", cls.OPTIONS["max-system-tokens"].default))

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
            2,
            100,
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
            1,
            98,
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
            5,
            36,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            "from langchain_core.messages import SystemMessage\n"
            'msg = SystemMessage(content="You are a careful assistant. " "Answer in one paragraph.")\n',
            2,
            29,
            2,
            87,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'prompt = ChatPromptTemplate.from_messages([("system", BASE + " Answer in one paragraph."), ("human", "{q}")])\n'
            'BASE = "You are a careful assistant."\n',
            1,
            55,
            1,
            89,
            options={"max-system-tokens": 5},
        ),
        Invalid(
            'agent = Agent(name="triage", instructions=f"You are a careful assistant. Answer in one paragraph. {extra}")',
            1,
            43,
            1,
            107,
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
            2,
            72,
            options={"max-system-tokens": 5},
        ),
    ]

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-system-tokens")
        self.prompts = SystemPrompts(self, self.limit)  # fed the nodes below, asked at the end

    # --- where system prompts are sent -------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        self.prompts.collect_assign(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.prompts.collect_ann_assign(node)

    def visit_Dict(self, node: cst.Dict) -> None:
        self.prompts.collect_dict(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self.prompts.collect_tuple(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.prompts.collect_call(node)

    # --- one finding per prompt text ------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        for prompt in self.prompts.oversized(original_node):
            if isinstance(prompt, OversizedImported):
                self._report_imported(prompt.remote, prompt.count, prompt.encoding, prompt.use)
            elif prompt.what is not None:  # assembled by a framework, reported at the call that gives the parts
                at_least = "at least " if prompt.text.partial else ""
                what = f"{prompt.what} is {at_least}{prompt.count} tokens"
                self._finding(prompt.text.node, what, prompt.count, prompt.encoding, [])
            else:
                self._report(prompt.text, prompt.count, prompt.encoding, prompt.uses)

    def _report(self, text: Text, count: int, encoding: str, uses: list[cst.CSTNode]) -> None:
        at_least = "at least " if text.partial else ""
        files = text.file.split(", ") if text.file else []
        holds = "them" if len(files) > 1 else "it"  # a file written at run time is sized as committed
        source = f" (read from {text.file}, as the repository holds {holds})" if files else ""
        line = self.span(text.node).line
        related = [
            self.related(use, "sent as the system prompt here")
            for use in uses
            if not isinstance(use, cst.Name) and self.span(use).line != line
        ][:1]
        related += [self.related(data_file(self.context, f), "the text is this file") for f in files]
        self._finding(text.node, f"System prompt{source} is {at_least}{count} tokens", count, encoding, related)

    def _report_imported(self, remote: RemoteText, count: int, encoding: str, use: cst.BaseExpression) -> None:
        at_least = "at least " if remote.partial else ""
        where = f"{remote.place.path}:{remote.place.span.line}"
        source = f"read from {remote.file} by {where}" if remote.file else f"defined in {where}"
        self._finding(
            use,
            f"System prompt `{self.context.module.code_for_node(use)}` ({source}) is {at_least}{count} tokens",
            count,
            encoding,
            [self.related(remote.place, "the text is defined here"), *self._read_file(remote)],
        )

    def _read_file(self, remote: RemoteText) -> list:
        """The data file an imported text is read from, the whole file."""
        if not remote.file:
            return []
        lines = remote.value.count("\n") + (not remote.value.endswith("\n"))
        return [self.related(Place(remote.file, Span(1, 1, max(lines, 1), 1)), "the text is this file")]

    def _finding(self, node: cst.CSTNode, what: str, count: int, encoding: str, related) -> None:
        self.report(
            node,
            f"{what} ({encoding}) and is sent with every call (max-system-tokens is {self.limit}).",
            suggestion="Keep a short stable core; load topic-specific rules only when the request needs "
            "them (a retrieved snippet or a tool), and cache the stable prefix.",
            related=related,
            properties={"tokens": count, "encoding": encoding},
        )
