"""Bounds: trims, size tests, rings and bounded views."""

from __future__ import annotations

import pytest

from .harness import arg, call_named, check


def test_trimming_after_growth_bounds_the_history():
    def assertion(facts):
        assert facts.histories["Bot.h"].trims and not facts.histories["Bot.h"].unbounded

    check(
        """\
        class Bot:
            def ask(self, q):
                self.h.append({"role": "user", "content": q})
                while len(self.h) > 20:
                    self.h.pop(0)
                return client.chat.completions.create(model="m", messages=self.h)
        """,
        assertion,
    )


def test_a_ring_bounds_its_history():
    def assertion(facts):
        history = facts.histories["Bot.h"]
        assert history.bounded_store and len(history.windows) == 1 and not history.unbounded

    check(
        """\
        from collections import deque
        class Bot:
            def __init__(self):
                self.h = deque(maxlen=20)
            def ask(self, q):
                self.h.append({"role": "user", "content": q})
        """,
        assertion,
    )


@pytest.mark.parametrize("guard, bounded", [("if len(self.h) > 40:", True), ("if q == 'reset':", False)])
def test_clear_bounds_only_under_a_size_test(guard, bounded):
    def assertion(facts):
        assert bool(facts.histories["Bot.h"].trims) == bounded

    check(
        f"""\
        class Bot:
            def ask(self, q):
                {guard}
                    self.h.clear()
                self.h.append({{"role": "user", "content": q}})
        """,
        assertion,
    )


def test_bounded_views_name_the_history_they_cut():
    def assertion(facts):
        sent = arg(call_named(facts, "client.chat.completions.create"), "messages")
        assert [(key, facts.code(node)) for key, node in facts.bounded_views_in(sent)] == [("Bot.h", "self.h[-10:]")]

    check(
        """\
        class Bot:
            def ask(self, q):
                self.h.append({"role": "user", "content": q})
                return client.chat.completions.create(messages=[SYSTEM, *self.h[-10:]])
        """,
        assertion,
    )
