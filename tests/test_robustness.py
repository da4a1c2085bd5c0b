"""No input crashes a run: each bad file is one line naming it and the cause, the other files
are still analyzed, and the run exits 2. Analyzed code is never imported or executed."""

from __future__ import annotations

import errno
import os
import signal
import sys
from importlib.metadata import version

import libcst as cst
import pytest
from click.testing import CliRunner

from chatbound.analysis.rule import Rule
from chatbound.findings import Severity
from chatbound.interfaces.cli import main
from chatbound.run import runner
from chatbound.run.config import Settings

TOP_K = "docs = llm.invoke(store.similarity_search(question, k=20))\n"  # RAG-EXCESSIVE-TOP-K at 1:53
TRIED = f"(tried LibCST {version('libcst')}'s grammar: Python 3.0 to 3.14)"  # what a syntax error names


def check(root, *args):
    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "concise", *args, "."])
    finally:
        os.chdir(old)


def errors_of(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


BAD_FILES = {
    "syntax.py": (TOP_K + "def f(:\n", f"error: syntax.py: syntax error at 2:7: invalid syntax {TRIED}"),
    "python2.py": (
        TOP_K + 'print "hello"\n',
        "error: python2.py: syntax error at 2:1: Missing parentheses in call to 'print'. Did you mean print(...)? "
        + TRIED,
    ),
    "undecodable.py": (
        TOP_K.encode() + b'x = "\xff\xfe"\n',
        "error: undecodable.py: cannot decode the file: 'utf-8' codec can't decode byte 0xff "
        "in position 64: invalid start byte",
    ),
    "nul.py": (
        TOP_K + "x = 1\0\n",
        f"error: nul.py: syntax error: tokenizer error: '\\0' is not a valid character in this position {TRIED}",
    ),
    "deep.py": (
        TOP_K + "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "error: deep.py: nested too deeply: 5000 levels of brackets (Python allows 200)",
    ),
    "lambdas.py": (
        TOP_K + "f = " + "lambda: " * 5000 + "1\n",
        "error: lambdas.py: nested too deeply: more than 200 prefix operators in a row at line 2",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_is_one_error_line_and_the_good_file_is_still_checked(write, name):
    content, message = BAD_FILES[name]
    root = write({name: content, "good.py": TOP_K})
    result = check(root)
    assert errors_of(result) == [message]
    assert result.stdout.splitlines()[0].startswith("good.py:1:53: RAG-EXCESSIVE-TOP-K")
    assert result.exit_code == 2


def test_a_20_mb_generated_file_is_over_the_size_cap_and_never_read(write, monkeypatch):
    root = write({"good.py": TOP_K})
    with open(root / "generated.py", "wb") as stream:
        stream.truncate(20 * 1024 * 1024)  # sparse: 20 MB without writing them
    result = check(root)
    assert errors_of(result) == [
        "error: generated.py: file too large to analyze (20.0 MB; the limit is 2 MB): generated code or data? exclude it"
    ]
    assert result.stdout.startswith("good.py:1:53: RAG-EXCESSIVE-TOP-K") and result.exit_code == 2


@pytest.mark.parametrize(
    "content",
    [
        b"\xef\xbb\xbfx = 1\n" + TOP_K.encode(),
        ("x = 1\n" + TOP_K).replace("\n", "\r\n").encode(),
    ],
    ids=["bom", "crlf"],
)
def test_a_bom_or_crlf_file_is_analyzed_with_the_same_positions(write, content):
    root = write({"app.py": content})
    result = check(root)
    assert result.stdout.startswith("app.py:2:53: RAG-EXCESSIVE-TOP-K")
    assert errors_of(result) == [] and result.exit_code == 1


def test_an_empty_file_is_no_finding_and_no_error(write):
    root = write({"empty.py": "", "__init__.py": b""})
    result = check(root)
    assert errors_of(result) == [] and result.exit_code == 0


def test_a_symlink_loop_is_an_error_not_a_hang(write):
    root = write({"good.py": TOP_K})
    os.symlink("b.py", root / "a.py")
    os.symlink("a.py", root / "b.py")
    result = check(root)
    assert errors_of(result) == [
        "error: a.py: cannot read: Too many levels of symbolic links",
        "error: b.py: cannot read: Too many levels of symbolic links",
    ]
    assert result.exit_code == 2


def test_a_fifo_named_like_python_is_reported_without_blocking(write):
    root = write({"good.py": TOP_K})
    os.mkfifo(root / "pipe.py")
    result = check(root)
    assert errors_of(result) == ["error: pipe.py: not a regular file"] and result.exit_code == 2


def test_an_unreadable_file_is_an_error(write, monkeypatch):
    root = write({"secret.py": TOP_K, "good.py": TOP_K})
    target = str(root / "secret.py")
    if os.geteuid() == 0:  # root reads a chmod 000 file: refuse it the way the kernel would
        real_open = os.open

        def refusing_open(path, *args, **kwargs):
            if os.fspath(path) == target:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), target)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(runner.os, "open", refusing_open)
    else:
        os.chmod(target, 0)
    result = check(root)
    assert errors_of(result) == ["error: secret.py: cannot read: Permission denied"]
    assert result.stdout.startswith("good.py:1:53:") and result.exit_code == 2


def test_a_file_that_vanishes_after_discovery_is_an_error(write, monkeypatch):
    root = write({"gone.py": TOP_K, "good.py": TOP_K})
    real_discover = runner.discover

    def discover_then_delete(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        (root / "gone.py").unlink()
        return found

    monkeypatch.setattr(runner, "discover", discover_then_delete)
    result = check(root)
    assert errors_of(result) == ["error: gone.py: cannot read: No such file or directory"]
    assert result.stdout.startswith("good.py:1:53:") and result.exit_code == 2


# --- a worker that dies ----------------------------------------------------------------


class CrashOnMarker(Rule):
    """Reports every module; kills its own process on a file holding CRASH_HERE (a stand-in
    for a crash in native code, which no exception handler can catch)."""

    ID = "TEST-CRASH"
    NAME = "test-crash"
    SEVERITY = Severity.LOW
    SUMMARY = "test"

    def visit_Module(self, node: cst.Module) -> None:
        if "CRASH_HERE" in node.code:
            os.kill(os.getpid(), signal.SIGSEGV)
        self.report(node, "seen")


def test_a_worker_killed_by_a_file_is_that_files_error_and_the_run_goes_on(write, monkeypatch):
    files = {f"m{i}.py": f"x = {i}\n" for i in range(7)}
    files["m3.py"] = "x = 3  # CRASH_HERE\n"
    root = write(files)
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "select_rules", lambda *a: (CrashOnMarker,))
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)  # use the pool for these few bytes
    monkeypatch.setattr(runner, "_workers", lambda: 2)
    result = runner.run([root], Settings(root=root))
    assert [str(e) for e in result.errors] == [
        "m3.py: the parser crashed on this file (its worker process died); please report it"
    ]
    assert sorted(f.path for f in result.findings) == [f"m{i}.py" for i in range(7) if i != 3]


