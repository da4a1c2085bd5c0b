"""The result cache: a re-run with no change parses nothing; anything that decides a result
invalidates it; a bad entry is a miss, never a crash; `--no-cache` and `chatbound clean`."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import libcst
import pytest
from click.testing import CliRunner

from chatbound.interfaces.cli import main
from chatbound.run.cache import CACHE_DIR
from chatbound.run.config import Settings
from chatbound.run.runner import run

CHAT = "docs = llm.invoke(store.similarity_search(question, k=20))\n"
OTHER = "hits = index.as_query_engine(similarity_top_k=15)\n"


@pytest.fixture
def parses(monkeypatch):
    """Counts LibCST parses in this process (runs this small stay out of the pool)."""
    count = []
    real = libcst.parse_module

    def counting(source, *args, **kwargs):
        count.append(1)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    return count


def _run(root, **settings):
    return run([root], Settings(root=root, **settings), cache=True)


def _shown(result):
    return [(f.path, f.span.line, f.span.col, f.rule_id, f.message, f.fingerprint) for f in result.findings]


def _entries(root):
    return sorted(p for p in (root / CACHE_DIR).rglob("*.pickle"))


def test_a_rerun_with_no_change_parses_nothing_and_reports_the_same(write, monkeypatch, parses):
    root = write({"chat.py": CHAT, "engine.py": OTHER})
    monkeypatch.chdir(root)
    first = _run(root)
    assert len(parses) == 2 and first.parsed == ["chat.py", "engine.py"]
    second = _run(root)
    assert len(parses) == 2 and second.parsed == [] and second.cached == 2
    assert _shown(second) == _shown(first)
    assert [f.rule_id for f in second.findings] == ["RAG-EXCESSIVE-TOP-K", "RAG-EXCESSIVE-TOP-K"]


def test_an_edited_file_alone_is_parsed_again(write, monkeypatch, parses):
    root = write({"chat.py": CHAT, "engine.py": OTHER})
    monkeypatch.chdir(root)
    _run(root)
    (root / "chat.py").write_text(CHAT.replace("k=20", "k=30"))
    again = _run(root)
    assert again.parsed == ["chat.py"] and len(parses) == 3
    assert "30 retrieved results" in again.findings[0].message


def test_other_rules_or_options_do_not_reuse_the_entries(write, monkeypatch, parses):
    root = write({"chat.py": CHAT + "CHUNK_SIZE = 1024  # a number over either limit: parsed both times\n"})
    monkeypatch.chdir(root)
    _run(root, select=["RAG-EXCESSIVE-TOP-K"])
    assert _run(root, select=["RAG-EXCESSIVE-TOP-K"], options={"max-top-k": 25}).findings == []
    assert _run(root, select=["RAG-EXCESSIVE-TOP-K"]).parsed == []  # each setting keeps its own entries
    assert len(parses) == 2


def test_ignored_rules_do_not_reuse_the_entries(write, monkeypatch):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    assert [f.rule_id for f in _run(root).findings] == ["RAG-EXCESSIVE-TOP-K"]
    assert _run(root, ignore=["RAG"]).findings == []
    assert [f.rule_id for f in _run(root).findings] == ["RAG-EXCESSIVE-TOP-K"]


# Prints, at exit, which of LibCST, the rules, process pools, package metadata, diffs and the
# project pass the run loaded.
LOADED = (
    "import atexit, sys\n"
    "heavy = ('libcst', 'multiprocessing', 'concurrent.futures', 'importlib.metadata', 'difflib', 'chatbound.analysis.project')\n"
    "atexit.register(lambda: print(sorted(m for m in sys.modules if m in heavy or m.startswith('chatbound.rules.')),"
    " file=sys.stderr))\n"
    "from chatbound.interfaces.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_run_served_from_the_cache_loads_neither_libcst_nor_a_rule_nor_a_process_pool(write, output_format):
    root = write({"chat.py": CHAT, "plain.py": "x = 1\n", "broken.py": "def f(:\n"})

    def check():
        done = subprocess.run(
            [sys.executable, "-c", LOADED, "check", "--output-format", output_format, "."],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode, done.stdout, done.stderr.splitlines()[-1]

    cold_exit, cold_report, cold_loaded = check()
    warm_exit, warm_report, warm_loaded = check()
    assert "'libcst'" in cold_loaded and "'chatbound.rules.rag_excessive_top_k'" in cold_loaded
    assert warm_loaded == "[]"
    assert (warm_exit, warm_report) == (cold_exit, cold_report) and cold_exit == 2  # broken.py's syntax error


def test_without_the_cache_flag_nothing_is_written(write, monkeypatch):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    run([root], Settings(root=root))
    assert not (root / CACHE_DIR).exists()


@pytest.mark.parametrize("damage", [b"", b"\x80\x04garbage", b"not a pickle at all"])
def test_a_corrupt_entry_is_a_miss_and_is_rewritten(write, monkeypatch, parses, damage):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    first = _run(root)
    (entry,) = _entries(root)
    entry.write_bytes(damage)
    again = _run(root)
    assert again.parsed == ["chat.py"] and _shown(again) == _shown(first)
    assert _run(root).parsed == []  # the entry was written back whole


class Planted:
    def __reduce__(self):
        return (os.system, ("touch planted-marker",))


def test_a_planted_entry_cannot_run_code(write, monkeypatch):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    first = _run(root)
    (entry,) = _entries(root)
    entry.write_bytes(pickle.dumps(Planted()))
    again = _run(root)
    assert not (root / "planted-marker").exists()
    assert again.parsed == ["chat.py"] and _shown(again) == _shown(first)


def test_the_cache_folder_ignores_itself_in_git(write, monkeypatch):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    _run(root)
    assert (root / CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not [p for p in (root / CACHE_DIR).rglob(".tmp-*")]  # atomic writes leave no temp file


def test_a_result_that_read_a_data_file_is_reused_only_while_the_file_is_unchanged(write, monkeypatch):
    long_prompt = "Follow the policy. " * 200
    root = write(
        {
            "bot.py": 'from pathlib import Path\nSYSTEM = Path("prompt.md").read_text()\n'
            'client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM}])\n',
            "prompt.md": long_prompt,
        }
    )
    monkeypatch.chdir(root)
    first = _run(root, select=["PROMPT-OVERSIZED-SYSTEM"])
    assert [f.rule_id for f in first.findings] == ["PROMPT-OVERSIZED-SYSTEM"]
    assert _run(root, select=["PROMPT-OVERSIZED-SYSTEM"]).parsed == []
    (root / "prompt.md").write_text("Be brief.")
    after = _run(root, select=["PROMPT-OVERSIZED-SYSTEM"])
    assert after.parsed == ["bot.py"] and after.findings == []


def test_a_prompt_another_module_reads_from_a_file_is_checked_again_when_the_file_changes(write, monkeypatch):
    root = write(
        {
            "prompts.py": "def load():\n    with open('prompts/system.md') as handle:\n        return handle.read()\n",
            "bot.py": "from prompts import load\n"
            'client.chat.completions.create(model="m", messages=[{"role": "system", "content": load()}])\n',
            "prompts/system.md": "Follow the policy. " * 200,
        }
    )
    monkeypatch.chdir(root)
    first = _run(root, select=["PROMPT-OVERSIZED-SYSTEM"])
    assert [(f.path, f.rule_id, f.span.line, f.span.col) for f in first.findings] == [
        ("bot.py", "PROMPT-OVERSIZED-SYSTEM", 2, 83)
    ]
    assert _run(root, select=["PROMPT-OVERSIZED-SYSTEM"]).parsed == []
    (root / "prompts" / "system.md").write_text("Be brief.")
    after = _run(root, select=["PROMPT-OVERSIZED-SYSTEM"])
    assert "bot.py" in after.parsed and after.findings == []


def test_cli_no_cache_writes_nothing_and_clean_removes_the_cache(write, monkeypatch):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    runner = CliRunner()
    assert runner.invoke(main, ["check", "--no-cache", "."]).exit_code == 1
    assert not (root / CACHE_DIR).exists()
    assert runner.invoke(main, ["check", "."]).exit_code == 1
    assert _entries(root)
    cleaned = runner.invoke(main, ["clean"])
    assert cleaned.exit_code == 0 and not (root / CACHE_DIR).exists()
    assert cleaned.stderr.startswith("removed ")


def test_files_the_precheck_skipped_are_remembered_in_one_list_not_checked_again(write, monkeypatch, parses):
    import chatbound.syntax.parse as analysis

    root = write({"chat.py": CHAT, "plain.py": "x = 1\n", "broken.py": "def f(:\n"})
    monkeypatch.chdir(root)
    checked = []
    real = analysis.syntax_problem
    monkeypatch.setattr(analysis, "syntax_problem", lambda source: checked.append(source) or real(source))
    first = _run(root)
    assert len(checked) == 2 and first.parsed == ["chat.py"]
    assert len(_entries(root)) == 2  # chat.py and broken.py's error; plain.py is a line of the skipped list
    second = _run(root)
    # plain.py comes from the list, broken.py from its entry: the same bytes give the same error
    assert len(checked) == 2 and second.parsed == [] and second.cached == 3
    assert [e.message for e in second.errors] == [e.message for e in first.errors] and len(first.errors) == 1
    (root / "plain.py").write_text("x = 2\n")
    _run(root)
    assert len(checked) == 3


def test_an_error_of_the_run_not_of_the_file_is_never_cached(write, monkeypatch):
    import chatbound.run.runner as runner
    from chatbound.findings import FileError, FileResult

    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    calls = []

    def dying(job, options):  # what the pool reports for a file whose worker died
        calls.append(job.shown)
        return FileResult(job.shown, error=FileError(job.shown, "worker died"), transient=True)

    monkeypatch.setattr(runner, "_check_job", dying)
    assert [e.message for e in _run(root).errors] == ["worker died"]
    _run(root)
    assert calls == ["chat.py", "chat.py"] and _entries(root) == []


def test_a_configured_run_served_from_the_cache_loads_no_rule_and_a_bad_option_is_still_an_error(write):
    root = write(
        {
            "chat.py": CHAT,
            "pyproject.toml": '[tool.chatbound]\nselect = ["RAG", "MEMORY"]\n\n[tool.chatbound.options]\nmax-top-k = 10\n',
        }
    )

    def check():
        done = subprocess.run(
            [sys.executable, "-c", LOADED, "check", "--output-format", "concise", "."],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode, done.stdout, done.stderr.splitlines()

    cold_exit, cold_report, _ = check()
    warm_exit, warm_report, warm_stderr = check()
    assert (cold_exit, warm_exit) == (1, 1) and cold_report == warm_report and "k=20" in cold_report
    assert warm_stderr[-1] == "[]"  # the codes are known from the rule modules' names, the options from the cold run
    # a bad option makes a new cache key: the run loads the rules, and says what is wrong
    (root / "pyproject.toml").write_text("[tool.chatbound]\n\n[tool.chatbound.options]\nmax-topk = 10\n")
    bad_exit, bad_report, bad_stderr = check()
    assert bad_exit == 2 and bad_report == ""
    assert bad_stderr[0] == (
        f"error: {root / 'pyproject.toml'}: unknown key `options.max-topk` (known rule options: "
        "chunk-tokens, max-system-tokens, max-tools, max-top-k)"
    )


def test_the_same_code_installed_in_two_places_shares_the_entries(write, tmp_path_factory):
    import shutil

    import chatbound.rules
    import chatbound.version

    root = write({"chat.py": CHAT})
    installs = []
    for name in ("one", "two"):  # as two virtualenvs, or pre-commit's and the project's, hold it
        install = tmp_path_factory.mktemp(name)
        shutil.copytree(
            os.path.dirname(chatbound.version.__file__),  # the analyzer's folder
            install / "chatbound",
            ignore=shutil.ignore_patterns("__pycache__", "rules"),
        )
        shutil.copytree(
            os.path.dirname(chatbound.rules.__file__),
            install / "chatbound" / "rules",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        installs.append(install)

    def check(install):
        done = subprocess.run(
            [sys.executable, "-c", LOADED, "check", "--output-format", "concise", "."],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(install)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.stdout, done.stderr.splitlines()[-1]

    first_report, first_loaded = check(installs[0])
    second_report, second_loaded = check(installs[1])
    assert (
        "'libcst'" in first_loaded
        and second_loaded == "[]"
        and second_report == first_report
        and "k=20" in first_report
    )
