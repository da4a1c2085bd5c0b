"""`chatbound verify`: does each bounded history the code shows really stay bounded and whole?

Bounds are read with the shared chat facts (``chatbound.analysis.histories``): a count slice at a send
or stored back (``h[-N:]``, ``del h[:-N]``), ``deque(maxlen=N)``, ``trim_messages(...)`` and
``bounded_view(...)`` with readable arguments. Each is run over simulated sessions, OpenAI
message dicts built from the engine's representative turn, with tool loops of 0 to 3 calls
per turn and a system prompt (first in the list when the code stores it there, else sent in
front of the view). At every model call of every turn the view is checked:

- it must not start with a tool result whose call was cut away (an orphan: the providers
  reject it with a 400), nor lose the system prompt the list holds;
- its tokens must stop growing: the worst call of the second half of the session may not
  exceed the worst of the first half (a window the session never fills is no bound).

``bounded_view`` is the engine's own; ``trim_messages`` is emulated from LangChain's
documented semantics (strategy, ``max_tokens``, ``token_counter=len``, ``start_on``,
``include_system``), so LangChain is not needed at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from chatbound.analysis.chat import ChatRule
from chatbound.analysis.histories import is_ring
from chatbound.compaction import Message, ToolCall, bounded_view, event_text, from_openai, to_openai
from chatbound.compaction.tokens import get_encoder
from chatbound.cost.projection import TURNS as COST_TURNS
from chatbound.cost.projection import representative_turn, system_message, system_prompt, turn_model
from chatbound.findings import Finding, Severity
from chatbound.syntax.messages import callee_name, is_count_slice, slice_of, string
from chatbound.syntax.values import constant
from chatbound.syntax.visitors import children

TURNS = 60
# Sessions: the tool-call batches of each turn, cycling (a batch is one assistant message
# making that many parallel calls). Several rhythms, odd and even, so a count window's cut
# lands on every kind of message at some call.
SESSIONS = (
    ((1,),),
    ((1,), (), (1, 1), (1, 1, 1)),
    ((2,), (1,), (), (1, 3)),
)
PLAIN_SESSIONS = (((),),)  # a history that never holds tool traffic: user/assistant turns
SYSTEM_TOKENS = 200


@dataclass(frozen=True)
class Bound:
    """A bound as the code states it: kind ("slice", "deque", "trim_messages", "bounded_view")."""

    kind: str
    arguments: dict[str, Any]
    system_in_history: bool = False
    tool_traffic: bool = True
    send_system_tokens: int = 0  # the system prompt the send shows, as `chatbound cost` counts it

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.kind}({args})"


class BoundReader(ChatRule):
    """Not a lint rule (it lives outside `rules/`): reports every readable bound of a history."""

    ID = "VERIFY-BOUND"
    NAME = "verify-bound"
    SEVERITY = Severity.LOW
    SUMMARY = "A bounded history."

    def leave_Module(self, original_node: cst.Module) -> None:
        facts = self.chat_facts()
        found: list[tuple[cst.CSTNode, list]] = []
        for _site, sink in facts.sites():
            for arg in sink.content:
                found.extend((node, [facts.histories.get(key)]) for key, node in facts.bounded_views_in(arg))
        for history in facts.histories.values():
            found.extend((node, [history]) for node in [*history.windows, *history.trims])
        for call in self.nodes.calls:  # trim_messages / bounded_view wherever they are called
            if callee_name(call) in ("trim_messages", "bounded_view") and call.args:
                uses = facts.whole_history_in(call.args[0].value)
                found.append((call, [facts.histories.get(u.storage.key) for u in uses]))
        merged: dict[int, tuple[cst.CSTNode, list]] = {}
        for node, histories in found:
            node = self.bound_node(node)
            if node is not None:
                merged.setdefault(id(node), (node, []))[1].extend(h for h in histories if h is not None)
        anywhere = any(h.tool_traffic for h in facts.histories.values())
        for node, histories in merged.values():
            system = any(h.system_first for h in histories)
            tools = any(h.tool_traffic for h in histories) if histories else anywhere
            bound = self.read(node, system, tools)
            if bound is not None:
                bound = replace(bound, send_system_tokens=self._send_system_tokens(facts, node))
                self.report(node, bound.describe(), properties={"bound": bound})

    def _send_system_tokens(self, facts, node: cst.CSTNode) -> int:
        """The tokens of the system prompt the call ``node`` is passed to shows (projection.py's
        reading, what `chatbound cost` projects with), 0 when it shows none."""
        parent = facts.parent(node)
        while parent is not None and not isinstance(parent, cst.Call):
            parent = facts.parent(parent)
        prompt = system_prompt(self.context.module, parent, self.context.directory) if parent is not None else None
        if not prompt:
            return 0
        count = get_encoder(self.context.options.get("encoding", "cl100k_base"))
        return sum(count(event_text(m)) for m in from_openai([{"role": "system", "content": prompt}]))

    def bound_node(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The expression that states the bound: the slice of `h = h[-N:]`, the target of `del`."""
        if isinstance(node, cst.Del):
            target = node.target
            return target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else target
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
            return next((n for n in _walk(node.value) if isinstance(n, cst.Subscript) and is_count_slice(n)), None)
        return node

    def _int(self, node: cst.BaseExpression | None) -> int | None:
        found = constant(self, node) if node is not None else None
        return found.value if found is not None and isinstance(found.value, int) and found.value > 0 else None

    def read(self, node: cst.CSTNode, system_first: bool, tools: bool) -> Bound | None:
        """The bound ``node`` states, or None when its size or its semantics cannot be read."""
        if isinstance(node, cst.Subscript):
            part = slice_of(node)
            if part is None:
                return None
            if is_count_slice(node):  # h[-N:]
                count = self._minus(part.lower)
            else:  # del h[:-N]
                count = self._minus(part.upper) if part.lower is None and part.step is None else None
            return Bound("slice", {"last_messages": count}, system_first, tools) if count else None
        if not isinstance(node, cst.Call):
            return None
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        name = callee_name(node)
        if is_ring(node):
            positional = [a.value for a in node.args if a.keyword is None]
            count = self._int(keywords.get("maxlen", positional[1] if len(positional) > 1 else None))
            return Bound("deque", {"maxlen": count}, system_first, tools) if count else None
        if name == "bounded_view":
            arguments = {k: self._int(keywords.get(k)) for k in ("last_turns", "last_events", "max_tokens")}
            arguments = {k: v for k, v in arguments.items() if v is not None}
            return Bound("bounded_view", arguments, system_first, tools) if arguments else None
        if name == "trim_messages" and not any(
            q.name.startswith("litellm") for q in self.get_metadata(QualifiedNameProvider, node.func, ())
        ):  # LangChain's; litellm's trim_messages works differently
            budget = self._int(keywords.get("max_tokens"))
            if budget is None:
                return None
            counter = keywords.get("token_counter")
            arguments = {
                "max_tokens": budget,
                "strategy": string(keywords.get("strategy")) or "last",
                "token_counter": "len" if isinstance(counter, cst.Name) and counter.value == "len" else "tokens",
                "start_on": string(keywords.get("start_on")),
                "include_system": isinstance(keywords.get("include_system"), cst.Name)
                and keywords["include_system"].value == "True",
            }
            return Bound("trim_messages", arguments, system_first, tools)
        return None

    def _minus(self, node: cst.BaseExpression | None) -> int | None:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self._int(node.expression)
        return None


