"""Discovery and shown paths: which files a run checks, in which order, under which name."""

from __future__ import annotations

from pathlib import Path

from conftest import invoke

from chatbound.run.discovery import discover, display_path

BAD_TOP_K = "docs = llm.invoke(store.similarity_search(question, k=20))\n"


def _names(found, root: Path) -> list[str]:
    assert all(isinstance(path, Path) for path in found.files)
    return [path.relative_to(root).as_posix() for path in found.files]


def test_files_come_sorted_part_by_part_as_paths_sort(write):
    root = write({"a/b.py": "", "a-b.py": "", "a.b/c.py": "", "a/a.pyi": "", "a/notes.txt": ""})
    # by whole strings "a-b.py" < "a.b/c.py" < "a/..." ('-' < '.' < '/'); by parts "a" comes first
    assert _names(discover([root], root, []), root) == ["a/a.pyi", "a/b.py", "a-b.py", "a.b/c.py"]


def test_excludes_are_anchored_at_the_root_and_prune_whole_folders(write):
    root = write(
        {
            "build/a.py": "",
            "src/build/b.py": "",
            "docs/conf.py": "",
            "src/docs/conf.py": "",
            "src/ok.py": "",
            "src/ok_test.py": "",
        }
    )
    found = discover([root], root, ["build", "/docs/", "*_test.py"])
    assert _names(found, root) == ["src/docs/conf.py", "src/ok.py"]


def test_a_named_file_is_excluded_only_with_force_exclude_and_outside_the_root_by_its_name(write):
    root = write({"project/app.py": "", "elsewhere/legacy.py": ""})
    outside = root / "elsewhere" / "legacy.py"
    assert discover([outside], root / "project", ["legacy.py"]).files == [outside]
    assert discover([outside], root / "project", ["legacy.py"], force_exclude=True).files == []
    assert discover([outside], root / "project", ["/elsewhere/"], force_exclude=True).files == [outside]


def test_each_gitignore_applies_below_its_folder_up_to_the_repository_root(write):
    root = write(
        {
            ".gitignore": "ok.py\n",  # above the repository: not read
            "repo/.git/HEAD": "",
            "repo/.gitignore": "*_pb2.py\n",  # above the checked folder, in the repository: read
            "repo/pkg/.gitignore": "/gen.py\nskip/\n*.pyi\n!keep.pyi\n",
            "repo/pkg/gen.py": "",
            "repo/pkg/sub/gen.py": "",
            "repo/pkg/skip/a.py": "",
            "repo/pkg/x_pb2.py": "",
            "repo/pkg/a.pyi": "",
            "repo/pkg/keep.pyi": "",
            "repo/pkg/ok.py": "",
            "repo/other/gen.py": "",
        }
    )
    repo = root / "repo"
    assert _names(discover([repo / "pkg"], repo, []), repo) == ["pkg/keep.pyi", "pkg/ok.py", "pkg/sub/gen.py"]
    assert _names(discover([repo], repo, []), repo) == ["other/gen.py", "pkg/keep.pyi", "pkg/ok.py", "pkg/sub/gen.py"]


def test_shown_paths_are_relative_below_the_working_directory_and_absolute_elsewhere(tmp_path, monkeypatch):
    (tmp_path / "in").mkdir()
    monkeypatch.chdir(tmp_path / "in")
    assert display_path(tmp_path / "in" / "a" / "b.py") == "a/b.py"
    assert display_path(tmp_path / "inner.py") == (tmp_path / "inner.py").as_posix()  # spelled like the cwd, not in it
    assert display_path(tmp_path / "other.py", cwd=str(tmp_path)) == "other.py"
    assert display_path(tmp_path / "in") == "."
    assert display_path(Path("relative.py")) == "relative.py"
    monkeypatch.chdir("/")
    assert display_path(tmp_path / "x.py") == (tmp_path / "x.py").as_posix()[1:]


