"""The project model: imports read and resolved, summaries linked across modules, and the cache
re-checking exactly the importers of an edited module."""

from __future__ import annotations

import os

from chatbound.analysis.project.imports import Resolver, imports_of
from chatbound.run.config import Settings
from chatbound.run.runner import run

LLM = """\
from openai import OpenAI

client = OpenAI()


def chat(messages):
    return client.chat.completions.create(model="gpt-4o", messages=messages)
"""
BOT = """\
from llm import chat

histories = {}


def on_message(uid, text):
    h = histories.setdefault(uid, [])
    h.append({"role": "user", "content": text})
    return chat(h)
"""
OTHER = """\
from openai import OpenAI

client = OpenAI()


def once(text):
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
"""


def test_imports_are_read_as_the_chat_facts_spell_them():
    source = (
        b"import os, app.db as D\nfrom .llm import chat as send, x\nfrom . import llm\nfrom ..pkg.m import (\n  a,\n"
        b"  b as c,\n)\nfrom store import *\n"
    )
    assert imports_of(source) == [
        ("os", "os"),
        ("D", "app.db"),
        ("send", ".llm.chat"),
        ("x", ".llm.x"),
        ("llm", ".llm"),
        ("a", "..pkg.m.a"),
        ("c", "..pkg.m.b"),
        ("*", "store"),
    ]


def test_relative_absolute_and_package_imports_resolve_to_files(write):
    root = write({"app/__init__.py": "", "app/llm.py": "", "app/bot.py": "", "app/tools/__init__.py": ""})
    resolver = Resolver(str(root))
    bot = str(root / "app" / "bot.py")
    assert resolver.module(bot, ".llm.chat") == (str(root / "app" / "llm.py"), ("chat",))
    assert resolver.module(bot, "app.llm.chat") == (str(root / "app" / "llm.py"), ("chat",))
    assert resolver.module(bot, ".tools") == (str(root / "app" / "tools" / "__init__.py"), ())
    assert resolver.module(bot, "openai.OpenAI") is None


def test_imports_naming_the_checked_folder_itself_resolve_from_its_parent(write):
    # `chatbound check .` inside backend/, whose modules import `backend.services.x`
    root = write({"backend/services/__init__.py": "", "backend/services/answers.py": "", "backend/routes/ask.py": ""})
    resolver = Resolver(str(root / "backend"))
    ask = str(root / "backend" / "routes" / "ask.py")
    answers = str(root / "backend" / "services" / "answers.py")
    assert resolver.module(ask, "backend.services.answers.answer") == (answers, ("answer",))
    assert resolver.module(ask, "services.answers.answer") == (answers, ("answer",))
    assert resolver.module(ask, "frontend.services.answers") is None


def test_a_history_sent_by_another_module_names_the_model_call_there(write):
    root = write({"llm.py": LLM, "bot.py": BOT})
    (finding,) = run([root], Settings(root=root)).findings
    assert (finding.path.endswith("bot.py"), finding.span.line, finding.span.col) == (True, 9, 17)
    (elsewhere,) = [r for r in finding.related if r.path]
    assert elsewhere.path.endswith("llm.py") and elsewhere.span.line == 7


def test_without_the_sending_module_there_is_no_finding(write):
    root = write({"bot.py": BOT})
    assert run([root], Settings(root=root)).findings == []


def test_editing_a_helper_rechecks_its_importers_and_nothing_else(write):
    root = write({"llm.py": LLM, "bot.py": BOT, "other.py": OTHER})
    settings = Settings(root=root)
    cold = run([root], settings, cache=True)
    assert len(cold.findings) == 1 and cold.linked >= 1
    assert run([root], settings, cache=True).parsed == []
    (root / "llm.py").write_text(LLM + "# a comment\n")
    again = run([root], settings, cache=True)
    assert sorted(os.path.basename(p) for p in again.parsed) == ["bot.py", "llm.py"]
    assert len(again.findings) == 1


