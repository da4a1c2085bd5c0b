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


def test_a_list_filled_from_what_a_server_lists_is_set_up_not_growth():
    def assertion(facts):
        tools = facts.histories["Desk.tools"]
        assert tools.growth == [] and len(tools.init_growth) == 1

    check(
        """\
        class Desk:
            def __init__(self):
                self.tools = []
            async def connect(self, session):
                listing = await session.list_tools()
                self.tools.extend([{"name": t.name} for t in listing.tools])
        """,
        assertion,
    )


def test_items_iterated_from_the_request_or_a_reply_are_growth():
    def assertion(facts):
        assert len(facts.histories["Desk.h"].growth) == 3

    check(
        """\
        class Desk:
            def __init__(self):
                self.h = []
            def add(self, turns):
                for index, turn in enumerate(turns):
                    self.h.append(turn)
            def ask(self):
                reply = client.messages.create(model="m", max_tokens=9, messages=self.h)
                for block in reply.content:
                    self.h.append(block)
                self.h.extend([b for b in reversed(reply.content)])
        """,
        assertion,
    )


def test_a_top_level_for_over_files_runs_once_and_a_top_level_chat_loop_every_turn():
    def assertion(facts):
        assert facts.histories["documents"].growth == [] and len(facts.histories["documents"].init_growth) == 1
        assert len(facts.histories["history"].growth) == 1

    check(
        """\
        import os
        documents = []
        for name in sorted(os.listdir("docs")):
            documents.append({"type": "document", "title": name})
        history = []
        while True:
            history.append(input("> "))
        """,
        assertion,
    )


def test_a_function_that_grows_and_returns_its_parameter_returns_the_same_list():
    def assertion(facts):
        returned = {name: facts.returned_params(facts.functions[name][0]) for name in ("ask", "fresh", "kept", "told")}
        assert returned == {"ask": ["h"], "fresh": [], "kept": [], "told": []}

    check(
        """\
        def ask(q, h=None):
            h = [] if h is None else h
            h.append({"role": "user", "content": q})
            return "ok", h

        def fresh(q, h=None):
            h = [{"role": "user", "content": q}]
            h.append({"role": "assistant", "content": "ok"})
            return "ok", h

        def kept(q, h):
            h.append({"role": "user", "content": q})
            return "ok"

        def told(q, h):
            return "ok", h
        """,
        assertion,
    )


def test_a_list_passed_through_a_function_that_grows_and_returns_it_grows_in_the_chat_loop():
    def assertion(facts):
        (history,) = [h for h in facts.histories.values() if h.storage.kind == "loop"]
        assert history.storage.label == "h"
        assert [facts.code(site) for site in history.growth] == ["ask(input(), h)"]

    check(
        """\
        def ask(q, h=None):
            h = h or []
            h.append({"role": "user", "content": q})
            return client.chat.completions.create(model="m", messages=h), h

        def main():
            h = None
            while True:
                reply, h = ask(input(), h)
        """,
        assertion,
    )
