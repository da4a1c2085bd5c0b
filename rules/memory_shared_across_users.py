"""MEMORY-SHARED-ACROSS-USERS: one history kept for every user of a server or bot, so each
caller's request carries everyone else's conversation."""

from __future__ import annotations

import ast

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.chat import ChatRule, may_chat_tree
from chatbound.analysis.rule import Invalid
from chatbound.analysis.sharing import Held, Keyed, Shared, constant_keys, held_conversations, shared_flows
from chatbound.findings import Severity
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.servers import CACHED_FACTORIES, DECORATOR_VERBS, HANDLER_CALLS
from chatbound.vocabulary.sinks import triggers

ADVICE = (
    "Keep one history per user or conversation, keyed by an id the server mints from the signed-in user "
    "(a session, the bot event's user or channel id), never one list for the whole process."
)
KEYED = (
    "Key the history by who asks: keep `histories: dict[str, list] = {{}}` and use "
    "`histories.setdefault({identity}, [])` where `{history}` is used, with `{identity}` minted on the server "
    "from the signed-in user, not taken as the client sends it."
)

KEYED_ID = "Name the conversation by who asks: use `{identity}`, minted on the server from the signed-in user."


CACHES = frozenset(name.rpartition(".")[2] for name in CACHED_FACTORIES)


def may_serve_tree(tree: PythonTree) -> bool:
    """Whether the file registers an entry point at all (a decorator whose verb serves users, or a
    handler registration), keeps a list or dict at module level, names a conversation by a key (`{"thread_id": ...}`: its function
    may be served by an importer), or caches a factory (one object for every session of a script),
    on CPython's tree: every entry the analysis finds is one of these."""
    for statement in tree.module.body:  # state kept for the process: an importer's route may serve it
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, (ast.List, ast.Dict)):
            return True
    names = frameworks.CONVERSATION_KEY_NAMES
    for node in tree.nodes(ast.Dict, ast.Call):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in names for k in node.keys):
            return True
        if isinstance(node, ast.Call) and any(k.arg in names for k in node.keywords):
            return True
    for node in tree.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.Call):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in HANDLER_CALLS:
                return True
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Attribute) and target.attr in DECORATOR_VERBS:
                return True
            name = (
                target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
            )
            if name in CACHES:
                return True
    return False


