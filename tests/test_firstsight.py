"""First-sight scoring of the ecosystem check (benchmarks/ecosystem/firstsight.py, run.py --batch), on a
small made-up batch and made-up findings: no chatbound run, no network (the clone is from a local repo)."""

import importlib.util
import subprocess
import sys
from dataclasses import replace

from conftest import ROOT

spec = importlib.util.spec_from_file_location("ecosystem_run", ROOT / "benchmarks" / "ecosystem" / "run.py")
run = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
spec.loader.exec_module(run)
firstsight, Finding = run.firstsight, run.Finding

MEMORY, TOPK, PROMPT = "MEMORY-UNBOUNDED-HISTORY", "RAG-EXCESSIVE-TOP-K", "PROMPT-BLOATED-SYSTEM"
BATCH = """# labelled by reading the code, before any run
[batch]
name = "batch-t"
labelled = "2026-12-01"
chatbound_commit = "abc"
note = "made up for the tests"

[[project]]
name = "a/app"
commit = "1111111111111111111111111111111111111111"
root = ""
why = "a bot"
checked = "all of it"

[[project]]
name = "b/nb"
commit = "2222222222222222222222222222222222222222"
why = "a notebook"
checked = "chat.ipynb"

[[expected]]
project = "a/app"
rule = "MEMORY-UNBOUNDED-HISTORY"
path = "bot.py"
lines = [40, 58]
reason = "history grows every turn and is sent whole"

[[expected]]
project = "a/app"
rule = "MEMORY-UNBOUNDED-HISTORY"
path = "bot.py"
lines = [90, 95]
reason = "a second history, the admin chat"

[[expected]]
project = "a/app"
rule = "RAG-EXCESSIVE-TOP-K"
path = "rag.py"
lines = [10, 10]
reason = "k=50 pasted into each call"

[[expected]]
project = "b/nb"
rule = "MEMORY-UNBOUNDED-HISTORY"
path = "chat.ipynb"
lines = [1, 99999]
reason = "messages list appended in the chat loop"

[[borderline]]
project = "a/app"
rule = "PROMPT-BLOATED-SYSTEM"
path = "agent.py"
lines = [5, 30]
reason = "a long prompt, every part arguably used"
"""


def found(line, rule=MEMORY, path="bot.py", project="a/app", fingerprint=None, end_line=0, cell=0, related=()):
    return Finding(
        project,
        rule,
        path,
        line,
        fingerprint or f"{path}:{line}:{rule}",
        end_line or line,
        f"message of {rule} at {line}",
        cell=cell,
        related=related,
    )


def entry(first, last, rule=MEMORY, path="bot.py", project="a/app"):
    return firstsight.Entry(project, rule, path, (first, last), "r")


def batch_file(tmp_path, text=BATCH):
    path = tmp_path / "batch-t.toml"
    path.write_bytes(text.encode())
    return path


# What every run of the tests below reports on the made-up batch: 2 findings on the first history
# (where it grows and where it is sent), none on the second, the top-k, the notebook in cell 4,
# one borderline prompt and two findings nobody wrote down.
FINDINGS = [
    found(42),
    found(57),
    found(10, TOPK, "rag.py"),
    found(2, path="chat.ipynb", project="b/nb", cell=4),
    found(12, PROMPT, "agent.py"),
    found(200),
    found(3, TOPK, "other.py"),
]
BOTH = {"a/app", "b/nb"}
RUN = {"chatbound_commit": "def", "date": "2026-12-02"}


def test_a_finding_matches_within_three_lines_of_the_range_or_when_its_span_overlaps_it():
    labelled = entry(40, 58)
    assert [labelled.matches(found(n)) for n in (36, 37, 40, 58, 61, 62)] == [False, True, True, True, True, False]
    assert labelled.matches(found(30, end_line=37)) and not labelled.matches(found(30, end_line=36))
    assert not labelled.matches(found(45, TOPK)) and not labelled.matches(found(45, path="app.py"))
    assert not labelled.matches(found(45, project="b/nb"))


def test_a_finding_matches_where_its_report_names_the_labelled_place_in_another_file():
    labelled = entry(55, 105, rule="PROMPT-OVERSIZED-SYSTEM", path="prompts.py")
    sent = found(164, rule="PROMPT-OVERSIZED-SYSTEM", path="core.py", related=(("prompts.py", 55, 105),))
    assert labelled.matches(sent)
    assert not labelled.matches(replace(sent, related=(("prompts.py", 110, 120),)))  # past the tolerance
    assert not labelled.matches(replace(sent, related=(("other.py", 55, 105),)))
    assert not labelled.matches(replace(sent, rule=MEMORY))
    assert not labelled.matches(replace(sent, related=()))


def test_a_notebook_entry_written_1_to_99999_matches_any_cell_of_that_notebook():
    labelled = entry(1, 99999, path="chat.ipynb")
    assert labelled.matches(found(2, path="chat.ipynb", cell=4)) and labelled.matches(
        found(310, path="chat.ipynb", cell=9)
    )
    assert not labelled.matches(found(2, path="other.ipynb", cell=4))


