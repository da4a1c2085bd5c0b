"""The window cases of engine-cases.md, each with its view before and after written out."""

from chatbound.compaction import (
    EventType,
    ModelSummarizer,
    WindowCompactionStrategy,
    last_events,
    last_turns,
    token_budget,
)

from .builders import A, S, T, U, contents, seed_summary


def always(request):
    return True


def start(service, *messages):
    session_id = service.create()
    service.append(session_id, *messages)
    return session_id


def compact(service, session_id, window, summarizer=None):
    return service.compact(session_id, always, WindowCompactionStrategy(window, summarizer))


def test_cut_mid_turn_moves_to_next_turn(service):
    sid = start(service, U("u1"), A("a1"), U("u2"), A("a2a"), A("a2b"), U("u3"), A("a3"))
    result = compact(service, sid, last_events(3))
    assert contents(service.view(sid)) == ["u3", "a3"]
    assert contents(result.covered) == ["u1", "a1", "u2", "a2a", "a2b"]
    assert contents(result.preserved) == ["u3", "a3"] and result.pinned == ()


def test_newest_turn_kept_when_it_alone_exceeds_the_window(service):
    sid = start(service, U("u1"), A("a1"), U("u2"), A("a2"), A("a3"), A("a4"))
    result = compact(service, sid, last_events(2))
    assert contents(service.view(sid)) == ["u2", "a2", "a3", "a4"]
    assert contents(result.covered) == ["u1", "a1"]


def test_one_oversize_turn_is_left_unchanged_and_nothing_is_written(service):
    sid = start(service, U("u1"), A("a1"), A("a2"), A("a3"))
    result = compact(service, sid, last_events(2))
    assert result.unchanged and result.covered == () and result.tokens_saved == 0
    assert service.store.version(sid) == 4
    assert contents(service.view(sid)) == ["u1", "a1", "a2", "a3"]


def test_system_updated_mid_session_without_a_cut_is_unchanged(service):
    sid = start(service, S("v1"), U("u1"), A("a1"), S("v2"), U("u2"), A("a2"))
    result = compact(service, sid, last_events(20))
    assert result.unchanged and service.store.version(sid) == 6
    assert contents(service.view(sid)) == ["v1", "u1", "a1", "v2", "u2", "a2"]


