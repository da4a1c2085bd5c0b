"""Stores: a local loaded from a store and saved back whole outlives the request."""

from __future__ import annotations

from .harness import check

ROUND_TRIP = """\
import json
def ask(uid, q):
    h = json.loads(r.get(uid))
    h.append({{"role": "user", "content": q}})
    r.set(uid, json.dumps({saved}))
"""


def test_a_list_loaded_and_saved_back_whole_is_a_stored_history():
    def assertion(facts):
        history = facts.histories["ask:h"]
        assert history.storage.kind == "stored" and history.unbounded

    check(ROUND_TRIP.format(saved="h"), assertion)


def test_saving_back_only_a_tail_is_not_a_round_trip():
    check(ROUND_TRIP.format(saved="h[-20:]"), lambda facts: assert_no_history(facts, "ask:h"))


def test_a_store_handed_in_as_a_parameter_does_not_last():
    check(
        """\
        def ask(store, q):
            h = store.get("h")
            h.append({"role": "user", "content": q})
            store.set("h", h)
        """,
        lambda facts: assert_no_history(facts, "ask:h"),
    )


def assert_no_history(facts, key):
    assert key not in facts.histories


# --- database histories (chatbound.databases) ------------------------------------------------


def reads(facts) -> list[tuple[str, str]]:
    """(read call, store key) for every call the facts see as a whole read of a database."""
    found = []
    for call in facts.nodes.calls:
        storage = facts.store_read(call)
        if storage is not None:
            found.append((facts.code(call), storage.key))
    return found


def test_a_document_list_appended_and_set_back_grows_where_it_is_appended():
    def assertion(facts):
        history = facts.histories["mongo:chats['history']"]
        assert history.storage.kind == "database" and history.unbounded
        assert [facts.code(g) for g in history.growth] == ['history.append({"role": "user", "content": q})']

    check(
        """\
        chats = MongoClient()["bot"]["chats"]
        def ask(uid, q):
            doc = chats.find_one({"_id": uid}) or {"history": []}
            history = doc["history"]
            history.append({"role": "user", "content": q})
            chats.update_one({"_id": uid}, {"$set": {"history": history}})
        """,
        assertion,
    )


def test_an_append_never_written_back_does_not_grow_the_store():
    check(
        """\
        chats = MongoClient()["bot"]["chats"]
        def ask(uid, q):
            history = chats.find_one({"_id": uid})["history"]
            history.append({"role": "user", "content": q})
            return history
        """,
        lambda facts: assert_no_growth(facts, "mongo:chats['history']"),
    )


def test_a_collection_read_with_find_grows_where_the_same_request_inserts():
    def assertion(facts):
        history = facts.histories["mongo:turns"]
        assert [facts.code(g)[:16] for g in history.growth] == ["turns.insert_one"] and history.unbounded

    check(
        """\
        turns = db.turns
        def ask(uid, q):
            past = list(turns.find({"uid": uid}).sort("at", 1))
            turns.insert_one({"uid": uid, "question": q})
        def admin(uid):
            turns.insert_one({"uid": uid, "question": "reset"})
        """,
        assertion,
    )


def test_an_insert_where_nothing_reads_the_collection_whole_is_not_growth():
    def assertion(facts):
        assert facts.histories["mongo:products"].growth == []

    check(
        """\
        def add(p):
            db.products.insert_one(p)
        def ask(q):
            return list(db.products.find({}))
        def newest(q):
            db.products.insert_one({"q": q})
            return list(db.products.find({}).sort("_id", -1).limit(5))
        """,
        assertion,
    )


def test_mongo_reads_of_the_newest_n_are_not_whole_reads():
    check(
        """\
        def ask(uid):
            a = list(db.turns.find({"uid": uid}).sort("_id", -1).limit(20))
            b = db.turns.find({"uid": uid}, limit=20)
            c = await db.turns.find({"uid": uid}).to_list(20)
            d = db.chats.find_one({"_id": uid}, {"history": {"$slice": -20}})
            e = await db.turns.find({"uid": uid}).to_list(None)
            f = text.find("history")
        """,
        lambda facts: reads_are(
            facts,
            [
                ('db.turns.find({"uid": uid}).to_list(None)', "mongo:turns"),
                ('db.turns.find({"uid": uid})', "mongo:turns"),
            ],
        ),
    )


