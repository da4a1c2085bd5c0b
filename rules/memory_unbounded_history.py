"""MEMORY-UNBOUNDED-HISTORY: a chat history that outlives the request, grows every turn and
is sent whole to a model."""

from __future__ import annotations

import libcst as cst

from chatbound import databases, frameworks
from chatbound.analysis.chat import ChatRule, may_chat_tree
from chatbound.analysis.histories import ChatFacts, Flow
from chatbound.analysis.histories.expiring import expiry_of, expiry_sentence
from chatbound.analysis.histories.growth import growth_label
from chatbound.analysis.rule import Invalid, Related
from chatbound.findings import Severity
from chatbound.syntax.messages import callee_name, is_whole_slice
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.sinks import triggers
from chatbound.vocabulary.summaries import Place

COST = "so turn N re-sends all N-1 earlier turns: tokens per session grow with the square of its length"
KIND = {
    "attribute": "an attribute that lives as long as its object",
    "module": "a module-level name shared by every request",
    "entry": "a per-session entry of a long-lived dict",
    "session": "session state kept between requests",
    "gradio": "Gradio's chat history, which the UI grows every turn",
    "loop": "a list kept across the iterations of the chat loop",
    "closure": "a variable the chat function closes over, kept between its calls",
    "stored": "loaded from a store and saved back whole on every call",
    "database": "read back whole on every call",
}


def _sent_inside(facts: ChatFacts, flow: Flow, grown: bool = False) -> cst.CSTNode | None:
    """The argument of the model call inside the function `flow.site` calls that sends the list
    it is given and returns (`reply, h = ask(q, h)`), or, `grown`, the list itself where that
    function adds to it in place and sends it (`take_turn(self.history, text)`), or None."""
    for function in facts.callees(flow.site):
        kept = facts.grown_params(function) if grown else facts.returned_params(function)
        for param, sink in facts.sent_params(function):
            for arg in sink.content if param in kept else ():
                for use in facts.whole_history_in(arg):
                    if use.storage.kind == "param" and use.storage.label == param:
                        return use.node if grown else arg
    return None


def _grown_elsewhere(facts: ChatFacts, flow: Flow) -> bool:
    """`take_turn(self.history, text)` where take_turn, in another module, adds to the list it
    is given and sends it: a view passed in here would stop the history growing."""
    remote = facts.imported_function(flow.site) if flow.elsewhere else None
    if remote is None:
        return False
    for param, _ in remote.grows:
        argument = facts.passed_on(flow.site, remote.params, param)
        if argument is not None and facts.inside(flow.use.node, argument):
            return True
    return False


