"""The ecosystem check's comparison with its judged file (benchmarks/ecosystem/judged.py), on
small made-up findings: CI has neither the network nor the snapshots the check runs on."""

import importlib.util
import sys

from conftest import ROOT

spec = importlib.util.spec_from_file_location("ecosystem_judged", ROOT / "benchmarks" / "ecosystem" / "judged.py")
judged = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
spec.loader.exec_module(judged)

Finding, Judged, Miss = judged.Finding, judged.Judged, judged.Miss
MEMORY = "MEMORY-UNBOUNDED-HISTORY"


def found(line, fingerprint="f1", project="a/app", rule=MEMORY, verdict="", reason="", end_line=0):
    return Finding(project, rule, "bot.py", line, fingerprint, end_line or line, "msg", verdict, reason)


def test_verdict_follows_the_fingerprint_when_lines_above_move():
    recorded = Judged([found(10, verdict="right", reason="list sent whole")])
    result = judged.compare(recorded, [found(14)], {"a/app"})
    assert (result.scores[MEMORY].right, result.scores[MEMORY].unknown) == (1, 0)
    assert result.appeared == [] and result.vanished == [] and result.unjudged == []


def test_a_new_finding_is_unknown_never_right():
    result = judged.compare(Judged([found(3, "old", verdict="right")]), [found(3, "old"), found(9, "new")], {"a/app"})
    score = result.scores[MEMORY]
    assert (score.right, score.wrong, score.unknown) == (1, 0, 1)
    assert score.precision == 1.0  # right / judged: the unknown one is reported apart
    assert [f.fingerprint for f in result.appeared] == ["new"]
    assert [f.fingerprint for f in result.unjudged] == ["new"]


def test_precision_counts_wrong_findings():
    recorded = Judged([found(1, "r", verdict="right"), found(2, "w", verdict="wrong"), found(3, "w2", verdict="wrong")])
    result = judged.compare(recorded, [found(1, "r"), found(2, "w"), found(3, "w2")], {"a/app"})
    assert round(result.scores[MEMORY].precision, 3) == 0.333


def test_vanished_only_for_projects_that_ran():
    recorded = Judged([found(5, "gone", verdict="right"), found(5, "other", project="b/app", verdict="wrong")])
    result = judged.compare(recorded, [], {"a/app"})
    assert [(f.project, f.fingerprint, f.verdict) for f in result.vanished] == [("a/app", "gone", "right")]
    assert MEMORY not in result.scores


def test_a_known_miss_lowers_recall_until_a_finding_covers_its_line():
    miss = Miss("a/app", MEMORY, "bot.py", 21, "Mongo history sent whole")
    recorded = Judged([found(4, "r", verdict="right")], [miss])
    before = judged.compare(recorded, [found(4, "r")], {"a/app"})
    assert before.scores[MEMORY].misses == 1 and before.scores[MEMORY].recall == 0.5
    after = judged.compare(recorded, [found(4, "r"), found(20, "new", end_line=22)], {"a/app"})
    assert after.scores[MEMORY].misses == 0
    assert [(m.line, f.fingerprint) for m, f in after.caught] == [(21, "new")]


def test_a_miss_of_another_rule_or_a_project_not_run_is_not_caught_or_counted():
    misses = [Miss("a/app", "RAG-EXCESSIVE-TOP-K", "bot.py", 4, "k=50"), Miss("b/app", MEMORY, "bot.py", 4, "x")]
    result = judged.compare(Judged([], misses), [found(4)], {"a/app"})
    assert result.caught == []
    assert result.scores["RAG-EXCESSIVE-TOP-K"].misses == 1 and result.scores[MEMORY].misses == 0


def test_record_keeps_verdicts_of_findings_still_reported_and_round_trips(tmp_path):
    recorded = Judged(
        [
            found(10, "kept", verdict="wrong", reason="bounded by [-10:]"),
            found(30, "gone", verdict="right"),
            found(1, "untouched", project="b/app", verdict="right", reason="b did not run"),
        ],
        [Miss("a/app", MEMORY, "bot.py", 50, 'history "sent" whole')],
    )
    new = judged.record(recorded, [found(12, "kept"), found(40, "fresh")], {"a/app"}, {"chatbound_commit": "abc"})
    path = tmp_path / "judged.toml"
    path.write_text(judged.dumps(new))
    loaded = judged.load(path)
    assert [(f.project, f.fingerprint, f.line, f.verdict, f.reason) for f in loaded.findings] == [
        ("a/app", "kept", 12, "wrong", "bounded by [-10:]"),
        ("a/app", "fresh", 40, "", ""),
        ("b/app", "untouched", 1, "right", "b did not run"),
    ]
    assert loaded.misses == recorded.misses
    assert loaded.run == {"chatbound_commit": "abc"}


def test_a_verdict_other_than_right_or_wrong_is_refused(tmp_path):
    path = tmp_path / "judged.toml"
    path.write_text(judged.dumps(Judged([found(1, verdict="maybe")])))
    try:
        judged.load(path)
    except ValueError as error:
        assert "verdict must be right, wrong or empty" in str(error)
    else:
        raise AssertionError("a bad verdict was accepted")


def test_a_notebook_miss_is_caught_only_in_its_own_cell_and_cells_round_trip(tmp_path):
    miss = Miss("a/app", MEMORY, "chat.ipynb", 5, "history sent whole", cell=3)
    other_cell = Finding("a/app", MEMORY, "chat.ipynb", 5, "c2", 5, "msg", cell=2)
    same_cell = Finding("a/app", MEMORY, "chat.ipynb", 5, "c3", 5, "msg", cell=3)
    assert judged.compare(Judged([], [miss]), [other_cell], {"a/app"}).caught == []
    assert len(judged.compare(Judged([], [miss]), [same_cell], {"a/app"}).caught) == 1
    path = tmp_path / "judged.toml"
    path.write_text(judged.dumps(Judged([same_cell], [miss])))
    loaded = judged.load(path)
    assert (loaded.findings[0].cell, loaded.misses[0].cell) == (3, 3)


def test_a_file_chatbound_could_not_check_keeps_its_findings_instead_of_vanishing():
    recorded = Judged(
        [found(3, "kept", verdict="wrong", reason="a task spec"), found(8, "gone", verdict="right")],
        [Miss("a/app", MEMORY, "bot.py", 20, "sent whole")],
    )
    crashed = frozenset({("a/app", "bot.py")})
    result = judged.compare(recorded, [], {"a/app"}, crashed)
    assert result.vanished == [] and result.scores == {}
    new = judged.record(recorded, [], {"a/app"}, {}, crashed)
    assert [f.fingerprint for f in new.findings] == ["kept", "gone"]
