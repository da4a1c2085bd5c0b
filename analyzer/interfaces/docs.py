"""Each rule's page, built from the rule class alone, so its documentation cannot drift.

The page is the rule's docstring (ruff's sections) under a title, with its options from
`OPTIONS`. `chatbound rule ID` prints it, SARIF `help` carries it, and `docs/rules/ID.md` is
it, written by this module; the README's rule table comes from the same metadata. A test
regenerates everything and fails when a committed file differs:

    python -m chatbound.interfaces.docs            # rewrite docs/rules/ and the README's table
    python -m chatbound.interfaces.docs --check    # exit 1 and name the stale files
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chatbound.run.registry import all_rules

if TYPE_CHECKING:
    from chatbound.analysis.rule import Rule

RULES_FOLDER = Path("docs") / "rules"
README = Path("README.md")
TABLE_HEADER = "| rule | severity | what it finds |\n|---|---|---|\n"


def body(rule: type[Rule]) -> str:
    """The docstring and the options: what SARIF's help shows under the rule's name."""
    options = "".join(
        f"\n- `{name}` (default `{option.default}`): {option.help}" for name, option in rule.OPTIONS.items()
    )
    text = rule.doc()
    return text + (f"\n\n## Options\nIn `[tool.chatbound.options]`:\n{options}" if options else "")


def page(rule: type[Rule]) -> str:
    """docs/rules/ID.md, and what `chatbound rule ID` prints."""
    return (
        f"# {rule.ID}\n\n{rule.SUMMARY}\n\n"
        f"Severity: {rule.SEVERITY.label}. Silence one finding with `# chatbound: ignore[{rule.ID}]`.\n\n"
        f"{body(rule)}\n"
    )


def table(link_prefix: str) -> str:
    """The rules as a markdown table, each id linking to its page."""
    return TABLE_HEADER + "".join(
        f"| [{rule.ID}]({link_prefix}{rule.ID}.md) | {rule.SEVERITY.label} | {rule.SUMMARY} |\n" for rule in all_rules()
    )


def index() -> str:
    """docs/rules/README.md."""
    return (
        "# Rules\n\n"
        "Each page is generated from the rule's own module (`python -m chatbound.interfaces.docs`); "
        "`chatbound rule ID` prints the same text.\n\n" + table("")
    )


def readme_with_table(readme: str) -> str:
    """The README with its rule table (the first table under `TABLE_HEADER`) brought up to date."""
    pattern = re.compile(re.escape(TABLE_HEADER) + r"(?:\|.*\n)*")
    if not pattern.search(readme):
        raise ValueError(f"{README} has no rule table starting with {TABLE_HEADER.splitlines()[0]!r}")
    return pattern.sub(lambda _: table(f"{RULES_FOLDER.as_posix()}/"), readme, count=1)


def expected(root: Path) -> dict[Path, str]:
    """Every generated file under `root` (the repository) and its content."""
    folder = root / RULES_FOLDER
    files = {folder / f"{rule.ID}.md": page(rule) for rule in all_rules()}
    files[folder / "README.md"] = index()
    files[root / README] = readme_with_table((root / README).read_text(encoding="utf-8"))
    return files


def stale(root: Path) -> list[Path]:
    """The generated files that are missing or differ from what the rules say now, and the
    pages of rules that no longer exist."""
    files = expected(root)
    orphans = sorted(set((root / RULES_FOLDER).glob("*.md")) - set(files))
    return orphans + [
        path for path, text in files.items() if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]


def write(root: Path) -> list[Path]:
    """Rewrite the stale files and remove the orphaned pages; returns them."""
    files = expected(root)
    changed = stale(root)
    for path in changed:
        if path not in files:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if "--check" in argv:
        changed = stale(root)
        for path in changed:
            print(f"stale: {path.relative_to(root)} (run `python -m chatbound.interfaces.docs`)", file=sys.stderr)
        return 1 if changed else 0
    for path in write(root):
        print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
