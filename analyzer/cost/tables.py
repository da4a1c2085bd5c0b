"""`chatbound cost`: the projection of every history finding as a table, a terminal chart, an SVG.

The numbers come from ``projection.project`` (the engine's simulated sessions); this module
only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from chatbound.compaction.tokens import DEFAULT_ENCODING
from chatbound.cost.projection import (
    DEFAULT_TURN_TOKENS,
    PROJECTED_RULES,
    SECONDS_PER_TURN,
    TURNS,
    Projection,
    project,
    turn_model,
)
from chatbound.findings import Finding

SERIES = (  # name, label, terminal mark, SVG colour
    ("as_written", "as written", "#", "#d62728"),
    ("window_summary", "last {window} turns + summary", "o", "#1f77b4"),
    ("window", "last {window} turns", ".", "#2ca02c"),
)


@dataclass(frozen=True)
class Costed:
    finding: Finding
    projection: Projection

    @property
    def location(self) -> str:
        return f"{self.finding.path}:{self.finding.span.where}"


def costed(
    findings: Sequence[Finding],
    turns: int = TURNS,
    turn_tokens: int = DEFAULT_TURN_TOKENS,
    encoding: str = DEFAULT_ENCODING,
) -> list[Costed]:
    """The history findings with their projection for ``turns`` turns of ``turn_tokens``."""
    out = []
    for finding in findings:
        if finding.rule_id not in PROJECTED_RULES:
            continue
        system = int(finding.properties.get("projection", {}).get("system_tokens", 0))
        lifetime = int(finding.properties.get("lifetime_seconds", 0))
        out.append(Costed(finding, project(turns, turn_tokens, system, encoding=encoding, lifetime_seconds=lifetime)))
    return out


def _dollars(tokens: int, price: float | None) -> str:
    return "" if price is None else f"${tokens * price / 1_000_000:,.2f}"


def table(items: Sequence[Costed], price: float | None = None) -> str:
    """One row per finding: tokens at the last turn and over the session, as written and bounded."""
    if not items:
        return "No history findings to cost."
    turns = max(item.projection.turns for item in items)
    shorter = [item for item in items if item.projection.turns < turns]
    head = [
        "finding",
        "rule",
        f"turn {turns}" if not shorter else "last turn",
        "bounded",
        "session",
        "bounded",
        "ratio",
    ]
    if price is not None:
        head += ["$ session", "$ bounded"]
    rows = [head]
    for item in items:
        p = item.projection
        written, bounded = sum(p.as_written), sum(p.window_summary)
        row = [
            item.location,
            item.finding.rule_id,
            f"{p.as_written[-1]:,}",
            f"{p.window_summary[-1]:,}",
            f"{written:,}",
            f"{bounded:,}",
            f"{p.ratio('window_summary')}x",
        ]
        if price is not None:
            row += [_dollars(written, price), _dollars(bounded, price)]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    p = items[0].projection
    lines.append(
        f"\n{turn_model(turns, p.turn_tokens, p.encoding)}, after the system prompt each send shows "
        f"({', '.join(sorted({f'{i.projection.system_tokens:,}' for i in items}))} tokens); bounded = the last "
        f"{p.window_turns} turns + a rolling summary, system prompt kept. A turn is counted once it ends, its reply "
        "included; `chatbound verify` counts what one model call sends (before the turn's reply, over sessions "
        "of 0 to 3 tool calls a turn) and reports this count beside its own."
    )
    lines += [
        f"{item.location}: {item.projection.turns} turns, as many as its store's "
        f"{item.projection.lifetime_seconds:,} s time to live holds at one turn every {SECONDS_PER_TURN} s."
        for item in shorter
    ]
    return "\n".join(lines)


def chart(item: Costed, height: int = 10, width: int = 60) -> str:
    """Tokens sent per turn as text: `#` as written, `o` window + summary, `.` plain window."""
    p = item.projection
    series = [(mark, p.variants[name]) for name, _, mark, _ in SERIES]
    top = max(p.as_written) or 1
    columns = min(width, p.turns)
    turns_at = [round((c + 1) * p.turns / columns) - 1 for c in range(columns)]
    grid = [[" "] * columns for _ in range(height)]
    for mark, values in reversed(series):  # as written drawn last, on top
        for c, t in enumerate(turns_at):
            row = height - 1 - min(height - 1, int(values[t] * height / top - 1e-9))
            grid[row][c] = mark
    label = len(f"{top:,}")
    lines = [f"tokens sent per turn, {item.location}"]
    for r, row in enumerate(grid):
        axis = f"{top:,}" if r == 0 else ("0" if r == height - 1 else "")
        lines.append(f"{axis:>{label}} |{''.join(row)}")
    lines.append(f"{'':>{label}} +{'-' * columns}")
    lines.append(f"{'':>{label}}  1{' ' * max(1, columns - 1 - len(str(p.turns)))}{p.turns}  (turn)")
    lines.append("  ".join(f"{mark} {text.format(window=p.window_turns)}" for _, text, mark, _ in SERIES))
    return "\n".join(lines)


def svg(item: Costed, width: int = 640, height: int = 360) -> str:
    """The per-turn growth as a standalone SVG line chart (no plotting library)."""
    p = item.projection
    left, right, top_pad, bottom = 70, 20, 40, 50
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    top = max(p.as_written) or 1

    def x(turn: int) -> float:
        return left + (turn - 1) * plot_w / max(1, p.turns - 1)

    def y(tokens: int) -> float:
        return top_pad + plot_h - tokens * plot_h / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14">Tokens sent per turn: {escape(item.location)}</text>',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="black"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="black"/>',
    ]
    for fraction in (0, 0.5, 1):
        value = round(top * fraction)
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:,}</text>')
    for turn in sorted({1, (p.turns + 1) // 2, p.turns}):
        parts.append(f'<text x="{x(turn):.1f}" y="{top_pad + plot_h + 16}" text-anchor="middle">{turn}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">turn</text>')
    for index, (name, text, _, colour) in enumerate(SERIES):
        points = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in enumerate(p.variants[name], 1))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        ly = top_pad + 14 * index
        parts.append(
            f'<line x1="{left + 10}" y1="{ly}" x2="{left + 30}" y2="{ly}" stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{left + 36}" y="{ly + 4}">{escape(text.format(window=p.window_turns))}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def largest(items: Sequence[Costed]) -> Costed:
    return max(items, key=lambda item: sum(item.projection.as_written))
