"""`check --fix` and `--diff` on a copy of every fixture folder (never on fixtures/ itself).

Done when: every MEMORY positive has a safe fix and is fixed; the fixed file parses, changes only
the send (and gains one import), so the stored list and its appends are untouched, and the
history is no longer flagged; `--diff` shows the same change; negatives are byte-identical.
"""

from __future__ import annotations

import ast
import difflib
import os
import shutil
import sys
from itertools import repeat
from pathlib import Path

import libcst as cst
import pytest
from conftest import FIXTURES, invoke

from chatbound.fixes.wrap import NOT_A_LIST
from chatbound.frameworks import framework_kind
from chatbound.run.config import Settings
from chatbound.run.fixing import fix_run
from chatbound.run.notebooks import Notebook
from chatbound.run.runner import run

RULE = "MEMORY-UNBOUNDED-HISTORY"
IMPORT = "from chatbound.compaction import bounded_view"
REQUIREMENTS = "openai>=1.40\nanthropic\n"


FOLDERS = sorted(p.parent for p in FIXTURES.rglob("expected.txt") if "MEMORY-" in p.read_text())
# List histories of every message shape bounded_view reads (compaction/shapes.py): each one
# gets the safe wrap at the send and is no longer flagged after `--fix`.
SHAPES = {
    "memory/account_helper_bedrock.py": "Bedrock Converse blocks (sent as `conversation.copy()`)",
    "memory_dev/bedrock_claims_router.py": "Bedrock Converse blocks",
    "memory_review/p3_bedrock_converse.py": "Bedrock Converse blocks, the reply message appended",
    "memory/sales_desk_cohere_v1.py": "Cohere v1 USER/CHATBOT chat_history",
    "memory_review/p4_cohere_v1.py": "Cohere v1 chat_history",
    "memory/recipe_coach.py": "Cohere v2 role dicts",
    "memory/trip_planner_gradio.py": "genai types.Content built from Gradio's history",
    "memory_dev/streamlit_gemini_key.py": "genai types.Content",
    "memory_review/r40_genai_cli_pluseq.py": "genai types.Content, grown with +=",
    "memory_review/e_pos_prompt_join.py": "text lines joined into a prompt",
    "memory_dev/contract_reviewer_system_join.py": "text lines joined into the system prompt",
    "memory_review/r29_fstring_loop_prompt.py": "(speaker, text) pairs, bounded inside the render() the send calls",
    "memory_dev/autogen_model_client.py": "AutoGen-core message objects",
    "memory_dev/hf_inference_helper.py": "Hugging Face role dicts passed through a helper",
    "memory_review/r28_hf_inference_module.py": "Hugging Face role dicts",
    "memory_review/g_pos_langchain_invoke.py": "LangChain message objects",
    "memory/legal_intake_lc.py": "LangChain messages of an InMemoryChatMessageHistory",
    "handoff/reviewer_fanout.py": "LangChain (role, text) tuples",
    "memory_dev/fastapi_store_class.py": "whatever a store returns, sent as the messages",
    "memory_review/r35_gradio_messages_whole.py": "Gradio messages dicts",
}
# List histories bounded_view cannot read get a plain tail at the send instead (exact edits
# in test_memory_fixes.py): no list history is left without an edit.
TAILS = {
    "memory/code_review_companion.py": "records ({'author', 'text'}), not chat messages: self.log[-20:]",
    "memory_dev/story_engine_prompt.py": "one growing string: story[-8000:]",
}
UNFIXED_LISTS: dict = {}
# Framework histories whose fix is unsafe by design, left out of the copies (each is tested
# against its real framework instead).
UNSAFE_BY_DESIGN = {
    "adk/chat_cli.py": "run_config=RunConfig(get_session_config=...) needs google-adk 1.27+ (tests/test_adk_runtime.py)",
    "adk/pinned_new": "the same unsafe edit, offered for the google-adk 1.28.0 its uv.lock pins (tests/test_adk_runtime.py)",
    "adk/pinned_old": "advice only: google-adk 1.22.0 has no RunConfig.get_session_config",
    "adk/unpinned": "advice only: the project declares no google-adk version",
    "adk/own_runner": "advice only, as adk/unpinned",
    "memory_dev/assistants_thread_per_member.py": "advice only: the Assistants run that takes truncation_strategy may be in "
    "another module than the message added to the thread",
    "memory_dev/assistants_thread_added_elsewhere.py": "advice only, as assistants_thread_per_member.py",
    "shared_history/adk_helpdesk.py": "advice only, as adk/unpinned (its MEMORY finding; the fixture is for the shared session id)",
    "adk/concierge": "advice only: the agent adk web serves gets compaction from an App the project builds around it",
    "adk/served": "advice only, as adk/concierge",
    "prompts_project/garden_app": "advice only, as adk/concierge",
    "prompts_project/tutor_app": "advice only, as adk/concierge",
    "project/grown_elsewhere": "advice only: the helper of another module that adds to the list sends it; "
    "a view passed in at the call would stop the history growing, and the send to bound is in that module",
    "smolagents/research_chat.py": "advice only: smolagents keeps and sends agent.memory itself, no edit keeps every "
    "step and sends fewer (a pruning step callback: tests/test_smolagents_runtime.py)",
    "smolagents/gradio_app.py": "advice only, as research_chat.py: GradioUI runs the agent with its whole memory",
    "smolagents/gradio_desk/app.py": "advice only, as research_chat.py: GradioUI runs the agent with its whole memory",
    "smolagents/per_turn_loop.py": "advice only, as research_chat.py: an agent built per session, continued by each turn",
    "langgraph/prompt_chains.py": "advice only: a prompt chain given the whole state fills its placeholder itself; "
    "the bound is a trimming step in the chain",
    "langgraph/chains_passed_on.py": "advice only, as langgraph/prompt_chains.py",
    "frameworks_project/lcel_team/graph.py": "advice only, as langgraph/prompt_chains.py",
    "frameworks_project/node_factory": "advice only, as langgraph/prompt_chains.py",
    "frameworks_project/routed_team": "advice only, as langgraph/prompt_chains.py",
    "forwarded_sends/agents_room.py": "advice only: items replayed to Runner.run by hand, as when the run is in the file",
    "forwarded_sends/cohere_kiosk.py": "advice only: the wrapper's client is a parameter, so which SDK's messages the "
    "list holds is not known at the call",
    "forwarded_sends/plain_loop.py": "advice only: the pydantic-ai edit rewrites a run's message_history= keyword, "
    "and this run is in llm.py, given the list positionally",
}


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory):
    """The MEMORY fixture folders copied twice. In the second: the findings and the `--diff`
    report (a cached run), then `check --fix` (which reads the unchanged files from that
    cache). The first copy stays as it was, to compare."""
    base = tmp_path_factory.mktemp("fix")
    before, after = base / "before", base / "after"
    for folder in FOLDERS:
        shutil.copytree(folder, before / folder.relative_to(FIXTURES))
        shutil.copytree(folder, after / folder.relative_to(FIXTURES))
    for root in (before, after):  # the fixture files are single-module apps: they share one declaration
        (root / "requirements.txt").write_text(REQUIREMENTS)
        for path in UNSAFE_BY_DESIGN:
            shutil.rmtree(root / path) if (root / path).is_dir() else (root / path).unlink()
    old = os.getcwd()
    os.chdir(after)
    try:
        settings = Settings(root=after, select=[RULE])
        result = run([Path(".")], settings, cache=True)
        _, diff = fix_run(result, settings, [Path(".")], unsafe=False, write=False)
    finally:
        os.chdir(old)
    findings = [f for f in result.active if f.rule_id == RULE]
    assert _sources(after) == _sources(before)  # --diff wrote nothing
    fixed = invoke("check", "--fix", "--select", RULE, ".", cwd=after)
    return findings, before, after, fixed, diff.diff()


