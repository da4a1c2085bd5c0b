"""What a history costs: a simulated session, as written and with the suggested window.

A session is N turns of one representative turn (a user message, one tool call and its
result, an assistant reply) sized to ``turn-tokens``, after the system prompt when the code
shows one. The engine (``chatbound.compaction``) stores it and, for the bounded variants,
compacts it after every turn; the tokens of the view at turn n are what turn n sends. Every
count comes from ``chatbound.compaction.tokens`` over ``event_text``, the rendering the engine itself
counts.

This is a post-rule step: ``attach_projections`` adds the numbers to the findings of the
history rules after the rules ran, as structured ``properties["projection"]`` and one
``notes`` line for the text output.
"""

from __future__ import annotations

import ast
import bisect
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.compaction import (
    InMemoryEventStore,
    Message,
    SessionService,
    ToolCall,
    TurnCountTrigger,
    WindowCompactionStrategy,
    event_text,
    last_turns,
)
from chatbound.compaction.tokens import DEFAULT_ENCODING, get_encoder
from chatbound.findings import Finding, Span
from chatbound.syntax.values import literal
from chatbound.syntax.visitors import children

PROJECTED_RULES = ("MEMORY-UNBOUNDED-HISTORY", "AGENT-OVERSIZED-HANDOFF")
TURNS = 50
WINDOW_TURNS = 10
DEFAULT_TURN_TOKENS = 400
# How one representative turn's tokens are shared among its four messages.
SHARES = (0.25, 0.10, 0.45, 0.20)
FILLER = " word"  # one cl100k token per repetition
SHADOW_PROMPT = "Summarize our conversation so far."
SECONDS_PER_TURN = 60  # the turn rate assumed where a store's time to live ends the session


def sized(make: Callable[[str], Message], target: int, count: Callable[[str], int]) -> Message:
    """``make(filler)`` with the most filler whose rendering counts at most ``target`` tokens."""
    low, high = 0, max(target, 0)
    while low < high:
        middle = (low + high + 1) // 2
        if count(event_text(make(FILLER * middle))) <= target:
            low = middle
        else:
            high = middle - 1
    return make(FILLER * low)


def representative_turn(n: int, turn_tokens: int, count: Callable[[str], int], tools: bool = True) -> list[Message]:
    """Turn ``n``: user message, tool call, tool result, reply (without ``tools``: user message
    and reply, their shares scaled up); ``turn_tokens`` in all.

    Only the tool call id tells turns apart (it is not part of what is counted), so every
    turn has the same texts and the same size.
    """
    call_id = f"call_{n}"
    makers = (
        lambda text: Message("user", f"Question:{text}"),
        lambda text: Message("assistant", "", (ToolCall(call_id, "lookup", f'{{"q":"{text}"}}'),)),
        lambda text: Message("tool", f"Result:{text}", tool_call_id=call_id, name="lookup"),
        lambda text: Message("assistant", f"Answer:{text}"),
    )
    kept = [i for i in range(len(makers)) if tools or i in (0, 3)]
    total = sum(SHARES[i] for i in kept)
    turn: list[Message] = []
    for i in kept:
        spent = sum(count(event_text(message)) for message in turn)
        target = turn_tokens - spent if i == kept[-1] else round(turn_tokens * SHARES[i] / total)
        turn.append(sized(makers[i], target, count))
    return turn


def turn_model(turns: int, turn_tokens: int, encoding: str, tools: bool = True) -> str:
    """The simulated session in words, as `chatbound cost` and `chatbound verify` state it."""
    shape = "a user message, one tool call and its result, a reply" if tools else "a user message and a reply"
    return f"{turns} turn{'s' if turns != 1 else ''} of {turn_tokens} tokens ({shape}; {encoding})"


def system_message(system_tokens: int, count: Callable[[str], int]) -> Message:
    return sized(lambda text: Message("system", f"Instructions:{text}"), system_tokens, count)


def summary_turn(summary_tokens: int, count: Callable[[str], int]) -> list[Message]:
    """The rolling summary as the engine stores it: a shadow prompt and the summary, one turn's size."""
    shadow = Message("user", SHADOW_PROMPT)
    left = summary_tokens - count(event_text(shadow))
    return [shadow, sized(lambda text: Message("assistant", f"Summary:{text}"), left, count)]


@functools.lru_cache(maxsize=64)
def simulate(
    turns: int,
    turn_tokens: int,
    system_tokens: int = 0,
    window: int | None = None,
    summarize: bool = False,
    encoding: str = DEFAULT_ENCODING,
) -> tuple[int, ...]:
    """Tokens of the view at each turn; ``window`` keeps that many turns (None: unbounded)."""
    count = functools.lru_cache(maxsize=None)(get_encoder(encoding))  # the same few texts recur
    service = SessionService(InMemoryEventStore(), count)
    session = service.create()
    if system_tokens > 0:
        service.append(session, system_message(system_tokens, count))
    strategy = None
    if window is not None:
        summary = summary_turn(turn_tokens, count)
        strategy = WindowCompactionStrategy(
            last_turns(window), summarizer=(lambda request: summary) if summarize else None, estimator=count
        )
    sent = []
    for n in range(1, turns + 1):
        service.append(session, *representative_turn(n, turn_tokens, count))
        if strategy is not None:
            service.compact(session, TurnCountTrigger(window), strategy)
        sent.append(sum(count(event_text(event)) for event in service.view(session)))
    return tuple(sent)


