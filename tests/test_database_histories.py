"""A chat history kept in a database behind a repository module: the repository's summary says
which history its methods return whole and which they write, and the importing handler that
reads it whole, sends it and writes the new turn back is the finding."""

from __future__ import annotations

from conftest import FIXTURES

from chatbound.analysis.project.summary import summarize
from chatbound.run.config import Settings
from chatbound.run.runner import run

APP = FIXTURES / "stores" / "telegram_repository"
FILES = {name: (APP / name).read_text() for name in ("bot.py", "database.py", "llm.py", "config.py")}
DIALOG = "mongo:dialog['messages']"


def test_a_repository_summary_names_the_history_it_returns_and_the_writes_to_it():
    summary = summarize(FILES["database.py"].encode())
    assert summary.functions["Database.get_dialog_messages"].returns.key == DIALOG
    (write,) = summary.functions["Database.set_dialog_messages"].writes
    assert (write.history.key, write.how, write.param) == (DIALOG, "set", "dialog_messages")
    (push,) = summary.functions["Database.add_note"].writes
    assert (push.history.key, push.how, push.param) == ("mongo:notes['notes']", "push", None)


def test_the_handler_that_reads_sends_and_writes_back_is_reported_naming_the_store(write):
    root = write(FILES)
    (finding,) = run([root], Settings(root=root)).findings
    assert (finding.path.endswith("/bot.py"), finding.span.line, finding.span.col) == (True, 13, 63)
    assert "the `messages` list of a document in the `dialog` collection (MongoDB)" in finding.message
    assert "`set_dialog_messages()` (line 15)" in finding.message
    assert "bounded_view(dialog_messages, last_turns=10)" in finding.suggestion
    assert [(r.path.rsplit("/", 1)[-1], r.span.line) for r in finding.related if r.path] == [("llm.py", 16)]


def test_without_the_write_back_the_repository_read_is_no_history(write):
    root = write({**FILES, "bot.py": FILES["bot.py"].replace("db.set_dialog_messages(", "print(")})
    assert run([root], Settings(root=root)).findings == []


def test_a_repository_that_reads_only_the_newest_messages_is_bounded(write):
    database = FILES["database.py"].replace(
        'find_one({"_id": user_id})', 'find_one({"_id": user_id}, {"messages": {"$slice": -20}})'
    )
    root = write({**FILES, "database.py": database})
    assert run([root], Settings(root=root)).findings == []


REDIS_STORE = """\
import json
import redis

r = redis.Redis()


def add_message_to_history(user, role, text):
    r.lpush(user, json.dumps({"role": role, "content": text}))


def get_history(user):
    return [json.loads(m) for m in r.lrange(user, 0, -1)[::-1]]
"""
GPT = """\
from openai import OpenAI

client = OpenAI()


class GPT:
    def answer(self, system, history):
        messages = [{"role": "system", "content": system}]
        messages.extend(history)
        return client.chat.completions.create(model="gpt-4o", messages=messages).choices[0].message.content
"""
HANDLER = """\
from gpt import GPT
from store import *

gpt = GPT()


def on_message(user, text):
    add_message_to_history(user, "user", text)
    history = get_history(user)
    answer = gpt.answer("You sell fences.", history)
    add_message_to_history(user, "assistant", answer)
    return answer
"""


def test_a_redis_store_star_imported_by_the_handler_is_linked(write):
    root = write({"store.py": REDIS_STORE, "gpt.py": GPT, "handler.py": HANDLER})
    (finding,) = run([root], Settings(root=root)).findings
    assert (finding.path.endswith("/handler.py"), finding.span.line, finding.span.col) == (True, 10, 45)
    assert "the history kept in the Redis key `user`" in finding.message


def test_a_star_imported_store_read_as_a_tail_is_bounded(write):
    root = write(
        {
            "store.py": REDIS_STORE.replace("lrange(user, 0, -1)", "lrange(user, 0, 19)"),
            "gpt.py": GPT,
            "handler.py": HANDLER,
        }
    )
    assert run([root], Settings(root=root)).findings == []
