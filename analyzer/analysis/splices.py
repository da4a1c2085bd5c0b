"""Retrieved chunks written into a history that later turns send again.

Retrieval belongs to one question, memory to the session: `history.append({"role": "user",
"content": question + context})` stores this turn's chunks in the history, so every later turn
pays for them again (under a window too, until they fall out of it). A splice is a per-turn
growth site of a lasting history (`chatbound.analysis.histories`) whose value is built from the
results of a retrieval (`chatbound.analysis.retrieval.retrieves`, or a function of another module
the project pass found returning them), where the history reaches a model, whole or windowed.

The value is followed back to where it was read: through names (the binding a read sees, and
`+=` accumulations of the same function), attributes and subscripts of results, comprehensions,
f-strings, joins and copies, and the returns of the module's helper functions (their parameters
mapped to the caller's arguments). A model call, or any other call the analysis cannot see
through, ends the walk: an answer written from the chunks is the model's, not the chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from chatbound.analysis.retrieval import counts_asked, retrieves
from chatbound.syntax.messages import callee_name
from chatbound.syntax.visitors import children
from chatbound.vocabulary.facts import History

# calls that hand on their arguments' text or items (`"\n".join(docs)`, `str(hits)`)
PASSING = frozenset("list tuple sorted reversed join format dumps str repr".split())
DEPTH = 8


@dataclass(frozen=True)
class Splice:
    """Chunks of `retrieval` stored in `history` at `site`, the history sent by `send`."""

    history: History
    site: cst.CSTNode  # the growth site
    retrieval: cst.Call
    send: cst.Call  # a model call (or a helper of it) that gets the history later
    count: int | None  # how many results the retrieval asks for, where the code says


def splices(facts) -> list[Splice]:
    """Every per-turn growth site of a sent history that stores retrieved chunks."""
    sent = _sent_histories(facts)
    found = []
    for key, send in sent.items():
        history = facts.histories.get(key)
        if history is None or not history.is_chat:
            continue
        for site in history.growth:
            if not isinstance(site, cst.CSTNode):
                continue
            retrieval = next(
                (r for value in facts.growth_values(site) for r in [_grown_from(facts, site, value)] if r is not None),
                None,
            )
            if retrieval is not None:
                found.append(Splice(history, site, retrieval, send, _count(facts, retrieval)))
    return found


def _grown_from(facts, site: cst.CSTNode, value: cst.CSTNode) -> cst.Call | None:
    """The retrieval a growth site's value is built from, read in its function, or at each call of
    a helper that grows the history with its parameter (`self._remember(message)`)."""
    found = retrieval_in(facts, value, {}, 0)
    function = facts.function_of(site)
    if found is not None or function is None:
        return found
    for call in facts.callers(function):
        bound = _bound(facts, call, function)
        if bound:
            found = retrieval_in(facts, value, bound, 0)
            if found is not None:
                return found
    return None


def _bound(facts, call: cst.Call, function: cst.FunctionDef) -> dict[int, cst.BaseExpression]:
    """The parameters of `function` mapped to the arguments `call` gives them."""
    return {
        id(p): argument
        for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
        for argument in [facts.argument_for(call, function, p.name.value)]
        if argument is not None
    }


def _count(facts, call: cst.Call) -> int | None:
    remote = None if facts.callees(call) else facts.imported_function(call)
    if remote is not None and remote.retrieves is not None:
        return remote.retrieves.summary.count
    return next((count.value for _, _, count in counts_asked(facts.rule, call)), None)


def _sent_histories(facts) -> dict[str, cst.Call]:
    """History key -> a call that sends it to a model, whole (a flow) or through a bounded view."""
    sent: dict[str, cst.Call] = {}
    for flow in facts.flows():
        sent.setdefault(flow.history.storage.key, flow.site)
    for site, sink in facts.sites():
        for arg in sink.content:
            for key, _ in facts.bounded_views_in(arg):
                sent.setdefault(key, site)
    return sent


def retrieval_in(facts, expr: cst.CSTNode, params: dict[int, cst.BaseExpression], depth: int) -> cst.Call | None:
    """The retrieval call whose results `expr` is built from, or None. `params` maps the
    parameters of a helper being read through to the arguments its caller gave."""
    if depth > DEPTH:
        return None
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            if retrieves(facts, node):
                return node
            found = _through_call(facts, node, params, depth)
            if found is not None:
                return found
            continue
        if isinstance(node, cst.Name):
            found = _through_name(facts, node, params, depth)
            if found is not None:
                return found
            continue
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(children(node))
    return None


def _through_call(facts, call: cst.Call, params, depth: int) -> cst.Call | None:
    """What a call hands on: its arguments' text (`PASSING`), or a helper's return read with its
    parameters bound to this call's arguments. Any other call ends the walk."""
    if callee_name(call) in PASSING:
        parts = [a.value for a in call.args]
        if isinstance(call.func, cst.Attribute) and callee_name(call) != "join":
            parts.append(call.func.value)  # `template.format(...)` carries the template too
        for part in parts:
            found = retrieval_in(facts, part, params, depth + 1)
            if found is not None:
                return found
        return None
    if any(sink.call is call for sink in facts.sinks):
        return None  # the model's answer, written from the chunks, is not the chunks
    if not facts.callees(call):
        remote = facts.imported_function(call)  # a function of another module returning results
        return call if remote is not None and remote.retrieves is not None else None
    for function in facts.callees(call):
        bound = _bound(facts, call, function)
        for value in facts.returns(function):
            found = retrieval_in(facts, value, bound, depth + 1)
            if found is not None:
                return found
    return None


def _through_name(facts, name: cst.Name, params, depth: int) -> cst.Call | None:
    bound = facts.assignment_before(name)
    if isinstance(bound, cst.Param):
        given = params.get(id(bound))
        return retrieval_in(facts, given, {}, depth + 1) if given is not None else None
    sources: list[cst.CSTNode] = []
    if isinstance(bound, cst.For):
        sources.append(bound.iter)
    elif isinstance(bound, cst.CompFor):
        sources.append(bound.iter)
    elif isinstance(bound, cst.BaseExpression):
        sources.append(bound)
    function = facts.function_of(name)
    sources += [  # `context += doc.page_content` in the loop before the read
        operand
        for site, operand in facts.nodes.growth_by_name.get(name.value, ())
        if operand is not None and facts.function_of(site) is function and facts.order(site) < facts.order(name)
    ]
    for source in sources:
        found = retrieval_in(facts, source, params, depth + 1)
        if found is not None:
            return found
    return None