def _sources(root):
    """Every file below ``root`` but the result cache."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".chatbound_cache" not in p.parts
    }


def test_every_safe_fix_is_applied_and_only_those_files_change(fixed_copy):
    findings, before, after, fixed, _ = fixed_copy
    output = fixed.output
    safe = {f.path for f in findings if f.fix is not None and f.fix.safe}
    old, new = _sources(before), _sources(after)
    changed = {path for path in old if old[path] != new[path]}
    declarations = {path for path in old if path.endswith("requirements.txt")}  # the shared one and the apps' own
    assert changed == safe | declarations
    assert all(new[path].decode() == old[path].decode() + "chatbound-compaction>=0.1.0\n" for path in declarations)
    assert len(safe) >= 10
    assert "not applied" not in output
    assert set(new) == set(old)  # no temporary files left behind


def test_fixed_files_parse_change_only_the_send_and_are_no_longer_flagged(fixed_copy):
    findings, before, after, _, _ = fixed_copy
    fixed = _wrapped(findings)
    for path in {f.path for f in fixed}:
        olds, news = _code(before / path), _code(after / path)
        cst.parse_module(Notebook.parse(news[0]).code if path.endswith(".ipynb") else news[0])
        send_lines = {
            olds[edit.span.cell].splitlines()[line - 1]
            for f in fixed
            if f.path == path
            for edit in f.fix.edits
            if edit.text != IMPORT + "\n"
            for line in range(edit.span.line, edit.span.end_line + 1)
        }
        growth_lines = {
            olds[cell].splitlines()[line - 1]
            for f in fixed
            if f.path == path
            for line, cell in zip(f.properties.get("growth_lines", ()), f.properties.get("growth_cells", repeat(0)))
        }
        cells = [cell for cell in olds if cell] or [0]  # a notebook's cells, else the whole file
        diff = [line for cell in cells for line in difflib.ndiff(olds[cell].splitlines(), news[cell].splitlines())]
        removed = {l[2:] for l in diff if l.startswith("- ")}
        added = [l[2:] for l in diff if l.startswith("+ ")]
        assert removed <= send_lines and not removed & growth_lines, path  # growth (append/extend) lines are untouched
        assert added.count(IMPORT) == 1 and len(added) == len(removed) + 1, path
        assert all("bounded_view(" in line for line in added if line != IMPORT), path
    still = {(f.path, f.properties.get("history")) for f in _recheck(after)}
    assert not still & {(f.path, f.properties.get("history")) for f in fixed}


def _code(file: Path) -> dict[int, str]:
    """The file's text as {0: text}; a notebook's also each code cell's, by cell number."""
    text = file.read_text()
    return {0: text, **(Notebook.parse(text).sources if file.suffix == ".ipynb" else {})}


