"""Fixes for history findings, by what the code uses (a post-rule step).

- Lists (openai, anthropic, litellm, mistral, ollama, groq, cohere, bedrock, genai, Hugging
  Face, AutoGen, LangChain message lists): wrap the history expression at the send in
  ``bounded_view(<expr>, last_turns=10)`` and import it once. Safe: only the sent view is
  bounded, the stored list stays as the user sees it, and ``bounded_view`` reads every common
  message shape (dicts and SDK objects, duck-typed, and text lines: ``compaction/shapes.py``).
  When the growth shows what it cannot read, a plain tail, also safe: records that are not
  messages (``{"author": ..., "text": ...}``), rendered into text, get ``log[-20:]`` (a record
  is no turn, so none is split), a history that is one string (``story += ...``) ``story[-8000:]`` (the
  last characters; the first line sent may start mid-sentence). A value the code does not
  show is safe only where it is sent as the messages themselves.
- A finding a framework module owns: that module's ``fix`` (``chatbound.frameworks``); the
  SDK memories no module models yet (LangChain memories, LlamaIndex, Semantic Kernel,
  google-genai chats, Responses chains): ``memory_fixes``. Both are asked first, and neither
  imports this module: the fix layer reads one way.
- MEMORY-WINDOW-SPLITS-TURN: the count slice ``h[-N:]`` becomes ``bounded_view(h,
  last_events=N)`` (unsafe: fewer messages may be kept, as whole turns).
- AGENT-OVERSIZED-HANDOFF: the framework's own bound where its module has one (an AutoGen team's
  participant); else build a brief, a suggestion, never an edit.

Spans are 1-based with exclusive end columns (findings.py); an insertion is an empty span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.findings import Finding, Fix, Span, fix_command
from chatbound.fixes.edits import (
    BOUNDED_IMPORT,
    HISTORY_STAYS,
    WINDOW_TURNS,
    innermost,
    replace_span,
    source_lines,
    text_at,
)
from chatbound.fixes.index import callee, located, module_index, spelled, walk_down
from chatbound.syntax.messages import is_negative, slice_of
from chatbound.syntax.values import literal

UNBOUNDED = "MEMORY-UNBOUNDED-HISTORY"
SPLITS_TURN = "MEMORY-WINDOW-SPLITS-TURN"
HANDOFF = "AGENT-OVERSIZED-HANDOFF"
# Histories a framework or the server keeps: there is no list expression to wrap.
NOT_A_LIST = ("framework", "server")

SUGGESTIONS = {
    "plain": f"Send a bounded view: `bounded_view(history, last_turns={WINDOW_TURNS})` from chatbound.compaction "
    "(or `max_tokens=` for a token budget), plus a rolling summary of what leaves it. " + HISTORY_STAYS,
    SPLITS_TURN: "Replace the count slice by `bounded_view(history, last_events=N)`: it keeps the system prompt "
    "and whole turns, so a tool result never arrives without its call.",
    HANDOFF: "Hand the specialist a brief instead of the transcript: the goal, the constraints, and the evidence "
    "for this case (a few lines), not every earlier turn.",
}
# Appended values that are surely not message dicts: SDK reply objects and message classes.
NOT_A_DICT = re.compile(r"(\.message|\.output)$|^[A-Z]\w*\(")
# Appended values that are text: a reply's `.text` or `.content`.
TEXT = re.compile(r"\.(text|content)$")
# Keys that make a dict a chat item bounded_view reads (role dicts, LangChain and Responses items).
MESSAGE_KEYS = {"role", "type", "parts"}
WINDOW_RECORDS = 20  # records such as review comments: about 10 exchanges
WINDOW_CHARS = 8000  # about 2,000 tokens of a history kept as one string
# What the growth shows that bounded_view cannot read: the tail sent instead, and the advice.
TAILS = {
    "records": (
        f"[-{WINDOW_RECORDS}:]",
        f"the last {WINDOW_RECORDS} records",
        f" The history holds records, not chat messages: where they are rendered into text, send the last "
        f"{WINDOW_RECORDS} (`log[-{WINDOW_RECORDS}:]`); a record is no turn, so none is split.",
    ),
    "string": (
        f"[-{WINDOW_CHARS}:]",
        f"the last {WINDOW_CHARS} characters",
        f" The history is one growing string: send its last {WINDOW_CHARS} characters "
        f"(`story[-{WINDOW_CHARS}:]`), or keep the turns in a list to send the last whole ones.",
    ),
}


def _appended(
    module: cst.Module,
    wrapper: MetadataWrapper,
    names: set[str],
    lines: set[int],
    klass: cst.ClassDef | None = None,
) -> list[cst.BaseExpression]:
    """Values added to the history: `.append/.extend/.insert` on one of ``names`` (`self.x` of
    ``klass``) or on a growth line, and the list literals of `h = h + [...]` / `h += [...]` on
    growth lines."""
    found: list[cst.BaseExpression] = []
    index, where = module_index(module), located(wrapper)
    calls = [call for name in names for call in index.growth_of(name, klass)]
    calls += [call for line in lines for call in where.growth_by_line.get(line, ())]
    for call in index.in_order(calls):
        if call.args:
            found.append(call.args[-1].value)
    assigns = [node for line in lines for node in where.assigns_by_line.get(line, ())]
    for node in index.in_order(assigns):
        if not isinstance(node, cst.AnnAssign):
            lists = [n for n in walk_down(node.value) if isinstance(n, cst.List)]
            found.extend(lists if lists else [_Joined(node.value)])  # `story += f"..."`
    return found


@dataclass(frozen=True)
class _Joined:
    """A value joined to the history itself (`h = h + x`, `h += x`), not an item of it."""

    value: cst.BaseExpression


def _declared_text(module: cst.Module, names: set[str]) -> bool:
    """`self.h: list[str] = []`: the history is declared to hold text."""
    return any(
        annotation in ("list[str]", "List[str]") and target in names
        for target, annotation in module_index(module).annotated
    )


def message_shape(module: cst.Module, wrapper: MetadataWrapper, finding: Finding, history: str) -> str:
    """What the history holds, as far as its growth and its own assignments show: "messages"
    (role dicts, SDK message objects, text lines: what bounded_view reads), "records" (dicts
    that are not messages), "string" (the history is one string, not a list), "text" (it is
    text built from other values, `prompt = "Go on." + story`: neither bounded_view nor a
    tail fits) or "unknown"."""
    if finding.properties.get("roles"):
        return "messages"  # role messages, as the module that grows the history shows
    sent = {" ".join(history.split()), str(finding.properties.get("expression", ""))}
    klass = innermost(wrapper, finding.span, cst.ClassDef)  # whose `self.x` the history is
    if str(finding.properties.get("history", "")) not in sent:  # a list built from the history
        shape = _shape(module, _appended(module, wrapper, sent, set(), klass), sent)
        if shape == "messages":
            return shape
    names = sent | {str(finding.properties.get("history", ""))}
    own = _assigned(module, innermost(wrapper, finding.span, cst.FunctionDef), names, klass)
    if any(_is_text(value) for value in own):  # the history itself may be a string
        return "string" if all(_is_text(v) and not _reads_names(v) for v in own) else "text"
    growth = set(finding.properties.get("growth_lines", ()))
    return _shape(module, _appended(module, wrapper, names, growth, klass), names)


def _assigned(
    module: cst.Module, function: cst.FunctionDef | None, names: set[str], klass: cst.ClassDef | None = None
) -> list[cst.BaseExpression]:
    """The values ``names`` are set to (`=`, not `+=`): in ``function`` when it sets one of
    them, else anywhere in the module (`self.x`: anywhere in ``klass``)."""
    index = module_index(module)
    everywhere = [value for name in names for value in index.assigned(name, klass)]
    if function is None or not everywhere:
        return index.in_order(everywhere)
    local = [value for value in everywhere if _inside(index, value, function)]
    return index.in_order(local or everywhere)


def _inside(index, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return outer in index.path_to(node)


def _reads_names(value: cst.BaseExpression) -> bool:
    """``value`` reads a variable (`"Go on." + story`, `f"{story}"`), not only literals."""
    return any(isinstance(node, cst.Name) for node in walk_down(value))


def _shape(module: cst.Module, values: list, names: set[str]) -> str:
    bound = module_index(module).bound_once
    seen: set[int] = set()
    shapes = set()
    if _declared_text(module, names):
        shapes.add("messages")  # `list[str]`: text lines
    while values:
        value = values.pop()
        if isinstance(value, _Joined):
            shapes.add("string" if _is_text(value.value) else "unknown")
        elif isinstance(value, (cst.List, cst.Tuple)):
            values.extend(e.value for e in value.elements)
        elif isinstance(value, cst.Dict):
            keys = {literal(e.key) if isinstance(e, cst.DictElement) else None for e in value.elements}
            shapes.add("messages" if keys & MESSAGE_KEYS else "unknown" if None in keys else "records")
        elif isinstance(value, cst.Name) and value.value in bound and id(value) not in seen:
            seen.add(id(value))
            values.append(bound[value.value])  # `finding = reply.text; h.append(finding)`
        elif _is_text(value) or NOT_A_DICT.search(module.code_for_node(value)):
            shapes.add("messages")  # text lines, SDK replies, message classes
        else:
            shapes.add("unknown")
    for shape in ("string", "records", "messages"):
        if shape in shapes:
            return shape
    return "unknown"


def _is_text(value: cst.BaseExpression) -> bool:
    """A string literal, an f-string, `a + "b"`, `sep.join(...)`, `str(...)`, or a reply's
    `.text` / `.content`."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        return _is_text(value.left) or _is_text(value.right)
    if isinstance(value, cst.Call) and callee(value) in ("join", "str", "format", "strip"):
        return True
    return bool(TEXT.search(cst.Module([]).code_for_node(value)))