# --- analyzed code is never run --------------------------------------------------------


def test_analyzed_code_is_never_imported_or_executed(write, tmp_path_factory):
    marker = tmp_path_factory.mktemp("marker") / "executed"
    hostile = f"import pathlib, os, sys\npathlib.Path({str(marker)!r}).write_text('ran')\nos._exit(3)\n" + TOP_K
    root = write({"hostile.py": hostile, "conftest.py": hostile, "setup.py": hostile, "__main__.py": hostile})
    result = check(root)
    assert not marker.exists()
    assert result.exit_code == 1
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == [
        "__main__.py",
        "conftest.py",
        "hostile.py",
        "setup.py",
    ]
    assert "hostile" not in sys.modules


# --- the progress bar stays off stdout -------------------------------------------------


def test_the_progress_bar_goes_to_a_terminal_stderr_and_never_into_json_on_stdout(write, monkeypatch):
    import io
    import json

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    root = write({f"m{i}.py": TOP_K for i in range(4)})
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "PROGRESS_MIN_FILES", 3)
    terminal = Terminal()
    monkeypatch.setattr(runner.sys, "stderr", terminal)
    result = runner.run([root], Settings(root=root), progress=True)
    assert len(result.findings) == 4
    assert "chatbound" in terminal.getvalue()  # the bar was drawn on the terminal

    monkeypatch.setattr(sys, "stderr", Terminal())
    cli = CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "json", "."])
    assert [f["path"] for f in json.loads(cli.stdout)["findings"]] == [f"m{i}.py" for i in range(4)]


def test_a_tree_deeper_than_the_recursion_limit_is_one_error_line_in_any_rule_selection(write):
    # valid Python, one bracket deep: 3,000 implicitly joined strings nest 3,000 levels in LibCST
    joined = "TEXT = (\n" + "".join(f'    "part {i} "\n' for i in range(3000)) + ")\n"
    root = write({"generated.py": TOP_K + joined, "good.py": TOP_K})
    for selection in ([], ["--select", "RAG-EXCESSIVE-TOP-K"]):
        result = check(root, *selection)
        assert errors_of(result) == [
            "error: generated.py: nested too deeply to analyze: an expression (a long chain of operators or of "
            "implicitly joined strings) is deeper than the analyzer's recursion limit; exclude the file if it is generated"
        ]
        assert result.stdout.startswith("good.py:1:53:") and result.exit_code == 2


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_no_rule_reads_is_one_error_line_too(write, name):
    content, message = BAD_FILES[name]
    content = content[len(TOP_K) :] if isinstance(content, str) else content[len(TOP_K) :]
    root = write({name: content, "good.py": TOP_K})
    result = check(root)
    assert len(errors_of(result)) == 1 and errors_of(result)[0].startswith(f"error: {name}: "), result.stderr
    assert result.stdout.splitlines()[0].startswith("good.py:1:53: RAG-EXCESSIVE-TOP-K")
    assert result.exit_code == 2


def test_a_file_no_rule_reads_gets_cpythons_whole_complaint(write):
    # CPython's symbol table refuses what its parser lets through; LibCST, which reads a
    # file a rule may report on, has no such check
    root = write({"dup.py": "def f(a, a):\n    return a\n", "good.py": TOP_K})
    result = check(root)
    assert errors_of(result) == ["error: dup.py: syntax error at 1:10: duplicate argument 'a' in function definition"]
    assert result.exit_code == 2
