"""TOOLS-ALL-REGISTERED: every tool's schema attached to every model request."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from chatbound import frameworks
from chatbound.analysis import servertools, toollists
from chatbound.analysis.chat import ChatRule
from chatbound.analysis.histories import walk
from chatbound.analysis.project.imports import imports_of
from chatbound.analysis.rule import Invalid, Option, Valid
from chatbound.analysis.toollists import ROUTE_CALLS
from chatbound.compaction.tokens import DEFAULT_ENCODING, get_encoder
from chatbound.findings import Severity
from chatbound.frameworks import Server
from chatbound.syntax.messages import ast_callee_name, callee_name, role_of
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.texts import read_data_file, text_of
from chatbound.syntax.values import bound_expression, grown_from
from chatbound.vocabulary.sinks import dotted, keyword
from chatbound.vocabulary.summaries import RemoteToolList

TOOL_KEYWORDS = ("tools", "functions")
# callee -> index of the tools argument when passed positionally (None: keyword only)
TOOL_TAKERS = {
    "bind_tools": 0,
    "bind_functions": 0,
    "create_react_agent": 1,
    "create_agent": 1,
    "create_tool_calling_agent": 1,
    "create_openai_tools_agent": 1,
    "create_openai_functions_agent": 1,
    "create_structured_chat_agent": 1,
    "initialize_agent": 0,
    "from_tools": 0,
    "completion": None,
    "acompletion": None,  # litellm
    "generate_content": None,
    "generate_content_async": None,
    "GenerateContentConfig": None,
    "GenerativeModel": None,
    "Crew": None,
}
MODEL_CALLS = ("create", "acreate", "parse", "stream")  # with messages=/input=/model=
TOOL_DECORATORS = ("tool", "function_tool")
AGENT_RUNS = ("run", "run_sync", "run_stream", "invoke", "ainvoke")  # an agent run on a tool's brief
AGENT_TOOL_DECORATORS = ("tool", "tool_plain")  # Pydantic AI: @agent.tool
WRITTEN = "the list, which names each tool"  # a hand-picked set: the only kind a toolkit or a split excuses
JOINED = "tool lists joined together"
PY_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array", "dict": "object"}


def takes_tools(name: str, keywords) -> bool:
    """Whether a call of `name` with these keyword names may be given the tools of a model."""
    return (
        name in TOOL_TAKERS
        or name.endswith("Agent")
        or (name in MODEL_CALLS and any(k in keywords for k in ("messages", "input", "model")))
    )


def _may_bind_tools(node: ast.AST) -> bool:
    """A call `_tools_arguments` reads a tools argument of, or a function registered as an
    agent's tool (`@agent.tool`), on CPython's tree."""
    if type(node) is ast.Call:
        name, keywords = ast_callee_name(node), {k.arg for k in node.keywords}
        if not takes_tools(name, keywords):
            return False
        index = TOOL_TAKERS.get(name)
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        return not keywords.isdisjoint((*TOOL_KEYWORDS, *frameworks.TOOL_KEYWORDS)) or (
            index is not None and len(positional) > index
        )
    if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if (
                isinstance(target, ast.Attribute)
                and target.attr in AGENT_TOOL_DECORATORS
                and isinstance(target.value, ast.Name)
            ):
                return True
    return False


def _may_spread_tools(tree: PythonTree) -> bool:
    """A call that may take tools given a dict of its arguments (`create(**api_args)`), in a
    module that puts tools into a dict (`api_args["tools"] = ...`, `{"tools": ...}`)."""
    spreads = any(
        None in {k.arg for k in call.keywords} and takes_tools(ast_callee_name(call), ("model",))
        for call in tree.nodes(ast.Call)
    )
    keys = [d.slice for d in tree.nodes(ast.Subscript)] + [k for d in tree.nodes(ast.Dict) for k in d.keys]
    return spreads and any(isinstance(k, ast.Constant) and k.value in TOOL_KEYWORDS for k in keys)


@dataclass
class Tools:
    """What a tools expression holds: its element expressions, or None when unknown."""

    elements: list[cst.BaseExpression] | None
    definition: cst.CSTNode | None = None  # the named list, when it is not written inline
    partial: bool = False  # some elements (a starred unknown) are not counted
    imported: tuple[RemoteToolList, ...] = ()  # lists of other modules it holds (counted there)
    servers: tuple[str, ...] = ()  # every tool of a server, known only at run time (how each reads)
    served: tuple[Server, ...] = ()  # every tool of a well-known server, counted in its source
    how: str = WRITTEN  # how the set was gathered, said in the message
    picked: bool = True  # hand-picked (a written list, an agent's own decorated tools), not gathered

    def __add__(self, other: Tools) -> Tools:
        return Tools(
            (self.elements or []) + (other.elements or []),
            partial=self.partial or other.partial,
            imported=self.imported + other.imported,
            servers=self.servers + other.servers,
            served=self.served + other.served,
            how=JOINED,
            picked=False,
        )


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
    - `Agent(tools=...)` (OpenAI Agents, CrewAI, Pydantic AI, any `...Agent` class);
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
    agent of the module) are counted
    apart from the work tools: a coordinator whose tools are mostly specialists is not told
    to split them. A list attached twice (`bind_tools(TOOLS)`,
    `ToolNode(TOOLS)`) is one finding. The message counts the tools and, where their schemas
    can be read (dict literals, functions of the file or of a sibling module it imports),
    their tokens in the configured `encoding`.

    Every tool of an MCP server is flagged whatever their number, since the server decides it
    when it runs (the message says so), unless its launch command names a well-known server
    whose tools were counted in its source at a version (`npx -y
    @modelcontextprotocol/server-brave-search`: 2 tools; `chatbound.frameworks.mcp_servers`):
    that server counts as its number of tools, which the message gives. Servers come from
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
    registers with a `.tool` decorator (`@mcp.tool()`), like any list.

    A list written out tool by tool (or an agent's own `@agent.tool` functions) is a choice, and
    is not flagged when the code shows it is one job's toolkit or part of a split:

    - most of its tools (two thirds) act on one object: they drive one module-level browser
      or database pool (call its methods, pass it on, assign into it), are built on one object
      (`VisitTool(browser)`, `PageUpTool(browser)`), or work on the run's shared state (a
      Pydantic AI tool's `ctx.deps.state`); a logger they all write to is no such object;
    - the module gives different written lists of two or more tools to different agents: the
      tools are already split between them.

    Gathered sets are flagged from `max-tools` whatever they hold: lists joined together (the
    front desk given `BILLING_TOOLS + ACCOUNT_TOOLS`, the other agents' lists), every value of a
    registry, everything a helper returns. The message says how the count was known.

    Not flagged: toolsets chosen per request (a lookup, a function, a filtered comprehension,
    a tool retriever, an MCP toolset with `tool_filter=`) and tool executors.

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
        # a tools list passed positionally
        re.compile(
            rb"\b(?:%s)[\s)]*\(" % b"|".join(name.encode() for name, index in TOOL_TAKERS.items() if index is not None)
        ),
        re.compile(rb"@\s*\w+\s*\.\s*(?:%s)\b" % b"|".join(d.encode() for d in AGENT_TOOL_DECORATORS)),
        re.compile(
            rb"\btools[\"']\s*[\]:]"
        ),  # `api_args["tools"] = ...`, `{"tools": ...}`: a call given a dict of arguments
        *frameworks.TOOL_TRIGGERS,  # a framework's own keyword for tools (the Agents SDK's mcp_servers=)
    )

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a `tools=` or a tool list bind no tools to a model or agent (a list
        offered to other modules is read by the project pass, not here); one that lists a
        server's tools may describe them in a system prompt."""
        return (
            any(map(_may_bind_tools, tree.nodes(ast.Call, ast.FunctionDef, ast.AsyncFunctionDef)))
            or any(ast_callee_name(call) in frameworks.SERVER_TOOL_CALLS for call in tree.nodes(ast.Call))
            or _may_spread_tools(tree)
        )

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
        ),
        Invalid("llm = model.bind_tools([a, b, c, d, e])", 1, 24, 1, 39),
        Invalid(
            "response = client.chat.completions.create(\n"
            "    model='gpt-4o',\n"
            "    messages=messages,\n"
            "    tools=[s1, s2, s3, s4, s5, s6, s7],\n"
            ")\n",
            4,
            5,
        ),
        # the list is a module constant: reported where it is attached
        Invalid(
            "from agents import Agent, function_tool\n"
            "TOOLS = [refund, invoice, seats, sso, export]\n"
            "agent = Agent(name='support', instructions='Help.', tools=TOOLS)\n",
            3,
            53,
        ),
        Invalid(
            "agent = create_react_agent(model, [*BILLING_TOOLS, sso, export], prompt=p)\nBILLING_TOOLS = [a, b, c]\n",
            1,
            35,
        ),
        # the lists of two agents joined for a third: every tool the app has
        Invalid(
            "BILLING = [refund, invoice, plan]\nACCOUNT = [reset_password, enable_sso, export]\n"
            "billing = Agent(name='billing', tools=BILLING)\n"
            "account = Agent(name='account', tools=ACCOUNT)\n"
            "desk = Agent(name='desk', tools=BILLING + ACCOUNT)\n",
            5,
            27,
        ),
        # what the module's helpers return, added up
        Invalid(
            "def safe_tools():\n    return [lookup, search, faq]\n"
            "def sensitive_tools():\n    return [refund, cancel]\n"
            "tools = safe_tools() + sensitive_tools()\n"
            "llm = ChatOpenAI(model='gpt-4o').bind_tools(tools)\n",
            6,
            45,
        ),
        Invalid(
            "import litellm\n"
            "SCHEMAS = {'a': A, 'b': B, 'c': C, 'd': D, 'e': E}\n"
            "r = litellm.completion(model='gpt-4o', messages=m, tools=list(SCHEMAS.values()))\n",
            3,
            52,
        ),
        # Pydantic AI: every @agent.tool is offered on every run
        Invalid(
            "from pydantic_ai import Agent\n"
            "agent = Agent('openai:gpt-4o')\n"
            + "".join(f"@agent.tool_plain\ndef t{i}() -> str:\n    return ''\n" for i in range(5)),
            2,
            9,
        ),
    ]

    def __init__(self, context) -> None:
        super().__init__(context)
        self.limit = self.option("max-tools")
        # (call, where tools are given to it: an argument or a dict entry, the tools), resolved at the end
        self.arguments: list[tuple[cst.Call, cst.CSTNode, cst.BaseExpression]] = []
        self.spread: list[cst.Call] = []  # calls given a dict of arguments (`create(**api_args)`)
        self.attaching: cst.Call | None = None  # the call whose tools are being resolved
        self.functions: dict[str, cst.FunctionDef] = {}
        self.imported: dict[str, tuple[str, str]] = {}  # local name -> (sibling file, its name there)
        self.sibling_functions: dict[str, dict[str, cst.FunctionDef]] = {}
        self.agent_tools: dict[str, list[cst.FunctionDef]] = {}
        self.agent_names: dict[str, cst.Name] = {}
        self.bindings: dict[str, str] | None = None  # imported name -> target, read when a list is imported
        self.imports: set[str] = set()  # modules the file imports from (which frameworks it uses)
        self.resources: set[str] | None = None  # module-level objects tools may share, read when needed

    # --- where tools are attached ----------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        super().visit_Import(node)
        self.imports.update(self.context.module.code_for_node(alias.name) for alias in node.names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """`from .tools import lookup` / `from tools import lookup`: a file next to this one."""
        super().visit_ImportFrom(node)
        if node.module is not None and not node.relative:
            self.imports.add(self.context.module.code_for_node(node.module))
        if node.module is None or isinstance(node.names, cst.ImportStar) or len(node.relative) > 1:
            return
        if not node.relative and not isinstance(node.module, cst.Name):
            return  # an absolute dotted module: where it lives is not known here
        path = self.context.module.code_for_node(node.module).replace(".", "/") + ".py"
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                local = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(local, cst.Name):
                    self.imported[local.value] = (path, alias.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self.functions.setdefault(node.name.value, node)
        for decorator in node.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if (
                isinstance(target, cst.Attribute)
                and target.attr.value in AGENT_TOOL_DECORATORS
                and isinstance(target.value, cst.Name)
            ):
                self.agent_tools.setdefault(target.value.value, []).append(node)
                self.agent_names.setdefault(target.value.value, target.value)

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        self.arguments.extend((node, argument, argument.value) for argument in self._tools_arguments(node))
        if takes_tools(callee_name(node), ("model",)) and any(
            a.star == "**" and isinstance(a.value, cst.Name) for a in node.args
        ):
            self.spread.append(node)

    def _spread_tools(self, call: cst.Call) -> list[tuple[cst.Call, cst.CSTNode, cst.BaseExpression]]:
        """The tools a call is given through a dict of its arguments (`api_args = {"model": m,
        "messages": h}`, `api_args["tools"] = tools`, `create(**api_args)`): where each is put in."""
        entries: dict[str, tuple[cst.CSTNode, cst.BaseExpression]] = {}
        for spread in (a.value for a in call.args if a.star == "**" and isinstance(a.value, cst.Name)):
            written = bound_expression(self, spread)
            for element in written.elements if isinstance(written, cst.Dict) else ():
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                    entries[element.key.evaluated_value] = (element, element.value)
            scope = self.get_metadata(ScopeProvider, spread, None)
            for node, target in self._stores.get(spread.value, ()):
                key = getattr(target.slice[0].slice, "value", None) if len(target.slice) == 1 else None
                if isinstance(key, cst.SimpleString) and self.get_metadata(ScopeProvider, target.value, None) is scope:
                    entries[key.evaluated_value] = (node, node.value)
        keywords = {a.keyword.value for a in call.args if a.keyword is not None} | entries.keys()
        if not takes_tools(callee_name(call), keywords):
            return []
        return [(call, *entries[k]) for k in (*TOOL_KEYWORDS, *frameworks.TOOL_KEYWORDS) if k in entries]

    @functools.cached_property
    def _stores(self) -> dict[str, list[tuple[cst.Assign, cst.Subscript]]]:
        """`name[key] = value` assignments, by the name."""
        found: dict[str, list[tuple[cst.Assign, cst.Subscript]]] = {}
        for node in self.nodes.assigns:
            target = node.targets[0].target if isinstance(node, cst.Assign) and len(node.targets) == 1 else None
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                found.setdefault(target.value.value, []).append((node, target))
        return found

    def _tools_arguments(self, call: cst.Call) -> list[cst.Arg]:
        """`tools=` (or `functions=`, or the tools position), and a framework's own keyword for
        tools beside it (`mcp_servers=`)."""
        name = callee_name(call)
        keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if not takes_tools(name, keywords):
            return []
        own = [keywords[k] for k in frameworks.TOOL_KEYWORDS if k in keywords]
        for tool_keyword in TOOL_KEYWORDS:
            if tool_keyword in keywords:
                return [keywords[tool_keyword], *own]
        index = TOOL_TAKERS.get(name)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return [positional[index], *own] if index is not None and len(positional) > index else own

    # --- what a tools expression holds ------------------------------------------------

    def _tools(self, node: cst.BaseExpression, depth: int = 0) -> Tools | None:
        if depth > 8:
            return None
        depth += 1
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            elements: list[cst.BaseExpression] = []
            imported: tuple[RemoteToolList, ...] = ()
            partial, servers, served, how, picked = False, (), (), WRITTEN, True
            for element in node.elements:
                if isinstance(element, cst.StarredElement):
                    inner = self._tools(element.value, depth)
                    if inner is None or inner.elements is None:
                        partial = True
                        continue
                    elements.extend(inner.elements)
                    imported += inner.imported
                    partial, servers, how = partial or inner.partial, servers + inner.servers, JOINED
                    served += inner.served
                    picked = False
                elif (toolset := self._toolset(element.value)) is not None:
                    server, launched = toolset
                    known = frameworks.known_server(self._words(launched))
                    served, servers = (served + (known,), servers) if known else (served, servers + (server,))
                else:
                    elements.append(element.value)
            return Tools(
                elements, partial=partial, imported=imported, servers=servers, served=served, how=how, picked=picked
            )
        if isinstance(node, cst.Await):
            return self._tools(node.expression, depth)
        if isinstance(node, cst.Attribute) and node.attr.value == "tools":  # `(await session.list_tools()).tools`
            inner = self._tools(node.value, depth)
            if inner is not None and inner.servers:
                return inner
        if isinstance(node, cst.Attribute):
            return self._imported(node, returned=False) or self._listed_servers(node)
        if isinstance(node, cst.IfExp) or isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            # `tools if tools else None`, `tools or None`: what is attached when there are any
            branches = (node.body, node.orelse) if isinstance(node, cst.IfExp) else (node.left, node.right)
            attached = [branch for branch in branches if not servertools.empty(branch)]
            return self._tools(attached[0], depth) if len(attached) == 1 else None
        if isinstance(node, cst.Name):
            bound = bound_expression(self, node) or grown_from(self, node)
            if isinstance(bound, cst.List) and not bound.elements and (gathered := self._gathered(node)) is not None:
                return gathered
            if bound is None:
                held = self._held(node)  # `with MCPClient(...) as tools`, `tools, stack = await ...from_server(...)`
                if isinstance(held, cst.Await):
                    held = held.expression
                server = frameworks.server_tools(self.imports, held) if isinstance(held, cst.Call) else None
                if server is not None:
                    served = self._served_here(held)
                    return served or Tools([], servers=(server,))
                return self._imported(node, returned=False) or self._listed_servers(node)
            inner = self._tools(bound, depth)
            if inner is not None and inner.definition is None:
                inner.definition = bound
            if inner is None or inner.elements is None:
                return None
            return inner
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = self._tools(node.left, depth), self._tools(node.right, depth)
            if left is None or right is None or left.elements is None or right.elements is None:
                return None
            return left + right
        if isinstance(node, cst.Dict):
            values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
            return Tools(
                values, partial=len(values) < len(node.elements), how="every value of a dict of tools", picked=False
            )
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            loop = node.for_in
            if loop.ifs or loop.inner_for_in is not None:
                return self._listed_servers(
                    node
                )  # a filter or a product: chosen, not all (or only named tools left out)
            inner = self._tools(loop.iter, depth)
            if inner is None or inner.elements is None:
                return None
            return Tools(
                inner.elements,
                partial=inner.partial,
                imported=inner.imported,
                servers=inner.servers,
                served=inner.served,
                how=inner.how,
                picked=inner.picked,
            )
        if isinstance(node, cst.Call):
            server = frameworks.server_tools(self.imports, node)
            if server is not None:
                return Tools([], servers=(server,))
            name = callee_name(node)
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if name in ("list", "tuple", "set", "sorted") and len(positional) == 1:
                return self._tools(positional[0], depth)
            if name == "values" and isinstance(node.func, cst.Attribute) and not node.args:
                inner = self._tools(node.func.value, depth)
                if inner is not None:
                    inner.how, inner.picked = f"every value of `{self._code(node.func.value)}`", False
                return inner
            served = self._listed_servers(node)  # a helper of the module's own client: `flatten(by_server_lists)`
            if served is not None:
                return served
            returned = self._returned(node)
            if returned is not None:  # `all_tools()`: what the module's helper returns
                inner = self._tools(returned, depth)
                if inner is not None and inner.definition is None:
                    inner.definition = returned
                if inner is not None:
                    inner.how, inner.picked = f"everything `{self._code(node.func)}()` returns", False
                return inner
            return self._imported(node.func, returned=True) or self._listed_servers(node)  # a helper of another module
        return None

    def _listed_servers(self, node: cst.BaseExpression) -> Tools | None:
        """Every tool of MCP servers the module's own client code lists and hands on (a method
        returning them, an attribute gathering them, a parameter given them): `chatbound.analysis.servertools`."""
        if not self.lists_servers:
            return None
        found = self.server_tools.tools(node, self.chat_facts().function_of(self.attaching))
        return Tools([], servers=(self.server_tools.describe(found),), how=JOINED, picked=False) if found else None

    @functools.cached_property
    def server_tools(self) -> servertools.ServerTools:
        return servertools.ServerTools(self.chat_facts())

    @functools.cached_property
    def lists_servers(self) -> bool:
        """Whether the module lists a server's tools (asked once the traversal is over)."""
        return any(frameworks.server_tools(self.imports, c) for c in self.nodes.calls)

    def _imported(self, node: cst.BaseExpression, returned: bool) -> Tools | None:
        """The tool list of another module that `node` names (`ALL_TOOLS`, `registry.TOOLS`), or
        the helper it calls (`all_tools()` of `tools/helpers.py`), as the project pass linked it."""
        project = self.context.project
        parts = dotted(node)
        if project is None or not project.tool_lists or not parts:
            return None
        if self.bindings is None:
            self.bindings = dict(imports_of(self.context.module.code.encode("utf-8")))
        base = self.bindings.get(parts[0])
        if base is None and returned and len(parts) == 2:  # `client.start()` of `client = mcp_client.MCPClient()`
            built = (
                bound_expression(self, node.value)
                if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                else None
            )
            klass = dotted(built.func) if isinstance(built, cst.Call) else None
            base = ".".join((self.bindings[klass[0]], *klass[1:])) if klass and klass[0] in self.bindings else None
        remote = project.tool_lists.get(".".join((base, *parts[1:]))) if base is not None else None
        if remote is None or remote.summary.returned is not returned:
            return None
        what = f"everything `{'.'.join(parts)}()` returns" if returned else f"`{'.'.join(parts)}`"
        return Tools(
            [],
            partial=remote.summary.partial,
            imported=(remote,),
            servers=remote.summary.servers,
            how=f"{what}, built in `{remote.place.path}`",
            picked=False,
        )

    # --- one finding per tool list ----------------------------------------------------

    def leave_Module(self, original_node: cst.Module) -> None:
        attached = []  # (where to report, tools, work tools, call, routes, the list's identity)
        for call, argument, value in [*self.arguments, *(e for c in self.spread for e in self._spread_tools(c))]:
            self.attaching = call
            tools = self._tools(value)
            if tools is None or tools.elements is None:
                continue  # a size the module does not show is never guessed from a name
            routes = len([e for e in tools.elements if self._routes(e)]) + sum(r.summary.routes for r in tools.imported)
            count = (
                len(tools.elements)
                - routes
                + sum(r.summary.work + r.summary.routes for r in tools.imported)
                + sum(server.tools for server in tools.served)
            )
            key = id(tools.definition) if tools.definition is not None else id(argument)
            attached.append((argument, tools, count, call, routes, key))
        for agent, functions in self.agent_tools.items():
            bound = bound_expression(self, self.agent_names[agent])
            if isinstance(bound, cst.Call) and callee_name(bound).endswith("Agent"):
                routes = sum(self._delegates(f) for f in functions)
                tools = Tools(list(f.name for f in functions), how=f"every `@{agent}.tool` function")
                attached.append((bound, tools, len(functions) - routes, bound, routes, id(bound)))
        # different sets of two or more tools for different calls: the tools are already split
        split = len({self._signature(tools) for _, tools, count, *_ in attached if count > 1}) > 1
        reported: set[int] = set()
        for node, tools, count, call, routes, key in attached:
            if key in reported or (count < self.limit and not tools.servers):
                continue
            if (
                tools.picked
                and not tools.servers
                and not tools.served
                and (split or self._toolkit(tools, original_node))
            ):
                continue  # a set chosen for one job, not every tool the app has
            reported.add(key)
            self._report(node, tools, count, call, routes)
        if self.lists_servers and self.may_chat():
            self._described_servers()

    # --- every tool of MCP servers described in a system prompt ---------------------------

    def _described_servers(self) -> None:
        """Report where every tool of MCP servers is written into a system prompt a model is
        sent (`"\\n".join(t.format_for_llm() for t in all_tools)` in the system message)."""
        facts = self.chat_facts()
        prompts = [
            (content, flow.site)
            for flow in facts.flows()
            for definition in flow.history.definitions
            if isinstance(definition, cst.CSTNode)
            for content in _system_contents(definition)
        ]
        for site, sink in facts.sites():
            for arg in sink.content:
                value = bound_expression(self, arg) if isinstance(arg, cst.Name) else arg
                prompts += [(content, site) for content in _system_contents(value)] if value is not None else []
            system = keyword(site, "system")
            prompts += [(system.value, site)] if system is not None else []
        reported: set[int] = set()
        for content, site in prompts:
            self.attaching = site
            found = self._description(content)
            if found is None or id(found[0]) in reported:
                continue
            reported.add(id(found[0]))
            described, tools = found
            servers = " and ".join(dict.fromkeys(tools.servers))
            self.report(
                described,
                f"{servers[0].upper()}{servers[1:]} {'are' if len(tools.servers) > 1 else 'is'} described in the "
                f"system prompt of every request by `{self._call_name(site)}(...)` (how many tools the server offers "
                f"is known only when it runs); each request pays for every description (max-tools is {self.limit}).",
                suggestion=frameworks.SERVER_TOOLS_ADVICE,
                related=[self.related(site, "the model call the system prompt is sent with")],
            )

    def _description(self, expr: cst.BaseExpression, depth: int = 0) -> tuple[cst.Call, Tools] | None:
        """The `join` that writes every tool of MCP servers into `expr` (through names, f-strings,
        `+` and `.format(...)`), with those tools; None when `expr` holds no such text."""
        if depth > 6:
            return None
        parts: list[cst.BaseExpression] = []
        if isinstance(expr, cst.Name):
            bound = bound_expression(self, expr) or grown_from(self, expr)
            parts = [bound] if bound is not None else []
        elif isinstance(expr, cst.FormattedString):
            parts = [p.expression for p in expr.parts if isinstance(p, cst.FormattedStringExpression)]
        elif isinstance(expr, (cst.BinaryOperation, cst.ConcatenatedString)):
            parts = [expr.left, expr.right]
        elif isinstance(expr, cst.Call) and callee_name(expr) == "join" and expr.args:
            joined = expr.args[0].value
            listed = (
                joined.for_in.iter
                if isinstance(joined, (cst.ListComp, cst.GeneratorExp)) and not joined.for_in.ifs
                else joined
            )
            tools = self._tools(listed) if isinstance(listed, (cst.Name, cst.Attribute, cst.Await, cst.Call)) else None
            return (expr, tools) if tools is not None and tools.servers else None
        elif isinstance(expr, cst.Call) and callee_name(expr) == "format" and isinstance(expr.func, cst.Attribute):
            parts = [expr.func.value, *(a.value for a in expr.args)]
        for part in parts:
            found = self._description(part, depth + 1)
            if found is not None:
                return found
        return None

    def _signature(self, tools: Tools) -> frozenset[str]:
        """What a set holds, to tell two sets apart (the same list attached twice is one)."""
        return frozenset(self._code(e) for e in tools.elements or []) | frozenset(
            f"{r.place.path}:{r.place.span.line}" for r in tools.imported
        )

    def _toolkit(self, tools: Tools, module: cst.Module) -> str | None:
        """The one object most of the tools act on (a browser, a database pool, the run's state):
        a toolkit for one job; None when the tools share none."""
        if self.resources is None:
            self.resources = toollists.resources(module)
        work = [e for e in tools.elements or [] if not self._routes(e)]
        return toollists.shared_object([self._objects(e) for e in work])

    def _objects(self, element: cst.BaseExpression, depth: int = 0) -> set[str]:
        """The objects a tool acts on: what its function works on, or the objects its
        constructor is given (`VisitTool(browser)`)."""
        if isinstance(element, cst.Name) and depth < 2:
            function = self.functions.get(element.value)
            if function is not None:
                found = toollists.acts_on(function, frameworks.TOOL_CONTEXT)
                return {o for o in found if o in self.resources or "." in o}
            bound = bound_expression(self, element)
            return self._objects(bound, depth + 1) if isinstance(bound, cst.Call) else set()
        if isinstance(element, cst.Call):
            found = set()
            for argument in (
                a.value
                for a in element.args
                if isinstance(a.value, cst.Name) and a.value.value not in ("None", "True", "False")
            ):
                function = self.functions.get(argument.value)
                found |= self._objects(argument, depth + 1) if function is not None else {argument.value}
            return found
        return set()

    def _served_here(self, server: cst.Call) -> Tools | None:
        """The tools of an MCP server whose source this module holds: a script its parameters
        run with `python -c SCRIPT` (a text, or what a function of the module returns), counted
        by the functions it registers (`@mcp.tool`). None when the server's source is elsewhere."""
        params = server.args[0].value if server.args else None
        params = bound_expression(self, params) if isinstance(params, cst.Name) else params
        args = (
            next((a.value for a in params.args if a.keyword and a.keyword.value == "args"), None)
            if isinstance(params, cst.Call)
            else None
        )
        items = [e.value for e in args.elements] if isinstance(args, (cst.List, cst.Tuple)) else []
        flag = next(
            (i for i, item in enumerate(items) if isinstance(item, cst.SimpleString) and item.evaluated_value == "-c"),
            None,
        )
        if flag is None or flag + 1 >= len(items):
            return None
        script = items[flag + 1]
        if isinstance(script, cst.Call):
            script = self._returned(script) or script
        text = text_of(self, script)
        tools = toollists.registered_tools(text.value) if text is not None and not text.partial else None
        if tools is None:
            return None
        return Tools([cst.Name(name) for name in tools], how="every tool of the server script it runs", picked=False)

    def _toolset(self, element: cst.BaseExpression) -> tuple[str, cst.Call] | None:
        """How an element that stands for every tool of a server (an MCP toolset) reads, and the
        call that makes the toolset; None when it is no such element."""
        bound = element
        if isinstance(element, cst.Name):
            bound = bound_expression(self, element) or self._held(element)  # `async with MCPServerStdio(...) as s`
        server = frameworks.toolset(self.imports, bound) if isinstance(bound, cst.Call) else None
        return (server, bound) if server is not None else None

    def _words(self, node: cst.CSTNode, depth: int = 0) -> list[str]:
        """The texts written in a toolset's launch parameters (`'npx', ['-y', PACKAGE]`), through
        names bound once (`params = StdioServerParameters(...)`)."""
        words = []
        for child in walk(node):
            if isinstance(child, cst.SimpleString):
                words.append(child.evaluated_value)
            elif isinstance(child, cst.Name) and depth < 3 and (bound := bound_expression(self, child)) is not None:
                words += self._words(bound, depth + 1)
        return [w for w in words if isinstance(w, str)]

    def _gathered(self, name: cst.Name) -> Tools | None:
        """What a list started empty and grown with every tool of MCP servers holds (`tools.extend((await
        s.list_tools()).tools)` for each session): every tool of each, and what else it is grown with;
        None when nothing it is grown with lists a server's tools, or a part of it is chosen (a
        filtered comprehension)."""
        if not self.lists_servers:
            return None
        scope = self.get_metadata(ScopeProvider, name, None)
        listed, elements, partial = None, [], False
        for site, value in self.nodes.growth_by_name.get(name.value, ()):
            receiver = site.func.value if isinstance(site, cst.Call) else site.target
            if value is None or self.get_metadata(ScopeProvider, receiver, None) is not scope:
                continue
            found = self.server_tools.tools(value, self.chat_facts().function_of(self.attaching))
            if found is not None:
                listed = listed or found
            elif servertools.chosen(value):
                return None
            elif isinstance(site, cst.Call) and callee_name(site) == "append":
                elements.append(value)
            else:
                partial = True
        if listed is None:
            return None
        gathered = self.server_tools.describe(servertools.Listed(listed.call, name.value))
        return Tools(elements, partial=partial, servers=(gathered,), how=JOINED, picked=False)

    def _held(self, name: cst.Name) -> cst.BaseExpression | None:
        """What a name bound once by `with X as name`, or as the first of `name, rest = X`, holds: X."""
        scope = self.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        target = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
        parent = self.get_metadata(ParentNodeProvider, target, None) if isinstance(target, cst.Name) else None
        if isinstance(parent, cst.AsName):
            item = self.get_metadata(ParentNodeProvider, parent, None)
            return item.item if isinstance(item, cst.WithItem) else None
        if isinstance(parent, cst.Element):
            unpacked = self.get_metadata(ParentNodeProvider, parent, None)
            assign = self.get_metadata(ParentNodeProvider, self.get_metadata(ParentNodeProvider, unpacked, None), None)
            if (
                isinstance(unpacked, (cst.Tuple, cst.List))
                and unpacked.elements[0] is parent
                and isinstance(assign, cst.Assign)
            ):
                return assign.value
        return None

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
        work = [e for e in tools.elements or [] if not self._routes(e)]
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
            suggestion=frameworks.SERVER_TOOLS_ADVICE
            if tools.servers or tools.served
            else "Attach only the tools this request can "
            "use: group them by topic or route first, or let a small router pick a few before the call.",
            related=related,
            properties={"tools": count},
        )

    def _code(self, node: cst.CSTNode) -> str:
        return self.context.module.code_for_node(node)

    def _call_name(self, call: cst.Call) -> str:
        name = self.context.module.code_for_node(call.func)
        return name if len(name) <= 60 and "\n" not in name else callee_name(call)

    def _returned(self, call: cst.Call) -> cst.BaseExpression | None:
        """The one value a function of this module returns, for `call` of it."""
        function = self.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if function is None:
            return None
        returns = [n.value for n in walk(function.body) if isinstance(n, cst.Return) and n.value is not None]
        return returns[0] if len(returns) == 1 else None

    def _routes(self, element: cst.BaseExpression) -> bool:
        """A handoff to another agent, not a work tool: an SDK `handoff(...)` /
        `create_handoff_tool(...)`, an agent run as a tool (`AgentTool(agent=...)`,
        `agent.as_tool(...)`), or a function of the module that returns an agent
        (`def transfer_to_sales(): return sales_agent`, the Swarm pattern) or runs one."""
        if isinstance(element, cst.Call):
            return callee_name(element) in ROUTE_CALLS
        function = self.functions.get(element.value) if isinstance(element, cst.Name) else None
        if function is None:
            return False
        returns = [n.value for n in walk(function.body) if isinstance(n, cst.Return) and n.value is not None]
        return (bool(returns) and all(self._is_agent(r) for r in returns)) or self._delegates(function)

    def _delegates(self, function: cst.FunctionDef) -> bool:
        """A tool that runs another agent of the module on its brief (`await billing_agent.run(query)`):
        a route to a specialist, not a work tool."""
        return any(
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value in AGENT_RUNS
            and isinstance(n.func.value, cst.Name)
            and self._is_agent(n.func.value)
            for n in walk(function.body)
        )

    def _is_agent(self, value: cst.BaseExpression) -> bool:
        bound = bound_expression(self, value) if isinstance(value, cst.Name) else value
        return isinstance(bound, cst.Call) and callee_name(bound).endswith("Agent")

    # --- schema tokens, where the schemas can be read --------------------------------

    def _schema_note(self, elements: list[cst.BaseExpression], count: int) -> str:
        schemas = [s for s in (self._schema(e) for e in elements) if s is not None]
        if not schemas:
            return ""
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        total = sum(encoder(json.dumps(s)) for s in schemas)
        encoding = encoder.encoding.removesuffix("_offline")
        readable = "" if len(schemas) == count else f" for the {len(schemas)} readable here"
        return f" (about {total} schema tokens{readable}, {encoding})"

    def _function(self, name: str) -> cst.FunctionDef | None:
        """A function of this file, or of a sibling file it is imported from (read, not run)."""
        if name in self.functions:
            return self.functions[name]
        if name not in self.imported or not self.context.directory:
            return None
        path, original = self.imported[name]
        if path not in self.sibling_functions:
            self.sibling_functions[path] = {}
            text = read_data_file(self.context.directory, path)
            if text is not None:
                self.context.data_files.append(os.path.normpath(os.path.join(self.context.directory, path)))
                try:
                    module = cst.parse_module(text)
                except Exception:  # a sibling that does not parse only loses its schema tokens
                    module = None
                if module is not None:
                    self.sibling_functions[path] = {
                        s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)
                    }
        return self.sibling_functions[path].get(original)

    def _schema(self, node: cst.BaseExpression | cst.Name) -> dict | None:
        if isinstance(node, cst.Name):
            function = self._function(node.value)
            if function is not None:
                return function_schema(function)
            bound = bound_expression(self, node)
            return self._schema(bound) if bound is not None else None
        if isinstance(node, cst.Call):
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if positional and isinstance(positional[0], cst.Name):
                function = self._function(positional[0].value)  # _schema(fn), Tool.from_function(fn)
                return function_schema(function) if function is not None else None
            return None
        if isinstance(node, cst.Dict):
            try:
                return ast.literal_eval(self.context.module.code_for_node(node))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
        return None


def _system_contents(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The contents of the system messages written in `node` (`{"role": "system", "content": ...}`)."""
    return [
        element.value
        for message in walk(node)
        if isinstance(message, cst.Dict) and role_of(message) == "system"
        for element in message.elements
        if isinstance(element, cst.DictElement)
        and isinstance(element.key, cst.SimpleString)
        and element.key.evaluated_value == "content"
    ]


def function_schema(function: cst.FunctionDef) -> dict:
    """The JSON schema an SDK derives from a Python function: name, docstring, typed parameters."""
    properties, required = {}, []
    for param in function.params.params:
        if param.name.value in ("self", "cls", "ctx", "context"):
            continue
        annotation = param.annotation.annotation if param.annotation is not None else None
        kind = annotation.value if isinstance(annotation, cst.Name) else ""
        properties[param.name.value] = {"type": PY_TYPES.get(kind, "string")}
        if param.default is None:
            required.append(param.name.value)
    return {
        "type": "function",
        "function": {
            "name": function.name.value,
            "description": function.get_docstring() or "",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }
