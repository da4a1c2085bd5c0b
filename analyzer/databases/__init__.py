"""Chat histories kept in a database: one module per store, in the words the chat facts speak.

A chat kept in MongoDB, Redis or a SQL table is read back each message and written to each
message. Each module here says, for its store, which calls read a whole history (`read`:
the store's key, or None when the read takes only the newest N) and which calls write to it
(`writes`: items pushed, a value set back whole, or a trim the store does itself). The chat
facts (`chatbound.analysis.histories.stores`) decide from the dataflow whether what was read reaches
a model and whether the same request writes the new turn back; nothing here decides that.

Keys name the store the same way on the read and the write: `mongo:chats` (a collection),
`mongo:chats['history']` (a list field of its documents), `redis:<key>`, `sql:<table>`,
`orm:<Model>`.
"""

from __future__ import annotations

import re

# the shape of a store write in a module's bytes (the project pass's cheap test for a
# repository module that keeps a chat in a store and returns it)
WRITE_SHAPE = re.compile(
    rb"\.(?:insert_one|insert_many|update_one|update_many|find_one_and_update|rpush|lpush|bulk_create)\s*\(|"
    rb"\.objects\.a?create\s*\(|INSERT\s+(?:OR\s+\w+\s+)?INTO",
    re.I,
)


def describe(key: str) -> str:
    """How a finding names a history kept in a store (`key` as `chatbound.analysis.histories` keys it)."""
    found = re.search(r"\b(mongo|redis|sql|orm|record):(.*)$", key)  # after the module path of a repository's history
    store, name = found.groups() if found else ("", key)
    field = re.search(r"\['(.+)'\]$", name)
    base = name[: field.start()] if field else name
    if store == "record":
        model, _, attr = name.rpartition(".")
        return f"the `{attr}` list of a `{model}` record saved back to its store"
    where = {
        "mongo": f"the `{base}` collection (MongoDB)",
        "redis": f"the Redis key `{base}`",
        "sql": f"the `{base}` table",
        "orm": f"the `{base}` model's table",
    }.get(store, f"`{base}`")
    return f"the `{field.group(1)}` list of a document in {where}" if field else f"the history kept in {where}"


ADVICE = {
    "mongo": 'or read only the newest turns: `find(...).sort("_id", -1).limit(20)` (then reversed), '
    'or a `{"<field>": {"$slice": -20}}` projection, or `$push` with `$each` and `$slice: -N`',
    "redis": "or read only the newest turns: `lrange(key, -20, -1)`, and `ltrim(key, -N, -1)` after each push",
    "sql": "or read only the newest turns: `ORDER BY id DESC LIMIT 20` (then reversed)",
    "orm": 'or read only the newest turns: `.order_by("-created")[:20]` or `.limit(20)` (then reversed)',
    "record": "or send only the newest turns of the record's list (`record.messages[-20:]`)",
}


def advice(key: str) -> str:
    found = re.search(r"\b(mongo|redis|sql|orm|record):", key)
    return ADVICE.get(found.group(1), "") if found else ""
