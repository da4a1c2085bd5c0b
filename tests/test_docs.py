"""The documentation users browse: the README stays short, every rule page is what the rule
class says (and what `chatbound rule ID` and SARIF's help say), its examples do what they
claim, and every link between the pages leads somewhere."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from chatbound.analysis.rule import EXTRA_SECTIONS, SECTIONS
from chatbound.interfaces import docs
from chatbound.interfaces.cli import main
from chatbound.interfaces.reporters.sarif import help_markdown
from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

ROOT = Path(__file__).resolve().parents[1]
RULES = all_rules()
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


def test_readme_is_what_a_new_user_needs_under_12000_characters():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) < 12_000, len(readme)
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert (
        "```bash\n"
        "pip install ./analyzer/compaction . && chatbound check fixtures/\n"
        "pip install ./analyzer/compaction '.[test]' && python -m pytest -n auto\n"
        "```"
    ) in quick_start


def test_committed_pages_are_what_the_rules_say():
    assert docs.stale(ROOT) == [], "stale documentation: run `python -m chatbound.interfaces.docs`"


def test_a_changed_rule_makes_its_page_stale_and_writing_brings_it_back(tmp_path):
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    assert len(docs.write(tmp_path)) == len(RULES) + 1  # every page and the index (the README is current)
    assert docs.stale(tmp_path) == []
    page = tmp_path / "docs" / "rules" / "RAG-EXCESSIVE-TOP-K.md"
    page.write_text(page.read_text().replace("(default 8)", "(default 9)"))
    orphan = tmp_path / "docs" / "rules" / "OLD-RULE.md"
    orphan.write_text("# OLD-RULE\n")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace("| high |", "| low |", 1))
    assert docs.stale(tmp_path) == [orphan, page, readme]
    docs.write(tmp_path)
    assert docs.stale(tmp_path) == [] and not orphan.exists()
    assert readme.read_text() == (ROOT / "README.md").read_text()


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_rule_command_prints_the_page(rule):
    result = CliRunner().invoke(main, ["rule", rule.ID.lower()])
    assert result.exit_code == 0
    assert result.output == (ROOT / "docs" / "rules" / f"{rule.ID}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_sarif_help_is_the_page_below_its_header_and_links_to_it(rule):
    page = (ROOT / "docs" / "rules" / f"{rule.ID}.md").read_text(encoding="utf-8")
    url = f"https://github.com/chatbound/chatbound/blob/main/docs/rules/{rule.ID}.md"
    assert rule.help_url() == url
    body = help_markdown(rule).removesuffix(f"\n\nMore: [{rule.ID}]({url})")
    assert body.startswith("## What it does\n") and page.endswith(f"\n\n{body}\n")


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_docstring_has_the_sections_in_order(rule):
    titles = re.findall(r"^## (.+)$", rule.doc(), re.M)
    assert titles[:4] == list(SECTIONS)
    assert titles[4:] == [t for t in EXTRA_SECTIONS if t in titles[4:]], titles


def _python_blocks(rule, title: str) -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", rule.section(title), re.S))


def _findings(rule, code: str, path: str = "example.py"):
    result = analyze_source(code, path, [rule], {})
    assert result.error is None, result.error
    return result.findings


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_documented_example_is_flagged_and_its_use_instead_is_not(rule):
    example, instead = _python_blocks(rule, "Example"), _python_blocks(rule, "Use instead")
    assert example and instead
    assert [f.rule_id for f in _findings(rule, example)] == [rule.ID]
    assert _findings(rule, instead) == []


@pytest.mark.parametrize("rule", RULES, ids=[r.ID for r in RULES])
def test_the_report_shown_under_the_example_is_what_chatbound_reports_on_it(rule):
    """Every rule's Example shows its report (one text block, one line): that line, position and
    message, is what the rule reports on the example's code."""
    [shown] = re.findall(r"```text\n(.*?)```", rule.section("Example"), re.S)
    [line] = shown.splitlines()
    path = line.split(":", 1)[0]
    assert path.endswith(".py") and line.startswith(f"{path}:") and f": {rule.ID} " in line
    (finding,) = _findings(rule, _python_blocks(rule, "Example"), path)
    assert line == f"{path}:{finding.span.line}:{finding.span.col}: {finding.rule_id} {finding.message}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (page.parent / file).resolve() if file else page
        assert linked.exists(), f"{page.name} links to missing {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{page.name} links to missing heading {target}"


# `cd FOLDER && chatbound verify ...` in a bash block, then its output in the next block
VERIFY_TRANSCRIPT = re.compile(r"\ncd (fixtures/\S+) && chatbound (verify [^\n]+)\n```\n\n```\n(.*?)```", re.S)


def test_the_verify_transcript_in_the_docs_is_what_verify_prints(monkeypatch):
    text = (ROOT / "docs" / "fixes.md").read_text(encoding="utf-8")
    folder, args, output = VERIFY_TRANSCRIPT.search(text).groups()
    monkeypatch.chdir(ROOT / folder)
    result = CliRunner().invoke(main, args.split())
    assert (result.exit_code, result.output) == (1, output)


def test_every_page_names_the_json_schema_version_the_output_has():
    from chatbound.interfaces.reporters.json import SCHEMA_VERSION

    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for said in re.findall(r"\bschema(?: version)? (\d+)\b", text, re.I):
            assert int(said) == SCHEMA_VERSION, f"{page.name} says JSON schema {said}, the output is {SCHEMA_VERSION}"
