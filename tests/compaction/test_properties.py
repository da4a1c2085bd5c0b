"""Property tests: the guarantees of a pass hold over random sessions.

Sessions mix multi-tool loops whose results arrive right after their call, later in the
turn, interleaved with other calls' results or in a later turn (so across a cut), system
messages at any position, preambles, and earlier passes (so boundaries and prior summaries),
on both stores, with every window kind.
"""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from chatbound.compaction import (
    InMemoryEventStore,
    SessionService,
    SQLiteEventStore,
    WindowCompactionStrategy,
    bounded_view,
    last_events,
    last_turns,
    to_openai,
    token_budget,
)

from .builders import A, S, T, U

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def emit(draw, pending, messages, everything=False):
    """Append some of the results still `pending` (all of them when `everything`), in any order."""
    chosen = list(pending) if everything else [r for r in pending if draw(st.booleans())]
    for result in draw(st.permutations(chosen)):
        pending.remove(result)
        messages.append(result)


@st.composite
def turns(draw, first, pending):
    """One turn: a user message, tool loops of parallel calls, a reply. A result comes right
    after its call, later in the turn (after the next loop's calls, interleaved with other
    results) or in a later turn (`pending` carries it there, across any cut between)."""
    n = draw(st.integers(first, first + 999))  # turns start 1000 apart: ids never repeat across turns
    messages = [U(f"u{n}")]
    draw(emit(pending, messages))  # results of an earlier turn's calls, arriving now
    for loop in range(draw(st.integers(0, 3))):
        calls = [f"c{n}_{loop}_{k}" for k in range(draw(st.integers(1, 3)))]
        messages.append(A("", *calls))
        pending += [T(call, "r" * draw(st.integers(0, 30))) for call in calls]
        draw(emit(pending, messages))
    if draw(st.booleans()):
        draw(emit(pending, messages, everything=True))  # most turns answer every call before the reply
    if draw(st.booleans()):
        messages.append(A("a" * draw(st.integers(1, 40))))
    return messages


@st.composite
def histories(draw):
    """Preamble, then turns, with system messages dropped in anywhere; results still pending
    at the end arrive then, or never."""
    messages = [draw(st.sampled_from([A("welcome"), S("sys0")])) for _ in range(draw(st.integers(0, 2)))]
    pending = []
    for n in range(draw(st.integers(0, 7))):
        messages += draw(turns(n * 1000, pending))
    if draw(st.booleans()):
        draw(emit(pending, messages, everything=True))
    for k in range(draw(st.integers(0, 3))):
        messages.insert(draw(st.integers(0, len(messages))), S(f"sys{k + 1}"))
    return messages


windows = st.one_of(
    st.integers(1, 8).map(last_events),
    st.integers(1, 4).map(last_turns),
    st.integers(1, 400).map(token_budget),
)


def summarizers():
    def summarize(request):
        return [U("sum?"), A(f"summary of {len(request.covered)}")]

    return st.sampled_from([None, summarize, lambda request: []])


def strategies():
    return st.builds(WindowCompactionStrategy, windows, summarizers())


def make_store(kind, folder):
    return InMemoryEventStore() if kind == "memory" else SQLiteEventStore(Path(folder) / "s.db")


def ids(events):
    return [event.id for event in events]


def check_pass(view, result, after, log_before, log_after):
    assert log_after[: len(log_before)] == log_before
    if result.unchanged:
        assert log_after == log_before and ids(after) == ids(view)
        return
    summary = log_after[len(log_before) + 1 :]
    assert ids(after) == ids(result.pinned) + ids(summary) + ids(result.preserved)
    assert after[len(result.pinned) + len(summary)].starts_turn
    prior = [event for event in view if event.synthetic]
    assert [event for event in after if event.synthetic] == (summary if summary else prior)
    systems = [event for event in view if event.role == "system"]
    assert [event for event in after if event.role == "system"] == systems[-1:]
    assert not systems or after[0] == systems[-1]
    newest = max(i for i, event in enumerate(view) if event.starts_turn)
    kept = set(ids(after))
    assert all(event.id in kept for event in view[newest:] if event.role != "system")
    assert set(ids(result.covered)) | set(ids(result.pinned)) | set(ids(result.preserved)) == set(ids(view))
    assert len(result.covered) + len(result.pinned) + len(result.preserved) == len(view)
    check_tool_pairs(after, view)