def test_push_with_a_slice_and_pop_are_trims_of_the_list_field():
    def assertion(facts):
        history = facts.histories["mongo:chats['history']"]
        assert len(history.trims) == 2 and not history.unbounded

    check(
        """\
        def ask(uid, m):
            h = db.chats.find_one({"_id": uid})["history"]
            db.chats.update_one({"_id": uid}, {"$push": {"history": {"$each": [m], "$slice": -40}}})
            db.chats.update_one({"_id": uid}, {"$pop": {"history": -1}})
        """,
        assertion,
    )


def test_redis_reads_whole_lists_and_documents_of_a_redis_client_only():
    check(
        """\
        import redis
        r = redis.Redis()
        def ask(uid):
            key = f"chat:{uid}"
            a = r.lrange(key, 0, -1)
            b = r.lrange(key, -20, -1)
            c = json.loads(r.get(key) or "[]")
            d = cache.get(key)
        """,
        lambda facts: reads_are(
            facts,
            [
                ("r.lrange(key, 0, -1)", 'redis:f"chat:{uid}"'),
                ('json.loads(r.get(key) or "[]")', 'redis:f"chat:{uid}"'),
                ("r.get(key)", 'redis:f"chat:{uid}"'),
            ],
        ),
    )


def test_rpush_grows_and_ltrim_bounds_a_redis_list():
    def assertion(facts):
        assert facts.histories['redis:f"log:{uid}"'].unbounded
        trimmed = facts.histories['redis:f"brief:{uid}"']
        assert len(trimmed.growth) == 1 and len(trimmed.trims) == 1 and not trimmed.unbounded

    check(
        """\
        def log(uid, m):
            r.rpush(f"log:{uid}", json.dumps(m))
            return r.lrange(f"log:{uid}", 0, -1)
        def brief(uid, m):
            r.rpush(f"brief:{uid}", json.dumps(m))
            r.ltrim(f"brief:{uid}", -30, -1)
            return r.lrange(f"brief:{uid}", 0, -1)
        """,
        assertion,
    )


def test_a_select_without_limit_reads_the_table_whole():
    check(
        """\
        def ask(conn, cid):
            a = conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id", (cid,)).fetchall()
            b = conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id DESC LIMIT 20", (cid,)).fetchall()
            cur = conn.cursor()
            cur.execute(SQL, (cid,))
            c = cur.fetchall()
            d = cur.fetchmany(20)
        SQL = "SELECT * FROM turns WHERE chat = ?"
        """,
        lambda facts: reads_are(
            facts,
            [
                (
                    'conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id", (cid,)).fetchall()',
                    "sql:messages",
                ),
                (
                    'conn.execute("SELECT role, content FROM messages WHERE chat = ? ORDER BY id", (cid,))',
                    "sql:messages",
                ),
                ("cur.execute(SQL, (cid,))", "sql:turns"),
                ("cur.fetchall()", "sql:turns"),
            ],
        ),
    )


def test_orm_querysets_are_whole_reads_unless_limited_or_sliced():
    check(
        """\
        def ask(session, cid):
            a = session.scalars(select(Turn).where(Turn.chat == cid)).all()
            b = session.scalars(select(Turn).where(Turn.chat == cid).limit(20)).all()
            c = Message.objects.filter(chat=cid).order_by("created")
            d = Message.objects.filter(chat=cid).order_by("-created")[:20]
        """,
        lambda facts: reads_are(
            facts,
            [
                ("session.scalars(select(Turn).where(Turn.chat == cid)).all()", "orm:Turn"),
                ("session.scalars(select(Turn).where(Turn.chat == cid))", "orm:Turn"),
                ("select(Turn).where(Turn.chat == cid)", "orm:Turn"),
                ("select(Turn)", "orm:Turn"),
                ('Message.objects.filter(chat=cid).order_by("created")', "orm:Message"),
                ("Message.objects.filter(chat=cid)", "orm:Message"),
            ],
        ),
    )


def assert_no_growth(facts, key):
    assert facts.histories[key].growth == [] and not facts.histories[key].unbounded


def reads_are(facts, expected):
    assert reads(facts) == expected