def _split_slice_fix(finding: Finding, module, wrapper, lines) -> Fix | None:
    """`h[-N:]` -> `bounded_view(h, last_events=N)`."""
    try:
        node = cst.parse_expression(text_at(lines, finding.span))
    except cst.ParserSyntaxError:
        return None
    part = slice_of(node) if isinstance(node, cst.Subscript) else None
    if part is None or not is_negative(part.lower) or part.upper is not None or part.step is not None:
        return None
    history = cst.Module([]).code_for_node(node.value)
    count = cst.Module([]).code_for_node(part.lower.expression)
    return replace_span(
        finding,
        module,
        wrapper,
        lines,
        f"bounded_view({history}, last_events={count})",
        [BOUNDED_IMPORT],
        f"Replace the count slice by bounded_view({history}, last_events={count}), which never splits a turn",
        safe=False,
    )


class Owners(Protocol):
    """What the fixes ask of the modules that own a finding's framework (`chatbound.frameworks`):
    its own fix, and for a history it sends as a list, whether the generic wrap serves it."""

    def fix(
        self, finding: Finding, module: cst.Module, wrapper: MetadataWrapper, lines: Sequence[str]
    ) -> tuple[Fix | None, str] | None: ...

    def sent_list(self, finding: Finding) -> tuple[bool, str | None]: ...


