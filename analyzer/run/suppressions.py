"""`# chatbound: ignore[RULE-ID] reason` comments, read with tokenize (never from strings)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, replace

from chatbound.findings import Finding
from chatbound.run.registry import matches

PATTERN = re.compile(r"#\s*chatbound:\s*ignore(?:\[(?P<ids>[^\]]*)\])?(?P<reason>.*)$", re.I)


@dataclass(frozen=True)
class Suppression:
    line: int
    ids: tuple[str, ...]  # empty: a bare ignore, which silences every rule on the line
    reason: str


def read_suppressions(source: str) -> dict[int, Suppression]:
    found: dict[int, Suppression] = {}
    if "chatbound" not in source.lower():  # the tokenizer costs about half a parse: skip it when it cannot find one
        return found
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            match = PATTERN.search(token.string)
            if match:
                ids = tuple(i.strip().upper() for i in (match.group("ids") or "").split(",") if i.strip())
                line = token.start[0]
                found[line] = Suppression(line, ids, match.group("reason").strip())
    except (tokenize.TokenError, SyntaxError):
        pass  # the file parsed with LibCST; a tokenizer quirk only loses suppressions
    return found


def bare_warnings(path: str, suppressions: dict[int, Suppression]) -> list[str]:
    return [
        f"{path}:{s.line}: `# chatbound: ignore` without rule ids silences every rule on the line;"
        " name them, e.g. `# chatbound: ignore[MEMORY-UNBOUNDED-HISTORY]`"
        for s in suppressions.values()
        if not s.ids
    ]


def apply_suppressions(findings: list[Finding], suppressions: dict[int, Suppression]) -> list[Finding]:
    """Mark (never drop) the findings a comment on their line or statement's first line covers."""
    out = []
    for finding in findings:
        for line in (finding.span.line, finding.statement_line):
            s = suppressions.get(line)
            if s and (not s.ids or any(matches(finding.rule_id, code) for code in s.ids)):
                finding = replace(finding, suppressed=s.reason)
                break
        out.append(finding)
    return out
