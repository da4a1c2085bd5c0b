"""`--fix` declares the engine where the project declares its dependencies (issue 15).

Each case is a project folder as written by hand, then the declaration chosen and, where one
is edited, the exact text after the edit: formatting, comments and line endings kept.
"""

from __future__ import annotations

import pytest
from conftest import invoke

from chatbound.fixes.dependencies import declaration, declaration_for, declared_text

ADDED = "chatbound-compaction>=0.1.0"


def _edited(root, name="requirements.txt"):
    found = declaration(root)
    assert found.problem == "" and found.path == root / name
    return declared_text(found, (root / name).read_bytes().decode())


def test_requirements_txt_gets_one_line_at_its_end(write):
    root = write({"requirements.txt": "openai>=1.40  # the SDK\n\nfastapi\n"})
    assert _edited(root) == f"openai>=1.40  # the SDK\n\nfastapi\n{ADDED}\n"


def test_requirements_keep_crlf_and_a_missing_last_newline_is_added(write):
    root = write({"requirements.txt": b"openai\r\nfastapi"})
    assert _edited(root) == f"openai\r\nfastapi\r\n{ADDED}\r\n"


def test_an_empty_requirements_file_takes_the_line(write):
    assert _edited(write({"requirements.txt": ""})) == f"{ADDED}\n"


def test_the_runtime_file_is_requirements_txt_beside_dev_and_test_files(write):
    root = write({"requirements.txt": "openai\n", "requirements-dev.txt": "pytest\n", "requirements_test.txt": "x\n"})
    assert declaration(root).path == root / "requirements.txt"


def test_without_requirements_txt_the_one_file_not_named_for_dev_tools_is_the_runtime(write):
    root = write(
        {"requirements-prod.txt": "openai\n", "requirements-dev.txt": "pytest\n", "requirements-docs.txt": "x\n"}
    )
    assert declaration(root).path == root / "requirements-prod.txt"


def test_two_runtime_looking_requirements_files_are_ambiguous(write):
    root = write({"requirements-prod.txt": "openai\n", "requirements-base.txt": "fastapi\n"})
    found = declaration(root)
    assert found.path is None
    assert found.advice().endswith(
        "has several runtime requirements files (requirements-base.txt, requirements-prod.txt)"
    )


def test_pep621_multiline_list_keeps_its_comments_and_indentation(write):
    pyproject = (
        '[project]\nname = "desk"\ndependencies = [\n  "openai>=1",  # the SDK\n  "fastapi"\n]\n\n'
        "[tool.ruff]\nline-length = 100\n"
    )
    root = write({"pyproject.toml": pyproject})
    assert declaration(root).kind == "pep621"
    assert _edited(root, "pyproject.toml") == (
        '[project]\nname = "desk"\ndependencies = [\n  "openai>=1",  # the SDK\n  "fastapi",\n'
        f'  "{ADDED}"\n]\n\n[tool.ruff]\nline-length = 100\n'
    )


def test_pep621_inline_list_stays_inline(write):
    root = write({"pyproject.toml": '[project]\nname = "desk"\ndependencies = ["openai>=1", "fastapi"]\n'})
    assert _edited(root, "pyproject.toml") == (
        f'[project]\nname = "desk"\ndependencies = ["openai>=1", "fastapi", "{ADDED}"]\n'
    )


def test_a_project_without_dependencies_gets_the_key(write):
    root = write({"pyproject.toml": '[project]\nname = "desk"\nversion = "1"\n\n[tool.ruff]\nline-length = 100\n'})
    assert _edited(root, "pyproject.toml") == (
        f'[project]\nname = "desk"\nversion = "1"\ndependencies = ["{ADDED}"]\n\n[tool.ruff]\nline-length = 100\n'
    )


def test_a_uv_project_gets_what_uv_add_writes_sorted_and_one_item_a_line(write):
    root = write(
        {"pyproject.toml": '[project]\nname = "desk"\ndependencies = ["fastapi", "openai>=1"]\n', "uv.lock": ""}
    )
    found = declaration(root)
    assert found.kind == "uv" and "run `uv lock`" in found.advice()
    assert _edited(root, "pyproject.toml") == (
        f'[project]\nname = "desk"\ndependencies = [\n    "{ADDED}",\n    "fastapi",\n    "openai>=1",\n]\n'
    )


def test_a_uv_project_with_an_unsorted_list_gets_it_last(write):
    root = write(
        {"pyproject.toml": '[project]\nname = "desk"\ndependencies = ["openai>=1", "fastapi"]\n', "uv.lock": ""}
    )
    assert _edited(root, "pyproject.toml") == (
        f'[project]\nname = "desk"\ndependencies = [\n    "openai>=1",\n    "fastapi",\n    "{ADDED}",\n]\n'
    )


def test_poetry_gets_a_key_in_its_dependencies_table_not_in_a_group(write):
    pyproject = (
        '[tool.poetry]\nname = "desk"\n\n[tool.poetry.dependencies]\npython = "^3.11"\nopenai = "^1.40"\n\n'
        '[tool.poetry.group.dev.dependencies]\npytest = "*"\n'
    )
    root = write({"pyproject.toml": pyproject})
    assert declaration(root).kind == "poetry"
    assert _edited(root, "pyproject.toml") == pyproject.replace(
        'openai = "^1.40"\n', 'openai = "^1.40"\nchatbound-compaction = ">=0.1.0"\n'
    )