@dataclass(frozen=True)
class Projection:
    """Tokens per turn for the code as written, the window plus summary, and the plain window."""

    turns: int
    turn_tokens: int
    system_tokens: int
    window_turns: int
    encoding: str
    as_written: tuple[int, ...]
    window_summary: tuple[int, ...]
    window: tuple[int, ...]
    lifetime_seconds: int = 0  # the session ends with its store's time to live (0: it does not)

    @property
    def variants(self) -> dict[str, tuple[int, ...]]:
        return {"as_written": self.as_written, "window_summary": self.window_summary, "window": self.window}

    def ratio(self, name: str) -> float:
        bounded = sum(self.variants[name])
        return round(sum(self.as_written) / bounded, 2) if bounded else 0.0

    def properties(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "turns": self.turns,
            "turn_tokens": self.turn_tokens,
            "system_tokens": self.system_tokens,
            "window_turns": self.window_turns,
            "encoding": self.encoding,
        }
        if self.lifetime_seconds:
            out.update(lifetime_seconds=self.lifetime_seconds, seconds_per_turn=SECONDS_PER_TURN)
        for name, series in self.variants.items():
            out[name] = {"last_turn": series[-1], "session": sum(series)}
            if name != "as_written":
                out[name]["ratio"] = self.ratio(name)
        return out

    def note(self) -> str:
        written, bounded = self.as_written, self.window_summary
        within = (
            f" within the {self.lifetime_seconds:,} s time to live, at one turn every {SECONDS_PER_TURN} s"
            if self.lifetime_seconds
            else ""
        )
        return (
            f"cost{within}: turn {self.turns} sends {written[-1]:,} tokens, {sum(written):,} over the session; "
            f"last {self.window_turns} turns + summary: {bounded[-1]:,} and {sum(bounded):,} "
            f"({self.ratio('window_summary')}x less; plain window {self.ratio('window')}x)"
        )


def project(
    turns: int = TURNS,
    turn_tokens: int = DEFAULT_TURN_TOKENS,
    system_tokens: int = 0,
    window_turns: int = WINDOW_TURNS,
    encoding: str = DEFAULT_ENCODING,
    lifetime_seconds: int = 0,
) -> Projection:
    """The projection over ``turns`` turns, or fewer when a session lasts only
    ``lifetime_seconds`` (one turn every SECONDS_PER_TURN)."""
    if lifetime_seconds:
        turns = max(1, min(turns, lifetime_seconds // SECONDS_PER_TURN))
    run = functools.partial(simulate, turns, turn_tokens, system_tokens, encoding=encoding)
    count = get_encoder(encoding)
    measured = sum(count(event_text(message)) for message in representative_turn(1, turn_tokens, count))
    return Projection(
        turns,
        measured,
        system_tokens,
        window_turns,
        get_encoder(encoding).encoding.removesuffix("_offline"),
        run(),
        run(window_turns, True),
        run(window_turns, False),
        lifetime_seconds,
    )


# --- the post-rule step ---------------------------------------------------------------


def node_spans(wrapper: MetadataWrapper) -> dict[Span, cst.CSTNode]:
    """Every node by its 1-based span; the outermost node wins where spans coincide."""
    found: dict[Span, cst.CSTNode] = {}
    for node, pos in wrapper.resolve(PositionProvider).items():
        found.setdefault(Span(pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1), node)
    return found


def _contains(outer: Span, inner: Span) -> bool:
    return (outer.line, outer.col) <= (inner.line, inner.col) and (inner.end_line, inner.end_col) <= (
        outer.end_line,
        outer.end_col,
    )


class Calls:
    """The calls among ``spans`` sorted by where they start, so that the innermost one holding a
    span is found by a search back from that span's start, not by a scan of every node."""

    def __init__(self, spans: dict[Span, cst.CSTNode]) -> None:
        found = sorted(
            ((s.line, s.col, -s.end_line, -s.end_col), s, n) for s, n in spans.items() if isinstance(n, cst.Call)
        )
        self.keys = [key for key, _, _ in found]
        self.calls = [(s, n) for _, s, n in found]

    def enclosing(self, span: Span) -> cst.Call | None:
        """The innermost call whose source range holds ``span``: the send."""
        for i in range(bisect.bisect_right(self.keys, (span.line, span.col, 0, 0)) - 1, -1, -1):
            outer, call = self.calls[i]
            if _contains(outer, span):
                return call
        return None


def _module_strings(module: cst.Module) -> dict[str, str]:
    """Module-level names bound exactly once, to a string literal."""
    bound: dict[str, list] = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target, value = small.targets[0].target, small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    target, value = small.target, small.value
                else:
                    continue
                if isinstance(target, cst.Name):
                    bound.setdefault(target.value, []).append(literal(value))
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and isinstance(values[0], str)}


def _imported_strings(module: cst.Module, directory: str, data_files: list[str]) -> dict[str, str]:
    """Strings the module imports from a sibling module (`from .prompts import SYSTEM_PROMPT`,
    `from prompts import X`): names bound once to a string literal there. Each file read is
    recorded in ``data_files`` so a cached result is checked against it."""
    if not directory:
        return {}
    found: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar) or small.module is None:
                continue
            base = Path(directory)
            for _ in range(max(0, len(small.relative) - 1)):
                base = base.parent
            target = base.joinpath(*cst.Module([]).code_for_node(small.module).split(".")).with_suffix(".py")
            wanted = {
                a.name.value: (a.asname.name.value if a.asname else a.name.value)
                for a in small.names
                if isinstance(a.name, cst.Name)
            }
            strings = _file_strings(target)
            if strings is None:
                continue
            data_files.append(str(target))
            found.update({local: strings[name] for name, local in wanted.items() if name in strings})
    return found


