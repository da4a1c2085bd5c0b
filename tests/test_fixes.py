"""Fixes: the edits each history finding gets, and `check --fix / --diff` applying them.

A stand-in history rule (`SendsWholeList`) plays MEMORY-UNBOUNDED-HISTORY here, following
its contract (primary span = the history expression at the send, properties name the
history and framework), so these tests do not depend on the real rule's precision.
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace

import libcst as cst
import pytest
from conftest import invoke

import chatbound.run.registry as registry
from chatbound.analysis.rule import Rule
from chatbound.findings import Edit, Finding, Fix, Severity, Span
from chatbound.fixes.apply import apply_edits
from chatbound.fixes.atomic import write_atomic
from chatbound.run.pipeline import analyze_source
from chatbound.run.trial import fix_source


class SendsWholeList(Rule):
    """A history rule for tests: `messages=NAME` or `*NAME` inside `messages=[...]`."""

    ID = "MEMORY-UNBOUNDED-HISTORY"
    NAME = "test-unbounded"
    SEVERITY = Severity.HIGH
    SUMMARY = "test stand-in"
    FRAMEWORK = "openai"

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None or node.keyword.value not in ("messages", "input"):
            return
        values = [node.value]
        if isinstance(node.value, cst.List):
            values = [e.value for e in node.value.elements if isinstance(e, cst.StarredElement)]
        for value in values:
            if isinstance(value, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in value.slice):
                continue  # a window: MEMORY-WINDOW-SPLITS-TURN's business
            if isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)):
                history = self.context.module.code_for_node(value)
                self.report(
                    value,
                    f"{history} is sent whole.",
                    properties={"history": history, "sink": "chat", "framework": self.FRAMEWORK},
                )


class LangChainSends(SendsWholeList):
    FRAMEWORK = "langchain"


class BedrockSends(SendsWholeList):
    FRAMEWORK = "bedrock"


def analyze(code: str, rule=SendsWholeList):
    return analyze_source(code, "app.py", [rule], {"turn-tokens": 400})


def only(code: str, rule=SendsWholeList) -> Finding:
    result = analyze(code, rule)
    assert result.error is None and len(result.findings) == 1
    return result.findings[0]


SERVICE = '''"""A support bot."""

from openai import OpenAI

client = OpenAI()


class Bot:
    def __init__(self):
        self.conversation = []

    def answer(self, question):
        reply = client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "system", "content": "Be brief."}, *self.conversation, {"role": "user", "content": question}],
        )
        text = reply.choices[0].message.content
        self.conversation.append({"role": "user", "content": question})
        self.conversation.append({"role": "assistant", "content": text})
        return text
'''
FIXED_SERVICE = SERVICE.replace(
    "from openai import OpenAI\n", "from openai import OpenAI\nfrom chatbound.compaction import bounded_view\n"
).replace("*self.conversation,", "*bounded_view(self.conversation, last_turns=10),")


# --- the edits -------------------------------------------------------------------------


def test_plain_sdk_history_gets_a_safe_bounded_view_wrap_and_one_import():
    finding = only(SERVICE)
    assert finding.span == Span(15, 68, 15, 85)
    assert finding.fix.safe
    assert finding.fix.edits == (
        Edit(Span(15, 68, 15, 85), "bounded_view(self.conversation, last_turns=10)"),
        Edit(Span(4, 1, 4, 1), "from chatbound.compaction import bounded_view\n"),
    )
    assert apply_edits(SERVICE, finding.fix.edits) == FIXED_SERVICE
    assert finding.suggestion == (  # the help is the edit: the same expression, the same line
        "Send bounded_view(self.conversation, last_turns=10); the stored history is unchanged. `--fix` writes "
        "`bounded_view(self.conversation, last_turns=10)` in place of `self.conversation` (line 15) and inserts "
        "`from chatbound.compaction import bounded_view` (line 4)."
    )


def test_import_goes_after_the_docstring_when_there_is_no_import():
    code = '"""Doc."""\nhistory = []\nclient.chat.completions.create(model="m", messages=history)\n'
    finding = only(code)
    assert apply_edits(code, finding.fix.edits) == (
        '"""Doc."""\nfrom chatbound.compaction import bounded_view\nhistory = []\n'
        'client.chat.completions.create(model="m", messages=bounded_view(history, last_turns=10))\n'
    )


def test_import_goes_first_without_docstring_or_imports_and_after_future_imports():
    bare = "history = []\nclient.chat.completions.create(messages=history)\n"
    assert apply_edits(bare, only(bare).fix.edits).startswith(
        "from chatbound.compaction import bounded_view\nhistory = []\n"
    )
    future = "from __future__ import annotations\nhistory = []\nclient.chat.completions.create(messages=history)"
    assert apply_edits(future, only(future).fix.edits) == (
        "from __future__ import annotations\nfrom chatbound.compaction import bounded_view\nhistory = []\n"
        "client.chat.completions.create(messages=bounded_view(history, last_turns=10))"
    )


def test_an_existing_import_is_not_added_again_and_two_sends_share_one_import():
    code = (
        "from chatbound.compaction import bounded_view\n"
        "a = client.chat.completions.create(messages=history)\n"
        "b = client.chat.completions.create(messages=history)\n"
    )
    result = analyze(code)
    assert [len(f.fix.edits) for f in result.findings] == [1, 1]
    two = "import os\na = client.chat.completions.create(messages=h)\nb = client.chat.completions.create(messages=h)\n"
    edits = [e for f in analyze(two).findings for e in f.fix.edits]
    assert apply_edits(two, edits).count("from chatbound.compaction import bounded_view") == 1


def test_history_holding_sdk_reply_objects_gets_the_safe_wrap():
    # bounded_view reads SDK reply objects as they are (duck-typed), so the wrap stays safe
    code = SERVICE.replace(
        'self.conversation.append({"role": "assistant", "content": text})',
        "self.conversation.append(reply.choices[0].message)",
    )
    finding = only(code)
    assert finding.fix.safe
    assert apply_edits(code, finding.fix.edits) == code.replace(
        "from openai import OpenAI\n", "from openai import OpenAI\nfrom chatbound.compaction import bounded_view\n"
    ).replace("*self.conversation,", "*bounded_view(self.conversation, last_turns=10),")


def test_a_history_the_code_does_not_show_is_safe_only_where_it_is_sent_as_the_messages():
    unseen = "def ask(history):\n    client.chat.completions.create(model='m', messages=history)\n"
    finding = only(unseen)
    assert finding.fix.safe and finding.fix.edits[0] == Edit(Span(2, 56, 2, 63), "bounded_view(history, last_turns=10)")
    joined = "def ask(history):\n    client.chat.completions.create(messages=[{'role': 'user', 'content': ''.join(history)}])\n"
    sent = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(2, 82, 2, 89),
        properties={"history": "history", "framework": "openai"},
    )
    assert joined.splitlines()[1][81:88] == "history"
    assert _fix_for(joined, sent).fix is None  # its items may be records: bounded_view would raise
    text = joined.replace("def ask(history):\n", "def ask(history):\n    history.append(f'User: {q}')\n")
    assert _fix_for(
        text, replace(sent, span=Span(3, 82, 3, 89), properties={**sent.properties, "growth_lines": [2]})
    ).fix.safe


def test_a_history_that_is_one_string_gets_its_tail_and_records_sent_as_messages_no_edit():
    text = "story = ''\ndef play(action):\n    global story\n    story += f'Player: {action}'\n    client.chat.completions.create(messages=story)\n"
    story = analyze_source(text, "app.py", [SendsWholeList], {}).findings[0]
    growth = {**story.properties, "growth_lines": [4]}
    fixed = _fix_for(text, replace(story, fix=None, suggestion="", properties=growth))
    assert fixed.fix.safe and fixed.fix.edits == (Edit(Span(5, 45, 5, 50), "story[-8000:]"),)
    assert fixed.suggestion.endswith("`--fix` writes `story[-8000:]` in place of `story` (line 5).")
    prefixed = text.replace("    client", "    prompt = 'Go on.' + story\n    client").replace("=story", "=prompt")
    assert prefixed.splitlines()[5][44:50] == "prompt"
    derived = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(6, 45, 6, 51),
        properties={"history": "story", "framework": "openai", "growth_lines": [4]},
    )
    assert _fix_for(prefixed, derived).fix is None  # a tail of the sum would drop the prefix
    records = SERVICE.replace('{"role": "user", "content": question}', '{"author": "ana", "text": question}')
    finding = only(records)
    assert finding.fix is None  # records beside role dicts, sent as messages: a count slice could split a turn
    assert finding.suggestion.endswith("a record is no turn, so none is split.")


def test_a_history_assigned_text_never_gets_bounded_view_which_raises_on_a_string():
    story = "story = ''\ndef play(action):\n    global story\n    client.chat.completions.create(messages=story)\n"
    sent = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(4, 45, 4, 50),
        properties={"history": "story", "framework": "openai"},
    )
    assert story.splitlines()[3][44:49] == "story"
    fixed = _fix_for(story, sent)  # no growth shown: the assignment says it is one string
    assert fixed.fix.safe and fixed.fix.edits == (Edit(Span(4, 45, 4, 50), "story[-8000:]"),)
    derived = "def play(story):\n    prompt = 'Go on.' + story\n    client.chat.completions.create(messages=prompt)\n"
    assert derived.splitlines()[2][44:50] == "prompt"
    prompt = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(3, 45, 3, 51),
        properties={"history": "prompt", "framework": "openai"},
    )
    fixed = _fix_for(derived, prompt)
    assert fixed.fix is None  # a tail of prompt would drop 'Go on.'; where story is read is not shown
    assert fixed.suggestion.endswith("or keep the turns in a list to send the last whole ones.")
    formatted = derived.replace("'Go on.' + story", "f'Go on. {story}'")
    assert _fix_for(formatted, prompt).fix is None
    elsewhere = "def a(x):\n    prompt = 'Go on.' + x\n" + derived.replace(
        "prompt = 'Go on.' + story", "prompt = [story]"
    )
    assert _fix_for(elsewhere, replace(prompt, span=Span(5, 45, 5, 51))).fix.safe  # another function's prompt


RENDERS = (
    "class Play:\n"
    "    def render(self):\n"
    "        return 'Crew log\\n' + '\\n'.join(self.log)\n"
    "    def say(self, text):\n"
    "        self.log.append(f'Crew: {text}')\n"
    "        return ollama.generate(model='m', prompt=self.render())\n"
)


def _rendered(code: str) -> Finding:
    assert code.splitlines()[5][49:62] == "self.render()"
    return Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(6, 50, 6, 63),
        properties={"history": "self.log", "framework": "ollama", "growth_lines": [5]},
    )


def test_a_send_of_text_a_function_renders_is_bounded_where_the_function_reads_the_history():
    fixed = _fix_for(RENDERS, _rendered(RENDERS))
    assert fixed.fix.safe and fixed.fix.edits[0] == Edit(Span(3, 41, 3, 49), "bounded_view(self.log, last_turns=10)")
    assert apply_edits(RENDERS, fixed.fix.edits).splitlines()[:4] == [
        "from chatbound.compaction import bounded_view",
        "class Play:",
        "    def render(self):",
        "        return 'Crew log\\n' + '\\n'.join(bounded_view(self.log, last_turns=10))",
    ]


def test_a_rendering_function_called_elsewhere_too_or_reading_the_history_twice_gets_no_edit():
    shown = RENDERS + "def show(play):\n    print(play.render())\n"  # what the user sees would be bounded
    assert _fix_for(shown, _rendered(shown)).fix is None
    twice = RENDERS.replace("'Crew log\\n' +", "str(len(self.log)) +")
    assert _fix_for(twice, _rendered(twice)).fix is None


def test_bedrock_and_langchain_lists_get_the_safe_wrap():
    bedrock = "thread = []\nthread.append({'role': 'user', 'content': [{'text': q}]})\nbedrock.converse(modelId='m', messages=thread)\n"
    finding = only(bedrock, BedrockSends)
    assert finding.fix.safe
    assert apply_edits(bedrock, finding.fix.edits).endswith(
        "bedrock.converse(modelId='m', messages=bounded_view(thread, last_turns=10))\n"
    )
    code = "from langchain_openai import ChatOpenAI\nhistory.append(HumanMessage(q))\nllm.invoke(messages=history)\n"
    finding = only(code, LangChainSends)
    assert finding.fix.safe
    assert apply_edits(code, finding.fix.edits) == (
        "from langchain_openai import ChatOpenAI\n"
        "from chatbound.compaction import bounded_view\n"
        "history.append(HumanMessage(q))\n"
        "llm.invoke(messages=bounded_view(history, last_turns=10))\n"
    )
    assert finding.suggestion.endswith(
        "`--fix` writes `bounded_view(history, last_turns=10)` in place of `history` (line 3) and inserts "
        "`from chatbound.compaction import bounded_view` (line 2)."
    )


def _finding(rule_id: str, span: Span, framework: str = "") -> Finding:
    return Finding(
        rule_id, Severity.HIGH, "m", "app.py", span, properties={"framework": framework} if framework else {}
    )


def _fix_for(code: str, finding: Finding):
    from libcst.metadata import MetadataWrapper

    from chatbound import frameworks
    from chatbound.fixes.wrap import attach_fixes

    module = cst.parse_module(code)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return attach_fixes([finding], module, wrapper, frameworks)[0]


def test_llamaindex_and_handoff_get_a_suggestion_and_no_edit():
    code = "engine.chat(q, chat_history=history)\n"
    llama = _fix_for(code, _finding("MEMORY-UNBOUNDED-HISTORY", Span(1, 30, 1, 37), "llama_index"))
    assert llama.fix is None and "ChatMemoryBuffer.from_defaults(token_limit=" in llama.suggestion
    handoff = _fix_for(code, _finding("AGENT-OVERSIZED-HANDOFF", Span(1, 1, 1, 37)))
    assert handoff.fix is None and handoff.suggestion.startswith("Hand the specialist a brief")


def test_window_split_by_a_count_slice_becomes_bounded_view_unsafe():
    code = "import os\nclient.chat.completions.create(messages=history[-WINDOW:])\n"
    finding = _fix_for(code, _finding("MEMORY-WINDOW-SPLITS-TURN", Span(2, 41, 2, 58)))
    assert not finding.fix.safe
    assert apply_edits(code, finding.fix.edits) == (
        "import os\nfrom chatbound.compaction import bounded_view\n"
        "client.chat.completions.create(messages=bounded_view(history, last_events=WINDOW))\n"
    )


def test_a_fixable_finding_shows_its_edit_and_an_unfixable_one_keeps_the_rules_words():
    code = "client.chat.completions.create(messages=h)\n"
    finding = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(1, 41, 1, 42),
        suggestion="the rule's own words, `bounded_view(conversations[customer], ...)`",
    )
    fixed = _fix_for(code, finding)
    assert fixed.fix.edits[0] == Edit(Span(1, 41, 1, 42), "bounded_view(h, last_turns=10)")
    assert fixed.suggestion == (
        "Send bounded_view(h, last_turns=10); the stored history is unchanged. `--fix` writes "
        "`bounded_view(h, last_turns=10)` in place of `h` (line 1) and inserts "
        "`from chatbound.compaction import bounded_view` (line 1)."
    )
    kept = _fix_for(
        "engine.chat(q, chat_history=history)\n",
        replace(finding, span=Span(1, 30, 1, 37), properties={"framework": "llama_index", "storage": "framework"}),
    )
    assert kept.fix is None and kept.suggestion == finding.suggestion
    assert "ChatMemoryBuffer.from_defaults(token_limit=" in kept.properties["suggested_fix"]


def test_the_help_of_an_unsafe_fix_names_the_command_that_applies_it():
    code = "import os\nclient.chat.completions.create(messages=history[-WINDOW:])\n"
    finding = _fix_for(code, _finding("MEMORY-WINDOW-SPLITS-TURN", Span(2, 41, 2, 58)))
    assert finding.suggestion.endswith(
        "`--fix --unsafe-fixes` writes `bounded_view(history, last_events=WINDOW)` in place of `history[-WINDOW:]` "
        "(line 2) and inserts `from chatbound.compaction import bounded_view` (line 2)."
    )


# --- applying --------------------------------------------------------------------------


def test_a_fix_that_would_not_parse_is_dropped_with_the_reason():
    code = "client.chat.completions.create(messages=h)\n"
    bad = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(1, 41, 1, 42),
        fix=Fix("broken", (Edit(Span(1, 41, 1, 42), "h((("),)),
        properties={"history": "h"},
    )
    result = fix_source(code.encode(), "app.py", [bad], [SendsWholeList], {})
    assert result.applied == [] and not result.changed
    assert result.dropped[0][1].startswith("the edited file does not parse (syntax error at 1:")


def test_a_fix_that_leaves_the_history_flagged_is_dropped():
    code = "client.chat.completions.create(messages=h)\n"
    useless = Finding(
        "MEMORY-UNBOUNDED-HISTORY",
        Severity.HIGH,
        "m",
        "app.py",
        Span(1, 41, 1, 42),
        fix=Fix("noop", (Edit(Span(1, 41, 1, 42), "h"),)),
        properties={"history": "h"},
    )
    result = fix_source(code.encode(), "app.py", [useless], [SendsWholeList], {})
    assert result.dropped == [(useless, "the edited file is still flagged for the same history")]


@pytest.fixture
def with_stand_in_rule(monkeypatch):
    rules = (SendsWholeList,) + tuple(r for r in registry.all_rules() if r.ID != SendsWholeList.ID)
    monkeypatch.setattr(registry, "all_rules", lambda: rules)


def test_check_fix_writes_the_fix_keeps_permissions_and_reports_it(write, with_stand_in_rule):
    root = write({"bot.py": SERVICE, "requirements.txt": "openai>=1.40\n"})
    os.chmod(root / "bot.py", 0o640)
    result = invoke("check", "--fix", "--select", "MEMORY", "bot.py", cwd=root)
    assert (root / "bot.py").read_text() == FIXED_SERVICE
    assert (root / "requirements.txt").read_text() == "openai>=1.40\nchatbound-compaction>=0.1.0\n"
    assert stat.S_IMODE((root / "bot.py").stat().st_mode) == 0o640
    assert result.output.splitlines()[-1] == "No findings in 1 file. Fixed 1 finding."
    assert result.exit_code == 0
    # no temporary file left behind
    assert sorted(p.name for p in root.iterdir() if p.name != ".chatbound_cache") == ["bot.py", "requirements.txt"]


def test_check_diff_prints_the_same_change_and_writes_nothing(write, with_stand_in_rule):
    root = write({"bot.py": SERVICE, "requirements.txt": "openai>=1.40"})
    result = invoke("check", "--diff", "--select", "MEMORY", "bot.py", cwd=root)
    assert (root / "bot.py").read_text() == SERVICE
    assert (root / "requirements.txt").read_text() == "openai>=1.40"
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[:2] == ["--- a/bot.py", "+++ b/bot.py"]
    assert "+from chatbound.compaction import bounded_view" in lines
    assert any(l.startswith("+") and "*bounded_view(self.conversation, last_turns=10)," in l for l in lines)
    assert lines[-7:] == [
        "--- a/requirements.txt",
        "+++ b/requirements.txt",
        "@@ -1 +1,2 @@",
        "-openai>=1.40",
        "\\ No newline at end of file",
        "+openai>=1.40",
        "+chatbound-compaction>=0.1.0",
    ]


def test_without_fix_the_summary_counts_fixable_findings_and_unsafe_ones_need_the_flag(write, with_stand_in_rule):
    unsafe = (  # a count window over tool traffic: MEMORY-WINDOW-SPLITS-TURN's fix is unsafe
        "class Agent:\n"
        "    def ask(self, text):\n"
        '        self.messages.append({"role": "user", "content": text})\n'
        '        reply = client.chat.completions.create(model="gpt-4o", messages=self.messages[-20:], tools=TOOLS)\n'
        '        self.messages.append({"role": "tool", "tool_call_id": "1", "content": "ok"})\n'
    )
    root = write({"bot.py": SERVICE, "unsafe.py": unsafe, "requirements.txt": ""})
    result = invoke("check", "--select", "MEMORY", ".", cwd=root)
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].endswith("in 2 files. 1 fixable with `--fix`. 1 more with `--unsafe-fixes`.")
    fixed = invoke("check", "--fix", "--select", "MEMORY", ".", cwd=root)
    assert fixed.exit_code == 1  # the unsafe one is left
    assert (root / "unsafe.py").read_text() == unsafe
    assert fixed.output.splitlines()[-1].endswith("Fixed 1 finding. 1 fixable with `--fix --unsafe-fixes`.")
    both = invoke("check", "--fix", "--unsafe-fixes", "--select", "MEMORY", ".", cwd=root)
    assert (
        both.exit_code == 0
        and "messages=bounded_view(self.messages, last_events=20)" in (root / "unsafe.py").read_text()
    )


def test_a_symlink_to_a_file_outside_the_checked_tree_is_not_written(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.py").symlink_to(outside)
    with pytest.raises(OSError, match="outside the checked tree"):
        write_atomic(tree / "link.py", b"x = 2\n", [tree])
    with pytest.raises(OSError, match="outside the checked tree"):  # the link named on the command line
        write_atomic(tree / "link.py", b"x = 2\n", [tree / "link.py"])
    assert outside.read_text() == "x = 1\n"
    inside = tree / "real.py"
    inside.write_text("y = 1\n")
    (tree / "alias.py").symlink_to(inside)
    write_atomic(tree / "alias.py", b"y = 2\n", [tree])
    assert inside.read_text() == "y = 2\n" and (tree / "alias.py").is_symlink()


def test_crlf_and_a_bom_survive_a_fix():
    code = SERVICE.replace("\n", "\r\n")
    source = b"\xef\xbb\xbf" + code.encode()
    finding = analyze_source(source, "app.py", [SendsWholeList], {}).findings[0]
    result = fix_source(source, "app.py", [finding], [SendsWholeList], {})
    assert result.data() == b"\xef\xbb\xbf" + FIXED_SERVICE.replace("\n", "\r\n").encode()


@pytest.mark.parametrize(
    "source, expected",
    [
        ("agent = Agent(name='a', model=m)\n", "Agent(name='a', model=m, context=Buffered(20))"),
        ("agent = Agent()\n", "Agent(context=Buffered(20))"),
        (  # one argument a line: the keyword gets its own line, indented like them; the comment stays put
            "def build():\n    agent = Agent(\n        name='a',\n        stream=True,  # stream tokens\n    )\n",
            "Agent(\n        name='a',\n        stream=True,  # stream tokens\n        context=Buffered(20),\n    )",
        ),
        (
            "def build():\n    agent = Agent(name='a',\n                  model=m)\n",
            "Agent(name='a',\n                  model=m, context=Buffered(20))",
        ),
    ],
)
def test_an_added_keyword_is_laid_out_and_indented_like_the_arguments(source, expected):
    from libcst.metadata import MetadataWrapper

    from chatbound.fixes.edits import keyword_added, source_lines

    wrapper = MetadataWrapper(cst.parse_module(source))
    [call] = _calls(wrapper.module)
    assert keyword_added(wrapper, source_lines(source), call, "context", "Buffered(20)") == expected


def _calls(module):
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node):
            found.append(node)

    module.visit(Calls())
    return found


def test_check_diff_exits_as_check_does_when_no_finding_has_a_safe_fix(write):
    """The README's exit codes hold for `--diff`: findings with nothing to apply still exit 1."""
    root = write({"rag.py": "docs = llm.invoke(store.similarity_search(question, k=20))\n"})
    result = invoke("check", "--diff", "rag.py", cwd=root)
    assert (result.exit_code, result.stdout) == (1, "")
    assert invoke("check", "--diff", "--exit-zero", "rag.py", cwd=root).exit_code == 0


def test_a_fix_refused_through_an_outside_symlink_is_an_error_exit_2(tmp_path, with_stand_in_rule):
    outside = tmp_path / "outside.py"
    outside.write_text(SERVICE)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "bot.py").symlink_to(outside)
    result = invoke("check", "--fix", "--unsafe-fixes", "--select", "MEMORY", ".", cwd=tree)
    assert result.exit_code == 2 and "error: bot.py: not written" in result.output
    assert outside.read_text() == SERVICE
    assert "the fixes import" not in result.output  # a fix not written asks for no declaration
