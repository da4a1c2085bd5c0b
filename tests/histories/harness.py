"""Runs an assertion on the chat facts of a snippet while LibCST metadata is live (the facts read it)."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from chatbound.analysis.chat import ChatRule
from chatbound.analysis.rule import RuleContext
from chatbound.findings import Severity


class Capture(ChatRule):
    """Runs a check on the facts while the metadata is live (the facts need it)."""

    ID, NAME, SEVERITY, SUMMARY = "CAPTURE", "capture", Severity.LOW, "test harness"

    def __init__(self, context, check) -> None:
        super().__init__(context)
        self.check = check
        self.checked = False

    def leave_Module(self, original_node: cst.Module) -> None:
        self.check(self.chat_facts())
        self.checked = True


def check(code: str, assertion) -> None:
    module = cst.parse_module(textwrap.dedent(code))
    rule = Capture(RuleContext("t.py", module, {}), assertion)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([rule])
    assert rule.checked


def call_named(facts, text: str) -> cst.Call:
    return next(c for c in facts.nodes.calls if facts.code(c.func) == text)


def arg(call: cst.Call, keyword: str) -> cst.BaseExpression:
    return next(a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword)