class MemoryUnboundedHistory(ChatRule):
    r"""
    ## What it does
    Flags a chat history that outlives the request, grows every turn and reaches a model
    whole, with no bound on the way.

    All three must hold:

    - It outlives the request: a `self`/`cls` attribute or a dataclass or pydantic field, a
      module-level name, a per-session dict entry such as `sessions[sid]`,
      `store.setdefault(sid, [])` or a local alias of one (also `h = d.get(k)` /
      `if h is None: h = d[k] = []`), Streamlit `st.session_state`, Chainlit
      `cl.user_session`, Flask/Django `session`, Gradio's chat history, a list kept across a
      chat loop (also one a function grows, sends and hands back each turn:
      `reply, h = ask(q, h)`, where the fix bounds the send inside `ask`), a variable a chat function nested in another grows (a closure's state; one
      it only reads, a streaming generator made per request, is the outer call's value), an attribute read through a
      `@property`, or a list loaded from a module-level store and saved back whole (Redis, a
      JSON file).
    - Or it is kept in a database that one request reads whole and writes the new turn back
      to: a MongoDB document's list (`find_one(...)["history"]` set back with `$set` or grown
      with `$push`) or a collection of turn documents (`find(...)` and `insert_one`), a Redis
      list or document (`lrange(key, 0, -1)` and `rpush`, `get` and `set`), a SQL table read
      with a `SELECT` that has no `LIMIT` and written with an `INSERT`, a SQLAlchemy
      `select(Model)` or a Django `Model.objects.filter(...)` with new rows added. The read and
      the write may sit in a repository module (`db.get_dialog_messages(uid)` ...
      `db.set_dialog_messages(uid, old + [new])`): the finding names the store.
    - It grows every turn: `append`, `extend`, `insert`, `+=`, `h = h + [...]`,
      `add_user_message`, or a helper that appends.
    - The whole of it reaches a model with no bound on the way: as `messages=`, `input=` or
      `contents=`, inside `[system, *history]`, through a comprehension or a copy, or joined
      into the prompt text. A model is an SDK's chat call, an agent's run, or a raw HTTP POST
      (requests, httpx, aiohttp) to a chat endpoint (`/chat/completions`, `/v1/messages`,
      `:generateContent`, Ollama's `/api/chat`; the URL a literal, an f-string or a constant)
      whose JSON body carries the history. A slice that drops a fixed few (`history[2:]`)
      still grows every turn, and the message says so.

    It also flags memories that keep everything, where they are built:
    `ConversationBufferMemory`, `RunnableWithMessageHistory` without a trimmer, Agents SDK
    sessions without a limit, google-genai chats kept per session, and Responses API
    `previous_response_id` chains without `truncation="auto"` or server-side compaction
    (`context_management=[{"type": "compaction", "compact_threshold": N}]`).

    Not flagged: a slice at or before the send (`history[-20:]`, or `h = h[-20:]` just before
    it), `deque(maxlen=...)`, in-place trimming (a `clear()` or reset counts only under a test
    of the history's own size: `len(q) == 0` of the user's text bounds nothing), a hard stop
    (every growth refused once the history is past a size: `if len(h) >= N: raise ...` before
    it, or under a helper that answers False past N; a size test that only warns bounds
    nothing), token budgets, `trim_messages`, summarize-and-keep-recent, windowed or
    summarizing memories, a list rebuilt per request (tool loops and fixed `range(N)` rounds
    included, also when a helper sends it), a helper that picks messages in a loop that stops
    early (a token budget), a history only displayed or stored, and lists that are not chat:
    a list filled item by item from another collection that is neither a request's turns nor a
    model's reply, and resent by no model call inside that loop (documents read in a loop over
    files, graded retrieval results, the tools an MCP server lists on connect), a loop at a
    script's top level that neither reads input, adds messages nor sends the list inside it
    (it runs once), and messages set afresh per query that grow only in a walk over one reply
    (`for block in response.content`: a tool loop).
    A database read of only the newest N is bounded: `LIMIT N`, `.limit(N)`, `to_list(N)`, a
    `[:N]` queryset slice, `lrange(key, -N, -1)`, a `{"$slice": -N}` projection, as is a store
    that trims itself (`ltrim`, `$push` with `$slice`) or a tail written back; a store read
    whole that no request writes to (a catalog, a report) is not a history.

    Across modules (docs/project-model.md): a history handed to a function of another module
    that sends it whole, or returned whole by a class of another module that grows it and never
    trims it, is flagged where it is sent, with the places in the other module (the model
    call, the definition, the growth) as related locations.

    The finding points at the history expression in the call, with the definition and every
    growth site as related locations. It carries a cost projection: the tokens sent at turn 50
    and over the session, as written and with a bounded window (`chatbound cost` shows more).

    ## Why is this bad?
    Every call pays for every earlier message again. Turn N re-sends N-1 turns, so a session's
    input tokens grow with the square of its length, latency grows with it, and one day the
    context window overflows and the chat fails. Memory is what you send the model; the
    history the user sees can stay intact elsewhere.

    ## Example
    ```python
    class Assistant:
        def __init__(self, client):
            self.client = client
            self.messages = []

        def ask(self, text):
            self.messages.append({"role": "user", "content": text})
            reply = self.client.chat.completions.create(model="gpt-4o", messages=self.messages)
            self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
            return reply
    ```
    chatbound reports it where the whole history is sent:
    ```text
    app.py:8:78: MEMORY-UNBOUNDED-HISTORY `self.messages` is an attribute that lives as long as its object, grows every turn by `append()` (lines 7, 9) and is sent whole to openai.chat.completions.create, so turn N re-sends all N-1 earlier turns: tokens per session grow with the square of its length.
    ```

    ## Use instead
    ```python
    from chatbound.compaction import bounded_view

    class Assistant:
        def __init__(self, client):
            self.client = client
            self.messages = []

        def ask(self, text):
            self.messages.append({"role": "user", "content": text})
            reply = self.client.chat.completions.create(
                model="gpt-4o", messages=bounded_view(self.messages, last_turns=10)
            )
            self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
            return reply
    ```
    The history stays intact; only the last whole turns (and the system message) are sent.

    ## Fix
    Safe, for a history kept in a list: the history is wrapped *at the send* in
    `bounded_view(<history>, last_turns=10)`, and `from chatbound.compaction import
    bounded_view` is added once. The stored list is untouched; the view keeps the system
    prompt and whole turns. The fix also adds `chatbound-compaction>=0.1.0` to the project's
    runtime dependencies (PEP 621, Poetry or the runtime requirements file); where it cannot
    tell which declaration the runtime installs, the fix is unsafe and says what to add where.

    - Where the code shows items `bounded_view` cannot read, the send gets a plain tail, also
      safe: records such as `{"author": ..., "text": ...}` rendered into text are sent as
      `log[-20:]` (a record is no turn, so none is split), and a history that is one growing
      string as `story[-8000:]` (its last characters; the first line sent may start
      mid-sentence).
    - When the send is text that a function of the file renders (`prompt=self.render()`), the
      history is wrapped where that function reads it, if the function is called only there.
    - A history the code does not show is wrapped only where it is sent as the messages
      themselves, not where it is joined into text.

    A framework memory gets the framework's own bound, safe because the stored history stays
    whole and only what is sent is bounded (each checked against the SDK's source and run
    against it):

    - LangChain `ConversationBufferMemory(...)` becomes `ConversationBufferWindowMemory(k=10, ...)`.
    - LangChain `RunnableWithMessageHistory(chain, ...)` gets
      `RunnablePassthrough.assign(history=itemgetter("history") | trim_messages(...,
      start_on="human", include_system=True)) | chain`.
    - An Agents SDK `SQLiteSession(...)` gets `session_settings=SessionSettings(limit=40)`.
    - A LlamaIndex list is sent as `ChatMemoryBuffer.from_defaults(token_limit=3000,
      chat_history=list(h)).get()`: a copy, since the buffer appends to the list it is given;
      a system message first stays first.
    - A Semantic Kernel `ChatHistory` is sent as a `ChatHistoryTruncationReducer(target_count=20,
      ...)` copy, reduced before the call.
    - Pydantic AI gets `message_history=bounded_view(h, last_turns=10)`, and a store
      `h = result.all_messages()` becomes `h = [*h, *result.new_messages()]`
      (`all_messages()` would return the bounded history that was sent).
    - An Agents SDK input list fed back by hand is sent through `bounded_view` and stored as
      `items + result.to_input_list()[len(result.input):]`; a list the app grows with its own
      messages (a Streamlit page's chat) is sent through `bounded_view` (the runner copies its
      input, the list keeps every message).
    - A Responses API `previous_response_id` chain gets `truncation="auto"`: the server drops
      the oldest items once the chain outgrows the context window instead of failing with a
      400. Cost still grows until then, so the message names the lower bounds you add by hand:
      server-side compaction, `context_management=[{"type": "compaction",
      "compact_threshold": 20000}]` (the model sees an opaque compaction item instead of the
      earlier turns; not every model takes it), or turns kept yourself and sent as a bounded
      `input`.
    - An AutoGen AgentChat `AssistantAgent` kept between runs gets
      `model_context=BufferedChatCompletionContext(buffer_size=20)` (it keeps every message and
      sends the last 20, dropping a leading function result; not the token-limited context,
      which drops messages from the middle and can separate a call from its result).
    - A Google ADK runner's runs get `run_config=RunConfig(get_session_config=
      GetSessionConfig(num_recent_events=50))`, unsafe (the window may start inside a turn),
      and only where the project requires google-adk 1.27 or later (its pin, lock file or `>=`
      floor): older versions have no such field and refuse unknown ones, so the message then
      gives advice naming the version it read, or says that none is declared.
    - smolagents `agent.run(..., reset=False)` gets advice, not an edit: each call is rebuilt
      from `agent.memory.steps` (smolagents 1.26 `write_memory_to_messages`) and the library
      has no setting that sends fewer steps while keeping them, so any bound deletes steps the
      agent keeps (`run(return_full_result=True)`, `replay()` and the project's own code read
      them): a pruning step callback is the project's decision.
    - A google-genai or google-generativeai chat kept per session (the chat is the store and
      takes no limit) gets its own history trimmed before each send:
      `chat.get_history(curated=True)[:] = bounded_view(chat.get_history(curated=True),
      last_turns=10)` (google-genai >= 1.5) or `chat.history = bounded_view(chat.history,
      last_turns=10)`. The chat then keeps only those turns, so the edit is safe only when
      the module never reads a chat's history back, and unsafe otherwise.

    ## Frameworks covered
    Model calls of OpenAI (chat completions and Responses; sync, async and Azure), Anthropic,
    LiteLLM, LangChain chat models and chains, LlamaIndex, google-genai, Mistral, Cohere,
    Ollama, Bedrock `converse`, the OpenAI Agents SDK, Pydantic AI and Semantic Kernel.
    Session state of Streamlit, Chainlit, Flask, Django and Gradio. Histories kept in MongoDB
    (pymongo, motor), Redis (redis-py), SQL through any DB-API driver or SQLAlchemy, and the
    SQLAlchemy and Django ORMs (`chatbound.databases`, one module per store). Memories of LangChain,
    the OpenAI Agents SDK, google-genai chats and Responses API chains. Fixes read the message
    shapes of openai, anthropic, litellm, mistral, ollama, groq, Cohere, Bedrock Converse,
    google-genai `contents`, Hugging Face, AutoGen and LangChain message lists, and text lines
    joined into a prompt.

    Frameworks that keep the conversation themselves are modelled one module each: [Frameworks](https://github.com/chatbound/chatbound/blob/main/docs/frameworks.md)
    lists what each is checked for under this rule, what counts as bounded, and the versions
    checked.
    """

    ID = "MEMORY-UNBOUNDED-HISTORY"
    TRIGGERS = (*triggers(), *frameworks.TRIGGERS)  # the shape of a model call, a chat memory or a framework's
    CROSS_MODULE = True  # a history sent by a function of another module, or kept by one

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """Most files with a model call's shape in their text (a library's `def create(...,
        messages=...)`) call nothing that may chat: not worth a LibCST parse."""
        return may_chat_tree(tree)

    NAME = "memory-unbounded-history"
    SEVERITY = Severity.HIGH
    SUMMARY = "A chat history grows every turn and is sent whole to the model on every call."
    TAGS = ("cost", "llm", "memory")

    VALID = [
        # a slice at the send: the last 20 messages, whatever the list holds
        """\
class Bot:
    def __init__(self, client):
        self.client, self.messages = client, []

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=[SYSTEM, *self.messages[-20:]])
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
        # deque(maxlen=N) per session
        """\
from collections import defaultdict, deque
recent = defaultdict(lambda: deque(maxlen=20))

async def on_message(channel, text):
    history = recent[channel]
    history.append({"role": "user", "content": text})
    reply = await claude.messages.create(model="claude-3-5-haiku-latest", max_tokens=300, messages=list(history))
""",
        # in-place trimming after growth
        """\
HISTORY = []

def chat(text):
    HISTORY.append({"role": "user", "content": text})
    del HISTORY[:-12]
    return client.chat.completions.create(model="gpt-4o-mini", messages=HISTORY)
""",
        """\
class Coach:
    def turn(self, text):
        self.turns.append({"role": "user", "content": text})
        self.turns[:] = self.turns[-KEEP:]
        return co.chat(model="command-r", messages=self.turns)
""",
        """\
class Coach:
    def turn(self, text):
        self.turns.append({"role": "user", "content": text})
        self.turns = self.turns[-KEEP:]
        return co.chat(model="command-r", messages=self.turns)
""",
        """\
class Console:
    def _add(self, role, text):
        self.turns.append({"role": role, "content": text})
        while len(self.turns) > MAX_TURNS:
            self.turns.pop(0)

    def ask(self, text):
        self._add("user", text)
        return mistral.chat.complete(model="mistral-small-latest", messages=self.turns)
""",
        # a hard stop: the conversation ends at MAX_MESSAGES instead of growing
        """\
@app.post("/tickets/{ticket_id}/reply")
def reply(ticket_id: str, text: str):
    thread = tickets[ticket_id]
    if len(thread) >= MAX_MESSAGES:
        raise HTTPException(409, "conversation full, open a new ticket")
    thread.append({"role": "user", "content": text})
    return client.messages.create(model=MODEL, max_tokens=800, messages=thread)
""",
        # a token budget
        """\
def reply(history, text):
    history.append({"role": "user", "parts": [text]})
    while count_tokens(history) > BUDGET:
        history.pop(0)
    return model.generate_content(history)
""",
        # summary and keep recent
        """\
class Tutor:
    def ask(self, text):
        self.recent.append({"role": "user", "content": text})
        if len(self.recent) > 12:
            self.summary = summarize(self.summary, self.recent[:-4])
            self.recent = self.recent[-4:]
        system = {"role": "system", "content": f"Summary so far: {self.summary}"}
        return client.chat.completions.create(model="gpt-4o", messages=[system, *self.recent])
""",
        # trim_messages at the send (LangChain, LiteLLM)
        """\
from langchain_core.messages import trim_messages
class Agent:
    def ask(self, text):
        self.messages.append(HumanMessage(text))
        window = trim_messages(self.messages, max_tokens=2000, token_counter=llm, start_on="human")
        return llm.invoke(window)
""",
        """\
import litellm
from litellm.utils import trim_messages
SESSIONS = {}
async def answer(sid, text):
    history = SESSIONS.setdefault(sid, [])
    history.append({"role": "user", "content": text})
    return await litellm.acompletion(model="gpt-4o", messages=trim_messages(history, model="gpt-4o"))
""",
        # a private helper that windows
        """\
class Clinic:
    def _context(self):
        return [SYSTEM, *self.history[-self.max_messages:]]

    def ask(self, text):
        self.history.append({"role": "user", "content": text})
        return self.client.chat.completions.create(model="gpt-4o", messages=self._context())
""",
        # chatbound's own bounded view
        """\
from chatbound.compaction import bounded_view
class Onboarding:
    def ask(self, text):
        self.history.append({"role": "user", "content": text})
        return self.client.chat.completions.create(model="gpt-4o", messages=bounded_view(self.history, last_turns=8))
""",
        # a list rebuilt per request, with a tool loop inside the request
        """\
@app.post("/refunds")
def decide(body):
    messages = [{"role": "user", "content": body["reason"]}]
    for _ in range(5):
        response = client.messages.create(model="claude-3-5-sonnet-latest", max_tokens=800, tools=TOOLS, messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return response
        messages.append({"role": "user", "content": run_tools(response)})
""",
        """\
class Worker:
    def run(self, job):
        self.messages = [SYSTEM, {"role": "user", "content": job}]
        while True:
            reply = self.client.chat.completions.create(model="gpt-4o", messages=self.messages, tools=TOOLS)
            self.messages.append(reply.choices[0].message)
            if not reply.choices[0].message.tool_calls:
                return reply
            self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})