def test_a_checked_file_outside_the_working_directory_is_reported_by_its_absolute_path(write):
    root = write({"work/.keep": "", "lib/app.py": BAD_TOP_K})
    result = invoke("check", "--output-format", "concise", "--no-cache", "../lib", cwd=root / "work")
    assert result.output.splitlines()[0].startswith(f"{(root / 'lib' / 'app.py').as_posix()}:1:")
    assert result.exit_code == 1


PATTERNS = ["build", "/docs/", "*_test.py", "a/**/b", "**/gen/*.py", "mod[0-9].py", "\\!bang.py", "x?.py", "# note", ""]
PATHS = [
    "build",
    "build/",
    "src/build/",
    "docs/",
    "src/docs/",
    "docs/conf.py",
    "t_test.py",
    "deep/t_test.py",
    "a/b",
    "a/x/y/b/",
    "a/b.py",
    "gen/x.py",
    "p/gen/x.py",
    "p/gen/q/x.py",
    "mod1.py",
    "modx.py",
    "!bang.py",
    "xy.py",
    "xyz.py",
    "ok.py",
    "src/",
]


def test_patterns_without_a_negation_match_as_pathspec_matches_them_one_by_one():
    import pathspec

    from chatbound.run.discovery import _Patterns

    ours, reference = _Patterns(PATTERNS), pathspec.GitIgnoreSpec.from_lines(PATTERNS)
    assert ours.union is not None  # the one-regex path is the one tested
    assert [p for p in PATHS if ours.match_file(p)] == [p for p in PATHS if reference.match_file(p)]
    assert [p for p in PATHS if ours.match_file(p)][:4] == ["build", "build/", "src/build/", "docs/"]
    negated = [*PATTERNS, "!xy.py", "!src/"]
    ours, reference = _Patterns(negated), pathspec.GitIgnoreSpec.from_lines(negated)
    assert ours.union is None  # a negation: pathspec decides
    assert [p for p in PATHS if ours.match_file(p)] == [p for p in PATHS if reference.match_file(p)]
    assert "xy.py" not in [p for p in PATHS if ours.match_file(p)]


def test_the_default_excludes_in_one_regex_match_as_pathspec_matches_them():
    import pathspec

    from chatbound.run.config import DEFAULT_EXCLUDE
    from chatbound.run.discovery import _Patterns

    paths = [
        "venv/",
        "src/venv/",
        "venvs/",
        "my_venv/",
        "build/",
        "a/b/build/",
        "builder.py",
        "dist/",
        "env.py",
        "pkg/.git/",
        ".github/",
        "node_modules/x/",
        "src/app.py",
        "a/__pycache__/",
        ".env",
        "x/.envrc",
    ]
    ours, reference = _Patterns(list(DEFAULT_EXCLUDE)), pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDE)
    assert [p for p in paths if ours.match_file(p)] == [p for p in paths if reference.match_file(p)]
    assert [p for p in paths if ours.match_file(p)] == [
        "venv/",
        "src/venv/",
        "build/",
        "a/b/build/",
        "dist/",
        "pkg/.git/",
        "node_modules/x/",
        "a/__pycache__/",
        ".env",
    ]


def test_a_regex_that_branches_at_its_top_level_keeps_its_own_prefix():
    import re

    from chatbound.run.discovery import _union

    union = re.compile(_union(["^(?:.+/)?a$", "^(?:.+/)?x|y$"]))  # the second is "x anywhere, or ends in y"
    assert [p for p in ["a", "q/a", "qa", "q/x", "qy"] if union.search(p)] == ["a", "q/a", "q/x", "qy"]


def test_a_virtualenv_is_known_by_its_pyvenv_cfg_whatever_its_name_unless_named_itself(write):
    root = write(
        {
            "myenv/pyvenv.cfg": "home = /usr/bin\n",
            "myenv/lib/python3.12/site-packages/x.py": "",
            "myenv/bin/tool.py": "",
            "app/pyvenv_cfg_notes.py": "",
            "app/main.py": "",
        }
    )
    assert _names(discover([root], root, []), root) == ["app/main.py", "app/pyvenv_cfg_notes.py"]
    assert _names(discover([root / "myenv"], root, []), root) == [
        "myenv/bin/tool.py",
        "myenv/lib/python3.12/site-packages/x.py",
    ]
