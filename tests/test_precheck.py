"""The textual pre-check: it skips files no rule can report on, and never hides a finding."""

from __future__ import annotations

import re

import pytest
from conftest import FIXTURES

from chatbound.analysis.rule import Rule
from chatbound.run.config import Settings
from chatbound.run.precheck import rules_for
from chatbound.run.project import may_import_chat
from chatbound.run.registry import all_rules
from chatbound.run.runner import rules_to_run, run
from chatbound.syntax.bytescan import MAX_NESTING, nesting_problem

FOLDERS = sorted({p.parent for p in FIXTURES.rglob("*.py")})


def _found(result):
    return sorted((f.path, f.span.line, f.span.col, f.rule_id, f.suppressed is None) for f in result.findings)


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(FIXTURES)) for f in FOLDERS])
def test_every_fixture_folder_gives_the_same_findings_with_and_without_the_precheck(folder, monkeypatch):
    monkeypatch.chdir(folder)
    with_precheck = run([folder], Settings(root=folder))
    without = run([folder], Settings(root=folder), precheck=False)
    assert _found(with_precheck) == _found(without)
    assert with_precheck.errors == without.errors
    # while one rule has no triggers every file is parsed: check each rule's own triggers too
    rules = {rule.ID: rule for rule in all_rules()}
    for finding in without.findings:
        rule = rules[finding.rule_id]
        source = (folder / finding.path).read_bytes()
        # or the runner links the file for the cross-module rules (a history it grows, sent by an
        # imported function): stores/streaming_route's routes.py holds no model call of its own
        linked = rule.CROSS_MODULE and may_import_chat(source)
        # or it imports a module the rule's own pre-check passes (rag_project's views.py calls the
        # retrieval helpers of search.py), whose place the finding names
        linked = (
            linked
            or rule.LINKS_IMPORTERS
            and any(r.path and rules_for((folder / r.path).read_bytes(), [rule], {}) for r in finding.related)
        )
        assert linked or rules_to_run(source, [rule], {})[0] == (rule,), (
            finding.path,
            finding.span.line,
            finding.rule_id,
        )


# Realistic code that mentions what a rule is about without the shape a finding needs.
NEAR_MISSES = {
    "RAG-EXCESSIVE-TOP-K": [
        "# similarity_search was too slow here; we query the cache instead\nTOP_K = 20\n",
        "def top_k_accuracy(scores, labels, k=5):\n    return sum(l in s[:k] for s, l in zip(scores, labels)) / len(labels)\n",
        "results = github.search(q='vector index', limit=50)\nretriever_name = 'bm25'\n",
    ],
    "PROMPT-OVERSIZED-SYSTEM": [
        "import os, platform\nif platform.system() == 'Windows':\n    os.system('cls')\n",
        "answer = input('prompt> ')\nprint(f'Follow the instructions in {path}')\n",
        "def show_prompt(text):\n    sys.ps1 = text\n",
        "# The system message is built in prompts.py\nunit = Unit('chat.service', after=['network.target'])\n",
    ],
    "TOOLS-ALL-REGISTERED": [
        "import functools, itertools\nfrom setuptools import setup\ntool = get_tool('ruff')\n",
        "all_tools = registry.list()\nprint(len(all_tools), 'tools registered')\n",
        "@functools.cache\ndef toolbar():\n    return Toolbar(functions_menu)\n",
    ],
    "AGENT-OVERSIZED-HANDOFF": [
        "from typing import ForwardRef\nT = ForwardRef('Tree')\nagent_name = 'triage'\n",
        "import datetime\nwait = datetime.timedelta(seconds=5)\nself.child.close()\n",
        "def route(request):\n    return worker_pool.size, transfer_encoding\n",
        "asyncio.run(main())\nsupervisor_config = load()\n",
    ],
}


@pytest.mark.parametrize("rule_id", sorted(NEAR_MISSES))
def test_the_precheck_skips_near_misses_that_lack_the_shape_a_finding_needs(rule_id):
    rule = {rule.ID: rule for rule in all_rules()}[rule_id]
    for code in NEAR_MISSES[rule_id]:
        assert not rules_for(code.encode(), [rule]), code


