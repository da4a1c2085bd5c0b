"""What the post-rule steps (cost projections and fixes) add to analyzing the fixtures.

Every fixture file is analyzed with every rule, once with the steps and once with them
replaced by the identity, in the same process (best of 5 each, interleaved, after a warm-up that fills
the projection cache as a real run would after its first finding). Prints the ratio; the
target is at most 1.2. Run: python benchmarks/post_rule_steps.py
"""

import time
from pathlib import Path

import chatbound.run.pipeline as analysis
from chatbound.run.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def analyze_all(files, rules):
    findings = 0
    for path, source in files:
        findings += len(analysis.analyze_source(source, str(path), rules, {"turn-tokens": 400}).findings)
    return findings


def timed(files, rules):
    start = time.perf_counter()
    analyze_all(files, rules)
    return time.perf_counter() - start


def main(rounds=5):
    files = [(p, p.read_bytes()) for p in sorted(FIXTURES.rglob("*.py"))]
    rules = all_rules()
    analyze_all(files, rules)  # warm-up: imports, encoder, projection cache
    steps = (analysis.attach_projections, analysis.attach_fixes)
    identity = (lambda findings, *args, **kwargs: list(findings),) * 2
    with_steps, without = [], []
    try:
        for _ in range(rounds):  # interleaved, so a busy machine slows both alike
            analysis.attach_projections, analysis.attach_fixes = steps
            with_steps.append(timed(files, rules))
            analysis.attach_projections, analysis.attach_fixes = identity
            without.append(timed(files, rules))
    finally:
        analysis.attach_projections, analysis.attach_fixes = steps
    print(
        f"{len(files)} files, best of {rounds}: {min(without):.2f}s without the post-rule steps, "
        f"{min(with_steps):.2f}s with them: ratio {min(with_steps) / min(without):.2f} (target <= 1.2)"
    )


if __name__ == "__main__":
    main()