def fix_for(
    finding: Finding, module: cst.Module, wrapper: MetadataWrapper, lines: Sequence[str], owners: Owners
) -> tuple[Fix | None, str]:
    """The fix (or None) and the suggestion text for one finding: the owning framework's own
    first, else the generic wrap where it serves the list sent."""
    if finding.rule_id == HANDOFF:
        return owners.fix(finding, module, wrapper, lines) or (None, SUGGESTIONS[HANDOFF])
    if finding.rule_id == SPLITS_TURN:
        return _split_slice_fix(finding, module, wrapper, lines), SUGGESTIONS[SPLITS_TURN]
    if finding.rule_id != UNBOUNDED:
        return None, ""
    framework = owners.fix(finding, module, wrapper, lines)
    if framework is not None:
        return framework
    wraps, advice = owners.sent_list(finding)
    history = text_at(lines, finding.span)
    if finding.properties.get("storage") in NOT_A_LIST:
        return None, advice or SUGGESTIONS["plain"]
    if finding.properties.get("grown_elsewhere"):  # the other module's helper grows what it is given
        return None, finding.suggestion
    if wraps:
        shape = message_shape(module, wrapper, finding, history)
        suggestion = (advice or SUGGESTIONS["plain"]) + (
            TAILS["string" if shape == "text" else shape][2] if shape in (*TAILS, "text") else ""
        )
        context, sent = _send_context(module, wrapper, finding.span)
        where = finding
        if (
            "sent_inside" in finding.properties
        ):  # `reply, h = ask(q, h)`: bound the send inside ask(), not the list it keeps
            where = replace(finding, span=finding.related[finding.properties["sent_inside"]].span)
            context, sent = _send_context(module, wrapper, where.span)
        if context == "text call":  # `prompt=self.render()`: bound where render() reads the history
            where, context = _read_in_renderer(module, wrapper, finding, sent), "text"
        if where is None or context == "text" and shape == "unknown" or shape == "text":
            return None, suggestion  # no one place to wrap, items that may not be messages, or text
        read = text_at(lines, where.span)
        if shape in TAILS:  # only where the history itself is read: a tail of `PREFIX + story` drops the prefix
            if " ".join(read.split()) != " ".join(str(finding.properties.get("history", "")).split()):
                return None, suggestion
            if shape == "records" and context != "text":
                return None, suggestion  # sent as messages beside role dicts: a count slice could split a turn
            tail, what, _ = TAILS[shape]
            text = f"{read}{tail}" if _atom(read) else f"({read}){tail}"
            return replace_span(
                where,
                module,
                wrapper,
                lines,
                text,
                [],
                f"Send {what} of {read}; the stored history is unchanged",
                safe=True,
            ), suggestion
        description = f"Send bounded_view({read}, last_turns={WINDOW_TURNS}); the stored history is unchanged"
        return replace_span(
            where,
            module,
            wrapper,
            lines,
            f"bounded_view({read}, last_turns={WINDOW_TURNS})",
            [BOUNDED_IMPORT],
            description,
            safe=True,
        ), suggestion
    return None, advice or ""