class MemorySharedAcrossUsers(ChatRule):
    """
    ## What it does
    Flags a chat history that one server or bot process keeps for every user: a module-level
    list, a class attribute, or an attribute of the one instance the process builds, grown with
    the caller's turn and sent to a model by an entry point that serves many users (a FastAPI,
    Flask, Quart or aiohttp route, a Slack, Discord or Telegram handler, a Gradio or Chainlit
    callback, in a module that imports that framework), or by a function of the module such an
    entry point calls. Reported where the history is sent, with its definition, the entry point
    and the growth as related locations.

    The same holds without a list in sight: a framework object that keeps a conversation (a
    LangChain memory, or a chain or agent given one) made once for the process, at module level
    or by a cached factory (`functools.cache`, `lru_cache`, `st.cache_resource`) whose
    parameters do not say who asks, and used while serving (reported where it is made); and a
    run of a checkpointed LangGraph graph whose `thread_id` is a literal (reported at the
    literal). A function of a module with no server import is served when a Streamlit script
    of another module calls it (the script reruns per session; the module it imports does not).

    A history keyed by who asks (`sessions[user_id]`), Streamlit's `session_state`, Chainlit's
    `user_session`, Gradio's `history` argument and a list built for one request are per user;
    a command-line loop or a notebook has one user. None of them is reported.

    ## Why is this bad?
    The process answers everyone, so the list holds every caller's turns: customer B's request
    sends customer A's conversation to the model, and the answer can show it back to B. That is
    a data leak before it is a cost, and the shared history also grows with the traffic of the
    whole service, not one session.

    ## Example
    ```python
    from fastapi import FastAPI
    from openai import OpenAI

    app = FastAPI()
    client = OpenAI()
    history = []

    @app.post("/chat")
    def chat(user_id: str, text: str):
        history.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=history)
        history.append({"role": "assistant", "content": reply.choices[0].message.content})
        return reply.choices[0].message.content
    ```
    chatbound reports it where the shared history is sent:
    ```text
    app.py:11:69: MEMORY-SHARED-ACROSS-USERS `history` is one history for every user: the function `chat` (@app.post("/chat")) serves each caller from this process, adds the caller's turn to it (lines 10, 12) and sends it whole to openai.chat.completions.create, so one user's request carries every other user's conversation, and the answer can show it back to them.
    ```

    ## Use instead
    ```python
    from fastapi import FastAPI
    from openai import OpenAI

    app = FastAPI()
    client = OpenAI()
    histories: dict[str, list] = {}

    @app.post("/chat")
    def chat(user_id: str, text: str):
        history = histories.setdefault(user_id, [])
        history.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=history)
        history.append({"role": "assistant", "content": reply.choices[0].message.content})
        return reply.choices[0].message.content
    ```
    Key the history by a conversation id the server mints from the signed-in user (a session or
    the authenticated user), not by a value the client may choose. The history then still needs
    a bound (MEMORY-UNBOUNDED-HISTORY).

    ## Fix
    Advice only: the message names the entry point's parameter that says who asks when it has
    one (`user_id`, `session_id`, `chat_id`, ...); whether that value is trusted is for the
    application to say.

    ## Frameworks covered
    FastAPI, Flask, Quart and aiohttp routes; Slack Bolt, discord.py (commands, cogs,
    `on_message`), aiogram, pyTelegramBotAPI and python-telegram-bot handlers; Chainlit's
    `@cl.on_message`; Gradio's `ChatInterface` and event listeners (`.then` too); functions a
    Streamlit script of another module calls. LangChain memories and chains given one, and a
    `RunnableWithMessageHistory` run with a constant `session_id` over a store that outlives the
    run; LangGraph checkpointed graphs' `thread_id`. Checked in their sources for the versions in
    `chatbound/vocabulary/servers.py`, `chatbound/frameworks/langchain.py`,
    `chatbound/frameworks/memory_objects.py` and `chatbound/frameworks/langgraph/threads.py`.
    """

    ID = "MEMORY-SHARED-ACROSS-USERS"
    NAME = "memory-shared-across-users"
    SEVERITY = Severity.HIGH
    SUMMARY = "One chat history serves every user of a server or bot: each request carries the others' conversations."
    TAGS = ("privacy", "llm", "memory")
    TRIGGERS = (*triggers(), *frameworks.TRIGGERS)  # a model call, a chat memory, or a framework run keeping one
    CROSS_MODULE = True  # the send may be a function of another module the entry point hands the history to

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:  # type: ignore[override]  # the ClassVar hook
        """Most files with a model call serve no one: no entry point, nothing to report."""
        return may_chat_tree(tree) and may_serve_tree(tree)

    VALID = [
        # keyed by who asks
        """
from fastapi import FastAPI
from openai import OpenAI

app = FastAPI()
client = OpenAI()
histories = {}

@app.post("/chat")
def chat(user_id: str, text: str):
    history = histories.setdefault(user_id, [])
    history.append({"role": "user", "content": text})
    return client.chat.completions.create(model="gpt-4o", messages=history)
""",
        # a list built for one request
        """
from flask import Flask, request
from openai import OpenAI

app = Flask(__name__)
client = OpenAI()

@app.route("/ask", methods=["POST"])
def ask():
    messages = [{"role": "system", "content": "Be brief."}]
    messages.append({"role": "user", "content": request.json["q"]})
    return client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content
""",
        # one user: a command-line loop
        """
from openai import OpenAI

client = OpenAI()
history = []
while True:
    history.append({"role": "user", "content": input("> ")})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
""",
        # Chainlit's user_session is per user
        """
import chainlit as cl
from openai import AsyncOpenAI

client = AsyncOpenAI()

@cl.on_message
async def main(message: cl.Message):
    history = cl.user_session.get("history")
    history.append({"role": "user", "content": message.content})
    reply = await client.chat.completions.create(model="gpt-4o", messages=history)
    await cl.Message(reply.choices[0].message.content).send()
""",
        # an instance built per request is the caller's own
        """
from fastapi import FastAPI
from openai import OpenAI

app = FastAPI()
client = OpenAI()

class Assistant:
    def __init__(self):
        self.messages = []

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        return client.chat.completions.create(model="gpt-4o", messages=self.messages)

@app.post("/chat")
def chat(text: str):
    return Assistant().ask(text)
""",
        # a fixed list of examples read by every request, never grown with a caller's turn
        """
from fastapi import FastAPI
from openai import OpenAI

app = FastAPI()
client = OpenAI()
EXAMPLES = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]

@app.post("/solve")
def solve(text: str):
    return client.chat.completions.create(model="gpt-4o", messages=[*EXAMPLES, {"role": "user", "content": text}])
""",
        # a cached factory keyed by who asks: one chain per session
        """
from functools import cache

import gradio as gr
from langchain.chains import ConversationChain
from langchain.memory import ConversationBufferWindowMemory
from langchain_openai import ChatOpenAI

@cache
def chain_for(session_id):
    return ConversationChain(llm=ChatOpenAI(), memory=ConversationBufferWindowMemory(k=4))

def reply(message, history, request: gr.Request):
    return chain_for(request.session_hash).predict(input=message)

gr.ChatInterface(reply).launch()
""",
    ]
    INVALID = [
        Invalid(
            """
from fastapi import FastAPI
from openai import OpenAI

app = FastAPI()
client = OpenAI()
history = []

@app.post("/chat")
def chat(user_id: str, text: str):
    history.append({"role": "user", "content": text})
    reply = client.chat.completions.create(model="gpt-4o", messages=history)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
    return reply.choices[0].message.content
""",
            12,
            69,
            12,
            76,
        ),
        # a discord.py cog's class attribute: one cog serves every guild
        Invalid(
            """
from discord.ext import commands
from openai import OpenAI

client = OpenAI()

class Chat(commands.Cog):
    chat_history = []

    @commands.command()
    async def chat(self, ctx, *, text):
        self.chat_history.append({"role": "user", "content": text})
        reply = client.chat.completions.create(model="gpt-4o", messages=self.chat_history)
        await ctx.send(reply.choices[0].message.content)
""",
            13,
            73,
            13,
            90,
        ),
        # python-telegram-bot: a handler reaching a module-level assistant
        Invalid(
            """
from openai import OpenAI
from telegram.ext import Application, MessageHandler, filters

client = OpenAI()

class Assistant:
    def __init__(self):
        self.messages = []

    def ask(self, text):
        self.messages.append({"role": "user", "content": text})
        return client.chat.completions.create(model="gpt-4o", messages=self.messages)

assistant = Assistant()

async def reply(update, context):
    await update.message.reply_text(assistant.ask(update.message.text).choices[0].message.content)

app = Application.builder().token("T").build()
app.add_handler(MessageHandler(filters.TEXT, reply))
""",
            13,
            72,
            13,
            85,
        ),
        # Gradio: the chat function appends to a module list instead of using its history argument
        Invalid(
            """
import gradio as gr
from openai import OpenAI

client = OpenAI()
log = []

def respond(message, history):
    log.append({"role": "user", "content": message})
    reply = client.chat.completions.create(model="gpt-4o", messages=log)
    log.append({"role": "assistant", "content": reply.choices[0].message.content})
    return reply.choices[0].message.content

gr.ChatInterface(respond).launch()
""",
            10,
            69,
            10,
            72,
        ),
        # a LangChain chain and its memory made once at module level, used by every Gradio session
        Invalid(
            """
import gradio as gr
from langchain.chains import ConversationChain
from langchain.memory import ConversationBufferWindowMemory
from langchain_openai import ChatOpenAI

chain = ConversationChain(llm=ChatOpenAI(), memory=ConversationBufferWindowMemory(k=4))

def reply(message, history):
    return chain.predict(input=message)

gr.ChatInterface(reply).launch()
""",
            7,
            9,
            7,
            88,
        ),
        # one LlamaIndex chat engine and its memory from a cached factory, used by every session of a Streamlit script
        Invalid(
            """
import streamlit as st
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.memory import ChatMemoryBuffer

@st.cache_resource
def engine():
    return SimpleChatEngine.from_defaults(memory=ChatMemoryBuffer.from_defaults(token_limit=1500))

if text := st.chat_input():
    st.write(engine().chat(text).response)
""",
            6,
            1,
            6,
            19,
        ),
        # a checkpointed graph run with one thread id by a FastAPI route
        Invalid(
            """
from fastapi import FastAPI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langchain_openai import ChatOpenAI

app = FastAPI()
model = ChatOpenAI()
flow = StateGraph(MessagesState)
flow.add_node("talk", lambda state: {"messages": [model.invoke(state["messages"][-6:])]})
flow.add_edge(START, "talk")
graph = flow.compile(checkpointer=InMemorySaver())

@app.post("/talk")
def talk(text: str):
    return graph.invoke({"messages": [("user", text)]}, {"configurable": {"thread_id": "1"}})
""",
            16,
            88,
            16,
            91,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.may_chat():
            return
        facts = self.chat_facts()
        for shared in shared_flows(facts):
            self._report(shared)
        for held in held_conversations(facts):
            self._report_held(held)
        for keyed in constant_keys(facts):
            self._report_keyed(keyed)

    def _report_held(self, held: Held) -> None:
        facts = self.chat_facts()
        name = facts.code(held.use)
        message = (
            f"`{name}` keeps one conversation, made once {held.how} for the whole process: "
            f"{held.entry.where} serves each caller with it, so every user's turns "
            "go into the same conversation and each request sends the others' turns to the model, which can "
            "show them back."
        )
        suggestion = (
            f"Make one per user or conversation, keyed by `{held.identity}` minted on the server, not one for the "
            "process."
            if held.identity
            else ADVICE
        )
        related = [self.related(held.use, f"`{name}` is used here while serving a caller")]
        self._report_served(held.made, message, suggestion, held.entry, held.identity, related, name, "process")

    def _report_keyed(self, keyed: Keyed) -> None:
        facts = self.chat_facts()
        key = facts.code(keyed.key)
        message = (
            f"Every caller continues the conversation {key}: {keyed.entry.where} "
            f"serves each user with this one constant id, so the store keeps one conversation for all of them "
            "and each request sends the others' turns to the model, which can show them back."
        )
        suggestion = KEYED_ID.format(identity=keyed.identity) if keyed.identity else ADVICE
        self._report_served(keyed.key, message, suggestion, keyed.entry, keyed.identity, [], key, "key")

    def _report(self, shared: Shared) -> None:
        facts = self.chat_facts()
        history = shared.flow.history
        name = history.storage.label
        lines = ", ".join(str(self.span(g).line) for g in shared.growth)
        where = shared.entry.where
        message = (
            f"`{name}` is one history for every user: {where} serves each caller from this process, adds the "
            f"caller's turn to it (line{'s' if len(shared.growth) > 1 else ''} {lines}) and sends it whole to "
            f"{shared.flow.sink.api}, so one user's request carries every other user's conversation, and the "
            "answer can show it back to them."
        )
        identity = shared.identity
        suggestion = KEYED.format(identity=identity, history=name) if identity else ADVICE
        related = [self.related(d, f"`{name}` is defined here, once per process") for d in history.definitions[:1]]
        related += [self.related(g, "a caller's turn is added here") for g in shared.growth[:1]]
        self._report_served(
            shared.flow.use.node,
            message,
            suggestion,
            shared.entry,
            identity,
            related,
            name,
            history.storage.kind,
            sink=shared.flow.sink.api,
            code=facts.code(shared.flow.use.node),
        )

    def _report_served(self, node, message, suggestion, entry, identity, related, history, storage, **more) -> None:
        """One finding of the three shapes: the entry point that serves every user is always a related
        location, and the properties name the history, how it is kept, the entry and the identity in reach."""
        self.report(
            node,
            message,
            suggestion=suggestion,
            related=[*related, self.related(entry.node, "this entry point serves every user")],
            properties={"history": history, "storage": storage, "entry": entry.name, "identity": identity, **more},
        )
