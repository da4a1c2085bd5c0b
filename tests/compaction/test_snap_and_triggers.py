"""Snapping the raw cut, and the triggers (engine-cases.md)."""

from dataclasses import dataclass

import pytest

from chatbound.compaction import (
    CompactionRequest,
    Event,
    Message,
    TokenCountTrigger,
    TurnCountTrigger,
    any_of,
)
from chatbound.compaction.cut import Entry, plan_cut

from .builders import A, S, U


@dataclass(frozen=True)
class Raw:
    """A window that proposes a fixed raw cut."""

    k: int

    def raw_cut(self, entries, conversation, pinned, tokens):
        return self.k


def snapped(roles, raw):
    entries = [Entry({"u": "user", "a": "assistant"}[role[0]]) for role in roles]
    cut = plan_cut(entries, [Raw(raw)], tokens=len, pin_prior_summary=True)
    return 0 if cut is None else len(cut.covered)


@pytest.mark.parametrize("raw, expected", [(0, 0), (1, 2), (2, 2), (3, 2), (4, 2)])
def test_cut_snaps_forward_then_back_to_newest_turn(raw, expected):
    assert snapped(["u1", "a1", "u2", "a2"], raw) == expected


@pytest.mark.parametrize("raw", [0, 1, 2, 3])
def test_no_turn_start_covers_nothing(raw):
    assert snapped(["a1", "a2", "a3"], raw) == 0


@pytest.mark.parametrize("raw", [1, 2])
def test_cut_inside_first_turn_moves_to_second(raw):
    assert snapped(["u1", "a1", "a2", "u2", "a3"], raw) == 3


def test_empty_conversation_covers_nothing():
    assert snapped([], 0) == 0


def test_cut_moves_back_when_a_kept_result_answers_a_covered_call():
    entries = [Entry("user"), Entry("assistant", calls=("c1",)), Entry("user"), Entry("tool", answers=("c1",))]
    assert plan_cut(entries, [Raw(2)], tokens=len, pin_prior_summary=True) is None


def request(*messages, synthetic=()):
    view = [Event.of(m, synthetic=i in synthetic) for i, m in enumerate(messages)]
    return CompactionRequest("s", view, sum(1 for e in view if e.starts_turn))


def test_turn_count_fires_on_more_than_n_turns():
    trigger = TurnCountTrigger(2)
    assert not trigger(request(U("u1"), A("a1"), U("u2")))
    assert trigger(request(U("u1"), U("u2"), U("u3")))


def test_turn_count_ignores_a_synthetic_shadow_prompt():
    assert not TurnCountTrigger(2)(request(U("sum?"), A("old"), U("u1"), U("u2"), synthetic={0}))


def test_token_count_fires_when_the_estimate_reaches_the_threshold():
    view = (S("sys"), U("u1"))  # 11 + 8
    assert TokenCountTrigger(19, estimator=len)(request(*view))
    assert not TokenCountTrigger(20, estimator=len)(request(*view))


def test_token_count_leaves_out_superseded_system_messages():
    view = (S("old prompt"), S("sys"), U("u1"))  # sent: 11 + 8
    assert not TokenCountTrigger(20, estimator=len)(request(*view))


def test_token_count_counts_tool_traffic_in_full():
    view = (A("", "c1"), Message("tool", "x" * 40, tool_call_id="c1", name="lookup"))
    assert TokenCountTrigger(60, estimator=len)(request(*view))


def test_token_count_on_an_empty_view_does_not_fire():
    assert not TokenCountTrigger(1, estimator=len)(request())


def test_any_of_fires_when_one_fires():
    view = request(U("u1"), U("u2"))
    assert any_of(TurnCountTrigger(5), TurnCountTrigger(1))(view)
    assert not any_of(TurnCountTrigger(5), TokenCountTrigger(1000, estimator=len))(view)


@pytest.mark.parametrize(
    "make, argument",
    [
        (lambda: TurnCountTrigger(0), "n"),
        (lambda: TokenCountTrigger(-1), "threshold"),
        (lambda: TokenCountTrigger(10, estimator="cl100k"), "estimator"),
        (lambda: any_of(), "triggers"),
    ],
)
def test_invalid_trigger_arguments_are_named(make, argument):
    with pytest.raises(ValueError, match=argument):
        make()


@pytest.mark.parametrize("factory", ["last_events", "last_turns", "token_budget"])
@pytest.mark.parametrize("size", [0, -3, 2.5, True])
def test_invalid_window_sizes_are_named(factory, size):
    import chatbound.compaction as compaction

    with pytest.raises(ValueError, match="n must be a positive integer"):
        getattr(compaction, factory)(size)


def test_compact_runs_the_strategy_only_when_the_trigger_fires(service):
    from chatbound.compaction import WindowCompactionStrategy, last_events

    sid = service.create()
    service.append(sid, U("u1"), A("a1"), U("u2"), A("a2"))
    seen = []
    strategy = WindowCompactionStrategy(last_events(1))
    assert service.compact(sid, TurnCountTrigger(2), strategy).unchanged
    assert service.store.version(sid) == 4
    result = service.compact(sid, lambda request: seen.append(request.turn_count) or True, strategy)
    assert seen == [2] and not result.unchanged and service.store.version(sid) == 5