def test_pattern_triggers_keep_their_flags_and_mix_with_words():
    class Shaped(Rule):
        ID = "TEST-SHAPED"
        TRIGGERS = (
            re.compile(rb"\bbind_tools\s*\("),
            re.compile(rb"role:\s*system", re.I),
            re.compile(rb"\bMessages\s*\+=", re.I),
            "Top_K",
        )

    assert rules_for(b"llm = model.bind_tools ([a])\n", [Shaped])
    assert not rules_for(b"llm = model.rebind_tools([a])\n", [Shaped])
    assert rules_for(b"# ROLE: System\n", [Shaped])
    assert rules_for(b"MESSAGES += [m]\n", [Shaped])
    assert not rules_for(b"messages + [m]\n", [Shaped])
    assert rules_for(b"x = TOP_K\n", [Shaped])
    assert not rules_for(b"bind_tools = None\n", [Shaped])


def test_a_pattern_runs_only_where_a_word_every_match_needs_occurs():
    from chatbound.run.precheck import _compiled

    anchors = [
        [(alternative.pattern, words) for words, alternative, _ in shape]
        for (shape,) in _compiled(
            (
                re.compile(rb"\b(?:query_points|near_text)\s*\("),
                re.compile(rb"(?:system|prompt)\w*\s*=", re.I),
                re.compile(rb"@\s*\w+\.tool"),
                re.compile(rb"<->|<=>"),
            )
        ).shapes
    ]
    assert anchors == [
        [(rb"\bquery_points\s*\(", frozenset({b"query_points"})), (rb"\bnear_text\s*\(", frozenset({b"near_text"}))],
        [(rb"system\w*\s*=", frozenset({b"system"})), (rb"prompt\w*\s*=", frozenset({b"prompt"}))],
        [(rb"@\s*\w+\.tool", frozenset({b".tool"}))],
        [(rb"<->", frozenset({b"<->"})), (rb"<=>", frozenset({b"<=>"}))],  # each alternative has its literal
    ]


class Plain(Rule):
    ID = "TEST-PLAIN"


class Worded(Rule):
    ID = "TEST-WORDED"
    TRIGGERS = ("similarity_search", "Top_K")


def test_a_rule_without_triggers_makes_every_file_a_candidate():
    assert rules_for(b"print('hello')\n", [Worded, Plain]) == (Plain,)


def test_trigger_words_match_case_insensitively_and_skip_files_without_them():
    assert rules_for(b"hits = index.query(vector=v, TOP_K=50)\n", [Worded]) == (Worded,)
    assert rules_for(b"docs = store.similarity_search(q, k=20)\n", [Worded]) == (Worded,)
    assert rules_for(b"import os\nprint(os.getcwd())\n", [Worded]) == ()


def test_a_file_without_trigger_words_is_not_parsed(write, monkeypatch):
    root = write(
        {
            "chat.py": "docs = store.similarity_search(q, k=20)\nllm.invoke(f'{docs}')\n",
            "util.py": "def add(a, b):\n    return a + b\n",
        }
    )
    monkeypatch.chdir(root)
    result = run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]))
    assert result.parsed == ["chat.py"]
    assert [(f.path, f.rule_id) for f in result.findings] == [("chat.py", "RAG-EXCESSIVE-TOP-K")]
    assert run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]), precheck=False).parsed == [
        "chat.py",
        "util.py",
    ]


def test_nesting_deeper_than_python_allows_is_reported_not_parsed():
    assert nesting_problem("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n") == (
        "nested too deeply: 5000 levels of brackets (Python allows 200)"
    )
    assert nesting_problem("f = " + "lambda: " * 5000 + "1\n") == (
        "nested too deeply: more than 200 prefix operators in a row at line 1"
    )
    assert nesting_problem("y = 1\nx = " + "not " * 300 + "y\n").endswith("at line 2")


