"""The summarizer contract: declines write nothing, failures are reported, errors propagate."""

import logging

import pytest

from chatbound.compaction import ModelSummarizer, SummaryRequest, WindowCompactionStrategy, last_events

from .builders import A, S, U, contents


def always(request):
    return True


def session(service):
    sid = service.create()
    service.append(sid, S("v1"), U("u1"), A("a1"), S("v2"), U("u2"), A("a2"), U("u3"), S("v3"), A("a3"))
    return sid


def test_summarizer_receives_no_stored_system_message(service):
    sid = session(service)
    requests = []

    def summarizer(request):
        requests.append(request)
        return [U("sum?"), A("new")]

    service.compact(sid, always, WindowCompactionStrategy(last_events(2), summarizer))
    (request,) = requests
    assert request.session_id == sid and request.prior_summary == []
    assert contents(request.covered) == ["u1", "a1", "u2", "a2"]
    assert contents(request.preserved) == ["u3", "a3"]
    assert contents(service.view(sid)) == ["v3", "sum?", "new", "u3", "a3"]


def test_summary_events_are_synthetic_and_start_no_turn(service):
    sid = session(service)
    strategy = WindowCompactionStrategy(last_events(2), lambda request: [U("sum?"), A("new")])
    service.compact(sid, always, strategy)
    summary = service.view(sid)[1:3]
    assert all(event.synthetic and not event.starts_turn for event in summary)


def test_an_empty_summary_declines_and_writes_nothing(service):
    sid = session(service)
    before = service.store.log(sid)
    result = service.compact(sid, always, WindowCompactionStrategy(last_events(2), lambda request: []))
    assert result.unchanged and result.covered == ()
    assert service.store.log(sid) == before


@pytest.mark.parametrize("reply", [None, "", "  \n"])
def test_a_blank_reply_warns_calls_back_and_writes_nothing(service, caplog, reply):
    sid = session(service)
    before = service.store.log(sid)
    failed = []
    summarizer = ModelSummarizer(lambda messages: reply, on_failure=failed.append)
    with caplog.at_level(logging.WARNING, logger="chatbound.compaction.summarizer"):
        result = service.compact(sid, always, WindowCompactionStrategy(last_events(2), summarizer))
    assert result.unchanged and service.store.log(sid) == before
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert len(failed) == 1 and isinstance(failed[0], SummaryRequest)


def test_a_model_exception_propagates_and_writes_nothing(service):
    sid = session(service)
    before = service.store.log(sid)

    def broken(messages):
        raise TimeoutError("model down")

    with pytest.raises(TimeoutError):
        service.compact(sid, always, WindowCompactionStrategy(last_events(2), ModelSummarizer(broken)))
    assert service.store.log(sid) == before


def test_the_summarizing_call_is_not_stored_as_conversation(service):
    sid = session(service)
    before = len(service.store.log(sid))
    summarizer = ModelSummarizer(lambda messages: "new", system_prompt="condense", shadow_prompt="sum?")
    service.compact(sid, always, WindowCompactionStrategy(last_events(2), summarizer))
    added = service.store.log(sid)[before:]
    assert [event.type.value for event in added] == ["compaction", "message", "message"]
    assert contents(added[1:]) == ["sum?", "new"]


def test_model_summarizer_prompt_quotes_overlap_events_and_uses_the_formatter():
    summarizer = ModelSummarizer(
        lambda messages: "x", overlap=2, system_prompt="condense", formatter=lambda e: e.message.content.upper()
    )
    from chatbound.compaction import Event

    events = [Event.of(m) for m in (U("u1"), A("a1"), U("u2"), A("a2"), U("u3"))]
    request = SummaryRequest("s", prior_summary=[], covered=events[:2], preserved=events[2:])
    assert summarizer.prompt(request) == [
        {"role": "system", "content": "condense"},
        {
            "role": "user",
            "content": "Conversation to summarize:\nU1\nA1\n\nIt continues with (for context only):\nU2\nA2",
        },
    ]


def test_negative_overlap_is_rejected_by_name():
    with pytest.raises(ValueError, match="overlap"):
        ModelSummarizer(lambda messages: "x", overlap=-1)