""",
        # a token budget in a module helper: the loop stops once the budget is spent
        """\
history = []

def fit(messages):
    out, used = [], 0
    for m in reversed(messages):
        used += count_tokens(m)
        if used > BUDGET:
            break
        out.insert(0, m)
    return out

def ask(q):
    history.append({"role": "user", "content": q})
    return client.chat.completions.create(model="gpt-4o", messages=fit(history))
""",
        # a fixed number of rounds inside one call, on a list set afresh
        """\
class Summarizer:
    def summarize(self, doc):
        self.messages = [{"role": "user", "content": doc}]
        for _ in range(3):
            r = client.chat.completions.create(model="gpt-4o", messages=self.messages)
            self.messages.append({"role": "assistant", "content": r.choices[0].message.content})
            self.messages.append({"role": "user", "content": "Shorter."})
""",
        # sent by a helper whose only caller sets the list afresh first
        """\
class Debate:
    def _speak(self):
        return client.messages.create(model=MODEL, max_tokens=300, messages=self.transcript)

    def run(self, topic):
        self.transcript = [{"role": "user", "content": topic}]
        for _ in range(ROUNDS):
            self.transcript.append({"role": "assistant", "content": self._speak().content[0].text})
            self.transcript.append({"role": "user", "content": "Respond to that."})