def test_figures_per_rule_and_overall_are_exact(tmp_path):
    result = firstsight.score(firstsight.load(batch_file(tmp_path)), FINDINGS, BOTH)
    counts = {rule: (s.expected, s.matched, s.right, s.wrong, s.borderline) for rule, s in result.scores.items()}
    assert counts == {MEMORY: (3, 2, 3, 1, 0), PROMPT: (0, 0, 0, 0, 1), TOPK: (1, 1, 1, 1, 0)}
    assert (result.scores[MEMORY].precision, round(result.scores[MEMORY].recall, 4)) == (0.75, 0.6667)
    assert (result.scores[TOPK].precision, result.scores[TOPK].recall) == (0.5, 1.0)
    assert (result.scores[PROMPT].precision, result.scores[PROMPT].recall) == (None, None)
    total = result.total
    assert (total.expected, total.matched, total.right, total.wrong, total.borderline) == (4, 3, 4, 2, 1)
    assert (round(total.precision, 4), total.recall) == (0.6667, 0.75)
    assert [(e.path, e.lines) for e in result.missed] == [("bot.py", (90, 95))]


def test_a_borderline_finding_is_in_neither_precision_nor_recall():
    batch = firstsight.Batch({}, [], [entry(5, 30, PROMPT, "agent.py")])
    result = firstsight.score(batch, [found(12, PROMPT, "agent.py")], {"a/app"})
    assert result.marks[0][1] == "borderline"
    assert (result.total.right, result.total.wrong, result.total.precision, result.total.recall) == (0, 0, None, None)


def test_an_expected_entry_counts_once_for_recall_and_extra_findings_on_it_stay_right():
    batch = firstsight.Batch({}, [entry(40, 58)])
    score = firstsight.score(batch, [found(42), found(57), found(58, end_line=60)], {"a/app"}).scores[MEMORY]
    assert (score.expected, score.matched, score.right, score.wrong) == (1, 1, 3, 0)
    assert (score.precision, score.recall) == (1.0, 1.0)


def test_one_finding_never_counts_for_two_entries_and_each_entry_gets_the_finding_only_it_can_take():
    two = firstsight.Batch({}, [entry(40, 42), entry(44, 46)])
    assert firstsight.score(two, [found(43)], {"a/app"}).scores[MEMORY].matched == 1
    # The line-13 finding reaches both entries, the line-19 one only the first: in the order of
    # the file a first-come pairing would leave the second entry missed.
    crossed = firstsight.Batch({}, [entry(14, 20), entry(8, 12)])
    result = firstsight.score(crossed, [found(13), found(19)], {"a/app"})
    assert (result.scores[MEMORY].matched, result.missed) == (2, [])


def test_a_finding_nobody_wrote_down_is_wrong_and_a_project_that_did_not_run_is_left_out(tmp_path):
    batch = firstsight.load(batch_file(tmp_path))
    result = firstsight.score(batch, FINDINGS[:3] + FINDINGS[4:], {"a/app"})
    assert [(f.path, f.line) for f, match in result.marks if match == "wrong"] == [("bot.py", 200), ("other.py", 3)]
    assert result.scores[MEMORY].expected == 2  # the notebook's entry: b/nb did not run


def test_an_entry_of_a_project_outside_the_batch_or_with_a_bad_range_is_refused(tmp_path):
    for bad in (
        'project = "c/typo"\nrule = "R"\npath = "x.py"\nlines = [1, 2]',
        'project = "a/app"\nrule = "R"\npath = "x.py"\nlines = [9, 2]',
    ):
        try:
            firstsight.load(batch_file(tmp_path, BATCH + "\n[[expected]]\n" + bad + "\n"))
        except ValueError as error:
            assert "c/typo" in str(error) or "lines must be" in str(error)
        else:
            raise AssertionError(f"accepted: {bad}")


def test_freeze_appends_the_first_sight_keeping_the_hand_written_text_byte_for_byte(tmp_path):
    for text in (BATCH, BATCH.rstrip("\n")):  # with and without a final newline
        path = batch_file(tmp_path, text)
        result = firstsight.score(firstsight.load(path), FINDINGS, BOTH)
        firstsight.freeze(path, result, RUN)
        assert path.read_bytes().startswith(text.encode())
        frozen = firstsight.load(path).first_sight
        assert (frozen["chatbound_commit"], frozen["date"]) == ("def", "2026-12-02")
        assert firstsight.frozen_scores(frozen) == (result.scores, result.total)
        assert frozen["all"]["precision"] == 0.6667 and frozen["all"]["recall"] == 0.75
        assert [(f["path"], f.get("cell", 0), f["match"]) for f in frozen["finding"]] == [
            ("agent.py", 0, "borderline"),
            ("bot.py", 0, "expected"),
            ("bot.py", 0, "expected"),
            ("bot.py", 0, "wrong"),
            ("other.py", 0, "wrong"),
            ("rag.py", 0, "expected"),
            ("chat.ipynb", 4, "expected"),
        ]


