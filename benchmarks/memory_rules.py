"""Cost of the memory rules relative to the one-pass analysis every rule shares.

Every fixture app of fixtures/memory_dev, fixtures/memory and fixtures/memory_review is analyzed (1) with a rule
that only computes the shared metadata (parse, one traversal, scopes, qualified names,
parents, positions) and (2) with both memory rules; the ratio says what the chat facts and
the two rules add on top of what any metadata-reading rule pays. A second ratio checks growth: one module made of 8 copies of
the apps (classes and functions renamed apart) against 8 separate files, so a rule that
re-walks the tree per candidate shows up as a ratio well above 1.
Run: python benchmarks/memory_rules.py   (target: memory/metadata <= 1.5, big/separate <= 1.5)
"""

import re
import timeit
from pathlib import Path

import libcst as cst

from chatbound.analysis.rule import Rule
from chatbound.findings import Severity
from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    p.read_text()
    for folder in ("memory_dev", "memory", "memory_review")
    for p in sorted((ROOT / "fixtures" / folder).glob("*.py"))
]
RULES = [r for r in all_rules() if r.ID.startswith("MEMORY-")]


class Baseline(Rule):
    """Pays what any metadata-reading rule pays: parse, one traversal, scope, qualified names,
    parents and positions computed for the whole tree; reports nothing."""

    ID, NAME, SEVERITY, SUMMARY = "BASELINE", "baseline", Severity.LOW, "benchmark baseline"

    def leave_Module(self, original_node: cst.Module) -> None:
        for provider in self.METADATA_DEPENDENCIES:
            self.get_metadata(provider, original_node, None)


def baseline(source):
    assert analyze_source(source, "bench.py", [Baseline], {}).error is None


def with_rules(source):
    result = analyze_source(source, "bench.py", RULES, {})
    assert result.error is None, result.error


def best(fn, sources, repeat=5):
    return min(timeit.repeat(lambda: [fn(s) for s in sources], number=1, repeat=repeat))


def renamed(source, n):
    return re.sub(r"^(class|def|async def) (\w+)", lambda m: f"{m.group(1)} {m.group(2)}_{n}", source, flags=re.M)


def main():
    base = best(baseline, SOURCES)
    rules = best(with_rules, SOURCES)
    print(
        f"{len(SOURCES)} files: shared metadata alone {base * 1000:.0f} ms, memory rules {rules * 1000:.0f} ms, "
        f"ratio {rules / base:.2f}"
    )
    chunk = SOURCES[:8]
    big = "\n\n".join(renamed(s, n) for n, s in enumerate(chunk))
    separate = best(with_rules, chunk)
    joined = best(with_rules, [big])
    print(
        f"one module of {len(chunk)} apps vs {len(chunk)} files: {joined * 1000:.0f} ms vs {separate * 1000:.0f} ms, "
        f"ratio {joined / separate:.2f}"
    )


if __name__ == "__main__":
    main()