def _atom(text: str) -> bool:
    """``text`` is an expression a subscript binds to as a whole (a name, attribute, call, subscript)."""
    try:
        return isinstance(
            cst.parse_expression(" ".join(text.split())), (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
        )
    except cst.ParserSyntaxError:
        return False


def _send_context(module: cst.Module, wrapper: MetadataWrapper, span: Span) -> tuple[str, cst.CSTNode | None]:
    """How the expression at ``span`` is sent, and its node: "text call" (a call of a function
    of this module that returns text: `prompt=self.render()`), "text" (joined, iterated or
    formatted into text) or "messages" (the value itself, or an item list built from it)."""
    node = located(wrapper).node_at(span)
    path = module_index(module).path_to(node) if node is not None else []
    if not path:
        return "messages", None
    node = path[-1]
    if isinstance(node, cst.Call) and _returns_text(module, node):
        return "text call", node
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if isinstance(parent, (cst.FormattedString, cst.CompFor, cst.For)):
            return "text", node
        if isinstance(parent, cst.Call) and isinstance(child, cst.Arg):
            joins = isinstance(parent.func, cst.Attribute) and parent.func.attr.value == "join"
            return ("text" if joins else "messages"), node  # an argument of any other call is sent as items
    return "messages", node


def _read_in_renderer(module: cst.Module, wrapper: MetadataWrapper, finding: Finding, call: cst.Call) -> Finding | None:
    """The finding moved to the one place the rendering function reads the history, when the
    function is defined once, called once (at this send: bounding it bounds nothing the user
    sees) and reads the history once; else None."""
    name = callee(call)
    history = " ".join(str(finding.properties.get("history", "")).split())
    index = module_index(module)
    functions = index.functions.get(name, []) if name is not None else []
    calls = index.calls_by_callee.get(name, [])
    if len(functions) != 1 or len(calls) != 1 or not history:
        return None
    reads = [
        n
        for n in walk_down(functions[0].body)
        if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)) and spelled(module, n) == history
    ]
    if len(reads) != 1:
        return None
    where = wrapper.resolve(PositionProvider)[reads[0]]
    return replace(finding, span=Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1))


