"""Edits the fixes are made of: the text at a span, an import added once, a span replaced.

Shared by the generic fixes (`chatbound.fixes.wrap`) and each framework's own
(`chatbound.frameworks`), which both import it and nothing else of each other's. Spans are
1-based with exclusive end columns (findings.py); an insertion is an empty span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from chatbound.findings import Edit, Finding, Fix, Span
from chatbound.fixes.index import located, module_index

WINDOW_TURNS = 10
BOUNDED_IMPORT = "from chatbound.compaction import bounded_view"
TRIM_IMPORTS = (
    "from langchain_core.messages import trim_messages",
    "from langchain_core.messages.utils import count_tokens_approximately",
)
HISTORY_STAYS = "The stored history stays intact (what the user sees); only what is sent is bounded."


def text_at(lines: Sequence[str], span: Span) -> str:
    """The source text of a 1-based span (``lines`` keep their line endings)."""
    if span.line == span.end_line:
        return lines[span.line - 1][span.col - 1 : span.end_col - 1]
    return (
        lines[span.line - 1][span.col - 1 :]
        + "".join(lines[span.line : span.end_line - 1])
        + lines[span.end_line - 1][: span.end_col - 1]
    )


def source_lines(code: str) -> list[str]:
    """Lines with their endings, split where LibCST splits (\\n, \\r\\n, \\r)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", code)


def imported_names(module: cst.Module) -> set[str]:
    """`module.name` for every top-level `from module import name` (no alias)."""
    found = set()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.ImportFrom)
                    and small.module is not None
                    and not isinstance(small.names, cst.ImportStar)
                ):
                    base = cst.Module([]).code_for_node(small.module)
                    found.update(
                        f"{base}.{a.name.value}"
                        for a in small.names
                        if a.asname is None and isinstance(a.name, cst.Name)
                    )
    return found


def import_edit(
    module: cst.Module, wrapper: MetadataWrapper, lines: Sequence[str], statement: str, use: int
) -> Edit | None:
    """Insert ``statement`` after the last top-level import above line ``use``, where the name
    is used (else the docstring), or None if present: an import further down would run after
    the use in a notebook, whose cells are joined in the order they run."""
    base, name = re.match(r"from (\S+) import (\w+)", statement).groups()
    if f"{base}.{name}" in imported_names(module):
        return None
    positions = wrapper.resolve(PositionProvider)
    anchor = None
    for index, node in enumerate(module.body):
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        small = node.body[0]
        docstring = (
            index == 0
            and isinstance(small, cst.Expr)
            and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
        )
        if (docstring or isinstance(small, (cst.Import, cst.ImportFrom))) and positions[node].end.line < use:
            anchor = node
    if anchor is None:
        first = next(iter(module.body), None)
        line = positions[first].start.line if first is not None else len(lines) + 1
        return Edit(Span(line, 1, line, 1), statement + module.default_newline)
    end = positions[anchor].end.line
    if end < len(lines):
        return Edit(Span(end + 1, 1, end + 1, 1), statement + module.default_newline)
    last = lines[end - 1].rstrip("\r\n")
    if last != lines[end - 1]:  # the final line ends with a newline: insert a new last line
        return Edit(Span(end + 1, 1, end + 1, 1), statement + module.default_newline)
    return Edit(Span(end, len(last) + 1, end, len(last) + 1), module.default_newline + statement)


def name_is_taken(module: cst.Module, name: str, statement: str) -> bool:
    base = statement.split()[1]
    return f"{base}.{name}" not in imported_names(module) and name in module_index(module).names


def innermost(wrapper: MetadataWrapper, span: Span, kind) -> cst.CSTNode | None:
    """The innermost node of ``kind`` whose lines hold ``span``."""
    return located(wrapper).innermost(span, kind)


def replace_span(
    finding: Finding,
    module: cst.Module,
    wrapper,
    lines,
    text: str,
    imports: Sequence[str],
    description: str,
    safe: bool,
) -> Fix | None:
    """Replace the finding's span by ``text`` and add each import statement once."""
    edits = [Edit(finding.span, text)]
    for statement in imports:
        name = statement.rsplit(" ", 1)[1]
        if name_is_taken(module, name, statement):
            return None
        edit = import_edit(module, wrapper, lines, statement, finding.span.line)
        if edit is not None:
            edits.append(edit)
    return Fix(description, tuple(edits), safe)


EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def call_at(wrapper: MetadataWrapper, span: Span) -> cst.Call | None:
    """The call whose 1-based span is ``span``."""
    return located(wrapper).call_at(span)