def _file_strings(path: Path) -> dict[str, str] | None:
    """Module-level names bound once to a string constant in ``path`` (None if unreadable)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    bound: dict[str, list] = {}
    for node in tree.body:
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            else (node.target if isinstance(node, ast.AnnAssign) else None)
        )
        if isinstance(target, ast.Name):
            value = node.value
            bound.setdefault(target.id, []).append(value.value if isinstance(value, ast.Constant) else None)
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and isinstance(values[0], str)}


def _text(node: cst.BaseExpression, strings: dict[str, str]) -> str | None:
    value = literal(node)
    if isinstance(value, str):
        return value
    if isinstance(node, cst.Name):
        return strings.get(node.value)
    return None


def _system_in(node: cst.CSTNode, strings: dict[str, str]) -> str | None:
    """A system prompt's text in one message expression: a dict, a tuple, or SystemMessage(...)."""
    if isinstance(node, cst.Dict):
        items = {literal(e.key): e.value for e in node.elements if isinstance(e, cst.DictElement) and e.key is not None}
        if "role" in items and literal(items["role"]) in ("system", "developer") and "content" in items:
            return _text(items["content"], strings)
    if isinstance(node, cst.Tuple) and len(node.elements) == 2 and literal(node.elements[0].value) == "system":
        return _text(node.elements[1].value, strings)
    if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
        name = node.func.value if isinstance(node.func, cst.Name) else node.func.attr.value
        if name == "SystemMessage" and node.args:
            content = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "content"), None)
            return _text(content, strings) if content is not None else None
    return None


def system_prompt(
    module: cst.Module, send: cst.Call | None, directory: str = "", data_files: list[str] | None = None
) -> str | None:
    """The system prompt the send shows (its `system=` or a system message in `messages=`),
    a literal or a string constant of this module or of a sibling module it imports."""
    if send is None:
        return None
    strings = _module_strings(module)
    if _names_in(send) - set(strings):
        strings = {**_imported_strings(module, directory, [] if data_files is None else data_files), **strings}
    for arg in send.args:
        keyword = arg.keyword.value if arg.keyword else None
        if keyword in ("system", "instructions", "system_prompt"):
            return _text(arg.value, strings)
        if isinstance(arg.value, (cst.List, cst.Tuple)):
            for element in arg.value.elements:
                found = _system_in(element.value, strings)
                if found is not None:
                    return found
    return None


def _names_in(node: cst.CSTNode) -> set[str]:
    return {n.value for n in _walk(node) if isinstance(n, cst.Name)}


def _walk(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _walk(child)


def attach_projections(
    findings: Sequence[Finding],
    module: cst.Module,
    wrapper: MetadataWrapper,
    options: dict[str, Any],
    directory: str = "",
    data_files: list[str] | None = None,
) -> list[Finding]:
    """The findings, each history finding carrying its projection (computed once per shape).

    ``directory`` (the file's folder) lets a system prompt imported from a sibling module be
    counted; the files read go to ``data_files``."""
    if not any(f.rule_id in PROJECTED_RULES for f in findings):
        return list(findings)
    calls = Calls(node_spans(wrapper))
    encoding = options.get("encoding", DEFAULT_ENCODING)
    count = get_encoder(encoding)
    out = []
    for finding in findings:
        if finding.rule_id not in PROJECTED_RULES:
            out.append(finding)
            continue
        prompt = system_prompt(module, calls.enclosing(finding.span), directory, data_files)
        projection = project(
            turn_tokens=int(options.get("turn-tokens", DEFAULT_TURN_TOKENS)),
            system_tokens=count(event_text(Message("system", prompt))) if prompt else 0,
            encoding=encoding,
            lifetime_seconds=int(finding.properties.get("lifetime_seconds", 0)),
        )
        properties = dict(finding.properties)
        properties["projection"] = projection.properties()
        properties["notes"] = [*properties.get("notes", ()), projection.note()]
        out.append(replace(finding, properties=properties))
    return out