def _returns_text(module: cst.Module, call: cst.Call) -> bool:
    """A call of a function or method of this module that returns text."""
    name = callee(call)
    returns = [
        node.value
        for function in (module_index(module).functions.get(name, []) if name is not None else [])
        for node in walk_down(function.body)
        if isinstance(node, cst.Return) and node.value is not None
    ]
    return any(_is_text(value) for value in returns)


def attach_fixes(
    findings: Sequence[Finding], module: cst.Module, wrapper: MetadataWrapper, owners: Owners
) -> list[Finding]:
    """The findings with a fix, and help that tells the fix's own story (``fix_story``); a
    finding without one keeps the rule's advice, or gets the framework's where the rule left none."""
    if not any(f.rule_id in (UNBOUNDED, SPLITS_TURN, HANDOFF) or f.fix is not None for f in findings):
        return list(findings)
    lines = source_lines(module.code)
    out = []
    for finding in findings:
        fix, suggestion = fix_for(finding, module, wrapper, lines, owners) if finding.fix is None else (finding.fix, "")
        changes = {}
        if fix is not finding.fix:
            changes["fix"] = fix
        if fix is not None:
            changes["suggestion"] = fix_story(fix, lines)
        elif suggestion and not finding.suggestion:
            changes["suggestion"] = suggestion
        elif suggestion and suggestion != finding.suggestion:
            changes["properties"] = {**finding.properties, "suggested_fix": suggestion}
        out.append(replace(finding, **changes) if changes else finding)
    return out


def fix_story(fix: Fix, lines: Sequence[str]) -> str:
    """What the help of a fixable finding says: what the fix is for, then each edit as `--fix`
    makes it (the expression written, what it replaces, its line), read off the edits
    themselves, so the help in every output is the edit and never a paraphrase of it.
    Lines read `(line N)`, the form a notebook's cells renumber (notebooks.py)."""
    made = []
    for edit in fix.edits:
        if (edit.span.line, edit.span.col) == (edit.span.end_line, edit.span.end_col):
            line = edit.span.line + edit.text.startswith(("\n", "\r"))  # `\nimport x` after the last line
            made.append(f"inserts {_shown(edit.text)} (line {line})")
        elif edit.text:
            made.append(
                f"writes {_shown(edit.text)} in place of {_shown(text_at(lines, edit.span))} (line {edit.span.line})"
            )
        else:
            made.append(f"removes {_shown(text_at(lines, edit.span))} (line {edit.span.line})")
    listed = ", ".join(made[:-1]) + (" and " if len(made) > 1 else "") + made[-1]
    return f"{fix.description}. {fix_command(fix.safe)} {listed}."


def _shown(text: str) -> str:
    """Code as the help quotes it: an expression on one line, statements one per quote."""
    try:
        cst.parse_expression(text.strip())
        parts = [" ".join(text.split())]
    except cst.ParserSyntaxError:
        parts = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return " then ".join(f"`{part}`" for part in parts)