def _walk(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _walk(child)


# --- applying a bound to a list of message dicts ---------------------------------------------


def _trim(messages: list, arguments: dict, count: Callable[[dict], int]) -> list:
    """LangChain ``trim_messages`` semantics on OpenAI dicts (roles: system/user/assistant/tool)."""
    size = (lambda m: 1) if arguments["token_counter"] == "len" else count
    budget = arguments["max_tokens"]
    head: list = []
    rest = list(messages)
    if arguments["include_system"] and rest and rest[0]["role"] == "system":
        head, rest = rest[:1], rest[1:]
        budget -= size(head[0])
    if arguments["strategy"] == "first":
        kept = []
        for message in rest:
            if size(message) > budget:
                break
            budget -= size(message)
            kept.append(message)
        return head + kept
    kept = []
    for message in reversed(rest):
        if size(message) > budget:
            break
        budget -= size(message)
        kept.insert(0, message)
    start = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}.get(
        arguments["start_on"] or ""
    )
    if start:
        while kept and kept[0]["role"] != start:
            kept.pop(0)
    return head + kept


def view_of(bound: Bound, messages: list, count: Callable[[dict], int]) -> list:
    """What the bound sends from ``messages``."""
    if bound.kind in ("slice", "deque"):
        n = bound.arguments.get("last_messages") or bound.arguments["maxlen"]
        return messages[-n:]
    if bound.kind == "bounded_view":
        return bounded_view(messages, **bound.arguments)
    return _trim(messages, bound.arguments, count)