def test_pep621_and_a_requirements_file_are_ambiguous_unless_the_file_installs_the_project(write):
    pyproject = '[project]\nname = "desk"\ndependencies = ["openai"]\n'
    root = write({"pyproject.toml": pyproject, "requirements.txt": "openai==1.40.0\n"})
    found = declaration(root)
    assert found.path is None and "which one the runtime installs is not clear" in found.problem
    (root / "requirements.txt").write_text("-e .[server]\n")
    assert declaration(root).path == root / "pyproject.toml"


def test_a_pyproject_holding_only_tool_settings_leaves_the_requirements_file(write):
    root = write({"pyproject.toml": "[tool.chatbound]\nselect = ['MEMORY']\n", "requirements.txt": "openai\n"})
    assert declaration(root).path == root / "requirements.txt"


def test_dependencies_read_from_a_file_by_setuptools_are_edited_in_that_file(write):
    pyproject = (
        '[project]\nname = "desk"\ndynamic = ["dependencies"]\n\n'
        '[tool.setuptools.dynamic]\ndependencies = {file = ["deps/runtime.txt"]}\n'
    )
    root = write({"pyproject.toml": pyproject, "deps/runtime.txt": "openai\n"})
    assert declaration(root).path == root / "deps/runtime.txt"


@pytest.mark.parametrize(
    "files, problem",
    [
        (
            {"setup.py": "from setuptools import setup\nsetup(install_requires=['openai'])\n"},
            "declares its dependencies in setup.py",
        ),
        ({"Pipfile": "[packages]\nopenai = '*'\n"}, "declares its dependencies in Pipfile"),
        ({"requirements.txt": "openai==1.40.0 --hash=sha256:abc\n"}, "requirements.txt pins hashes"),
        ({"setup.py": "", "requirements.txt": "openai\n"}, "which one the runtime installs is not clear"),
        ({"pyproject.toml": "[project\n"}, "pyproject.toml cannot be read"),
    ],
)
def test_what_chatbound_does_not_edit_is_a_problem_named_in_the_advice(write, files, problem):
    found = declaration(write(files))
    assert found.path is None or found.problem
    assert problem in found.advice() and found.advice().startswith(f"add `{ADDED}` to the app's runtime dependencies")


@pytest.mark.parametrize("line", ["chatbound-compaction>=0.1", "Chatbound_Compaction==0.1.0", "chatbound.compaction"])
def test_an_engine_already_declared_is_not_declared_again(write, line):
    root = write({"requirements.txt": f"openai\n{line}\n", "requirements-dev.txt": "pytest\n"})
    assert declaration(root).declared


def test_the_project_is_the_nearest_folder_with_a_declaration_below_the_repository(write):
    root = write(
        {
            "requirements.txt": "outside the repository\n",
            "repo/.git/HEAD": "ref: refs/heads/main\n",
            "repo/pyproject.toml": '[project]\nname = "all"\ndependencies = []\n',
            "repo/services/chat/requirements.txt": "openai\n",
            "repo/services/chat/app/bot.py": "",
            "repo/tools/cli.py": "",
        }
    )
    assert (
        declaration_for(root / "repo/services/chat/app/bot.py", root).path
        == root / "repo/services/chat/requirements.txt"
    )
    assert declaration_for(root / "repo/tools/cli.py", root).path == root / "repo/pyproject.toml"
    (root / "repo/pyproject.toml").unlink()
    found = declaration_for(root / "repo/tools/cli.py", root)
    assert found.path is None and "no pyproject.toml, requirements*.txt, setup.py or Pipfile above" in found.problem


SERVICE = (
    "from openai import OpenAI\n\nclient = OpenAI()\nhistory = []\n\n\n"
    "def ask(text):\n"
    '    history.append({"role": "user", "content": text})\n'
    '    reply = client.chat.completions.create(model="gpt-4o", messages=history)\n'
    '    history.append({"role": "assistant", "content": reply.choices[0].message.content})\n'
)


def test_without_a_declaration_the_fix_is_unsafe_and_every_output_says_what_to_add_where(write):
    root = write({"bot.py": SERVICE})
    checked = invoke("check", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    advice = (
        f"Add `{ADDED}` to the app's runtime dependencies by hand: no pyproject.toml, requirements*.txt, "
        "setup.py or Pipfile above bot.py."
    )
    assert advice in checked.output
    assert checked.output.splitlines()[-1].endswith("1 fixable with `--fix --unsafe-fixes`.")
    fixed = invoke("check", "--fix", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert (root / "bot.py").read_text() == SERVICE
    forced = invoke("check", "--fix", "--unsafe-fixes", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert "from chatbound.compaction import bounded_view" in (root / "bot.py").read_text()
    assert f"warning: bot.py: the fixes import chatbound.compaction: {advice[0].lower()}{advice[1:-1]}" in forced.output
    assert fixed.exit_code == 1 and forced.exit_code == 0


def test_an_engine_declared_already_leaves_the_declaration_alone(write):
    root = write({"bot.py": SERVICE, "requirements.txt": f"openai\n{ADDED}\n"})
    checked = invoke("check", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert "--fix` also declares" not in checked.output and "by hand" not in checked.output
    invoke("check", "--fix", "--select", "MEMORY-UNBOUNDED-HISTORY", "bot.py", cwd=root)
    assert "bounded_view(history" in (root / "bot.py").read_text()
    assert (root / "requirements.txt").read_text() == f"openai\n{ADDED}\n"
