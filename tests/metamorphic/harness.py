"""Every positive and negative case, rewritten, and what chatbound answers on it.

The cases: each rule's VALID and INVALID examples (one file each, only that rule selected) and
each `fixtures/` folder with an `expected.txt` (every rule). A case is written to a temporary
folder, rewritten there by each rewrite of `rewrites.py`, and checked as `chatbound check` checks
a project (`chatbound.run.runner.run`, linked through its imports, no cache). A finding is
counted per (file, rule): a positive survives where the rewritten project still reports as
many findings of that rule in that file (an added module's findings count for the file it was
cut from), a negative stays clean where it reports none. A rewrite that changes nothing in the
file a finding is in does not apply to it, and is counted apart.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import re
import shutil
import tempfile
import textwrap
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from metamorphic.rewrites import CONTROLS, REWRITES, Project, Rewritten

if TYPE_CHECKING:
    from chatbound.findings import FileResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
FIXTURE_ROW = "(fixture clean files)"
# the rules whose finding is a whole list sent: the control bounds that list at the send
CONTROLLED = ("MEMORY-UNBOUNDED-HISTORY", "AGENT-OVERSIZED-HANDOFF")


@dataclass(frozen=True)
class Case:
    name: str
    rule: str | None  # an example's rule (only it runs); None: a fixture folder (every rule runs)
    positive: bool  # an example: INVALID (True) or VALID
    files: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, object], ...] = ()

    @property
    def project(self) -> Project:
        return dict(self.files)


@dataclass
class Outcome:
    case: str
    rewrite: str
    applied: set[str] = field(default_factory=set)  # files the rewrite changed (or cut a module from)
    base: Counter = field(default_factory=Counter)  # (file, rule) -> findings on the original
    after: Counter = field(default_factory=Counter)  # (file, rule) -> findings on the rewritten project
    where: list[str] = field(default_factory=list)  # the rewritten findings, `file:line rule`
    at: list[tuple[str, str, int, int]] = field(default_factory=list)  # the original findings: file, rule, line, col
    sends: dict[str, list[tuple[tuple[int, int, int, int], str]]] = field(default_factory=dict)  # a control's sends
    error: str | None = None


@cache
def cases() -> tuple[Case, ...]:
    from chatbound.run.registry import all_rules

    found: list[Case] = []
    for rule in all_rules():
        for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID)):
            for i, example in enumerate(examples):
                code = example if isinstance(example, str) else example.code
                options = getattr(example, "options", None) or {}
                found.append(
                    Case(
                        f"{rule.ID}-{kind}-{i}",
                        rule.ID,
                        kind == "invalid",
                        (("example.py", textwrap.dedent(code)),),
                        tuple(sorted(options.items())),
                    )
                )
    for expected in sorted(FIXTURES.rglob("expected.txt")):
        folder = expected.parent
        files = tuple(
            (str(p.relative_to(folder)), p.read_text(encoding="utf-8"))
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix in (".py", ".ipynb", ".json", ".toml", ".txt") and "__pycache__" not in p.parts
        )
        found.append(Case(f"fixtures/{folder.relative_to(FIXTURES)}", None, True, files))
    return tuple(found)


def _write(root: Path, project: Project) -> None:
    if root.exists():
        shutil.rmtree(root)
    for name, text in project.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def shared_analysis() -> Iterator[None]:
    """Each file analysed once for a case's every version: `analyze_source` is a function of its
    arguments (the file, the rules, the options, its folder and what the project pass linked for
    it), so a file a rewrite left as it was, seen through the same links, is answered from the
    run before. Every version of a case is written at one root, so the paths are the same. (The
    data files a rule may read beside a module, prompts and requirements, no rewrite changes.)"""
    from chatbound.run import pipeline

    analyze = pipeline.analyze_source
    known: dict[tuple, FileResult] = {}

    def once(source, path, rules, options=None, directory="", project=None):
        linked = repr(dataclasses.replace(project, seconds=0.0)) if project is not None else None
        key = (source, path, tuple(r.ID for r in rules), repr(sorted((options or {}).items())), directory, linked)
        if key not in known:
            known[key] = analyze(source, path, rules, options, directory, project)
        return copy.deepcopy(known[key])  # the runner sets a result's modules and times on it

    pipeline.analyze_source = once
    try:
        yield
    finally:
        pipeline.analyze_source = analyze


def findings(
    root: Path, project: Project, case: Case, origin: dict[str, str]
) -> tuple[Counter, list[str], list[tuple[str, str, int, int]]]:
    """(file, rule) -> count of what `chatbound check` reports on `project`, written at `root`, and
    where: as text, and as (file, rule, line, column)."""
    from chatbound.run.config import Settings
    from chatbound.run.runner import run

    _write(root, project)
    settings = Settings(root=root, select=[case.rule] if case.rule else [], options=dict(case.options))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = run([root], settings)
    finally:
        os.chdir(cwd)
    if result.errors:
        raise RuntimeError("; ".join(f"{e.path}: {e.message}" for e in result.errors))
    counts: Counter = Counter()
    where = []
    at = []
    for f in result.active:
        path = Path(f.path)
        shown = str((path if path.is_absolute() else root / path).resolve().relative_to(root))
        counts[(origin.get(shown, shown), f.rule_id)] += 1
        where.append(f"{shown}:{f.span.line}:{f.span.col} {f.rule_id}")
        at.append((shown, f.rule_id, f.span.line, f.span.col))
    return counts, where, at


def changed_files(project: Project, rewritten: Rewritten) -> set[str]:
    changed = {p for p, text in rewritten.files.items() if p in project and project[p] != text}
    return changed | set(rewritten.origin.values())


def evaluate_case(index: int, rewrites: tuple[str, ...]) -> list[Outcome]:
    """One case, as written and under each rewrite: each version written at the same root and
    checked in this process, the files a rewrite did not change answered once (`shared_analysis`)."""
    case = cases()[index]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="chatbound-meta-") as tmp, shared_analysis():
        root = Path(tmp).resolve() / "project"
        try:
            base, _, at = findings(root, case.project, case, {})
        except Exception:  # noqa: BLE001 - a run that fails is reported, not hidden
            error = traceback.format_exc(limit=6)
            return [Outcome(case.name, rewrite, error=error) for rewrite in rewrites]
        for rewrite in rewrites:
            outcome = Outcome(case.name, rewrite, base=base, at=at)
            outcomes.append(outcome)
            try:
                transform = REWRITES.get(rewrite) or CONTROLS[rewrite]
                rewritten = transform(case.project)
                if rewritten is None:
                    continue
                outcome.applied = changed_files(case.project, rewritten)
                outcome.sends = rewritten.sends
                outcome.after, outcome.where, _ = findings(root, rewritten.files, case, rewritten.origin)
            except Exception:  # noqa: BLE001 - a rewrite or a run that fails is reported, not hidden
                outcome.error = traceback.format_exc(limit=6)
    return outcomes


def _size(case: Case) -> int:
    return sum(len(text) for _, text in case.files)


def evaluate_all(
    rewrites: tuple[str, ...] | None = None, workers: int | None = None, only: Callable[[Case], bool] | None = None
) -> list[Outcome]:
    """Every case (or those `only` keeps) under every rewrite, a case to a task, the largest
    first, in a pool of `workers` processes (by default one per core, at most two)."""
    names = rewrites or (*REWRITES, *CONTROLS)
    indexes = [i for i, case in enumerate(cases()) if only is None or only(case)]
    indexes.sort(key=lambda i: -_size(cases()[i]))
    workers = workers or min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if workers <= 1:
        return [o for i in indexes for o in evaluate_case(i, names)]
    with ProcessPoolExecutor(workers) as pool:
        return [o for result in pool.map(evaluate_case, indexes, [names] * len(indexes)) for o in result]


# ---------------------------------------------------------------------------------------------
# what the outcomes add up to


@dataclass
class Tally:
    kept: int = 0  # positives: survived (control: findings removed); negatives: stayed clean
    total: int = 0  # units the rewrite applied to
    not_applied: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.kept / self.total if self.total else None

    def text(self) -> str:
        rate = "  -  " if self.rate is None else f"{100 * self.rate:5.1f}"
        return f"{rate} ({self.kept}/{self.total}, n/a {self.not_applied})"


def _case(name: str) -> Case:
    return next(c for c in cases() if c.name == name)


def tallies(outcomes: list[Outcome]) -> dict[tuple[str, str, str], Tally]:
    """(kind, rule, rewrite) -> Tally, kind being `positive`, `negative` or `control`."""
    out: dict[tuple[str, str, str], Tally] = {}

    def tally(kind: str, rule: str, rewrite: str) -> Tally:
        return out.setdefault((kind, rule, rewrite), Tally())

    for o in outcomes:
        case = _case(o.case)
        control = o.rewrite in CONTROLS
        if o.error is not None:
            for rule in [case.rule] if case.rule else sorted({r for _, r in o.base}) or [FIXTURE_ROW]:
                t = tally("control" if control else "positive" if case.positive else "negative", rule, o.rewrite)
                t.total += 1
                t.failures.append(f"{o.case}: error {o.error.strip().splitlines()[-1]}")
            continue
        if case.rule is not None and not case.positive:  # a VALID example
            if control:
                continue
            t = tally("negative", case.rule, o.rewrite)
            if not o.applied:
                t.not_applied += 1
                continue
            t.total += 1
            spurious = sum(n for (_, rule), n in o.after.items() if rule == case.rule)
            if spurious:
                t.failures.append(f"{o.case}: {', '.join(o.where)}")
            else:
                t.kept += 1
            continue
        files = {f for f, _ in case.files if f.endswith(".py")}
        for (path, rule), n in sorted(o.base.items()):
            kind = "control" if control else "positive"
            t = tally(kind, rule, o.rewrite)
            if control and rule not in CONTROLLED:
                t.not_applied += n
                continue
            if path not in o.applied:
                t.not_applied += n
                continue
            if control:
                beyond = _beyond_control(case, o, path, rule)
                t.not_applied += beyond
                n -= beyond
                if not n:
                    continue
            t.total += n
            after = o.after.get((path, rule), 0)
            if control:
                after = max(0, after - beyond)
                removed = max(0, n - after)
                t.kept += removed
                if removed < n:
                    t.failures.append(f"{o.case} {path}: {after} of {n} left: {', '.join(o.where)}")
            else:
                t.kept += min(n, after)
                if after < n:
                    t.failures.append(f"{o.case} {path}: {after} of {n}: {', '.join(o.where) or 'none'}")
        if case.rule is None and not control:  # a fixture's files with no finding stay clean
            clean = files - {path for path, _ in o.base}
            t = tally("negative", FIXTURE_ROW, o.rewrite)
            for path in sorted(clean):
                if path not in o.applied:
                    t.not_applied += 1
                    continue
                t.total += 1
                spurious = [f"{p} {r}" for (p, r), n in o.after.items() if p == path and n]
                if spurious:
                    t.failures.append(f"{o.case} {path}: {', '.join(spurious)}")
                else:
                    t.kept += 1
    return out


# a handoff the framework makes itself (declared on an agent, a graph's Command, a helper that
# builds handoff tools): no list is given at a model call, so bounding one changes nothing
DECLARED_HANDOFF = re.compile(r"(Command|handoff|create_\w+)\(")


def _beyond_control(case: Case, o: Outcome, path: str, rule: str) -> int:
    """How many of `path`'s findings of `rule` the control cannot change: those inside a send it
    left as it was (the history kept by a session, or only this turn's text given there), those
    at no send of a file that keeps its history in a session or wrapper (reported where that is
    built), and declared handoffs."""
    lines = dict(case.files).get(path, "").splitlines()
    sends = o.sends.get(path, [])
    held = any(what == "held" for _, what in sends)
    beyond = 0
    for shown, found, line, col in o.at:
        if shown != path or found != rule:
            continue
        at = [what for (a, b, c, d), what in sends if (a, b) <= (line, col) <= (c, d)]
        text = lines[line - 1] if line <= len(lines) else ""
        declared = rule == "AGENT-OVERSIZED-HANDOFF" and (
            DECLARED_HANDOFF.match(text[col - 1 :]) is not None or "handoffs=" in text[: col - 1]
        )
        beyond += declared or (at and "bounded" not in at) or (not at and held)
    return beyond


TARGETS = {"positive": 0.95, "negative": 1.0, "control": 0.95}

# The test suite checks every rule example and each fixture folder of up to this much source; the
# larger ones (fixtures/memory, memory_review, memory_dev, stores, tools, prompts, frameworks_project:
# 7 of 35 folders, more than half the source, of rules whose examples the suite checks anyway) would
# double the suite's share, and are counted by `benchmarks/metamorphic.py`, which checks every case.
SUITE_MAX_BYTES = 20_000


def in_suite(case: Case) -> bool:
    return case.rule is not None or _size(case) <= SUITE_MAX_BYTES