def _wrapped(findings):
    """The list findings with a safe bounded_view fix (the framework memories' own edits, which
    may also rewrite how the history is stored, are checked in test_memory_fixes.py)."""
    return [
        f
        for f in findings
        if f.fix is not None
        and f.fix.safe
        and any("bounded_view(" in e.text for e in f.fix.edits)
        and framework_kind(f) in ("plain", "langchain")
        and f.properties.get("storage") not in NOT_A_LIST
    ]


def _recheck(root):
    old_cwd = os.getcwd()
    os.chdir(root)
    try:
        return [f for f in run([Path(".")], Settings(root=root, select=[RULE]), cache=True).active if f.rule_id == RULE]
    finally:
        os.chdir(old_cwd)


def test_every_message_shape_gets_the_safe_wrap_and_is_clean_after_the_fix(fixed_copy):
    findings, _, after, _, _ = fixed_copy
    wrapped = {f.path for f in _wrapped(findings)}
    assert set(SHAPES) - wrapped == set()
    assert {f.path for f in findings if f.path in SHAPES} == set(SHAPES)  # each was flagged before
    assert {f.path for f in _recheck(after)} & set(SHAPES) == set()


def test_the_list_histories_left_unfixed_are_exactly_those_bounded_view_cannot_take(fixed_copy):
    findings, before, after, _, _ = fixed_copy
    lists = [
        f
        for f in findings
        if framework_kind(f) in ("plain", "langchain") and f.properties.get("storage") not in NOT_A_LIST
    ]
    assert {f.path for f in lists if f.fix is None} == set(UNFIXED_LISTS)
    assert all((before / path).read_bytes() == (after / path).read_bytes() for path in UNFIXED_LISTS)
    tails = {f.path: f.fix for f in lists if f.path in TAILS}
    assert set(tails) == set(TAILS) and all(
        fix.safe and "bounded_view" not in fix.edits[0].text for fix in tails.values()
    )
    assert {f.path for f in _recheck(after)} & set(TAILS) == set()


def test_support_assistant_fix_is_exactly_the_wrapped_send_and_the_import(fixed_copy):
    _, before, after, _, _ = fixed_copy
    path = "support_assistant/support_service.py"
    tools = "from .tools import TOOL_FUNCTIONS, _schema, api_usage, list_seats, lookup_invoice, open_ticket, refund, reset_sso, start_export\n"
    expected = (
        (before / path)
        .read_text()
        .replace(tools, tools + IMPORT + "\n")
        .replace("*self.conversation,", "*bounded_view(self.conversation, last_turns=10),")
    )
    assert (after / path).read_text() == expected