WRAPPER = """\
from llm import chat


def ask(messages):
    return chat(messages)
"""


def test_editing_a_leaf_rechecks_its_importers_up_through_a_wrapper_and_nothing_else(write):
    """bot.py sends through wrapper.ask, which forwards to llm.chat: bot.py's result rests on
    llm.py two imports away, the wrapper's on llm.py directly; other.py rests on nothing."""
    root = write(
        {
            "llm.py": LLM,
            "wrapper.py": WRAPPER,
            "bot.py": BOT.replace("from llm import chat", "from wrapper import ask as chat"),
            "other.py": OTHER,
        }
    )
    settings = Settings(root=root)
    (finding,) = run([root], settings, cache=True).findings
    assert finding.path.endswith("bot.py") and [r.path for r in finding.related if r.path][0].endswith("llm.py")
    (root / "llm.py").write_text(LLM.replace("messages=messages", "messages=messages[-20:]"))
    again = run([root], settings, cache=True)
    assert sorted(os.path.basename(p) for p in again.parsed) == ["bot.py", "llm.py", "wrapper.py"]
    assert again.findings == []


BACKEND = """\
from openai import OpenAI

client = OpenAI()


def complete(items):
    return client.chat.completions.create(model="gpt-4o", messages=items)
"""
RELAY = """\
import backend


def respond(items):
    out = backend.complete(items)
    return out
"""
DESK = """\
import relay

log = []


def on_message(text):
    log.append({"role": "user", "content": text})
    return relay.respond(log)
"""


def test_a_wrapper_with_no_chat_word_or_model_call_of_its_own_still_forwards(write):
    """relay.py holds no model call's shape and no chat word: it is summarised because a
    model is reachable from what it imports, so desk.py's growing list reaches backend.py."""
    root = write({"backend.py": BACKEND, "relay.py": RELAY, "desk.py": DESK})
    (finding,) = run([root], Settings(root=root)).findings
    assert (finding.rule_id, os.path.basename(finding.path), finding.span.line, finding.span.col) == (
        "MEMORY-UNBOUNDED-HISTORY",
        "desk.py",
        8,
        26,
    )
    assert [(os.path.basename(r.path), r.span.line) for r in finding.related if r.path] == [("backend.py", 7)]


def test_a_wrapper_whose_imports_reach_no_model_rests_on_them_until_one_does(write):
    """With backend.py only printing, nothing is reported; when backend.py gains the model
    call, desk.py is checked again (its result rested on backend.py through relay.py)."""
    quiet = BACKEND.replace('client.chat.completions.create(model="gpt-4o", messages=items)', "print(items)")
    root = write({"backend.py": quiet, "relay.py": RELAY, "desk.py": DESK})
    settings = Settings(root=root)
    assert run([root], settings, cache=True).findings == []
    (root / "backend.py").write_text(BACKEND)
    again = run([root], settings, cache=True)
    assert "desk.py" in [os.path.basename(p) for p in again.parsed]
    assert [(os.path.basename(f.path), f.span.line) for f in again.findings] == [("desk.py", 8)]


def test_a_module_declares_only_the_lists_it_names_nowhere_else():
    from chatbound.analysis.project.lists import module_lists

    source = (
        b"from openai import OpenAI\n"
        b"history = []\n"
        b"recent: list = list()\n"
        b"seen = []\n"
        b"seen.append(1)\n"  # grown in its own module: that module decides what bounds it
        b"cleared = []\n"
        b"def reset():\n    global cleared\n    cleared = []\n"
        b"settings = {}\n"
        b'text = """\nnotes = []\n"""\n'  # in a string: no binding
        b"if True:\n    indented = []\n"  # not at the top level
    )
    found = module_lists(source)
    assert {name: (s.line, s.col, s.end_col) for name, s in found.items()} == {
        "history": (2, 1, 8),
        "recent": (3, 1, 7),
    }
    assert module_lists(b"history = [\n") == {}  # CPython rejects it: nothing is declared