def span_of(wrapper: MetadataWrapper, node: cst.CSTNode) -> Span:
    where = wrapper.resolve(PositionProvider)[node]
    return Span(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)


def keywords_of(call: cst.Call) -> set[str] | None:
    """The keyword names of ``call``, or None when it has positional or starred arguments."""
    if any(arg.keyword is None for arg in call.args):
        return None
    return {arg.keyword.value for arg in call.args}


def import_of(module: cst.Module, name: str) -> str:
    """The module ``name`` is imported from (`from X import name`), or ""."""
    return next((full.rsplit(".", 1)[0] for full in imported_names(module) if full.rsplit(".", 1)[1] == name), "")


def with_keyword(call: cst.Call, keyword: str, value: str) -> cst.Call:
    """``call`` with ``keyword=value`` added last: on a line of its own, before the `)`, when the
    arguments are one a line with a trailing comma (a comment after the last one stays there)."""
    args = list(call.args)
    added = cst.Arg(cst.parse_expression(value), keyword=cst.Name(keyword), equal=EQUAL)
    last = args[-1].comma if args else None
    if isinstance(last, cst.Comma) and isinstance(last.whitespace_after, cst.ParenthesizedWhitespace):
        before = args[-2].comma.whitespace_after if len(args) > 1 else call.whitespace_before_args
        if isinstance(before, cst.ParenthesizedWhitespace):
            closing = last.whitespace_after
            args[-1] = args[-1].with_changes(
                comma=last.with_changes(whitespace_after=before.with_changes(first_line=closing.first_line))
            )
            added = added.with_changes(
                comma=cst.Comma(whitespace_after=closing.with_changes(first_line=cst.TrailingWhitespace()))
            )
            return call.with_changes(args=[*args, added])
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, added])


def keyword_added(wrapper: MetadataWrapper, lines: Sequence[str], call: cst.Call, keyword: str, value: str) -> str:
    """The text that replaces ``call`` once ``keyword=value`` is added (``with_keyword``), indented
    as the file indents it: LibCST renders a node alone without its block's indentation, so the
    call is replaced in the module and its new text cut out of the module's."""
    span = span_of(wrapper, call)
    start = sum(len(line) for line in lines[: span.line - 1]) + span.col - 1
    after = len(wrapper.module.code) - start - len(text_at(lines, span))
    code = wrapper.module.deep_replace(call, with_keyword(call, keyword, value)).code
    return code[start : len(code) - after]


def arg_at(wrapper: MetadataWrapper, span: Span) -> tuple[cst.Call, cst.Arg] | None:
    """The call and its argument whose value's 1-based span is ``span``."""
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        if isinstance(node, cst.Call):
            for arg in node.args:
                if span_of(wrapper, arg.value) == span:
                    return node, arg
    return None


def stores_of(
    module: cst.Module, wrapper: MetadataWrapper, history: str, method: str
) -> list[cst.Assign | cst.Call] | None:
    """Every `history = r.method()` (no arguments) in the module, and every `store.set(key,
    r.method())` where `history` is `store[key]` (a session's entry, `cl.user_session.set`); None
    when ``method`` is called anywhere else (`list(r.method())`, `h.extend(r.method())`: forms
    this edit does not know)."""
    stores: list[cst.Assign | cst.Call] = [
        node
        for node in module_index(module).assigns
        if isinstance(node, cst.Assign)
        and len(node.targets) == 1
        and " ".join(module.code_for_node(node.targets[0].target).split()) == history
        and _called(node.value, method)
    ]
    stores += [
        node
        for node in module_index(module).calls_by_callee.get("set", ())
        if isinstance(node.func, cst.Attribute)
        and len(node.args) == 2
        and f"{module.code_for_node(node.func.value)}[{module.code_for_node(node.args[0].value)}]" == history
        and _called(node.args[1].value, method)
    ]
    known = {id(_stored(node)) for node in stores}
    calls = [
        node
        for node in wrapper.resolve(PositionProvider)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == method
    ]
    return stores if all(id(call) in known for call in calls) else None


def _called(value: cst.BaseExpression, method: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == method
        and not value.args
    )


def _stored(store: cst.Assign | cst.Call) -> cst.BaseExpression:
    return store.value if isinstance(store, cst.Assign) else store.args[1].value


def store_edit(module: cst.Module, wrapper: MetadataWrapper, store: cst.Assign | cst.Call, text: str) -> Edit:
    """Replace the value ``store`` keeps by ``text``, where ``{r}`` is the receiver of its call."""
    value = _stored(store)
    assert isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
    receiver = module.code_for_node(value.func.value)
    return Edit(span_of(wrapper, value), text.format(r=receiver))
