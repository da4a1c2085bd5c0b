"""Every size the engine reads, tested at its value minus one, at it and plus one: the window
counts (`last_events`, `last_turns`), the token budget (`max_tokens` / `token_budget`) and the
triggers (`TurnCountTrigger`, `TokenCountTrigger`)."""

import pytest

from chatbound.compaction import Event, TokenCountTrigger, TurnCountTrigger, bounded_view
from chatbound.compaction.triggers import CompactionRequest

from .builders import A, S, U

N = 4
SYSTEM = {"role": "system", "content": "sys"}


def users(count):
    """`count` one-message turns: each event is a turn of its own, so no snap moves a cut."""
    return [{"role": "user", "content": f"u{k}"} for k in range(count)]


def turns(count):
    return [
        m
        for k in range(count)
        for m in ({"role": "user", "content": f"u{k}"}, {"role": "assistant", "content": f"a{k}"})
    ]


@pytest.mark.parametrize("count, kept", [(N - 1, N - 1), (N, N), (N + 1, N)])
def test_last_events_keeps_at_most_n_events(count, kept):
    messages = users(count)
    assert bounded_view(messages, last_events=N) == messages[-kept:]


@pytest.mark.parametrize("count, kept", [(N - 1, N - 1), (N, N), (N + 1, N)])
def test_last_turns_keeps_at_most_n_turns(count, kept):
    messages = [SYSTEM, *turns(count)]
    assert bounded_view(messages, last_turns=N) == [SYSTEM, *turns(count)[-2 * kept :]]


@pytest.mark.parametrize("budget, kept", [(49, 1), (50, 2), (51, 2)])
def test_max_tokens_keeps_the_turns_that_fit_exactly(budget, kept):
    # every message costs 10: the system message (10) and two turns (40) fill a budget of 50
    messages = [SYSTEM, *turns(3)]
    assert bounded_view(messages, max_tokens=budget, estimator=lambda text: 10) == [SYSTEM, *turns(3)[-2 * kept :]]


def request(turn_count):
    view = [Event.of(m) for k in range(turn_count) for m in (U(f"u{k}"), A(f"a{k}"))]
    return CompactionRequest("s", view, turn_count)


@pytest.mark.parametrize("turn_count, fires", [(N - 1, False), (N, False), (N + 1, True)])
def test_turn_count_trigger_fires_above_n_turns(turn_count, fires):
    assert TurnCountTrigger(N)(request(turn_count)) is fires


@pytest.mark.parametrize("threshold, fires", [(39, True), (40, True), (41, False)])
def test_token_count_trigger_fires_from_its_threshold(threshold, fires):
    view = [Event.of(m) for m in (S("sys"), U("u1"), A("a1"), U("u2"))]  # four events of 10
    trigger = TokenCountTrigger(threshold, estimator=lambda text: 10)
    assert trigger(CompactionRequest("s", view, 2)) is fires