def test_a_chat_the_page_keeps_and_gives_the_agents_runner_gets_the_send_wrapped(fixed_copy):
    _, before, after, _, _ = fixed_copy
    path = "frameworks_project/streamlit_trip/app.py"
    sent = "Runner.run(planner, st.session_state.chat)"
    expected = (before / path).read_text().replace("import planner\n", f"import planner\n{IMPORT}\n")
    assert (after / path).read_text() == expected.replace(
        sent, "Runner.run(planner, bounded_view(st.session_state.chat, last_turns=10))"
    )


def test_diff_shows_the_same_change_and_writes_nothing(fixed_copy):
    _, before, after, _, diff = fixed_copy
    expected = "".join(
        "".join(
            difflib.unified_diff(
                (before / path).read_text().splitlines(keepends=True),
                (after / path).read_text().splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
            )
        )
        for path in _sources(before)
        if not path.endswith(".ipynb")  # a notebook's diff is per cell: test_notebooks.py
    )
    files = [part for part in diff.split("--- a/") if ".ipynb:cell " not in part.split("\n", 1)[0]]
    assert expected and sorted(files) == sorted(expected.split("--- a/"))
    fixtures = {path for path in _sources(before) if path != "requirements.txt"}
    assert {path: _sources(before)[path] for path in fixtures} == {
        path: (FIXTURES / path).read_bytes() for path in fixtures
    }
    assert "+chatbound-compaction>=0.1.0" in diff.split("--- a/requirements.txt")[1]


def test_every_history_finding_has_a_safe_fix_and_none_is_left(fixed_copy):
    findings, _, after, fixed, _ = fixed_copy
    assert len(findings) >= 80 and all(f.fix is not None and f.fix.safe for f in findings)
    assert (
        fixed.output.splitlines()[-1]
        == f"No findings in {len([p for p in _sources(after) if p.endswith(('.py', '.ipynb'))])} files. Fixed {len(findings)} findings."
    )
    assert fixed.exit_code == 0 and _recheck(after) == []


def test_the_run_still_exits_1_when_unfixable_findings_are_left(tmp_path):
    # a chain that disables truncation gets no fix; the list history beside it does
    shutil.copy(FIXTURES / "support_assistant/support_service.py", tmp_path / "service.py")
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    (tmp_path / "chain.py").write_text(
        "from openai import OpenAI\nclient = OpenAI()\nlast = {}\n\n\ndef ask(uid, text):\n"
        "    r = client.responses.create(model='m', input=text, previous_response_id=last.get(uid), "
        "truncation='disabled')\n    last[uid] = r.id\n    return r.output_text\n"
    )
    fixed = invoke("check", "--fix", "--select", RULE, ".", cwd=tmp_path)
    assert fixed.exit_code == 1
    assert "chain.py:7:" in fixed.output and "service.py" not in fixed.output
    assert fixed.output.splitlines()[-1].endswith("Fixed 1 finding.")


def test_a_fixed_file_imports_nothing_new_that_its_project_does_not_declare(fixed_copy):
    # The single-file fixtures share the copy's requirements.txt; fixtures/apps/* have their own.
    # A package a fix imports first is declared in the nearest one (the SDKs the files imported
    # before are the apps' business); fixtures/apps/helpdesk is also installed and run in
    # test_fixed_app_runs.py.
    _, before, after, _, _ = fixed_copy
    for path in (p for p in _sources(after) if p.endswith(".py")):
        old = _top_packages((before / path).read_text())
        new = _top_packages((after / path).read_text()) - old - sys.stdlib_module_names
        if any(name.startswith(("langchain", "langgraph")) for name in old):
            new.discard("langchain_core")  # every langchain-* and langgraph distribution requires langchain-core
        folder = next(p for p in (after / path).parents if (p / "requirements.txt").exists())
        declared = {
            line.split(">")[0].split("=")[0].replace("-", ".")
            for line in (folder / "requirements.txt").read_text().split()
        }
        assert {f"chatbound.{name}" if name == "compaction" else name for name in new} <= declared, path


def _top_packages(code: str) -> set[str]:
    """The packages a module imports from (chatbound's by subpackage: chatbound.compaction is its own)."""
    tree = ast.parse(code)
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return {name.split(".")[1] if name.startswith("chatbound.") else name.split(".")[0] for name in names}
