"""The project pass on big trees: a tree above its cap (project-max-mb) is checked one module at
a time and says so, notebooks do not count towards the cap, the pass summarises only what a
file can use, and an imported module that cannot be read whole never fails its importer."""

from __future__ import annotations

import json
import os

from test_project import BOT, LLM

from chatbound.analysis.project import summary
from chatbound.run.config import Settings
from chatbound.run.runner import MB, run
from chatbound.vocabulary.summaries import ModuleSummary

NOT_YET = """\
sizes = []


def answer(messages):
    sizes.append(len(messages))
    return sizes[-1]
"""
SERVICE = """\
from wrapper import chat as _chat


def chat(messages):
    return _chat(messages)
"""
WRAPPER = SERVICE.replace("from wrapper", "from llm")


def _summarised(monkeypatch) -> list[bytes]:
    """The sources the project pass summarises with LibCST, from now on."""
    seen: list[bytes] = []
    real = summary.summarize

    def recorded(source: bytes) -> ModuleSummary:
        seen.append(source)
        return real(source)

    monkeypatch.setattr(summary, "summarize", recorded)
    return seen


def test_a_file_whose_imports_reach_no_model_call_is_not_summarised_and_rests_on_what_was_looked_at(write, monkeypatch):
    """bot.py grows a history and hands it to llm.answer, which calls no model (it grows a list
    and speaks of messages, which would have it summarised): bot.py holds no model call's shape
    of its own, so nothing is summarised. When llm.answer starts to call
    one, bot.py is checked again (its result rested on llm.py) and the finding appears."""
    root = write({"bot.py": BOT.replace("chat", "answer"), "llm.py": NOT_YET})
    summarised = _summarised(monkeypatch)
    settings = Settings(root=root)
    assert run([root], settings, cache=True).findings == []
    assert summarised == []
    (root / "llm.py").write_text(LLM.replace("def chat", "def answer"))
    again = run([root], settings, cache=True)
    assert sorted(os.path.basename(p) for p in again.parsed) == ["bot.py", "llm.py"]
    (finding,) = again.findings
    assert (os.path.basename(finding.path), finding.span.line, finding.span.col) == ("bot.py", 9, 19)
    assert [os.path.basename(r.path) for r in finding.related if r.path] == ["llm.py"]


def test_a_model_call_two_wrapper_modules_away_is_reached(write):
    """bot.py -> service.chat -> wrapper.chat -> llm.chat: the model call three imports away
    is found, and names llm.py."""
    root = write(
        {"bot.py": BOT.replace("from llm", "from service"), "service.py": SERVICE, "wrapper.py": WRAPPER, "llm.py": LLM}
    )
    (finding,) = run([root], Settings(root=root)).findings
    assert (os.path.basename(finding.path), finding.span.line, finding.span.col) == ("bot.py", 9, 17)
    assert [os.path.basename(r.path) for r in finding.related if r.path] == ["llm.py"]


def test_a_module_too_deep_to_summarise_offers_nothing_and_its_importer_is_still_checked(write):
    """An expression deeper than the recursion limit (thousands of joined lists) in an imported
    module: its summary is empty, the importer's own finding is reported, and no error."""
    deep = "history = []\n\n\ndef grow(text):\n    history.append({'role': 'user', 'content': text})\n    return history + "
    deep += " + ".join(f"[{i}]" for i in range(1200)) + "\n"
    assert summary.summarize(deep.encode()) == ModuleSummary()
    root = write(
        {
            "deep.py": deep,
            "llm.py": LLM,
            "bot.py": BOT.replace("from llm import chat", "from llm import chat\nimport deep"),
        }
    )
    result = run([root], Settings(root=root))
    assert [(os.path.basename(f.path), f.rule_id) for f in result.findings] == [("bot.py", "MEMORY-UNBOUNDED-HISTORY")]
    assert [e for e in result.errors if "bot.py" in e.path] == []


