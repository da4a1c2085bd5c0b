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