""",
        # loaded from a store, saved back with only the last 20 messages
        """\
def chat(uid, text):
    history = json.loads(store.get(uid) or "[]")
    history.append({"role": "user", "content": text})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    store.set(uid, json.dumps(history[-20:]))
""",
        # a database read of only the newest turns (MongoDB .limit, Redis lrange tail, SQL LIMIT)
        """\
def ask(uid, q):
    newest = list(db.turns.find({"uid": uid}).sort("_id", -1).limit(20))
    messages = [{"role": t["role"], "content": t["content"]} for t in reversed(newest)]
    reply = client.chat.completions.create(model="gpt-4o", messages=messages + [{"role": "user", "content": q}])
    db.turns.insert_one({"uid": uid, "role": "user", "content": q})
""",
        """\
def ask(uid, q):
    r.rpush(f"chat:{uid}", json.dumps({"role": "user", "content": q}))
    history = [json.loads(m) for m in r.lrange(f"chat:{uid}", -20, -1)]
    return client.chat.completions.create(model="gpt-4o", messages=history)
""",
        """\
def ask(conn, chat, q):
    conn.execute("INSERT INTO messages (chat, role, content) VALUES (?, 'user', ?)", (chat, q))
    rows = conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id DESC LIMIT 20", (chat,)).fetchall()
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": r, "content": c} for r, c in reversed(rows)])
""",
        # a per-run scratchpad in a store handed to the step (a workflow context), not a lasting one
        """\
async def take_step(ctx, llm_input):
    scratchpad = await ctx.store.get("scratchpad", default=[])
    reply = await llm.achat([*llm_input, *scratchpad])
    scratchpad.append(reply.message)
    await ctx.store.set("scratchpad", scratchpad)
""",
        # a history only displayed, never sent
        """\
import streamlit as st
if "log" not in st.session_state:
    st.session_state.log = []
if brief := st.chat_input():
    st.session_state.log.append({"role": "user", "content": brief})
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": brief}])
    st.session_state.log.append({"role": "assistant", "content": reply.choices[0].message.content})
for entry in st.session_state.log:
    st.chat_message(entry["role"]).write(entry["content"])
""",
        # LangGraph: the node trims what it sends; the checkpointer keeps the thread
        """\
from langchain_core.messages import trim_messages
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph

