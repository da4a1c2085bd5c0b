"""The `chatbound` hook under the real pre-commit: `pre-commit try-repo` builds the hook's
environment from this checkout (pip, so PyPI must be reachable, as in CI) and runs it in a
throwaway git repository: it fails on a finding and passes once the finding is suppressed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import ROOT, require
from test_cli import BAD_TOP_K, GOOD

require("pre_commit")
import yaml  # noqa: E402  (pre-commit's own dependency)

# what `pip install .` needs from the checkout: the package, its rules, metadata, the hooks
SHIPPED = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "analyzer", "rules")


def git(*args, cwd):
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def hook_repo(tmp_path):
    """The working tree of this checkout as a one-commit git repo (try-repo wants a commit;
    copying also takes files not yet committed, exactly what the rest of the suite tests)."""
    repo = tmp_path / "hook-repo"
    repo.mkdir()
    for name in SHIPPED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, repo / name)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "hook", cwd=repo)
    return repo


def try_repo(hooks, project, home, hook="chatbound"):
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_hook_definitions():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"chatbound", "chatbound-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["types_or"] == [
            "python",
            "pyi",
            "jupyter",
        ]  # notebooks too, as ruff's hook
        assert hook["require_serial"] is True and "--force-exclude" in hook["entry"]
        assert hook["additional_dependencies"] == ["./analyzer/compaction"]  # the engine, from this repo
        assert "sarif" not in hook["entry"]  # batches would overwrite one report
    assert hooks["chatbound"]["entry"] == "chatbound check --force-exclude"
    assert hooks["chatbound-fix"]["entry"] == "chatbound check --force-exclude --fix"


def test_pre_commit_hook_fails_on_a_finding_and_passes_once_it_is_suppressed(tmp_path):
    hooks = hook_repo(tmp_path)
    project = tmp_path / "project"
    (project / "legacy").mkdir(parents=True)
    (project / "bad.py").write_text(BAD_TOP_K)
    (project / "good.py").write_text(GOOD)
    (project / "legacy" / "old.py").write_text(BAD_TOP_K)  # excluded in config: --force-exclude
    (project / "pyproject.toml").write_text('[tool.chatbound]\nextend-exclude = ["legacy/"]\n')
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "start", cwd=project)

    failed = try_repo(hooks, project, tmp_path / "pre-commit-home")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "chatbound....." in failed.stdout and "Failed" in failed.stdout
    assert "bad.py:1:53: RAG-EXCESSIVE-TOP-K 20 retrieved results per query reach the model" in failed.stdout
    assert "good.py:" not in failed.stdout and "legacy/old.py" not in failed.stdout
    assert "Found 1 finding (1 medium) in 2 files." in failed.stdout  # legacy/old.py force-excluded

    # the fix hook runs `check --fix`: a retrieval finding has no automatic fix, so it still fails
    unfixed = try_repo(hooks, project, tmp_path / "pre-commit-home", hook="chatbound-fix")
    assert unfixed.returncode == 1, unfixed.stdout + unfixed.stderr
    assert "bad.py:1:53: RAG-EXCESSIVE-TOP-K" in unfixed.stdout and "files were modified" not in unfixed.stdout

    (project / "bad.py").write_text(BAD_TOP_K.rstrip() + "  # chatbound: ignore[RAG-EXCESSIVE-TOP-K] reviewed\n")
    git("add", "-A", cwd=project)
    passed = try_repo(hooks, project, tmp_path / "pre-commit-home")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