# --- simulated sessions ----------------------------------------------------------------------


@dataclass
class Verdict:
    bound: Bound
    worst_tokens: int = 0  # the most one model call sends
    problems: list[str] = field(default_factory=list)
    end_tokens: int = 0  # the view once the last turn has ended, its reply included
    cost_tokens: int = 0  # end_tokens in `chatbound cost`'s session: its turns, its system prompt

    @property
    def holds(self) -> bool:
        return not self.problems


def _turn(n: int, batches: Sequence[int], turn_tokens: int, count) -> list[list[Message]]:
    """Turn ``n`` in call-sized steps: [user], then per batch one assistant message making
    that many parallel tool calls and their results, then [reply] (which no call sends). A
    turn without tool calls is a user message and a reply of ``turn_tokens`` in all."""
    if not any(batches):
        user, reply = representative_turn(n, turn_tokens, count, tools=False)
        return [[user], [reply]]
    user, call, result, reply = representative_turn(n, turn_tokens, count)
    steps = [[user]]
    for b, size in enumerate(batches):
        ids = [f"call_{n}_{b}_{k}" for k in range(size)]
        calls = tuple(ToolCall(i, "lookup", call.tool_calls[0].arguments) for i in ids)
        steps.append(
            [Message("assistant", "", calls)]
            + [Message("tool", result.content, tool_call_id=i, name="lookup") for i in ids]
        )
    steps.append([reply])
    return steps


def verify_bound(bound: Bound, turns: int = TURNS, turn_tokens: int = 400, encoding: str = "cl100k_base") -> Verdict:
    """Run ``bound`` over every session rhythm; the problems of all, the worst call of any."""
    verdict = Verdict(bound)
    for rhythm in SESSIONS if bound.tool_traffic else PLAIN_SESSIONS:
        one = simulate_bound(bound, rhythm, turns, turn_tokens, encoding, bound.send_system_tokens or SYSTEM_TOKENS)
        verdict.worst_tokens = max(verdict.worst_tokens, one.worst_tokens)
        kinds = {_kind(p) for p in verdict.problems}
        verdict.problems.extend(p for p in one.problems if _kind(p) not in kinds)
    as_cost = replace(bound, system_in_history=False)  # cost's session: one tool call a turn, the send's prompt
    verdict.cost_tokens = simulate_bound(
        as_cost, ((1,),), COST_TURNS, turn_tokens, encoding, bound.send_system_tokens
    ).end_tokens
    return verdict


