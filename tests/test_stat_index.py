"""The stat index: a re-run reads no file whose stamp (modification and change times, size,
inode) is the one recorded with its hash; any write is still seen, a stamp too close to the
run that recorded it is not trusted, and a damaged or planted index is a miss, never a crash."""

from __future__ import annotations

import os
import pickle
import time

import pytest

import chatbound.run.runner as runner
import chatbound.run.stat_index as stat_index
from chatbound.run.cache import CACHE_DIR, STAT_INDEX
from chatbound.run.config import Settings
from chatbound.run.runner import run

CHAT = "docs = llm.invoke(store.similarity_search(question, k=20))\n"
PLAIN = "x = 1\n"


@pytest.fixture
def reads(monkeypatch):
    """The files the runner reads, by shown path."""
    read = []
    real = runner.read_source

    def counting(path, shown):
        read.append(shown)
        return real(path, shown)

    monkeypatch.setattr(runner, "read_source", counting)
    return read


@pytest.fixture
def short_racy_window(monkeypatch):
    """20 ms instead of 2 s: files written by the test are trusted after `settle()`."""
    monkeypatch.setattr(stat_index, "RACY_NS", 20_000_000)


def settle() -> None:
    """Past the racy window, and past a tick of the file system's clock."""
    time.sleep(0.05)


def _run(root):
    return run([root], Settings(root=root), cache=True)


def _messages(result):
    return [(f.path, f.span.line, f.message) for f in result.findings]


def test_an_unchanged_file_is_not_read_again(write, monkeypatch, reads, short_racy_window):
    root = write({"chat.py": CHAT, "plain.py": PLAIN})
    monkeypatch.chdir(root)
    settle()
    first = _run(root)
    assert reads == ["chat.py", "plain.py"]
    second = _run(root)
    assert reads == ["chat.py", "plain.py"] and second.cached == 2 and second.parsed == []
    assert _messages(second) == _messages(first) and [f.rule_id for f in second.findings] == ["RAG-EXCESSIVE-TOP-K"]


def test_an_edit_that_keeps_the_size_and_restores_the_mtime_is_seen(write, monkeypatch, reads, short_racy_window):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    settle()
    assert "20 retrieved results" in _run(root).findings[0].message
    before = os.stat(root / "chat.py")
    settle()
    with open(root / "chat.py", "r+") as stream:  # in place: the same inode
        stream.write(CHAT.replace("k=20", "k=30"))
    os.utime(root / "chat.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(root / "chat.py")
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    again = _run(root)
    assert reads == ["chat.py", "chat.py"] and again.parsed == ["chat.py"]
    assert "30 retrieved results" in again.findings[0].message


def test_a_touched_file_is_read_once_and_hits_the_entry_of_its_content(write, monkeypatch, reads, short_racy_window):
    root = write({"chat.py": CHAT})
    monkeypatch.chdir(root)
    settle()
    _run(root)
    os.utime(root / "chat.py", ns=(time.time_ns() - 10**10, time.time_ns() - 10**10))
    settle()
    touched = _run(root)
    assert reads == ["chat.py", "chat.py"] and touched.parsed == [] and touched.cached == 1
    assert _run(root).cached == 1 and reads == ["chat.py", "chat.py"]  # its new stamp was recorded


def test_a_file_written_just_before_a_run_is_read_again_by_the_next(write, monkeypatch, reads):
    root = write({"chat.py": CHAT})  # within the 2 s racy window of both runs
    monkeypatch.chdir(root)
    _run(root)
    again = _run(root)
    assert reads == ["chat.py", "chat.py"] and again.parsed == [] and again.cached == 1


def test_a_data_file_edited_with_its_size_and_mtime_kept_invalidates_the_result(write, monkeypatch, short_racy_window):
    root = write(
        {
            "bot.py": 'from pathlib import Path\nSYSTEM = Path("prompt.md").read_text()\n'
            'client.chat.completions.create(model="m", messages=[{"role": "system", "content": SYSTEM}])\n',
            "prompt.md": "Follow the policy. " * 200,
        }
    )
    monkeypatch.chdir(root)
    settle()
    assert [
        f.rule_id for f in run([root], Settings(root=root, select=["PROMPT-OVERSIZED-SYSTEM"]), cache=True).findings
    ] == ["PROMPT-OVERSIZED-SYSTEM"]
    before = os.stat(root / "prompt.md")
    settle()
    (root / "prompt.md").write_text("Mind the policy. " * 200 + "." * 400)
    os.utime(root / "prompt.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(root / "prompt.md").st_size == before.st_size
    after = run([root], Settings(root=root, select=["PROMPT-OVERSIZED-SYSTEM"]), cache=True)
    assert after.parsed == ["bot.py"]  # analysed again: what it read changed


class Planted:
    def __reduce__(self):
        return (os.system, ("touch planted-marker",))


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x80\x05garbage",
        b"not a pickle at all",
        pickle.dumps(Planted()),
        pickle.dumps(["a", "list"]),
        "entries of the wrong shape",
    ],
)
def test_a_damaged_or_planted_index_is_a_miss_and_is_rewritten(write, monkeypatch, reads, short_racy_window, damage):
    root = write({"chat.py": CHAT, "plain.py": PLAIN})
    monkeypatch.chdir(root)
    settle()
    first = _run(root)
    index = root / CACHE_DIR / STAT_INDEX
    if damage == "entries of the wrong shape":
        damage = pickle.dumps({str(root / "chat.py"): "no stamp", str(root / "plain.py"): (1, 2, 3, 4, 5, 6)})
    index.write_bytes(damage)
    again = _run(root)
    assert not (root / "planted-marker").exists()
    assert reads == ["chat.py", "plain.py"] * 2 and again.parsed == [] and _messages(again) == _messages(first)
    _run(root)
    assert len(reads) == 4  # the index was written back whole
