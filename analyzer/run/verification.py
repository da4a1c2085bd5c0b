"""`chatbound verify` over files: the bounds each file shows, read by the cost model's `BoundReader`
through the one-file pipeline, each simulated once (`chatbound.cost.verify`)."""

from __future__ import annotations

from chatbound.cost.verify import (
    TURNS,
    Bound,
    BoundReader,
    Verdict,
    VerifyRun,
    report_line,
    session_model,
    verify_bound,
)
from chatbound.findings import Finding


def bounds_in(source: bytes | str, path: str, options: dict) -> tuple[list[Finding], str | None]:
    from chatbound.run.pipeline import analyze_source

    result = analyze_source(source, path, [BoundReader], options)
    return result.findings, (result.error.message if result.error else None)


def verify_paths(paths, settings, turns: int = TURNS) -> VerifyRun:
    """Every readable bound under ``paths``, simulated; one line per bound."""
    from chatbound.run.discovery import discover
    from chatbound.run.runner import check_file, rule_options

    found = discover(list(paths), settings.root, settings.excludes, False, settings.notebooks)
    out = VerifyRun(
        errors=[str(e) for e in found.errors], model=session_model(turns, settings.turn_tokens, settings.encoding)
    )
    options = rule_options(settings)
    verdicts: dict[str, Verdict] = {}
    for path in found.files:
        result = check_file(path, [BoundReader], options)
        if result.error:
            out.errors.append(str(result.error))
        findings = result.findings
        for finding in findings:
            bound: Bound = finding.properties["bound"]
            key = repr(bound)
            if key not in verdicts:
                verdicts[key] = verify_bound(bound, turns, settings.turn_tokens, settings.encoding)
            verdict = verdicts[key]
            out.checked += 1
            out.failed += not verdict.holds
            out.lines.append(report_line(finding, verdict))
    return out
