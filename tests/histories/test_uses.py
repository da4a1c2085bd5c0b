"""Uses: whole histories inside an expression, bounded views left out."""

from __future__ import annotations

import pytest

from .harness import arg, call_named, check


@pytest.mark.parametrize(
    "expression, whole",
    [
        ("self.h", True),
        ("[SYSTEM, *self.h, user]", True),
        ("[SYSTEM] + self.h", True),
        ("list(self.h)", True),
        ("self.h.copy()", True),
        ("self.h[1:]", True),
        ("[to_dict(m) for m in self.h]", True),
        ("'\\n'.join(m['content'] for m in self.h)", True),
        ("self.transcript()", True),
        ("self.h[-10:]", False),
        ("[SYSTEM, *self.h[-10:]]", False),
        ("trim_messages(self.h, max_tokens=100)", False),
        ("self.h[-1]['content']", False),
        ("len(self.h)", False),
    ],
)
def test_whole_history_in_tells_whole_histories_from_bounded_views(expression, whole):
    def assertion(facts):
        sent = arg(call_named(facts, "client.chat.completions.create"), "messages")
        assert [u.storage.key for u in facts.whole_history_in(sent)] == (["Bot.h"] if whole else [])

    check(
        f"""\
        class Bot:
            def transcript(self):
                return list(self.h)

            def ask(self, q):
                self.h.append({{"role": "user", "content": q}})
                return client.chat.completions.create(model="m", messages={expression})
        """,
        assertion,
    )


def test_a_list_derived_into_a_local_is_reported_at_the_argument_with_the_derivation_related():
    def assertion(facts):
        (flow,) = facts.flows()
        assert facts.code(flow.use.node) == "msgs" and [facts.code(n) for n in flow.use.via] == ["HISTORY"]

    check(
        """\
        HISTORY = []
        def ask(q):
            msgs = [SYSTEM] + HISTORY
            HISTORY.append({"role": "user", "content": q})
            return client.chat.completions.create(model="m", messages=msgs)
        """,
        assertion,
    )
