"""The pre-check's search: trigger patterns searched as their alternatives, words found in one pass."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

from chatbound.run.precheck import alternatives
from chatbound.run.registry import all_rules


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (
            rb"(?:Memory|History)[\s)]*\(|\btrim_messages\b",
            [rb"Memory[\s)]*\(", rb"History[\s)]*\(", rb"\btrim_messages\b"],
        ),
        (rb"\b(?:Send|gather)[\s)]*\(", [rb"\bSend[\s)]*\(", rb"\bgather[\s)]*\("]),
        (rb"(?:a|b(?:c|d))x", [rb"ax", rb"b(?:c|d)x"]),
        (rb"(?:(?:a|b)|c)x", [rb"ax", rb"bx", rb"cx"]),
        # left whole: a quantified group, a group that does not open the pattern, a capturing group
        (rb"(?:a|b)*x", [rb"(?:a|b)*x"]),
        (rb"(?:a|b){2}x", [rb"(?:a|b){2}x"]),
        (rb"[\"'](?:system|developer)[\"']", [rb"[\"'](?:system|developer)[\"']"]),
        (rb"(a|b)x", [rb"(a|b)x"]),
        # a `|` or a paren in a class or escaped is not syntax
        (rb"[(|]a|b", [rb"[(|]a", rb"b"]),
        (rb"[]|]a|b", [rb"[]|]a", rb"b"]),
        (rb"\(a|\|b", [rb"\(a", rb"\|b"]),
    ],
)
def test_alternatives_cut_the_top_level_and_a_leading_group(pattern, expected):
    assert alternatives(pattern) == expected


def _patterns():
    for rule in all_rules():
        for trigger in rule.TRIGGERS or ():
            for pattern in trigger if isinstance(trigger, tuple) else (trigger,):
                if not isinstance(pattern, str):
                    yield rule.ID, pattern


def test_every_trigger_pattern_finds_the_same_files_as_its_alternatives():
    texts = [path.read_bytes() for path in sorted(FIXTURES.rglob("*.py"))]
    texts += [
        (e if isinstance(e, str) else e.code).encode() for rule in all_rules() for e in (*rule.VALID, *rule.INVALID)
    ]
    split = 0
    for rule_id, pattern in _patterns():
        parts = [re.compile(text, pattern.flags) for text in alternatives(pattern.pattern)]
        split += len(parts) > 1
        for text in texts:
            assert (pattern.search(text) is not None) == any(p.search(text) for p in parts), (rule_id, pattern.pattern)
    assert split >= 10


def test_words_that_overlap_are_all_found_in_one_pass():
    from chatbound.analysis.rule import Rule
    from chatbound.run.precheck import rules_for

    class Create(Rule):
        ID = "TEST-CREATE"
        TRIGGERS = ("create",)

    class CreateTask(Rule):
        ID = "TEST-CREATE-TASK"
        TRIGGERS = ("Create_Task",)

    class Task(Rule):
        ID = "TEST-TASK"
        TRIGGERS = (re.compile(rb"task\("),)

    rules = [Create, CreateTask, Task]
    assert rules_for(b"loop.create_task(main())\n", rules) == (Create, CreateTask, Task)
    assert rules_for(b"loop.CREATE(main())\n", rules) == (Create,)
    assert rules_for(b"loop.run(main())\n", rules) == ()