def chatbot(state: MessagesState):
    window = trim_messages(state["messages"], max_tokens=4000, strategy="last", token_counter=llm, start_on="human")
    return {"messages": [llm.invoke(window)]}

builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
graph = builder.compile(checkpointer=MemorySaver())
""",
        # a prebuilt agent whose pre_model_hook sends a trimmed view
        """\
from langgraph.prebuilt import create_react_agent
agent = create_react_agent(model, tools, checkpointer=saver, pre_model_hook=trim_to_last_turns)
""",
        # not chat: metrics
        """\
LATENCIES = []
def classify(text):
    start = time.perf_counter()
    result = ollama.chat(model="llama3", messages=[{"role": "user", "content": text}])
    LATENCIES.append(time.perf_counter() - start)
    return result, f"p50 so far {LATENCIES}"
""",
        # a window taken into a local before the send
        """\
class Bot:
    def ask(self, sid, q):
        history = self.sessions[sid]
        history.append({"role": "user", "content": q})
        recent = history[-8:]
        return self.client.chat.completions.create(model="gpt-4o", messages=recent)
""",
        # few-shot examples loaded once: set up, not grown per turn
        """\
class Bot:
    def load_examples(self, path):
        for q, a in read_pairs(path):
            self.examples.append({"role": "user", "content": q})
            self.examples.append({"role": "assistant", "content": a})

    def ask(self, q):
        return self.client.chat.completions.create(model="gpt-4o", messages=[*self.examples, {"role": "user", "content": q}])
""",
        # the client sends the conversation; the server keeps nothing
        """\
@app.post("/reply")
def reply(body: ChatRequest):
    return client.messages.create(model="claude-3-5-haiku-latest", max_tokens=500, messages=body.messages)
""",
        # a request body's list: the client owns the conversation
        """\
class ChatRequest(BaseModel):
    messages: list[dict] = Field(default_factory=list)
    question: str

@app.post("/chat")
def chat(body: ChatRequest):
    body.messages.append({"role": "user", "content": body.question})
    return client.chat.completions.create(model="gpt-4o", messages=body.messages)
""",
        # memories that bound themselves
        "memory = ConversationBufferWindowMemory(k=6)",
        "memory = ConversationSummaryBufferMemory(llm=llm, max_token_limit=800)",
        "engine = SimpleChatEngine.from_defaults(llm=llm, memory=ChatMemoryBuffer.from_defaults(token_limit=3000))",
        """\
class Claims:
    def __init__(self):
        self.history = ChatHistoryTruncationReducer(target_count=12)

    async def ask(self, text):
        self.history.add_user_message(text)
        await self.history.reduce()
        return await self.chat.get_chat_message_content(chat_history=self.history, settings=SETTINGS)
""",
        "agent = AssistantAgent('tickets', model_client=client, model_context=BufferedChatCompletionContext(buffer_size=10))",
        """\
from agents import Runner, SQLiteSession, SessionSettings
session = SQLiteSession("room", session_settings=SessionSettings(limit=30))
async def ask(text):
    return await Runner.run(agent, text, session=session)
""",
        """\
from langchain_core.runnables.history import RunnableWithMessageHistory
trimmer = trim_messages(max_tokens=1000, strategy="last", token_counter=llm, start_on="human")
chain = RunnablePassthrough.assign(history=itemgetter("history") | trimmer) | prompt | llm
with_history = RunnableWithMessageHistory(chain, get_history, input_messages_key="question", history_messages_key="history")
""",
        """\
from pydantic_ai import Agent
agent = Agent("openai:gpt-4o", history_processors=[keep_recent])
async def ask(conv, text):
    result = await agent.run(text, message_history=conv.messages)
    conv.messages.extend(result.new_messages())
""",
        """\
class Mentor:
    def ask(self, text):
        response = self.client.responses.create(model="gpt-4o", input=text, previous_response_id=self.last_id, truncation="auto")
        self.last_id = response.id
""",
        """\
class Mentor:
    def ask(self, text):
        response = self.client.responses.create(model="gpt-4o", input=text, previous_response_id=self.last_id,
                                                context_management=[{"type": "compaction", "compact_threshold": 20000}])
        self.last_id = response.id
""",
        # a kept chat whose own history is trimmed before each send (google-generativeai)
        """\
from chatbound.compaction import bounded_view
CHATS = {}
def answer(cid, text):
    if cid not in CHATS:
        CHATS[cid] = model.start_chat(history=[])
    CHATS[cid].history = bounded_view(CHATS[cid].history, last_turns=10)
    return CHATS[cid].send_message(text).text
""",
    ]

    INVALID = [
        # an attribute (OpenAI)
        Invalid(
            """\
class Assistant:
    def __init__(self, client):
        self.client = client
        self.messages = []

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=self.messages)
        self.messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        return reply
""",
            8,
            78,
            8,
            91,
        ),
        # a module-level list, AsyncOpenAI, [system] + history
        Invalid(
            """\
from openai import AsyncOpenAI
client = AsyncOpenAI()
HISTORY = []