def test_nesting_within_the_limit_and_brackets_in_strings_and_comments_are_fine():
    deepest = "x = " + "[" * MAX_NESTING + "]" * MAX_NESTING + "\n"
    assert nesting_problem(deepest) is None
    assert nesting_problem("s = '" + "(" * 500 + "'  # " + "[" * 500 + "\n") is None
    assert nesting_problem('s = """\n' + "{" * 500 + '\n"""\n') is None
    assert nesting_problem("line = '-' * 400\n# " + "-" * 400 + "\n") is None


def test_a_file_the_precheck_skips_still_reports_its_syntax_error(write, monkeypatch):
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    root = write(
        {
            "notes.py": "def helper(:\n    return 1\n",
            "deep.py": "x = " + "(" * 300 + ")" * 300 + "\n",
            "ok.py": "x = 1\n",
        }
    )
    monkeypatch.chdir(root)
    result = run([root], Settings(root=root, select=["RAG-EXCESSIVE-TOP-K"]))
    assert result.parsed == []  # nothing in these files can hold a retrieval finding
    assert sorted((e.path, e.message.split(":")[0]) for e in result.errors) == [
        ("deep.py", "nested too deeply"),  # as a file a rule reads says it: never handed to LibCST
        ("notes.py", "syntax error at 1"),
    ]
    assert next(e for e in result.errors if e.path == "deep.py").message.endswith("(Python allows 200)")


def test_a_parsed_file_runs_only_the_rules_whose_triggers_it_holds(write, monkeypatch):
    import chatbound.run.pipeline as analysis

    root = write(
        {
            "rag.py": "retriever = store.as_retriever(search_kwargs={'k': 20})\nqa = RetrievalQA.from_chain_type(llm, retriever=retriever)\n",
            "both.py": "docs = store.similarity_search(q, k=20)\nr = client.chat.completions.create(model=m, messages=h + docs)\n",
        }
    )
    monkeypatch.chdir(root)
    ran = {}
    real = analysis.analyze_source

    def recording(source, shown, rules, *args, **kwargs):
        ran[shown] = [rule.ID for rule in rules]
        return real(source, shown, rules, *args, **kwargs)

    monkeypatch.setattr(analysis, "analyze_source", recording)  # the runner imports it where it parses
    result = run([root], Settings(root=root))
    # the chunks rule's triggers occur in rag.py (a retrieval), but CPython's tree holds no model call
    assert ran["rag.py"] == ["RAG-EXCESSIVE-TOP-K"]
    # the window rule's triggers occur (a model call), but CPython's tree holds no count window
    assert ran["both.py"] == ["MEMORY-UNBOUNDED-HISTORY", "RAG-CHUNKS-IN-HISTORY", "RAG-EXCESSIVE-TOP-K"]
    assert [(f.path, f.span.line, f.rule_id) for f in result.findings] == [
        ("both.py", 2, "RAG-EXCESSIVE-TOP-K"),
        ("rag.py", 2, "RAG-EXCESSIVE-TOP-K"),
    ]


def test_a_big_run_prechecks_in_the_pool_with_the_same_outcome(write, monkeypatch):
    import chatbound.run.runner as runner

    root = write(
        {
            "rag.py": "docs = store.similarity_search(question, k=20)\nllm.invoke(f'{docs}')\n",
            "plain.py": "x = 1\n",
            "broken.py": "def f(:\n",
            **{
                f"chat{i}.py": "history = []\ndef turn(q):\n    history.append({'role': 'user', 'content': q})\n"
                "    return client.chat.completions.create(model='m', messages=history)\n"
                for i in range(6)
            },
        }
    )
    monkeypatch.chdir(root)
    here = run([root], Settings(root=root))
    monkeypatch.setattr(runner, "POOL_PRECHECK_BYTES", 0)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    pooled = run([root], Settings(root=root))
    assert _found(pooled) == _found(here) and len(here.findings) == 7
    assert [e.message for e in pooled.errors] == [e.message for e in here.errors] and len(here.errors) == 1
    assert pooled.parsed == here.parsed == [f"chat{i}.py" for i in range(6)] + ["rag.py"]


@pytest.mark.parametrize("rule", all_rules(), ids=[r.ID for r in all_rules()])
def test_each_rules_own_invalid_examples_pass_its_whole_precheck_with_their_options(rule):
    for example in rule.INVALID:
        assert rules_to_run(example.code.encode(), [rule], dict(example.options))[0] == (rule,), example.code


