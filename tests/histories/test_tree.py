"""Tree: the value a name was last bound to, and which of the module's functions a call runs."""

from __future__ import annotations

import libcst as cst

from .harness import call_named, check


def test_a_rebinding_read_sees_the_binding_before_it():
    def assertion(facts):
        sent = call_named(facts, "client.chat.completions.create").args[0].value
        bound = facts.assignment_before(sent)
        assert facts.code(bound) == "h[-10:]"
        inner = next(n for n in facts.nodes.assigns if facts.code(n.value) == "h[-10:]").value.value
        assert facts.code(facts.assignment_before(inner)) == "load()"

    check(
        """\
        def ask():
            h = load()
            h = h[-10:]
            return client.chat.completions.create(h)
        """,
        assertion,
    )


def test_a_parameter_is_bound_by_its_param():
    def assertion(facts):
        sent = call_named(facts, "client.chat.completions.create").args[0].value
        assert isinstance(facts.assignment_before(sent), cst.Param)

    check("def ask(h):\n    return client.chat.completions.create(h)\n", assertion)


def test_a_method_call_on_self_runs_the_method_of_its_own_class():
    def assertion(facts):
        (callee,) = facts.callees(call_named(facts, "self.history"))
        assert facts.class_of(callee).name.value == "B"

    check(
        """\
        class A:
            def history(self):
                return []
        class B:
            def history(self):
                return self.h
            def ask(self):
                return self.history()
        """,
        assertion,
    )


def test_argument_for_skips_self_on_a_method_call():
    def assertion(facts):
        call = call_named(facts, "bot.send")
        (function,) = facts.callees(call)
        assert facts.code(facts.argument_for(call, function, "messages")) == "h"
        assert facts.code(facts.argument_for(call, function, "model")) == "'m'"

    check(
        """\
        class Bot:
            def send(self, messages, model="x"):
                return messages
        bot.send(h, model='m')
        """,
        assertion,
    )


def test_a_read_in_the_value_a_tuple_unpacks_sees_the_binding_before_it():
    def assertion(facts):
        passed = call_named(facts, "ask").args[1].value
        assert facts.code(facts.assignment_before(passed)) == "None"

    check(
        """\
        def main():
            h = None
            while True:
                reply, h = ask(input(), h)
        """,
        assertion,
    )
