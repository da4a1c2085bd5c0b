"""Near misses: code that shares a rule's names but not its dataflow is never a finding.

Each case has the words a finding would have (a history, a handoff verb, a catch-all tool list,
a wide retrieval, a system prompt) without what makes one (growth, a model that receives it,
a size the module shows). A name may narrow where a rule looks; it never decides."""

from __future__ import annotations

import pytest

from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

LONG = "Answer politely and cite the policy section you used. " * 300

NEAR_MISSES = {
    "MEMORY-UNBOUNDED-HISTORY": {
        "a history that grows but only reaches the screen": (
            "history = []\ndef turn(q):\n    history.append({'role': 'user', 'content': q})\n    print(history)\n"
        ),
        "one document picked from a growing list of documents (next of a filter)": (
            "class Index:\n"
            "    def __init__(self):\n"
            "        self.documents = []\n"
            "    def add(self, doc_id, content):\n"
            "        self.documents.append({'id': doc_id, 'content': content})\n"
            "    def ask(self, doc_id, q):\n"
            "        text = next(d['content'] for d in self.documents if d['id'] == doc_id)\n"
            "        return client.messages.create(model='m', max_tokens=500, messages=[{'role': 'user', 'content': f'{text}\\n{q}'}])\n"
        ),
        "a list named messages rebuilt on every request": (
            "def turn(q):\n"
            "    messages = [{'role': 'system', 'content': 'Be brief.'}]\n"
            "    messages.append({'role': 'user', 'content': q})\n"
            "    return client.chat.completions.create(model='m', messages=messages)\n"
        ),
        "a chat history kept and sent, cut to its last turns just before the send": (
            "sessions = {}\n"
            "def turn(sid, q):\n"
            "    h = sessions.setdefault(sid, [])\n"
            "    h.append({'role': 'user', 'content': q})\n"
            "    h = h[-10:]\n"
            "    return client.chat.completions.create(model='m', messages=h)\n"
        ),
        "a history cleared under a test of its own size": (
            "history = []\n"
            "def turn(q):\n"
            "    if q == 'reset' or len(history) > 40:\n"
            "        history.clear()\n"
            "    history.append({'role': 'user', 'content': q})\n"
            "    return client.chat.completions.create(model='m', messages=history)\n"
        ),
        "a Mongo collection of documents that are not a chat, read whole into a prompt": (
            "products = MongoClient()['shop']['products']\n"
            "def add_product(name, price):\n"
            "    products.insert_one({'name': name, 'price': price})\n"
            "def ask(q):\n"
            "    items = [f\"{p['name']}: {p['price']}\" for p in products.find({})]\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': str(items) + q}])\n"
        ),
        "a SQL read of every row for a report that never reaches a model": (
            "def report(conn, chat_id, text):\n"
            "    rows = conn.execute('SELECT role, content FROM messages').fetchall()\n"
            "    conn.execute('INSERT INTO messages (chat, role, content) VALUES (?, ?, ?)', (chat_id, 'user', text))\n"
            "    summary = {'messages': len(rows)}\n"
            "    client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': text}])\n"
            "    return summary\n"
        ),
        "a chat history in Redis read whole and sent, but never written by a request": (
            "r = redis.Redis()\n"
            "def ask(uid, q):\n"
            "    h = json.loads(r.get(f'chat:{uid}') or '[]')\n"
            "    return client.chat.completions.create(model='m', messages=h + [{'role': 'user', 'content': q}])\n"
        ),
        "a growing transcript POSTed whole to a service that is no model": (
            "ARCHIVE = 'https://archive.example/api/transcripts'\n"
            "history = []\n"
            "def turn(q):\n"
            "    history.append({'role': 'user', 'content': q})\n"
            "    payload = {'channel': 'support', 'messages': history}\n"
            "    requests.post(ARCHIVE, json=payload)\n"
        ),
        "a growing chat joined into the query of a search tool's run, which is no model": (
            "from langchain_community.tools import DuckDuckGoSearchRun\n"
            "search = DuckDuckGoSearchRun()\n"
            "log = []\n"
            "def turn(q):\n"
            "    log.append({'role': 'user', 'content': q})\n"
            "    return search.run(' '.join(m['content'] for m in log))\n"
        ),
        "a string's find() next to a collection's insert_one()": (
            "def ask(text, q):\n"
            "    at = text.find('history')\n"
            "    log.insert_one({'q': q})\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': text[at:] + q}])\n"
        ),
        "a `previous` parameter of a function another library's `entrypoint` decorates": (
            "from langgraph.graph import add_messages\n"
            "from plugins import entrypoint\n"
            "@entrypoint(checkpointer=store)\n"
            "def turn(entry, *, previous=None):\n"
            "    thread = add_messages(previous or [], entry)\n"
            "    reply = llm.invoke(thread)\n"
            "    return add_messages(thread, reply)\n"
        ),
    },
    "MEMORY-WINDOW-SPLITS-TURN": {
        "a count window over a log that no model receives": (
            "tool_log = []\n"
            "def record(result):\n"
            "    tool_log.append({'role': 'tool', 'content': result})\n"
            "    print(tool_log[-10:])\n"
        ),
        "legacy function results, which name no call, in a count window": (
            "history = []\n"
            "def turn(name, result):\n"
            "    history.append({'role': 'function', 'name': name, 'content': result})\n"
            "    return client.chat.completions.create(model='m', messages=history[-20:], functions=SPECS)\n"
        ),
    },
    "AGENT-OVERSIZED-HANDOFF": {
        "Slack Bolt: the request's context dict to the bot's own dispatch": (
            "class Bot:\n"
            "    def on_message(self, event, context):\n"
            "        context['history'] = context.get('history', [])\n"
            "        return self.dispatch(event=event, context=context)\n"
        ),
        "a parameter named history handed to workers": (
            "import asyncio\n"
            "async def review(workers, history):\n"
            "    return await asyncio.gather(*(w.ainvoke(history) for w in workers))\n"
        ),
        "a growing history forwarded to a router the module does not show": (
            "from .queues import router\n"
            "class Desk:\n"
            "    def __init__(self):\n"
            "        self.history = []\n"
            "    def reply(self, q):\n"
            "        self.history.append({'role': 'user', 'content': q})\n"
            "        router.forward('billing', self.history)\n"
        ),
        "a transcript() of a class of another module": (
            "def handle(assistant, specialist):\n"
            "    return specialist.delegate(context='\\n'.join(str(m) for m in assistant.transcript()))\n"
        ),
    },
    "RAG-EXCESSIVE-TOP-K": {
        "a vector-store test asking for a thousand": (
            "def test_everything(store):\n    assert len(store.similarity_search('q', k=1000)) == 1000\n"
        ),
        "a wide search reranked to four before the prompt": (
            "def answer(q):\n"
            "    docs = store.similarity_search(q, k=40)\n"
            "    docs = reranker.compress_documents(docs, q)\n"
            "    return llm.invoke(f'{docs}\\n{q}')\n"
        ),
        "sorted and cut to five": (
            "def answer(q):\n"
            "    hits = store.similarity_search_with_score(q, k=40)\n"
            "    return llm.invoke(str(sorted(hits, key=lambda h: h[1])[:5]))\n"
        ),
        "a score threshold": (
            "def answer(q):\n"
            "    hits = store.similarity_search_with_relevance_scores(q, k=40)\n"
            "    return llm.invoke(str([d for d, s in hits if s > 0.8]))\n"
        ),
        "results handed to another module": (
            "from .prompting import answer_from\n"
            "def answer(q):\n"
            "    return answer_from(q, store.similarity_search(q, k=20))\n"
        ),
    },
    "TOOLS-ALL-REGISTERED": {
        "a catch-all name imported, its size not shown": (
            "from .registry import ALL_TOOLS\nllm = ChatOpenAI(model='gpt-4o').bind_tools(ALL_TOOLS)\n"
        ),
        "an all_tools() of another module": (
            "from .registry import all_tools\nllm = ChatOpenAI(model='gpt-4o').bind_tools(all_tools())\n"
        ),
        "a router whose tools are handoffs to specialists": (
            "from agents import Agent, handoff\n"
            "billing = Agent(name='billing', tools=[refund, invoice])\n"
            "def transfer_to_billing():\n    return billing\n"
            "router = Agent(name='router', tools=[handoff(billing), transfer_to_billing, lookup, faq, hours])\n"
        ),
        "every tool of an MCP server whose script, run here with python -c, registers two": (
            "from smolagents import CodeAgent, MCPClient\n"
            'SERVER = \'from mcp.server.fastmcp import FastMCP\\nmcp = FastMCP("w")\\n'
            "@mcp.tool()\\ndef today(city): ...\\n@mcp.tool()\\ndef week(city): ...\\nmcp.run()'\n"
            "def ask(q, model):\n"
            "    with MCPClient(StdioServerParameters(command='python', args=['-c', SERVER])) as tools:\n"
            "        return CodeAgent(model=model, tools=tools).run(q)\n"
        ),
        "a coordinator whose tools are agents run as tools": (
            "from google.adk.tools.agent_tool import AgentTool\n"
            "coordinator = LlmAgent(name='coordinator', tools=[AgentTool(agent=research), AgentTool(agent=writer),\n"
            "    AgentTool(agent=critic), AgentTool(agent=editor), save_draft])\n"
        ),
    },
    "MEMORY-SHARED-ACROSS-USERS": {
        "a module list grown by a click command: one user per process": (
            "import click\nhistory = []\n"
            "@click.group()\ndef cli():\n    pass\n"
            "@cli.command()\n@click.argument('q')\ndef ask(q):\n"
            "    history.append({'role': 'user', 'content': q})\n"
            "    print(client.chat.completions.create(model='m', messages=history))\n"
        ),
        "a route growing a module-level log it never sends": (
            "log = []\nclient = OpenAI()\n@app.post('/chat')\ndef chat(q: str):\n"
            "    log.append({'role': 'user', 'content': q})\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}])\n"
        ),
        "a route sending a module-level list of examples it never grows": (
            "EXAMPLES = [{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'hello'}]\n"
            "@app.get('/greet')\ndef greet(q: str):\n"
            "    return client.chat.completions.create(model='m', messages=EXAMPLES + [{'role': 'user', 'content': q}])\n"
        ),
        "a cache decorator whose verb is get, over a function that keeps a module list": (
            "history = []\n@cache.get('answers')\ndef answer(q):\n"
            "    history.append({'role': 'user', 'content': q})\n"
            "    return client.chat.completions.create(model='m', messages=history)\n"
        ),
    },
    "RAG-CHUNKS-IN-HISTORY": {
        "chunks in a system message built for this call, the history keeping the question": (
            "history = []\ndef ask(q):\n    docs = store.similarity_search(q, k=4)\n"
            "    system = {'role': 'system', 'content': '\\n'.join(d.page_content for d in docs)}\n"
            "    reply = client.chat.completions.create(model='m', messages=[system, *history, {'role': 'user', 'content': q}])\n"
            "    history.append({'role': 'user', 'content': q})\n"
        ),
        "only how many chunks were found is stored": (
            "history = []\ndef ask(q):\n    docs = store.similarity_search(q, k=4)\n"
            "    history.append({'role': 'user', 'content': f'{q} ({len(docs)} notes found)'})\n"
            "    return client.chat.completions.create(model='m', messages=history)\n"
        ),
        "chunks stored in a list no model is sent": (
            "seen = []\ndef ask(q):\n    docs = store.similarity_search(q, k=4)\n"
            "    seen.append({'role': 'user', 'content': str(docs)})\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}])\n"
        ),
        "a search that is not retrieval: a method called invoke on a chain": (
            "history = []\ndef ask(q):\n    summary = chain.invoke({'q': q})\n"
            "    history.append({'role': 'user', 'content': f'{summary} {q}'})\n"
            "    return client.chat.completions.create(model='m', messages=history)\n"
        ),
    },
    "PROMPT-OVERSIZED-SYSTEM": {
        "a parameter named system_prompt": (
            "def ask(client, system_prompt, q):\n"
            "    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system_prompt}])\n"
        ),
        "a long text in a docstring about the system prompt": f'"""The system prompt: {LONG}"""\n',
        "a constant named SYSTEM_PROMPT that is only printed": f'SYSTEM_PROMPT = """{LONG}"""\nprint(SYSTEM_PROMPT)\n',
        "an ADK agent run as a tool of the app's coordinator": (
            "from google.adk.agents import LlmAgent\n"
            "from google.adk.tools.agent_tool import AgentTool\n"
            f"analyst = LlmAgent(name='analyst', instruction={LONG!r})\n"
            "root_agent = LlmAgent(name='coordinator', instruction='Route.', tools=[AgentTool(agent=analyst)])\n"
        ),
    },
}
RULES = {rule.ID: rule for rule in all_rules()}
CASES = [(rule_id, name, code) for rule_id, cases in NEAR_MISSES.items() for name, code in cases.items()]


def test_every_rule_has_near_misses():
    assert set(NEAR_MISSES) == set(RULES)


@pytest.mark.parametrize("rule_id, name, code", CASES, ids=[f"{r}: {n}" for r, n, _ in CASES])
def test_a_near_miss_is_not_a_finding(rule_id, name, code):
    result = analyze_source(code, "app.py", [RULES[rule_id]], {})
    assert result.error is None
    assert result.findings == []