def check_tool_pairs(after, before):
    """No result without an earlier call; no call without every result it had before. A result
    whose call was not in the view before the pass (an earlier pass covered the call before the
    result arrived: `test_a_result_arriving_after_an_earlier_pass_covered_its_call`) is not this
    pass's to pair."""
    called_before = {call.id for event in before for call in event.message.tool_calls}
    called, answered = set(), set()
    for event in after:
        if event.role == "tool":
            assert event.message.tool_call_id in called or event.message.tool_call_id not in called_before
            answered.add(event.message.tool_call_id)
        called.update(call.id for call in event.message.tool_calls)
    results_before = {e.message.tool_call_id for e in before if e.role == "tool"}
    assert called & results_before <= answered


def run(kind, history, earlier, strategy):
    with tempfile.TemporaryDirectory() as folder:
        service = SessionService(make_store(kind, folder), estimator=len)
        sid = service.create()
        chunk = max(1, len(history) // (len(earlier) + 1))
        for n, pass_ in enumerate(earlier):
            service.append(sid, *history[n * chunk : (n + 1) * chunk])
            service.compact(sid, lambda request: True, pass_)
        service.append(sid, *history[len(earlier) * chunk :])

        log_before, view = service.store.log(sid), service.view(sid)
        result = service.compact(sid, lambda request: True, strategy)
        log_after, after = service.store.log(sid), service.view(sid)
        check_pass(view, result, after, log_before, log_after)

        again = service.compact(sid, lambda request: True, strategy)
        assert again.unchanged and service.store.log(sid) == log_after


@pytest.mark.parametrize("kind, examples", [("memory", 500), ("sqlite", 60)])
def test_a_pass_keeps_every_guarantee(kind, examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(histories(), st.lists(strategies(), max_size=3), strategies())
    def check(history, earlier, strategy):
        run(kind, history, earlier, strategy)

    check()


@settings(max_examples=500, **SETTINGS)
@given(
    histories(),
    st.one_of(st.none(), st.integers(1, 4)),
    st.one_of(st.none(), st.integers(1, 8)),
    st.one_of(st.none(), st.integers(1, 400)),
)
def test_bounded_view_keeps_every_guarantee(history, turns_, events_, tokens_):
    if turns_ is None and events_ is None and tokens_ is None:
        events_ = 3
    messages = to_openai(history)
    snapshot = [dict(m) for m in messages]
    view = bounded_view(messages, last_turns=turns_, last_events=events_, max_tokens=tokens_, estimator=len)
    assert messages == snapshot
    positions = [next(i for i, m in enumerate(messages) if m is kept) for kept in view]
    assert len(set(positions)) == len(view)
    systems = [m for m in messages if m["role"] == "system"]
    if systems and len(view) < len(messages):
        assert view[0] is systems[-1]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if users:
        assert all(any(m is k for k in view) for m in messages[users[-1] :] if m["role"] != "system")
    called = set()
    for m in view:
        if m["role"] == "tool":
            assert m["tool_call_id"] in called
        called.update(c["id"] for c in m.get("tool_calls") or ())


def _shapes(history):
    """Which separations of a result from its call a history holds."""
    found, calls, turn, loop = set(), {}, 0, 0
    for message in history:
        if message.role == "user":
            turn += 1
        for call in message.tool_calls:
            loop += 1
            calls[call.id] = (turn, loop)
        if message.role == "tool":
            called_turn, called_loop = calls[message.tool_call_id]
            if called_turn < turn:
                found.add("in a later turn")
            elif called_loop < loop:
                found.add("after a later call")
    return found


@pytest.mark.parametrize("shape", ["in a later turn", "after a later call"])
def test_the_sessions_generated_separate_results_from_their_calls(shape):
    find(histories(), lambda history: shape in _shapes(history), settings=settings(**SETTINGS))


@pytest.mark.xfail(
    strict=True,
    reason="open: a pass covers a call whose result has not arrived; the result, appended later, "
    "is then in the view without its call (found by the generator above once results could arrive turns later)",
)
def test_a_result_arriving_after_an_earlier_pass_covered_its_call():
    service = SessionService(InMemoryEventStore(), estimator=len)
    sid = service.create()
    service.append(sid, U("u0"), A("", "c0"), U("u1"))
    service.compact(sid, lambda request: True, WindowCompactionStrategy(last_events(1), None))
    service.append(sid, U("u2"), T("c0", "late"))
    view = service.view(sid)
    assert [e.message.content for e in view] == ["u1", "u2", "late"]  # the call left with the first pass
    assert all(
        e.message.tool_call_id in {c.id for d in view[:k] for c in d.message.tool_calls}
        for k, e in enumerate(view)
        if e.role == "tool"
    )
