"""How web and bot frameworks hand one process's functions every user's requests: the
decorators and registrations that make a function an entry point serving many users.

Each is the framework's public way to register a handler, checked in its source:
- web routes: FastAPI 0.115 `@app.get/post/put/patch/delete/api_route/websocket` (on the app
  or an `APIRouter`), Flask 3.1 and Quart 0.20 `@app.route/get/post/...`, aiohttp 3.11
  `@routes.get/post/...` (`RouteTableDef`);
- bots: Slack Bolt 1.21 `@app.message/event/command/action/shortcut/view`, discord.py 2.4
  `@bot.command`, `@commands.command`, `@client.event` (`on_message`), `@bot.tree.command` /
  `@app_commands.command`, aiogram 3.15 `@dp.message(...)` / `@router.message(...)` (2.x
  `@dp.message_handler`), pyTelegramBotAPI 4.24 `@bot.message_handler`, python-telegram-bot 21
  `CommandHandler(name, callback)` / `MessageHandler(filters, callback)`;
- chat UIs: Chainlit 2.12 `@cl.on_message`, Gradio 5 `gr.ChatInterface(fn)` and an event
  listener's function (`.click(fn, ...)`, `.submit(fn, ...)`).
Streamlit reruns the script per session, so its script is no entry point here (its
`session_state` is per user: `chatbound.vocabulary.sessions`), and what the script binds at
module level is made again on every rerun; what it calls in other modules runs for every
session (`chatbound.frameworks.streamlit`).

Caches that hand every caller one object: `functools.cache` and `functools.lru_cache` (keyed
by the arguments only), Streamlit 1.40 `st.cache_resource` ("shared across all users,
sessions and reruns", caching/cache_resource_api.py; `st.cache_data` returns a copy per call).
"""

from __future__ import annotations

import re

# the packages whose processes serve many users: a module registers an entry point only when it imports one
# (`@cache.get(...)`, a click or typer `@cli.command()` serve no one)
SERVER_PACKAGES = frozenset(
    "fastapi starlette flask quart aiohttp sanic litestar django slack_bolt discord aiogram telebot telegram "
    "chainlit gradio".split()
)
# `@<receiver>.<verb>(...)`: the verb after the last dot of a decorator
ROUTE_VERBS = frozenset("get post put patch delete route api_route websocket".split())
BOT_VERBS = frozenset(
    "message event command action shortcut view message_handler slash_command on_message hybrid_command".split()
)
DECORATOR_VERBS = ROUTE_VERBS | BOT_VERBS
# a decorator that is only a name: `@client.event` on `async def on_message(message)`
BARE_EVENTS = frozenset({"event", "on_message", "command", "message"})
# calls that take the handler as an argument: (callee name, index of the handler argument, or keyword)
HANDLER_CALLS = {
    "CommandHandler": (1, "callback"),
    "MessageHandler": (1, "callback"),
    "CallbackQueryHandler": (0, "callback"),
    "ChatInterface": (0, "fn"),
    "click": (0, "fn"),
    "then": (0, "fn"),  # Gradio 5 `Dependency.then(fn, inputs, outputs)`: runs after the event, per session
    "submit": (0, "fn"),
    "change": (0, "fn"),
    "register_message_handler": (0, "callback"),
}
# parameter names that say who is asking, in the order a fix would key a history by them
IDENTITY = re.compile(
    r"^(user_?id|session_?id|chat_?id|thread_?id|conversation_?id|channel_?id|client_?id|sender_?id|"
    r"author_?id|uid|sid|user|username|session|conversation)$",
    re.I,
)
# a module importing one of these is rerun per session: what it binds at module level is not kept
RERUN_PACKAGES = frozenset({"streamlit"})
# decorators whose function returns one object to every caller with the same arguments
CACHED_FACTORIES = frozenset({"functools.cache", "functools.lru_cache", "streamlit.cache_resource"})
# what an importer that serves many users says of a function it calls (chatbound.analysis.project.users)
SERVED_TAG = "served.by"
