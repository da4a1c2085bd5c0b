"""The work the post-rule steps (fixes and cost projections) do for each finding stays flat as a
module grows and its findings multiply: counted as Python calls made inside the steps, not timed.
A step that walks the whole module again for every finding does four times the work per finding
on a module four times the size; one that asks an index built once per module does the same."""

from __future__ import annotations

import sys

import chatbound.run.pipeline as pipeline
from chatbound.run.registry import all_rules

CHAT = """

class Chat{i}:
    def __init__(self, client):
        self.client = client
        self.history = [{{"role": "system", "content": "You are helper {i}."}}]

    def ask(self, text):
        self.history.append({{"role": "user", "content": text}})
        reply = self.client.chat.completions.create(model="gpt-4o", messages=self.history)
        answer = reply.choices[0].message.content
        self.history.append({{"role": "assistant", "content": answer}})
        return answer
"""


def _calls_per_finding(classes: int, monkeypatch) -> float:
    counted = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            counted[0] += 1

    def counting(step):
        def run(*args, **kwargs):
            sys.setprofile(count)
            try:
                return step(*args, **kwargs)
            finally:
                sys.setprofile(None)

        return run

    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "attach_fixes", counting(pipeline.attach_fixes))
        patch.setattr(pipeline, "attach_projections", counting(pipeline.attach_projections))
        source = "from openai import OpenAI\n" + "".join(CHAT.format(i=i) for i in range(classes))
        result = pipeline.analyze_source(source, "chats.py", all_rules(), {})
    findings = [f for f in result.findings if f.rule_id == "MEMORY-UNBOUNDED-HISTORY"]
    assert len(findings) == classes and all(f.fix is not None for f in findings)
    return counted[0] / classes


def test_fixes_and_projections_do_the_same_work_per_finding_on_a_module_four_times_the_size(monkeypatch):
    _calls_per_finding(2, monkeypatch)  # first use: the encoder and what each step loads once per process
    small = _calls_per_finding(10, monkeypatch)
    large = _calls_per_finding(40, monkeypatch)
    assert large <= 1.25 * small, (small, large)
