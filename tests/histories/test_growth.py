"""Growth: how each history grows, per turn or once at set-up."""

from __future__ import annotations

from .harness import check


def test_growth_in_a_setup_method_is_not_per_turn():
    def assertion(facts):
        history = facts.histories["Bot.h"]
        assert len(history.init_growth) == 1 and len(history.growth) == 1
        assert history.system_first and history.roles == {"system", "user"}

    check(
        """\
        class Bot:
            def __init__(self):
                self.h = []
                self.h.append({"role": "system", "content": "be brief"})
            def ask(self, q):
                self.h.append({"role": "user", "content": q})
        """,
        assertion,
    )


def test_rebinding_to_the_old_value_plus_more_is_growth():
    def assertion(facts):
        assert len(facts.histories["HISTORY"].growth) == 1 and facts.histories["HISTORY"].unbounded

    check(
        """\
        HISTORY = []
        def ask(q):
            global HISTORY
            HISTORY = HISTORY + [{"role": "user", "content": q}]
        """,
        assertion,
    )


def test_a_helper_that_grows_its_parameter_grows_the_argument():
    def assertion(facts):
        (site,) = facts.histories["Bot.h"].growth
        assert facts.code(site.func) == "remember"

    check(
        """\
        def remember(history, text):
            history.append({"role": "user", "content": text})
        class Bot:
            def ask(self, q):
                remember(self.h, q)
        """,
        assertion,
    )


def test_numbers_are_not_a_chat_history():
    def assertion(facts):
        assert facts.histories["Bot.latencies"].growth and not facts.histories["Bot.latencies"].is_chat

    check(
        """\
        class Bot:
            def ask(self, q):
                self.latencies.append(0.5)
        """,
        assertion,
    )