@pytest.mark.parametrize("limit", [1, 40, 300])
def test_the_prompt_rule_finds_the_same_with_and_without_its_size_and_tree_prechecks(limit, monkeypatch):
    folder = FIXTURES / "prompts"
    monkeypatch.chdir(folder)
    settings = Settings(root=folder, select=["PROMPT-OVERSIZED-SYSTEM"], options={"max-system-tokens": limit})
    with_precheck = run([folder], settings)
    without = run([folder], settings, precheck=False)
    assert _found(with_precheck) == _found(without) and with_precheck.findings


def test_literal_bytes_count_what_can_be_a_value_not_docstrings_or_bare_strings():
    from chatbound.syntax.bytescan import literal_bytes

    assert literal_bytes(b'"""Module doc."""\ndef f():\n    """Doc."""\n    "bare"\n    return 1\n') == 0
    assert literal_bytes(b'X = "abc"\n') == 5
    assert literal_bytes(b'X = (\n    "ab"\n    "cd"\n)\n') == 8  # implicit concatenation in brackets
    assert literal_bytes(b'X = \\\n    "abc"\n') == 5  # a backslash continues the line
    assert literal_bytes(b'X = \\\r\n    "abc"\r\n') == 5
    assert literal_bytes(b'd = {"role": "system",\n"content": "x"}\n# "not a string"\n') == 6 + 8 + 9 + 3


# Prompt words without a place the rule reads a system prompt from: the text pre-check lets
# them through, CPython's tree does not.
NO_PROMPT_PLACE = [
    "def ask(llm, prompt):\n    prompt = prompt.strip() + '"
    + "x" * 600
    + "'\n    return llm.complete(prompt=prompt)\n",
    "import platform\ndef windows():\n    system = platform.system()\n    return system == 'Windows"
    + "x" * 600
    + "'\n",
    "def run(client, instructions):\n    return client.create(instructions=instructions, note='" + "x" * 600 + "')\n",
    "class Form:\n    def render(self):\n        system_prompt = '" + "x" * 600 + "'\n        return system_prompt\n",
]


def test_files_with_prompt_words_but_no_place_for_a_system_prompt_are_not_parsed():
    rule = {rule.ID: rule for rule in all_rules()}["PROMPT-OVERSIZED-SYSTEM"]
    for code in NO_PROMPT_PLACE:
        assert rules_for(code.encode(), [rule]) == (rule,), code  # the words are there
        assert rules_to_run(code.encode(), [rule], {}) == ((), True), code
    # a place is a place even for a text defined in another module, or sent as a literal
    for code in (
        "from .prompts import SYSTEM_PROMPT\nreply = c.create(system=SYSTEM_PROMPT)\n",
        "def f():\n    return c.create(system='" + "z" * 600 + "')\n",
        "def f(t):\n    return [{'role': 'system', 'content': t + '" + "z" * 600 + "'}]\n",
    ):
        assert rules_to_run(code.encode(), [rule], {}) == ((rule,), True), code


def test_a_file_cpython_cannot_parse_keeps_its_rules_for_libcst():
    rule = {rule.ID: rule for rule in all_rules()}["PROMPT-OVERSIZED-SYSTEM"]
    code = "c.create(system='" + "x" * 600 + "')\nprint 'python 2'\n"
    assert rules_to_run(code.encode(), [rule], {}) == ((rule,), False)


def test_the_tree_check_runs_only_when_every_rule_left_has_one():
    rules = {rule.ID: rule for rule in all_rules()}
    prompt = rules["PROMPT-OVERSIZED-SYSTEM"]
    memory = type("NoTreeTest", (rules["MEMORY-UNBOUNDED-HISTORY"],), {"may_report_tree": None})
    code = NO_PROMPT_PLACE[0] + "r = client.chat.completions.create(model=m, messages=history)\n"
    assert rules_for(code.encode(), [prompt, memory]) == (prompt, memory)
    assert rules_to_run(code.encode(), [prompt, memory], {}) == ((prompt, memory), False)
