"""Survival of chatbound's findings under rewrites that keep a program's meaning (issue 30).

Runs every rule's examples and every `fixtures/` folder through each rewrite of
`tests/metamorphic/rewrites.py` and prints, per rule and per rewrite, the share of positives
that keep their finding, of negatives that stay clean, and of findings the control (the list
bounded at the send) removes; `n/a` counts the cases a rewrite could not apply to.

    python benchmarks/metamorphic.py                # the tables
    python benchmarks/metamorphic.py --failures     # and each case that did not hold
    python benchmarks/metamorphic.py --rewrite send-forwarding --failures
    python benchmarks/metamorphic.py --suite --not-yet   # the test suite's cases; its xfail table
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from metamorphic.harness import (  # noqa: E402
    CONTROLLED,
    FIXTURE_ROW,
    TARGETS,
    Tally,
    cases,
    evaluate_all,
    in_suite,
    tallies,
)
from metamorphic.rewrites import CONTROLS, REWRITES  # noqa: E402


def table(title: str, kind: str, rows: list[str], columns: list[str], counts: dict) -> list[str]:
    """One line per rule, one column per rewrite: `kept/applied` (`*` below target), then `n/a`."""
    width = max(len(r) for r in rows) + 1
    cell = max(len(c) for c in columns) + 1
    lines = [
        f"## {title}: kept/applied, * below {100 * TARGETS[kind]:.0f} % (n/a: not applicable)",
        "",
        " " * width + "".join(f"{c:>{cell}}" for c in columns),
    ]
    for row in rows:
        cells = []
        for column in columns:
            t = counts.get((kind, row, column), Tally())
            below = "*" if t.rate is not None and t.rate < TARGETS[kind] else " "
            cells.append(f"{f'{t.kept}/{t.total}{below}' if t.total else '-':>{cell}}")
        lines.append(f"{row:<{width}}" + "".join(cells))
        na = "".join(f"{counts.get((kind, row, c), Tally()).not_applied:>{cell}}" for c in columns)
        lines.append(f"{'  n/a':<{width}}{na}")
    return lines


def not_yet(counts: dict) -> list[str]:
    """The (kind, rule, rewrite) pairs below target, as the xfail table of test_metamorphic.py."""
    lines = ["NOT_YET: dict[tuple[str, str, str], str] = {"]
    for (kind, rule, rewrite), t in sorted(counts.items()):
        if t.total and t.kept / t.total < TARGETS[kind]:
            lines.append(
                f'    ({kind!r}, {rule!r}, {rewrite!r}): "{t.kept}/{t.total} ({100 * t.kept / t.total:.1f} %)",'
            )
    return [*lines, "}"]


def report(outcomes: list, names: tuple[str, ...], failures: bool) -> list[str]:
    counts = tallies(outcomes)
    rules = sorted({c.rule for c in cases() if c.rule})
    kept = [r for r in names if r in REWRITES]
    controls = [r for r in names if r in CONTROLS]
    lines: list[str] = []
    if kept:
        lines += table("positives keep their finding", "positive", rules, kept, counts) + [""]
        lines += table("negatives stay clean", "negative", [*rules, FIXTURE_ROW], kept, counts) + [""]
    if controls:
        lines += table("the control removes the finding", "control", list(CONTROLLED), controls, counts) + [""]
    lines.append(f"rewrites or runs that failed: {sum(1 for o in outcomes if o.error)}")
    if failures:
        for (kind, rule, rewrite), t in sorted(counts.items()):
            lines += [f"{kind} {rule} {rewrite}: {failure}" for failure in t.failures]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rewrite", action="append", help="only this rewrite (repeatable)")
    parser.add_argument("--failures", action="store_true", help="list each case that did not hold")
    parser.add_argument("--suite", action="store_true", help="only the cases the test suite checks")
    parser.add_argument(
        "--not-yet", action="store_true", help="print the pairs below target in the suite's cases, as its xfail table"
    )
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    names = tuple(args.rewrite) if args.rewrite else (*REWRITES, *CONTROLS)
    started = time.perf_counter()
    outcomes = evaluate_all(names, args.workers, in_suite if args.suite else None)
    checked = len({o.case for o in outcomes})
    print(f"# metamorphic survival: {checked} of {len(cases())} cases, {time.perf_counter() - started:.0f} s\n")
    print("\n".join(report(outcomes, names, args.failures)))
    if args.not_yet:  # the test suite's cases only, as the suite counts them
        suite = {c.name for c in cases() if in_suite(c)}
        print("\n".join(not_yet(tallies([o for o in outcomes if o.case in suite]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