def test_system_prompt_stored_in_an_old_turn_is_pinned_first(service):
    sid = start(service, U("u1"), S("sys"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    result = compact(service, sid, last_events(2))
    assert contents(service.view(sid)) == ["sys", "u3", "a3"]
    assert contents(result.pinned) == ["sys"]
    assert contents(result.covered) == ["u1", "a1", "u2", "a2"]


def test_token_budget_takes_the_system_prompt_off_first(service):
    # "System: sys" 11, "User: u1" 8, "Assistant: a1" 13: 45 - 11 = 34 < 42, so one turn fits.
    sid = start(service, S("sys"), U("u1"), A("a1"), U("u2"), A("a2"))
    result = compact(service, sid, token_budget(45))
    assert contents(service.view(sid)) == ["sys", "u2", "a2"]
    assert contents(result.covered) == ["u1", "a1"]
    assert result.tokens_saved == 8 + 13


def test_token_budget_without_system_prompt_keeps_both_turns(service):
    sid = start(service, U("u1"), A("a1"), U("u2"), A("a2"))
    assert compact(service, sid, token_budget(45)).unchanged


def test_summarizer_rolls_the_prior_summary_forward(service):
    sid = service.create()
    seed_summary(service.store, sid, "sum?", "old")
    service.append(sid, U("u1"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    prompts = []

    def complete(messages):
        prompts.append(messages)
        return "new"

    summarizer = ModelSummarizer(complete, overlap=1, shadow_prompt="sum?")
    result = compact(service, sid, last_events(2), summarizer)

    assert contents(service.view(sid)) == ["sum?", "new", "u3", "a3"]
    assert contents(result.covered) == ["sum?", "old", "u1", "a1", "u2", "a2"]
    assert contents(result.pinned) == []
    assert [m.content for m in result.summary] == ["sum?", "new"]
    # covered: "User: sum?" 10 + "Assistant: old" 14 + 8 + 13 + 8 + 13; summary: 10 + 14
    assert result.tokens_saved == 66 - 24
    prompt = prompts[0][1]["content"]
    assert prompt == (
        "Previous summary:\nUser: sum?\nAssistant: old\n\n"
        "Conversation to summarize:\nUser: u1\nAssistant: a1\nUser: u2\nAssistant: a2\n\n"
        "It continues with (for context only):\nUser: u3"
    )


def test_three_turns_with_a_window_of_three_events_keep_the_last_turn(service):
    sid = start(service, U("u1"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    result = compact(service, sid, last_events(3))
    assert contents(service.view(sid)) == ["u3", "a3"]
    assert contents(result.covered) == ["u1", "a1", "u2", "a2"]


def test_prior_summary_without_summarizer_is_pinned_and_uses_no_slot(service):
    sid = service.create()
    prior = seed_summary(service.store, sid, "sum?", "old")
    service.append(sid, U("m1"), U("m2"), U("m3"), U("m4"))
    result = compact(service, sid, last_events(3))
    assert contents(service.view(sid)) == ["sum?", "old", "m2", "m3", "m4"]
    assert contents(result.covered) == ["m1"]
    assert list(result.pinned) == prior


def test_tool_result_never_stays_without_its_call(service):
    sid = start(service, U("u1"), A("", "c1"), T("c1", "t1"), A("a1'"), U("u2"), A("a2"))
    result = compact(service, sid, last_events(3))
    assert contents(service.view(sid)) == ["u2", "a2"]
    assert contents(result.covered) == ["u1", "", "t1", "a1'"]


def test_preamble_is_pinned_and_uses_no_turn_slot(service):
    sid = start(service, A("p1"), A("p2"), U("u1"), A("a1"), U("u2"), A("a2"), U("u3"), A("a3"))
    result = compact(service, sid, last_turns(1))
    assert contents(service.view(sid)) == ["p1", "p2", "u3", "a3"]
    assert contents(result.pinned) == ["p1", "p2"]
    assert contents(result.covered) == ["u1", "a1", "u2", "a2"]


def test_recorded_log_appends_one_boundary_and_the_summary(service):
    store = service.store
    sid = start(service, U("u1"), A("a1"))
    old = seed_summary(store, sid, "sum?", "old")
    service.append(sid, U("u2"), A("a2"), U("u3"), A("a3"))
    before = store.log(sid)
    assert contents(service.view(sid)) == ["sum?", "old", "u2", "a2", "u3", "a3"]

    summarizer = ModelSummarizer(lambda messages: "new", shadow_prompt="sum?")
    result = compact(service, sid, last_events(2), summarizer)

    after = store.log(sid)
    assert after[: len(before)] == before
    boundary, *summary = after[len(before) :]
    assert boundary.type is EventType.COMPACTION and len(summary) == 2
    assert all(event.synthetic for event in summary)
    assert boundary.payload.pinned == ()
    assert boundary.payload.summary == tuple(event.id for event in summary)
    assert boundary.payload.preserved == tuple(event.id for event in before[-2:])
    assert boundary.payload.covered_event_count == 4
    assert contents(service.view(sid)) == ["sum?", "new", "u3", "a3"]
    assert contents(result.covered) == contents(old) + ["u2", "a2"]


def test_three_passes_keep_the_log_and_name_the_mid_log_system_message_again(service):
    store = service.store
    sid = start(service, U("u1"), A("a1"), S("sys"), U("u2"), A("a2"))
    system = store.log(sid)[2]
    for n in (3, 4, 5):
        before = store.log(sid)
        service.append(sid, U(f"u{n}"), A(f"a{n}"))
        compact(service, sid, last_turns(1))
        after = store.log(sid)
        assert after[: len(before)] == before
        assert after[-1].type is EventType.COMPACTION
        assert after[-1].payload.pinned == (system.id,)
        assert contents(service.view(sid)) == ["sys", f"u{n}", f"a{n}"]