async def chat(text):
    HISTORY.append({"role": "user", "content": text})
    reply = await client.chat.completions.create(model="gpt-4o-mini", messages=[SYSTEM] + HISTORY)
    HISTORY.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
            7,
            91,
            7,
            98,
        ),
        # a session-keyed dict through setdefault and a local alias (Anthropic)
        Invalid(
            """\
sessions = {}

def reply(session_id, text):
    history = sessions.setdefault(session_id, [])
    history.append({"role": "user", "content": text})
    response = client.messages.create(model="claude-sonnet-4-5", max_tokens=512, messages=history)
    history.append({"role": "assistant", "content": response.content[0].text})
""",
            6,
            91,
            6,
            98,
        ),
        # defaultdict(list) per user, LiteLLM
        Invalid(
            """\
from collections import defaultdict
from litellm import completion
chats = defaultdict(list)

def answer(user_id, text):
    chats[user_id].append({"role": "user", "content": text})
    return completion(model="gpt-4o-mini", messages=chats[user_id])
""",
            7,
            53,
            7,
            67,
        ),
        # Streamlit session state, a comprehension over it
        Invalid(
            """\
import streamlit as st
if "messages" not in st.session_state:
    st.session_state.messages = []
if prompt := st.chat_input():
    st.session_state.messages.append({"role": "user", "content": prompt})
    stream = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": m["role"], "content": m["content"]} for m in st.session_state.messages],
        stream=True,
    )
""",
            8,
            73,
            8,
            98,
        ),
        # Chainlit user session, Mistral
        Invalid(
            """\
import chainlit as cl

@cl.on_message
async def main(message):
    history = cl.user_session.get("history")
    history.append({"role": "user", "content": message.content})
    response = await client.chat.stream_async(model="mistral-small-latest", messages=history)
""",
            7,
            86,
            7,
            93,
        ),
        # Flask session, Cohere v2
        Invalid(
            """\
from flask import session

@app.post("/chat")
def chat():
    history = session.get("history", []) + [{"role": "user", "content": request.json["text"]}]
    session["history"] = history
    return co.chat(model="command-r-plus", messages=[SYSTEM] + history).message.content[0].text
""",
            7,
            64,
            7,
            71,
        ),
        # Gradio: the framework grows history; a derived local is sent (Ollama)
        Invalid(
            """\
import gradio as gr
import ollama

def respond(message, history):
    msgs = [{"role": "system", "content": SYSTEM}, *history, {"role": "user", "content": message}]
    return ollama.chat(model="llama3.1", messages=msgs)["message"]["content"]

gr.ChatInterface(respond, type="messages").launch()
""",
            6,
            51,
            6,
            55,
        ),
        # a list kept across the turns of a chat loop
        Invalid(
            """\
def main():
    messages = [{"role": "system", "content": SYSTEM}]
    while True:
        question = input("> ")
        messages.append({"role": "user", "content": question})
        reply = client.chat.completions.create(model="gpt-4o", messages=messages)
        messages.append(reply.choices[0].message)
""",
            6,
            73,
            6,
            81,
        ),
        # joined into the prompt text: reported at the history inside the join
        Invalid(
            """\
class Companion:
    def note(self, author, text):
        self.log.append({"author": author, "text": text})

    def review(self, diff):
        earlier = "\\n".join(f"{e['author']}: {e['text']}" for e in self.log)
        prompt = f"Discussion so far:\\n{earlier}\\n\\nReview:\\n{diff}"
        with self.client.messages.stream(model="claude-sonnet-4-5", max_tokens=900, messages=[{"role": "user", "content": prompt}]) as s:
            return s.get_final_text()
""",
            6,
            68,
            6,
            76,
        ),
        # a chat-message-history object per session, LangChain chat model
        Invalid(
            """\
store = {}

async def chat(session_id, text):
    history = store.setdefault(session_id, InMemoryChatMessageHistory())
    history.add_user_message(text)
    reply = await llm.ainvoke([INSTRUCTIONS] + history.messages)
    history.add_ai_message(reply.content)
""",
            6,
            48,
            6,
            64,
        ),
        # LlamaIndex, growth through a private helper
        Invalid(
            """\
class Kiosk:
    def _remember(self, role, text):
        self.messages.append(ChatMessage(role=role, content=text))

    def ask(self, text):
        self._remember("user", text)
        return self.llm.stream_chat(self.messages)
""",
            7,
            37,
            7,
            50,
        ),
        # google-genai contents, a dataclass field
        Invalid(
            """\
@dataclass
class Room:
    contents: list = field(default_factory=list)

def ask(room: Room, text):
    room.contents.append(types.Content(role="user", parts=[types.Part.from_text(text=text)]))
    return client.models.generate_content(model="gemini-2.0-flash", contents=room.contents)
""",
            7,
            78,
            7,
            91,
        ),
        # Bedrock converse on a copy
        Invalid(
            """\
class Helper:
    def ask(self, user_id, text):
        conversation = self.threads.setdefault(user_id, [])
        conversation.append({"role": "user", "content": [{"text": text}]})
        return self.bedrock.converse(modelId=MODEL_ID, messages=conversation.copy())
""",
            5,
            65,
            5,
            77,
        ),
        # Cohere v1 chat_history, a class attribute grown in a classmethod
        Invalid(
            """\
class Desk:
    chat_history = []

    @classmethod
    def ask(cls, text):
        reply = co.chat(message=text, chat_history=cls.chat_history)
        cls.chat_history += [{"role": "USER", "message": text}, {"role": "CHATBOT", "message": reply.text}]
""",
            6,
            52,
            6,
            68,
        ),
        # Responses API input
        Invalid(
            """\
class Travel:
    def ask(self, text):
        self.items.append({"role": "user", "content": text})
        response = self.client.responses.create(model="gpt-4o", input=self.items)
        self.items += response.output
""",
            4,
            71,
            4,
            81,
        ),
        # built by a helper that returns the whole history
        Invalid(
            """\
class Expenses:
    def _messages(self):
        return [SYSTEM, *self.turns]

    def ask(self, text):
        self.turns.append({"role": "user", "content": text})
        return self.client.chat.completions.create(model="gpt-4o", messages=self._messages())
""",
            7,
            77,
            7,
            93,
        ),
        # sent through a helper that takes the history as a parameter
        Invalid(
            """\
class Bot:
    def _complete(self, messages):
        return self.client.chat.completions.create(model="gpt-4o", messages=messages)

    def ask(self, text):
        self.history.append({"role": "user", "content": text})
        return self._complete(self.history)
""",
            7,
            31,
            7,
            43,
        ),
        # Semantic Kernel ChatHistory appended forever
        Invalid(
            """\
class FaqBot:
    def __init__(self):
        self.history = ChatHistory()

    async def ask(self, text):
        self.history.add_user_message(text)
        reply = await self.chat.get_chat_message_content(chat_history=self.history, settings=SETTINGS)
        self.history.add_message(reply)
""",
            7,
            71,
            7,
            83,
        ),
        # Pydantic AI message_history grown with new_messages()
        Invalid(
            """\
from pydantic_ai import Agent
agent = Agent("openai:gpt-4o")
HISTORY = []

async def ask(text):
    result = await agent.run(text, message_history=HISTORY)
    HISTORY.extend(result.new_messages())
""",
            6,
            52,
            6,
            59,
        ),
        # Agents SDK: result.to_input_list() fed back as the next input
        Invalid(
            """\
from agents import Runner
class Thread:
    async def ask(self, text):
        result = await Runner.run(self.agent, self.items + [{"role": "user", "content": text}])
        self.items = result.to_input_list()
""",
            4,
            47,
            4,
            57,
        ),
        # a closure's list, kept between calls of the returned chat function
        Invalid(
            """\
def make_bot(client):
    history = []

    def ask(q):
        history.append({"role": "user", "content": q})
        r = client.chat.completions.create(model="gpt-4o", messages=history)
        history.append({"role": "assistant", "content": r.choices[0].message.content})
        return r

    return ask
""",
            6,
            69,
            6,
            76,
        ),
        # a missing entry defaulted with `h = d[k] = []`: the local is the entry
        Invalid(
            """\
conversations = {}

def chat(user, text):
    thread = conversations.get(user)
    if thread is None:
        thread = conversations[user] = []
    thread.append({"role": "user", "content": text})
    return client.chat.completions.create(model="gpt-4o", messages=thread)
""",
            8,
            68,
            8,
            74,
        ),
        # read through a property that returns the private list
        Invalid(
            """\
class Tutor:
    @property
    def history(self):
        return self._history

    def reply(self, text):
        self._history.append({"role": "user", "content": text})
        return self.client.messages.create(model=MODEL, max_tokens=500, messages=self.history)
""",
            8,
            82,
            8,
            94,
        ),
        # loaded from a store and saved back whole: outlives the request
        Invalid(
            """\
def chat(uid, text):
    history = json.loads(store.get(uid) or "[]")
    history.append({"role": "user", "content": text})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    store.set(uid, json.dumps(history))
""",
            4,
            69,
            4,
            76,
        ),
        # a MongoDB document's history read whole, grown and set back (the store is named)
        Invalid(
            """\
def chat(uid, text):
    doc = chats.find_one({"_id": uid}) or {"history": []}
    history = doc["history"]
    history.append({"role": "user", "content": text})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    chats.update_one({"_id": uid}, {"$set": {"history": history}}, upsert=True)
""",
            5,
            69,
            5,
            76,
        ),
        # a Redis list read whole after each push
        Invalid(
            """\
def chat(uid, text):
    r.rpush(f"chat:{uid}", json.dumps({"role": "user", "content": text}))
    history = [json.loads(m) for m in r.lrange(f"chat:{uid}", 0, -1)]
    return client.chat.completions.create(model="gpt-4o", messages=history)
""",
            4,
            68,
            4,
            75,
        ),
        # a SQL table read with no LIMIT, the new turn inserted
        Invalid(
            """\
def chat(conn, chat_id, text):
    conn.execute("INSERT INTO messages (chat, role, content) VALUES (?, 'user', ?)", (chat_id, text))
    rows = conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id", (chat_id,)).fetchall()
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": r, "content": c} for r, c in rows])
""",
            4,
            107,
            4,
            111,
        ),
        # a module global rebound inside the chat function
        Invalid(
            """\
HISTORY = []

def chat(text):
    global HISTORY
    HISTORY = HISTORY + [{"role": "user", "content": text}]
    return ollama.chat(model="llama3.1", messages=HISTORY)
""",
            6,
            51,
            6,
            58,
        ),
        # framework memories that keep everything
        Invalid("memory = ConversationBufferMemory(return_messages=True)", 1, 10, 1, 56),
        # LangGraph: add_messages state kept by a checkpointer, sent whole by a node
        Invalid(
            """\
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph

def chatbot(state: MessagesState):
    return {"messages": [llm.invoke(state["messages"])]}

builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
graph = builder.compile(checkpointer=MemorySaver())
""",
            5,
            37,
            5,
            54,
        ),
        # a LangChain v1 agent whose summarization has no trigger: it never summarizes
        Invalid(
            """\
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
agent = create_agent("openai:gpt-4o", tools=TOOLS, checkpointer=saver,
                     middleware=[SummarizationMiddleware(model="openai:gpt-4o-mini")])
""",
            3,
            9,
            4,
            87,
        ),
        Invalid(
            """\
from agents import Runner, SQLiteSession
session = SQLiteSession("room-7", "rooms.db")
async def ask(text):
    return await Runner.run(agent, text, session=session)
""",
            2,
            11,
            2,
            46,
        ),
        Invalid(
            """\
chain = prompt | llm
with_history = RunnableWithMessageHistory(chain, get_history, input_messages_key="question", history_messages_key="history")
""",
            2,
            16,
            2,
            125,
        ),
        Invalid(
            """\
rooms = {}
def ask(room_id, text):
    if room_id not in rooms:
        rooms[room_id] = client.chats.create(model="gemini-2.0-flash")
    return rooms[room_id].send_message(text).text
""",
            4,
            26,
            4,
            71,
        ),
        Invalid(
            """\
class Mentor:
    def ask(self, text):
        response = self.client.responses.create(model="gpt-4o", input=text, previous_response_id=self.last_id)
        self.last_id = response.id
""",
            3,
            98,
            3,
            110,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.may_chat():
            return
        facts = self.chat_facts()
        reported: set[int] = set()
        for flow in facts.flows():
            if flow.history.unbounded and not facts.rebuilt_before(flow):
                self._report_flow(facts, flow)
                reported.add(id(flow.site))
        for kept in frameworks.memories(facts):
            if kept.site is not None and id(kept.site) in reported:
                continue
            self.report(
                kept.node,
                f"{kept.message}, {COST}.",
                suggestion=kept.advice,
                properties=kept.properties,
                related=[self.related(node, message) for node, message in kept.related],
            )

    # --- plain histories ---------------------------------------------------------------------

    def _report_flow(self, facts: ChatFacts, flow: Flow) -> None:
        history, use, sink = flow.history, flow.use, flow.sink
        label = facts.code(use.node)
        stored = history.storage.label
        growth = history.growth
        here = [g for g in growth if isinstance(g, cst.CSTNode)]
        elsewhere = [g for g in growth if isinstance(g, Place)]  # a history another module keeps
        how = history.growth_note or ", ".join(sorted({growth_label(g) for g in here} | {g.label for g in elsewhere}))
        lines = sorted({self.span(g).line for g in here if not isinstance(g, cst.FunctionDef)})
        where = f" (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})" if lines else ""
        if elsewhere:
            where = (
                f" (in {elsewhere[0].path}, line{'s' if len(elsewhere) > 1 else ''} "
                f"{', '.join(str(g.span.line) for g in elsewhere)})"
            )
        database = history.storage.kind == "database"
        named = databases.describe(history.storage.key) if database else f"`{stored}`"
        subject = f"`{stored}`" if label == stored and not database else f"`{label}` carries {named}, which"
        sliced = facts.parent(use.node)
        whole = f"whole to {sink.api} (in {flow.elsewhere[0].path})" if flow.elsewhere else f"whole to {sink.api}"
        copy = next((p for p in map(facts.parent, use.via) if isinstance(p, cst.Subscript) and is_whole_slice(p)), None)
        if isinstance(sliced, cst.Subscript) and sliced.value is use.node and is_whole_slice(sliced):
            sent = (
                f"is sent to {sink.api} as `{facts.code(sliced)}`, a slice that drops a fixed few items and "
                "still grows with the session (it does not bound it)"
            )
        elif copy is not None:  # `recent = history[2:]`: a copy kept under another name
            subject = f"`{label}` is `{facts.code(copy)}`, a copy that drops a fixed few items of `{stored}`, which"
            sent = f"the copy, which grows with it (it does not bound it), is sent {whole}"
        else:
            sent = f"is sent {whole}"
        kind = KIND.get(history.storage.kind) or frameworks.KINDS.get(history.storage.kind, "lasting state")
        store = stored.partition("[")[0]
        expiry = expiry_of(facts, store) if history.storage.kind == "entry" else None
        message = f"{subject} is {kind}, grows every turn by {how}{where} and {sent}, {COST}."
        if expiry is not None:
            message += f" {expiry_sentence(expiry, store)}"
        related: list[Related] = []
        for node in history.definitions[:3]:
            related.append(self.related(node, f"{named} is defined here"))
        for node in use.via:
            related.append(self.related(node, f"`{label}` is built from {named} here"))
        for node in history.keepers[:3]:
            related.append(self.related(node, f"{named} is kept between turns by the store given here"))
        for node in growth:
            if not isinstance(node, cst.FunctionDef):
                related.append(self.related(node, f"{named} grows here"))
        for place in flow.elsewhere:
            related.append(self.related(place, f"`{label}` is sent whole to {sink.api} here"))
        framework = sink.framework
        returned = (
            _sent_inside(facts, flow)
            if isinstance(use.node, cst.Name)
            and any(call is flow.site for _, call in facts.round_trips(use.node.value))
            else None
        ) or _sent_inside(facts, flow, grown=True)
        grown_elsewhere = _grown_elsewhere(facts, flow)
        if returned is not None:  # where the fix bounds it: the list kept and returned stays whole
            related.append(
                self.related(returned, f"`{facts.code(returned)}` is sent whole here, in `{callee_name(flow.site)}()`")
            )
        elif id(flow.site) in facts.sent_inside:  # a helper of this module makes the call
            inside = facts.sent_inside[id(flow.site)]
            related.append(self.related(inside, f"the model call `{callee_name(flow.site)}()` makes"))
        suggestion = (
            (
                f"`{callee_name(flow.site)}()` ({flow.elsewhere[0].path}, line {flow.elsewhere[0].span.line}) adds "
                f"to the list it is given and sends it: bound the send there (`bounded_view(...)` of that list), "
                "not the list passed in here, which must keep growing."
            )
            if grown_elsewhere
            else None
        ) or (
            frameworks.ADVICE.get(history.storage.kind)
            or frameworks.SEND_ADVICE.get(framework)
            or (
                f"Send a bounded view and keep the history intact: `bounded_view({label if database else stored}, "
                "last_turns=10)` (`from chatbound.compaction import bounded_view`) in place of the whole list"
                f"{'; ' + databases.advice(history.storage.key) if database else ''}; memory is what you pay to send."
            )
        )
        self.report(
            use.node,
            message,
            suggestion=suggestion,
            related=related,
            properties={
                "history": stored,
                "expression": label,
                "storage": history.storage.kind,
                "sink": sink.api,
                "framework": framework,
                "growth_lines": lines,
                # `reply, h = ask(q, h)`: bounded where ask() sends (a view passed in would come back as the kept list)
                **({"sent_inside": len(related) - 1} if returned is not None else {}),
                **({"grown_elsewhere": True} if grown_elsewhere else {}),
                # what the other module's growth shows of the items (this module cannot show their shape)
                **({"roles": sorted(history.roles)} if elsewhere and history.roles else {}),
                **({"lifetime_seconds": expiry.lifetime} if expiry is not None and expiry.lifetime else {}),
            },
        )