def test_a_second_freeze_is_refused_and_leaves_the_file_as_it_was(tmp_path):
    path = batch_file(tmp_path)
    firstsight.freeze(path, firstsight.score(firstsight.load(path), FINDINGS, BOTH), RUN)
    once = path.read_bytes()
    try:
        firstsight.freeze(
            path, firstsight.score(firstsight.load(path), [], BOTH), {"chatbound_commit": "xyz", "date": "2026-12-03"}
        )
    except ValueError as error:
        assert "already holds its first sight" in str(error)
    else:
        raise AssertionError("a second freeze was accepted")
    assert path.read_bytes() == once
    assert run.main(["--batch", str(path), "--freeze"]) == 2
    assert path.read_bytes() == once


def test_runs_are_refused_until_the_first_one_is_frozen_and_freezing_needs_a_verified_commit(tmp_path):
    unfrozen = firstsight.load(batch_file(tmp_path))
    assert "run it with --freeze" in run.refusal(tmp_path, unfrozen, False, "abc")
    assert "unverified" in run.refusal(tmp_path, unfrozen, True, "abc (not installed by --install: unverified)")
    assert run.refusal(tmp_path, unfrozen, True, "abc") == ""
    frozen = firstsight.Batch({}, first_sight={"chatbound_commit": "abc", "date": "2026-12-02"})
    assert "never move" in run.refusal(tmp_path, frozen, True, "abc")
    assert run.refusal(tmp_path, frozen, False, "abc (unverified)") == ""


def test_a_freeze_with_a_project_not_run_scores_nothing_and_writes_nothing(tmp_path, capsys):
    path = batch_file(tmp_path)
    projects = run.load_projects(path)
    outcomes = [
        run.Outcome(projects[0], FINDINGS[:3], 1.0, 3, [], True),
        run.Outcome(projects[1], [], 0.0, 0, ["no snapshot"], False),
    ]
    assert run.score_batch(path, firstsight.load(path), outcomes, "def", freeze=True) == 2
    assert path.read_bytes() == BATCH.encode()
    assert "precision" not in capsys.readouterr().out
    outcomes[1] = run.Outcome(projects[1], FINDINGS[3:4], 1.0, 1, [], True)
    assert run.score_batch(path, firstsight.load(path), outcomes, "def", freeze=True) == 0
    assert firstsight.load(path).first_sight["chatbound_commit"] == "def"


def test_later_runs_show_the_frozen_figures_and_what_appeared_or_vanished_since(tmp_path):
    path = batch_file(tmp_path)
    firstsight.freeze(path, firstsight.score(firstsight.load(path), FINDINGS, BOTH), RUN)
    batch = firstsight.load(path)
    later = [f for f in FINDINGS if f.line not in (57, 200)] + [found(92)]  # a right one and a wrong one gone
    result = firstsight.score(batch, later, BOTH)
    appeared, vanished = firstsight.since(batch.first_sight, result.marks, BOTH)
    assert [(f.line, match) for f, match in appeared] == [(92, "expected")]
    assert [(f.line, match) for f, match in vanished] == [(57, "expected"), (200, "wrong")]
    assert firstsight.since(batch.first_sight, [], {"b/nb"})[1][0][0].path == "chat.ipynb"  # only projects run

    report = run.render_batch(batch, result, [], "ghi", BOTH)
    assert "first sight (frozen: chatbound def on 2026-12-02)" in report and "this run" in report
    assert "appeared since first sight: 1" in report and "vanished since first sight: 2" in report
    assert report.count("all rules") == 2


def test_the_clone_fetches_only_the_pinned_commit_from_github():
    project = run.Project("owner/name", "a" * 40, "why")
    assert run.clone_commands(project, run.Path("W/.clones/owner+name/repo")) == [
        ["git", "init", "-q", "--bare", "W/.clones/owner+name/repo"],
        [
            "git",
            "--git-dir=W/.clones/owner+name/repo",
            "fetch",
            "-q",
            "--depth",
            "1",
            "https://github.com/owner/name",
            "a" * 40,
        ],
    ]


def test_with_no_mirror_the_pinned_commit_is_fetched_and_laid_out_without_a_git_folder(tmp_path):
    origin = tmp_path / "origin" / "owner" / "name"
    git = ["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@t"]
    origin.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    (origin / "app").mkdir()
    (origin / "app" / "bot.py").write_text("history = []\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pinned"], check=True)
    pinned = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (origin / "later.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "after the pin"], check=True)

    project = run.Project("owner/name", pinned, "why")
    tree = run.lay_out(project, None, tmp_path / "work", origin=f"file://{tmp_path / 'origin'}")
    assert tree == tmp_path / "work" / "owner+name"
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == [run.MARKER, "app", "app/bot.py"]
    assert (tree / "app" / "bot.py").read_text() == "history = []\n"
    missing = run.Project("owner/absent", pinned, "why")
    assert "fetching owner/absent" in run.lay_out(missing, None, tmp_path / "work", origin=f"file://{tmp_path}")
