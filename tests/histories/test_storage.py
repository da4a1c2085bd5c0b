"""Storage: which lasting state an expression names."""

from __future__ import annotations

from .harness import check


def test_a_local_alias_of_a_session_entry_names_the_same_storage():
    def assertion(facts):
        history = facts.histories["sessions[]"]
        assert history.storage.kind == "entry" and len(history.growth) == 1 and history.unbounded

    check(
        """\
        sessions = {}
        def reply(sid, text):
            history = sessions.setdefault(sid, [])
            history.append({"role": "user", "content": text})
            return client.chat.completions.create(model="m", messages=history)
        """,
        assertion,
    )
