"""Messages name what they saw: a slice kept as a copy that still grows, and a store whose
entries expire (the cost projected within its time to live). A history only shown, never sent,
is no finding of any rule: fixtures/memory_review/f_neg_display_only.py, a negative of that
folder's expectations, checked with every rule by test_fixtures.py."""

from __future__ import annotations

from chatbound.rules.memory_unbounded_history import MemoryUnboundedHistory
from chatbound.run.pipeline import analyze_source

SLICED_COPY = """\
from openai import OpenAI
client = OpenAI()
history = [{"role": "system", "content": "Be brief."}]

def ask(q):
    history.append({"role": "user", "content": q})
    recent = history[2:]
    reply = client.chat.completions.create(model="m", messages=recent)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
"""

TTL_SESSIONS = """\
from cachetools import TTLCache
from openai import OpenAI
client = OpenAI()
sessions = TTLCache(maxsize=1000, ttl=30 * 60)

def ask(user, q):
    history = sessions.setdefault(user, [])
    history.append({"role": "user", "content": q})
    reply = client.chat.completions.create(model="m", messages=history)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
"""

WRITTEN_BACK = """\
from expiringdict import ExpiringDict
from openai import OpenAI
client = OpenAI()
chats = ExpiringDict(max_len=100, max_age_seconds=3600)

def ask(user, q):
    history = chats.setdefault(user, [])
    history.append({"role": "user", "content": q})
    reply = client.chat.completions.create(model="m", messages=history)
    history.append({"role": "assistant", "content": reply.choices[0].message.content})
    chats[user] = history
"""


def only(code: str):
    findings = analyze_source(code, "app.py", [MemoryUnboundedHistory], {}).findings
    assert len(findings) == 1, findings
    return findings[0]


def test_a_slice_kept_under_another_name_is_named_as_a_copy_that_still_grows():
    finding = only(SLICED_COPY)
    assert (finding.span.line, finding.span.col) == (8, 64)
    assert finding.message.startswith(
        "`recent` is `history[2:]`, a copy that drops a fixed few items of `history`, which is a module-level name "
        "shared by every request, grows every turn by `append()` (lines 6, 9) and the copy, which grows with it "
        "(it does not bound it), is sent whole to openai.chat.completions.create, so turn N re-sends"
    )


def test_a_ttl_cache_session_cannot_outlive_its_time_to_live_and_is_costed_within_it():
    finding = only(TTL_SESSIONS)
    assert (finding.span.line, finding.span.col) == (9, 64)
    assert finding.message.endswith(
        "`sessions` is a cachetools.TTLCache whose entries expire 1,800 s (30 min) after they are set, so a session "
        "cannot outlive that time to live: the cost is projected within it."
    )
    assert finding.properties["lifetime_seconds"] == 1800
    projection = finding.properties["projection"]
    assert (projection["turns"], projection["seconds_per_turn"]) == (30, 60)  # 1,800 s at one turn a minute
    # 30 turns of 400 tokens: 12,000 at turn 30, 400 * (30 * 31 / 2) = 186,000 in all; bounded: 400 n for
    # turns 1-10 (22,000), then 4,000 + a 400-token summary for 20 turns (88,000) = 110,000
    assert projection["as_written"] == {"last_turn": 12_000, "session": 186_000}
    assert projection["window_summary"]["session"] == 110_000
    assert finding.properties["notes"][-1].startswith(
        "cost within the 1,800 s time to live, at one turn every 60 s: turn 30 sends 12,000 tokens, 186,000 over the session"
    )


def test_a_time_to_live_renewed_by_each_write_back_ends_idle_sessions_only():
    finding = only(WRITTEN_BACK)
    assert finding.message.endswith(
        "`chats` is an expiringdict.ExpiringDict whose 3,600 s (60 min) time to live restarts at each write-back "
        "(line 11): it ends idle sessions, not long ones."
    )
    assert "lifetime_seconds" not in finding.properties
    assert finding.properties["projection"]["turns"] == 50


def test_a_store_that_only_looks_like_an_expiring_one_is_not_named_so():
    unknown_ttl = TTL_SESSIONS.replace("ttl=30 * 60", "ttl=SESSION_SECONDS")
    own_class = TTL_SESSIONS.replace("from cachetools import TTLCache", "from .caches import TTLCache")
    for code in (unknown_ttl, own_class):
        finding = only(code)
        assert "time to live" not in finding.message and "lifetime_seconds" not in finding.properties
        assert finding.message.startswith(
            "`history` carries `sessions[user]`, which is a per-session entry of a long-lived dict"
        )


def test_cost_projects_an_expiring_session_within_its_time_to_live(write):
    from conftest import invoke

    root = write({"app.py": TTL_SESSIONS, "shared.py": SLICED_COPY})
    lines = invoke("cost", ".", cwd=root).output.splitlines()
    assert lines[0].split()[:4] == ["finding", "rule", "last", "turn"]  # 30 turns beside 50
    assert lines[2].split()[:4] == ["app.py:9:64", "MEMORY-UNBOUNDED-HISTORY", "12,000", "4,400"]
    assert lines[3].split()[:4] == ["shared.py:8:64", "MEMORY-UNBOUNDED-HISTORY", "20,000", "4,400"]
    assert "app.py:9:64: 30 turns, as many as its store's 1,800 s time to live holds at one turn every 60 s." in lines