def test_notebooks_do_not_count_towards_the_project_cap(write):
    """A notebook is checked, never imported: a tree whose notebooks (their outputs) hold more
    than the cap still links its modules."""
    outputs = {
        "cells": [
            {
                "cell_type": "code",
                "source": ["print(1)\n"],
                "metadata": {},
                "execution_count": 1,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["x" * (1 << 20)]}],
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    notebooks = {f"notebooks/n{i}.ipynb": json.dumps(outputs) for i in range(Settings().project_max_mb + 1)}
    root = write({**notebooks, "llm.py": LLM, "bot.py": BOT})
    (finding,) = run([root], Settings(root=root)).findings
    assert (os.path.basename(finding.path), finding.span.line) == ("bot.py", 9)


# A module that would be summarised (it grows a list and speaks of messages) but offers bot.py
# nothing it asks about: a class only annotated with, subclassed and tested with isinstance.
MODELS = """\
class Reply:
    def __init__(self):
        self.messages = []

    def add(self, text):
        self.messages.append({"role": "assistant", "content": text})
        return self.messages
"""
TYPED_BOT = (
    BOT.replace("from llm import chat", "from llm import chat\nfrom models import Reply")
    + """

class Answer(Reply):
    pass


def shown(reply: Reply) -> bool:
    return isinstance(reply, Reply)
"""
)


def test_a_class_only_annotated_with_subclassed_or_read_is_not_summarised(write, monkeypatch):
    """bot.py names models.Reply only in an annotation, a base list and `isinstance`: no method
    of it is called, so models.py is not summarised; llm.chat, called, is, and the finding
    stays."""
    root = write({"bot.py": TYPED_BOT, "llm.py": LLM, "models.py": MODELS})
    summarised = _summarised(monkeypatch)
    (finding,) = run([root], Settings(root=root)).findings
    assert (os.path.basename(finding.path), finding.span.line, finding.span.col) == ("bot.py", 10, 17)
    assert summarised == [LLM.encode()]


def test_a_parameter_typed_with_an_imported_class_whose_method_is_called_is_summarised(write, monkeypatch):
    """`reply: Reply` and `reply.add(text)`: the method may return a history, so models.py is
    summarised."""
    typed = TYPED_BOT.replace("    return isinstance(reply, Reply)", "    return reply.add('hi')")
    root = write({"bot.py": typed, "llm.py": LLM, "models.py": MODELS})
    summarised = _summarised(monkeypatch)
    run([root], Settings(root=root))
    assert sorted(summarised) == sorted([LLM.encode(), MODELS.encode()])


QUIET_WRAPPER = """\
from store import keep


def chat(messages):
    return keep(messages)
"""
STORE = """\
kept = []


def keep(messages):
    kept.append({"role": "user", "content": str(len(messages))})
    return len(kept)
"""


def test_a_parameter_passed_on_to_a_module_that_reaches_no_model_is_not_followed(write, monkeypatch):
    """bot.py -> wrapper.chat -> store.keep, which calls no model and imports nothing that
    does: store.py is not summarised. When it starts to call one, bot.py and wrapper.py (which
    speaks of messages and hands them to store.py) are checked again (their results rested on
    store.py) and the finding names the model call there."""
    root = write({"bot.py": BOT.replace("from llm", "from wrapper"), "wrapper.py": QUIET_WRAPPER, "store.py": STORE})
    summarised = _summarised(monkeypatch)
    settings = Settings(root=root)
    assert run([root], settings, cache=True).findings == []
    assert STORE.encode() not in summarised
    (root / "store.py").write_text(LLM.replace("def chat", "def keep"))
    again = run([root], settings, cache=True)
    assert sorted(os.path.basename(p) for p in again.parsed) == ["bot.py", "store.py", "wrapper.py"]
    (finding,) = again.findings
    assert (os.path.basename(finding.path), finding.span.line, finding.span.col) == ("bot.py", 9, 17)
    assert [os.path.basename(r.path) for r in finding.related if r.path] == ["store.py"]


def _capped(write, project_max_mb: int):
    """bot.py's finding rests on llm.py; a 1.5 MB module of comments makes the tree's modules
    weigh more than 1 MB."""
    root = write({"llm.py": LLM, "bot.py": BOT, "padding.py": "# padding\n" * (MB * 3 // 20)})
    return run([root], Settings(root=root, project_max_mb=project_max_mb))


def test_a_tree_above_project_max_mb_is_checked_module_by_module_and_says_so(write):
    result = _capped(write, 1)
    assert result.findings == [] and result.linked == 0
    assert result.notes == [
        "modules are checked one at a time, not linked through their imports: 1.5 MB of Python "
        "modules is above project-max-mb = 1 (raise it in [tool.chatbound] or with --project-max-mb)"
    ]


def test_raising_project_max_mb_links_the_tree(write):
    result = _capped(write, 2)
    assert [(os.path.basename(f.path), f.rule_id, f.span.line) for f in result.findings] == [
        ("bot.py", "MEMORY-UNBOUNDED-HISTORY", 9)
    ]
    assert result.notes == []


def test_project_max_mb_0_never_links_and_says_nothing(write):
    root = write({"llm.py": LLM, "bot.py": BOT})
    result = run([root], Settings(root=root, project_max_mb=0))
    assert result.findings == [] and result.notes == []
