"""TOOLS-ALL-REGISTERED: every tool's schema attached to every model request."""

from __future__ import annotations

import re

import libcst as cst

from chatbound.analysis.chat import ChatRule
from chatbound.analysis.rule import Invalid, Option, Valid
from chatbound.analysis.tools import (
    AGENT_TOOL_DECORATORS,
    FRAMEWORK_TOOL_TRIGGERS,
    SERVER_TOOLS_ADVICE,
    TOOL_KEYWORDS,
    TOOL_TAKERS,
    ToolFacts,
    Tools,
    may_attach_tools,
)
from chatbound.findings import Severity
from chatbound.syntax.messages import callee_name
from chatbound.syntax.stdlib_tree import PythonTree


class ToolsAllRegistered(ChatRule):
    """
    ## What it does
    Flags a model or agent call given `max-tools` (default 5) or more tools, the same ones
    whatever the request.

    Tools are attached by:

    - `bind_tools([...])`;
    - `tools=` or `functions=` on OpenAI, Anthropic, LiteLLM and Gemini calls, also through a
      dict of arguments (`api_args["tools"] = TOOLS`, `create(**api_args)`: reported where the
      tools are put in);
    - `Agent(tools=...)` (OpenAI Agents, CrewAI, Pydantic AI, any `...Agent` class, also through
      a generic alias such as `Agent[Context]`);
    - `create_agent`, `create_react_agent`, `create_tool_calling_agent`;
    - a Pydantic AI agent with that many `@agent.tool` functions.

    Lists are counted from what the code builds, never from a name: through names bound once,
    `+`, `*` unpacking, `list(d.values())`, comprehensions without a filter and what a helper
    function of the module returns (`bind_tools(all_tools())`, `safe_tools() +
    sensitive_tools()`). A list, registry or helper of another module of the project is counted
    where it is built, through the imports (`bind_tools(all_tools())` with `all_tools` in
    `tools/helpers.py`, `list(registry.TOOLS.values())`), and that place is the related
    location; a list whose size no module shows (`ALL_TOOLS` of an installed package) is not
    flagged. Routes to other agents (`handoff(...)`, an agent run as a tool with
    `AgentTool(agent=...)` or `agent.as_tool()`, a tool function that returns or runs another
    agent of the module, a class given only for a router to pick a specialist by its name:
    `if call["name"] == ToBilling.__name__: return "billing"`) are counted
    apart from the work tools: a coordinator whose tools are mostly specialists is not told
    to split them. A list attached twice (`bind_tools(TOOLS)`,
    `ToolNode(TOOLS)`) is one finding. The message counts the tools and, where their schemas
    can be read (dict literals, functions of the file or of a sibling module it imports),
    their tokens in the configured `encoding`.

    Every tool of an MCP server is flagged whatever their number, since the server decides it
    when it runs (the message says so), unless its launch command names a well-known server
    whose tools were counted in its source at a version (`npx -y
    @modelcontextprotocol/server-brave-search`: 2 tools; `chatbound.frameworks.mcp_servers`):
    that server counts as its number of tools, which the message gives. The launch is followed
    from a listing call to the parameters the module writes: a session to the `stdio_client(params)`
    whose streams it reads, `MultiServerMCPClient(connections)` to each server of the dict (or the
    one `server_name=` names), smolagents `MCPClient(params)` to its one or several parameters;
    one server not counted leaves the whole list known only when it runs. A server object the
    module (or notebook) defines and hands to a toolset in-process (`MCPToolset(mcp)` over
    `mcp = FastMCP(...)`) counts the functions it registers (`@mcp.tool`). Servers come from
    `session.list_tools()`, `MultiServerMCPClient.get_tools()`, an ADK `McpToolset` (or 0.x `MCPToolset.from_server(...)`) or an Agents SDK `MCPServerStdio`
    in `mcp_servers=[...]` without `tool_filter=`, a Pydantic AI MCP server in `toolsets=[...]`
    without `.filtered(...)`, smolagents' `MCPClient` tools and `ToolCollection.from_mcp(...)`
    ([Frameworks](https://github.com/chatbound/chatbound/blob/main/docs/frameworks.md)).
    A client of the project's own that gathers every server's tools into one list (`tools.extend((await
    s.list_tools()).tools)` for each session) gives every tool of those servers, whether it attaches
    them or joins them into the system prompt of a model call (reported at the join, the call as
    a related location). They are followed wherever the client keeps them: an attribute grown
    with each server's (`self.tools += await server.tools()`), a method returning them (also of
    a client class in another module: `tools = await MCPClient().start()`), a parameter the
    module's callers give them to, a dict of each server's list flattened, a session entry one
    handler sets and another reads (`cl.user_session`), a dict of arguments
    (`api_args["tools"] = tools`, `create(**api_args)`). A condition that keeps some tools
    (`if t.name in NEEDED`, a name test), a slice or an agent's own subset on the way chooses,
    and is not flagged; one that only leaves named tools out (`if t.name != "broken"`) keeps
    every other, and is.
    A server whose source the module holds, a script its parameters run with `python -c`
    (a text, or what a function of the module returns), is counted instead: the functions it
    registers with a `.tool` decorator (`@mcp.tool()`), like any list. So it is for smolagents'
    `MCPClient(params)`, Pydantic AI's `MCPServerStdio("python", ["-c", SERVER])` and the Agents
    SDK's `MCPServerStdio(params={"command": "python", "args": ["-c", SERVER]})`.

    A list written out tool by tool (or an agent's own `@agent.tool` functions) is a choice, and
    is not flagged when the code shows it is one job's toolkit or part of a split:

    - most of its tools (two thirds) act on one object: they drive one module-level browser
      or database pool (call its methods, assign into it, read its parts), are built on one
      object (`VisitTool(browser)`, `PageUpTool(browser)`), or work on the run's shared state (a
      Pydantic AI tool's `ctx.deps.state`); a logger they all write to is no such object, nor
      one they only hand whole to other functions (`find_policy(ctx.deps.db, n)`: the request's
      database session, which every service function is given);
    - the module gives different written lists of two or more tools to different agents: the
      tools are already split between them.

    Gathered sets are flagged from `max-tools` whatever they hold: lists joined together (the
    front desk given `BILLING_TOOLS + ACCOUNT_TOOLS`, the other agents' lists), every value of a
    registry, everything a helper returns. The message says how the count was known.

    Not flagged: toolsets chosen per request (a lookup, a function, a filtered comprehension,
    a tool retriever, an MCP toolset with `tool_filter=`; a Pydantic AI `@agent.tool(prepare=...)`
    or `defer_loading=True` tool, an agent with a `PrepareTools` capability) and tool executors.

    ## Why is this bad?
    Every tool's name, description and JSON schema is sent with every request, whether or not
    the request can use it: seven modest tool schemas are about 500 input tokens (cl100k_base)
    on every call, paid again on each turn and each step of a tool loop. A long menu also
    makes the model pick the wrong tool more often.

    ## Example
    ```python
    response = client.chat.completions.create(
        model="gpt-4o", messages=messages,
        tools=[invoice_tool, seats_tool, sso_tool, export_tool, refund_tool, ticket_tool, usage_tool],
    )
    ```
    chatbound reports it at the tools given:
    ```text
    app.py:3:5: TOOLS-ALL-REGISTERED 7 tools are attached to every request by `client.chat.completions.create(...)`; each request pays for every schema (max-tools is 5). Counted from the list, which names each tool.
    ```

    ## Use instead
    ```python
    TOOLS_BY_TOPIC = {"billing": [invoice_tool, refund_tool], "sso": [sso_tool], "usage": [usage_tool]}
    response = client.chat.completions.create(
        model="gpt-4o", messages=messages, tools=TOOLS_BY_TOPIC[classify(question)],
    )
    ```

    ## Fix
    None automatic: which tools a request needs is the application's to decide.

    ## Frameworks covered
    OpenAI (model calls and the Agents SDK), Anthropic, LiteLLM, Gemini, LangChain and
    LangGraph (`bind_tools`, `ToolNode`, `create_agent`, `create_react_agent`,
    `create_tool_calling_agent`), CrewAI and Pydantic AI. Token counts as for
    PROMPT-OVERSIZED-SYSTEM.
    """

    ID = "TOOLS-ALL-REGISTERED"
    NAME = "tools-all-registered"
    SEVERITY = Severity.HIGH
    SUMMARY = "Every tool's schema is attached to every request, not the few it needs."
    TAGS = ("cost", "llm", "tools")
    OPTIONS = {"max-tools": Option(int, 5, "Tools attached to one call from which a finding is reported.")}
    CROSS_MODULE = True  # a tool list, or a helper returning one, in another module of the project
    TRIGGERS = (
        re.compile(rb"\b(?:%s)\s*=" % b"|".join(k.encode() for k in TOOL_KEYWORDS)),
        # a module offering a tool list: `ALL_TOOLS = [...]`, `def all_tools():` (where to look, not a finding)
        re.compile(rb"tools\w*\s*(?::[^=\n]*)?=\s*[\[{(]|\bdef\s+\w*tools\w*\s*\(", re.I),
        # a module offering tool schemas, whatever the list's name (`schemas = [{"type": "function", ...
        # "parameters": {...}}]`): OpenAI's function `parameters`, Anthropic's `input_schema`
        re.compile(rb"[\"'](?:parameters|input_schema)[\"']\s*:"),
        # a tools list passed positionally
        re.compile(
            rb"\b(?:%s)[\s)]*\(" % b"|".join(name.encode() for name, index in TOOL_TAKERS.items() if index is not None)
        ),
        re.compile(rb"@\s*\w+\s*\.\s*(?:%s)\b" % b"|".join(d.encode() for d in AGENT_TOOL_DECORATORS)),
        re.compile(
            rb"\btools[\"']\s*[\]:]"
        ),  # `api_args["tools"] = ...`, `{"tools": ...}`: a call given a dict of arguments
        *FRAMEWORK_TOOL_TRIGGERS,  # a framework's own keyword for tools (the Agents SDK's mcp_servers=)
    )

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a `tools=` or a tool list bind no tools to a model or agent (a list
        offered to other modules is read by the project pass, not here); one that lists a
        server's tools may describe them in a system prompt."""
        return may_attach_tools(tree)

    VALID = [
        # an MCP toolset that names the tools it offers
        "from google.adk.tools.mcp_tool import McpToolset\n"
        "reader = LlmAgent(name='reader', tools=[McpToolset(connection_params=p, tool_filter=['read_page'])])\n",
        "llm = model.bind_tools([search, lookup_order])",
        # chosen per request: a function, a filtered comprehension, a lookup by topic
        "tools = select_tools(question)\nreply = client.chat.completions.create(model='gpt-4o', messages=m, tools=tools)",
        "agent = Agent(name='support', tools=[t for t in ALL_TOOLS if t.name in needed])",
        # a name that says "all" shows no size: never counted from the name
        "from .registry import ALL_TOOLS, all_tools\nllm = ChatOpenAI(model='gpt-4o').bind_tools(all_tools())\n"
        "agent = Agent(name='shop', tools=ALL_TOOLS)\n",
        # a router whose tools are handoffs to the specialists that hold the work tools
        "from agents import Agent, handoff\n"
        "billing = Agent(name='billing', tools=[refund, invoice])\n"
        "def transfer_to_sales():\n    return sales\n"
        "sales = Agent(name='sales', tools=[quote, discount])\n"
        "triage = Agent(name='triage', tools=[transfer_to_sales, lookup], handoffs=[handoff(billing)])\n"
        "router = Agent(name='router', tools=[handoff(billing), transfer_to_sales, lookup, faq, status, hours])\n",
        # Pydantic AI: a primary agent whose tools each run a specialist agent on a brief
        "from pydantic_ai import Agent\n"
        "primary = Agent('openai:gpt-4o')\n"
        + "".join(
            f"s{i} = Agent('openai:gpt-4o-mini')\n@primary.tool_plain\nasync def use_s{i}(query: str) -> str:\n"
            f"    return (await s{i}.run(query)).output\n"
            for i in range(6)
        ),
        # a coordinator whose tools are specialists run as tools
        "planner = Agent(name='planner', tools=[AgentTool(agent=flights), AgentTool(agent=hotels),\n"
        "    AgentTool(agent=seats), billing.as_tool(tool_name='billing', tool_description='Bills.'), remember])\n",
        "reply = client.messages.create(model='claude-haiku-4-5', messages=m, tools=TOOLS_BY_TOPIC[topic])",
        # executing tools is not sending their schemas
        "node = ToolNode([a, b, c, d, e, f])",
        # a dispatch table that no model call receives
        "HANDLERS = {f.__name__: f for f in (a, b, c, d, e, f)}",
        Valid("llm = model.bind_tools([a, b, c, d, e, f])", options={"max-tools": 7}),
        # one job's toolkit: browser primitives that all drive one driver
        "driver = webdriver.Chrome()\n"
        + "".join(f"def step{i}(x: str) -> str:\n    return driver.execute_script(x)\n" for i in range(5))
        + "browser = Agent(name='browser', tools=[step0, step1, step2, step3, step4])\n",
        # the tools already split between two agents, each given its own list
        "billing = Agent(name='billing', tools=[refund, invoice, plan, credit, dunning])\n"
        "account = Agent(name='account', tools=[reset_password, enable_sso])\n",
        # a Django-style create that is no model call
        "Order.objects.create(tools=[a, b, c, d, e, f])",
    ]
    INVALID = [
        # every tool of an MCP server, however many it registers when it runs
        Invalid(
            "from langchain_mcp_adapters.client import MultiServerMCPClient\n"
            "from langgraph.prebuilt import create_react_agent\n"
            "async def build(client, model):\n"
            "    tools = await client.get_tools()\n"
            "    return create_react_agent(model, tools)\n",
            5,
            38,
            5,
            43,
        ),
        Invalid("llm = model.bind_tools([a, b, c, d, e])", 1, 24, 1, 39),
        # the model call through a name bound to the client's method
        Invalid(
            "create = client.chat.completions.create\n"
            "reply = create(model='gpt-4o', messages=msgs, tools=[a, b, c, d, e])\n",
            2,
            47,
            2,
            68,
        ),
        Invalid(
            "response = client.chat.completions.create(\n"
            "    model='gpt-4o',\n"
            "    messages=messages,\n"
            "    tools=[s1, s2, s3, s4, s5, s6, s7],\n"
            ")\n",
            4,
            5,
            4,
            39,
        ),
        # the list is a module constant: reported where it is attached
        Invalid(
            "from agents import Agent, function_tool\n"
            "TOOLS = [refund, invoice, seats, sso, export]\n"
            "agent = Agent(name='support', instructions='Help.', tools=TOOLS)\n",
            3,
            53,
            3,
            64,
        ),
        Invalid(
            "agent = create_react_agent(model, [*BILLING_TOOLS, sso, export], prompt=p)\nBILLING_TOOLS = [a, b, c]\n",
            1,
            35,
            1,
            64,
        ),
        # the lists of two agents joined for a third: every tool the app has
        Invalid(
            "BILLING = [refund, invoice, plan]\nACCOUNT = [reset_password, enable_sso, export]\n"
            "billing = Agent(name='billing', tools=BILLING)\n"
            "account = Agent(name='account', tools=ACCOUNT)\n"
            "desk = Agent(name='desk', tools=BILLING + ACCOUNT)\n",
            5,
            27,
            5,
            50,
        ),
        # what the module's helpers return, added up
        Invalid(
            "def safe_tools():\n    return [lookup, search, faq]\n"
            "def sensitive_tools():\n    return [refund, cancel]\n"
            "tools = safe_tools() + sensitive_tools()\n"
            "llm = ChatOpenAI(model='gpt-4o').bind_tools(tools)\n",
            6,
            45,
            6,
            50,
        ),
        Invalid(
            "import litellm\n"
            "SCHEMAS = {'a': A, 'b': B, 'c': C, 'd': D, 'e': E}\n"
            "r = litellm.completion(model='gpt-4o', messages=m, tools=list(SCHEMAS.values()))\n",
            3,
            52,
            3,
            80,
        ),
        # Pydantic AI: every @agent.tool is offered on every run
        Invalid(
            "from pydantic_ai import Agent\n"
            "agent = Agent('openai:gpt-4o')\n"
            + "".join(f"@agent.tool_plain\ndef t{i}() -> str:\n    return ''\n" for i in range(5)),
            2,
            9,
            2,
            31,
        ),
    ]

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-tools")
        self.tool_facts = ToolFacts(self)  # fed the nodes below, asked at the end

    # --- where tools are attached ----------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        super().visit_Import(node)
        self.tool_facts.collect_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        super().visit_ImportFrom(node)
        self.tool_facts.collect_import_from(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self.tool_facts.collect_function(node)

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        self.tool_facts.collect_call(node)

    # --- one finding per tool list ----------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, tools, count, call, routes in self.tool_facts.attached(original_node, self.limit):
            self._report(node, tools, count, call, routes)
        if self.tool_facts.lists_servers and self.may_chat():
            self._described_servers()

    def _described_servers(self) -> None:
        """Report where every tool of MCP servers is written into a system prompt a model is
        sent (`"\\n".join(t.format_for_llm() for t in all_tools)` in the system message)."""
        for described, tools, site in self.tool_facts.described_servers():
            servers = " and ".join(dict.fromkeys(tools.servers))
            self.report(
                described,
                f"{servers[0].upper()}{servers[1:]} {'are' if len(tools.servers) > 1 else 'is'} described in the "
                f"system prompt of every request by `{self._call_name(site)}(...)` (how many tools the server offers "
                f"is known only when it runs); each request pays for every description (max-tools is {self.limit}).",
                suggestion=SERVER_TOOLS_ADVICE,
                related=[self.related(site, "the model call the system prompt is sent with")],
            )

    def _report(self, node: cst.CSTNode, tools: Tools, count: int, call: cst.Call, routes: int = 0) -> None:
        what = f"{'At least ' if tools.partial else ''}{count} tools are attached"
        if tools.servers:
            servers = " and ".join(dict.fromkeys(tools.servers))
            more = f", and {count} more tool{'s' if count != 1 else ''}," if count else ""
            what = (
                f"{servers[0].upper()}{servers[1:]}{more} {'are' if count or len(tools.servers) > 1 else 'is'} attached"
            )
        if routes:
            what += f" (and {routes} handoff{'s' if routes > 1 else ''} to other agents, counted apart)"
        work = [e for e in tools.elements or [] if not self.tool_facts.is_route(e)]
        schema = (
            self._schema_note(work, count)
            + (" (how many tools the server offers is known only when it runs)" if tools.servers else "")
            + "".join(
                f" (the {s.name} MCP server offers {s.tools} tool{'s' if s.tools != 1 else ''}, counted in its source at "
                f"{s.version})"
                for s in dict.fromkeys(tools.served)
            )
        )
        related = (
            [self.related(tools.definition, "the tool list is built here")]
            if tools.definition is not None and self.span(tools.definition).line != self.span(node).line
            else []
        ) + [self.related(r.place, "the tool list is built here") for r in tools.imported]
        self.report(
            node,
            f"{what} to every request by `{self._call_name(call)}(...)`{schema}; each request pays "
            f"for every schema (max-tools is {self.limit}).{'' if tools.servers or tools.served else f' Counted from {tools.how}.'}",
            suggestion=SERVER_TOOLS_ADVICE
            if tools.servers or tools.served
            else "Attach only the tools this request can "
            "use: group them by topic or route first, or let a small router pick a few before the call.",
            related=related,
            properties={"tools": count},
        )

    def _call_name(self, call: cst.Call) -> str:
        name = self.context.module.code_for_node(call.func)
        return name if len(name) <= 60 and "\n" not in name else callee_name(call)

    def _schema_note(self, elements: list[cst.BaseExpression], count: int) -> str:
        tokens = self.tool_facts.schema_tokens(elements)
        if tokens is None:
            return ""
        total, schemas, encoding = tokens
        readable = "" if schemas == count else f" for the {schemas} readable here"
        return f" (about {total} schema tokens{readable}, {encoding})"