def simulate_bound(
    bound: Bound,
    rhythm: Sequence[Sequence[int]],
    turns: int = TURNS,
    turn_tokens: int = 400,
    encoding: str = "cl100k_base",
    system_tokens: int = SYSTEM_TOKENS,
) -> Verdict:
    """Run ``bound`` over one session of ``turns`` turns whose tool batches follow ``rhythm``,
    after a system prompt of ``system_tokens`` (none when 0)."""
    encoder = get_encoder(encoding)
    memo: dict[int, int] = {}

    def count(message: dict) -> int:
        key = id(message)
        if key not in memo:
            memo[key] = sum(encoder(event_text(m)) for m in from_openai([message]))
        return memo[key]

    def as_dicts(messages: list[Message]) -> list[dict]:
        """The messages as OpenAI dicts, each counted as the engine counts the message (a tool
        result by its tool's name, which a dict alone no longer carries)."""
        dicts = to_openai(messages)
        memo.update((id(d), encoder(event_text(m))) for d, m in zip(dicts, messages))
        return dicts

    system = as_dicts([system_message(system_tokens, encoder)]) if system_tokens else []
    history: list = list(system) if bound.system_in_history else []
    verdict = Verdict(bound)
    worst: list[int] = []
    for n in range(1, turns + 1):
        steps = _turn(n, rhythm[(n - 1) % len(rhythm)], turn_tokens, encoder)
        turn_worst = 0
        for step in steps[:-1]:  # a model call after the user message and after each tool result
            history.extend(as_dicts(step))
            view = view_of(bound, history, count)
            sent = view if bound.system_in_history else [*system, *view]
            turn_worst = max(turn_worst, sum(count(m) for m in sent))
            _check(verdict, n, view, bound)
        history.extend(as_dicts(steps[-1]))
        worst.append(turn_worst)
    view = view_of(bound, history, count)
    verdict.end_tokens = sum(count(m) for m in (view if bound.system_in_history else [*system, *view]))
    verdict.worst_tokens = max(worst)
    half = turns // 2
    if max(worst[half:]) > max(worst[:half]):
        verdict.problems.append(
            f"still growing at turn {turns} ({max(worst[:half]):,} tokens by turn {half}, "
            f"{max(worst[half:]):,} after): the window is never reached"
        )
    return verdict


def _kind(problem: str) -> str:
    return next(word for word in ("orphaned", "system prompt", "growing", "") if word in problem)


def _check(verdict: Verdict, turn: int, view: list, bound: Bound) -> None:
    if len(verdict.problems) >= 2:
        return
    called = {c["id"] for m in view for c in m.get("tool_calls") or ()}
    orphan = next((m for m in view if m["role"] == "tool" and m["tool_call_id"] not in called), None)
    if orphan is not None and not any("orphaned" in p for p in verdict.problems):
        where = (
            "starts with"
            if view and view[0] is orphan or (view[0]["role"] == "system" and view[1:2] == [orphan])
            else "holds"
        )
        verdict.problems.append(f"turn {turn}: the window {where} an orphaned tool result (its call was cut away)")
    if (
        bound.system_in_history
        and not any(m["role"] == "system" for m in view)
        and not any("system prompt" in p for p in verdict.problems)
    ):
        verdict.problems.append(f"turn {turn}: the window lost the system prompt")


# --- the command ----------------------------------------------------------------------------


def report_line(finding: Finding, verdict: Verdict) -> str:
    status = "holds" if verdict.holds else "FAILS"
    detail = "; ".join(verdict.problems)
    return (
        f"{finding.path}:{finding.span.where}: {finding.snippet.splitlines()[0][:60]} "
        f"[{verdict.bound.describe()}] {status}: worst {verdict.worst_tokens:,} tokens per call; "
        f"{verdict.cost_tokens:,} at the end of turn {COST_TURNS} as `chatbound cost` counts"
        + (f"; {detail}" if detail else "")
    )


@dataclass
class VerifyRun:
    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    checked: int = 0
    failed: int = 0
    model: str = ""

    def summary(self) -> str:
        if not self.checked:
            return "No bounded history found to verify."
        return (
            f"{self.model}\nVerified {self.checked} bound{'s' if self.checked != 1 else ''}: "
            f"{self.checked - self.failed} hold, {self.failed} fail."
        )


def session_model(turns: int, turn_tokens: int, encoding: str) -> str:
    """What `chatbound verify` simulates, and how its two counts relate to `chatbound cost`'s."""
    return (
        f"Sessions of {turn_model(turns, turn_tokens, encoding, tools=False)} where the history holds no tool "
        f"traffic, else of {turn_tokens}-token turns with 0 to 3 tool calls and their results, after the system "
        f"prompt the send shows (else one of {SYSTEM_TOKENS} tokens); worst = the most one model call sends (the turn's reply is not yet "
        f"in it). The second count is `chatbound cost`'s: {turn_model(COST_TURNS, turn_tokens, encoding)} after "
        "the system prompt the send shows, counted once the turn has ended, its reply included; for the same "
        "window it equals cost's plain window."
    )
