"""Run chatbound on real public projects, pinned by commit, and compare with the judged findings.

    python benchmarks/ecosystem/run.py [--mirror DIR] [--work DIR] [--only NAME] [--record]
    python benchmarks/ecosystem/run.py --batch firstsight/NAME.toml [--freeze] [--mirror DIR] [--work DIR]

Each project of projects.toml is laid out at the pinned commit into WORK/owner+name (skipped
when already laid out at that commit): from its bare git directory MIRROR/owner+name/repo when
a mirror folder is given or exists at the default place, else from a shallow fetch of that one
commit from GitHub. It is checked as a user would: `chatbound check --output-format json
--no-cache --exit-zero .` from the project's root, with no configuration of ours. The report
gives per-rule precision (right / judged) and recall (right / (right + known misses still
missed)), the findings that appeared or vanished since the judged file was recorded, the
unjudged ones (unknown, never counted right), run time per project and every error line.
`--record` rewrites judged.toml with the current findings, keeping the verdicts of those
still reported: read every appeared and vanished finding first (README.md).

`--batch` checks the projects of a first-sight batch instead and scores the findings against
what its labeller wrote down before any run (firstsight.py); `--freeze` writes its first
scored run into the batch file, and later runs are printed beside those frozen figures.

Never runs in CI: it needs the projects' code, from the network or from snapshots.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import firstsight  # noqa: E402  (sibling modules of this script, not a package)
import judged as judged_file  # noqa: E402
from judged import Finding  # noqa: E402

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

MARKER = ".ecosystem-commit"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chatbound-ecosystem"
MIRROR = CACHE / "mirror"  # used when it exists and no --mirror is given
WORK = CACHE / "projects"
CLONES = ".clones"  # below WORK: the commits fetched when there is no mirror, one bare git directory each
GITHUB = "https://github.com"
# The commit `--install` last installed, kept in the environment it went into (not in the
# shared work folder, where another checkout's install would overwrite it).
INSTALLED = Path(sys.prefix) / ".chatbound-ecosystem-installed"


@dataclass(frozen=True)
class Project:
    name: str  # owner/name on GitHub
    commit: str
    why: str
    root: str = ""  # the folder to check, when the repository holds one application among other things


@dataclass
class Outcome:
    project: Project
    findings: list[Finding]
    seconds: float
    files: int
    errors: list[str]  # one line each: a file chatbound could not check, or anything on stderr
    ran: bool
    unchecked: tuple[str, ...] = ()  # paths chatbound reported it could not check


def load_projects(path: Path) -> list[Project]:
    data = tomllib.loads(path.read_text())
    return [Project(p["name"], p["commit"], p["why"], p.get("root", "")) for p in data["project"]]


def folder_name(project: Project) -> str:
    return project.name.replace("/", "+")


def lay_out(project: Project, mirror: Path | None, work: Path, origin: str = GITHUB) -> Path | str:
    """The project's tree at its pinned commit, or why it could not be laid out.

    With no mirror, the commit is first fetched from `origin` into a bare git directory of the
    work folder, so both ways write the same tree. Written blob by blob rather than with `git
    archive` or a checkout: a snapshot lacks its largest files (datasets, PDFs, bundles), and
    those are left out instead of failing the layout; no `.git` lands in the tree either, which
    would change where chatbound stops looking for dependency files and .gitignore.
    """
    target = work / folder_name(project)
    marker = target / MARKER
    if marker.exists() and marker.read_text().strip() == project.commit:
        return target
    if mirror is None:
        mirror = work / CLONES
        failed = clone(project, mirror / folder_name(project) / "repo", origin)
        if failed:
            return failed
    git_dir = mirror / folder_name(project) / "repo"
    if not git_dir.is_dir():
        return f"no snapshot at {git_dir} (without --mirror the commit is fetched from GitHub)"
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", project.commit], capture_output=True)
    if listing.returncode != 0:
        return f"git ls-tree {project.commit[:12]} failed: {listing.stderr.decode(errors='replace').strip()}"
    blobs = []  # (sha, path) of regular files; symlinks and submodules are left out
    for entry in listing.stdout.split(b"\0"):
        if entry:
            meta, path = entry.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                blobs.append((sha, path.decode(errors="surrogateescape")))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"], input=b"".join(sha + b"\n" for sha, _ in blobs), capture_output=True, check=True
    ).stdout
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    at = 0
    for _, path in blobs:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        at = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_bytes(batch[at : at + size])
        at += size + 1
    marker.write_text(project.commit + "\n")
    return target


def clone_commands(project: Project, git_dir: Path, origin: str = GITHUB) -> list[list[str]]:
    """A bare git directory holding only the pinned commit: GitHub serves a commit by its id."""
    return [
        ["git", "init", "-q", "--bare", str(git_dir)],
        ["git", f"--git-dir={git_dir}", "fetch", "-q", "--depth", "1", f"{origin}/{project.name}", project.commit],
    ]


def clone(project: Project, git_dir: Path, origin: str = GITHUB) -> str:
    """Fetch the pinned commit into `git_dir` (kept when it already holds it); why not, or ""."""
    have = ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{project.commit}^{{commit}}"]
    if git_dir.is_dir() and subprocess.run(have, capture_output=True, check=False).returncode == 0:
        return ""
    for command in clone_commands(project, git_dir, origin):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"fetching {project.name} at {project.commit[:12]} failed: {done.stderr.strip()}"
    return ""


def check(project: Project, tree: Path, chatbound: str, timeout: float) -> Outcome:
    root = tree / project.root
    command = [chatbound, "check", "--output-format", "json", "--no-cache", "--exit-zero", "."]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(project, [], time.perf_counter() - start, 0, [f"timed out after {timeout:.0f} s"], False)
    seconds = time.perf_counter() - start
    stderr = [line for line in done.stderr.splitlines() if line.strip()]
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return Outcome(project, [], seconds, 0, stderr or [f"exit {done.returncode}, no JSON report"], False)
    errors = [f"{e.get('path')}: {e.get('message')}" for e in report.get("errors", [])]
    errors += [line for line in stderr if not any(line.endswith(e) for e in errors)]
    findings = [
        Finding(
            project=project.name,
            rule=f["rule_id"],
            path=f["path"].removeprefix("./"),
            line=f["line"],
            fingerprint=f["fingerprint"],
            end_line=f.get("end_line") or f["line"],
            message=f["message"],
            cell=f.get("cell") or 0,
            related=tuple(
                (r["path"].removeprefix("./"), r["line"], r.get("end_line") or r["line"])
                for r in f.get("related", [])
                if r.get("path") and not r.get("cell")
            ),
        )
        for f in report["findings"]
        if not f.get("suppressed")
    ]
    unchecked = tuple(str(e.get("path", "")).removeprefix("./") for e in report.get("errors", []))
    return Outcome(project, findings, seconds, report.get("files_checked", 0), errors, True, unchecked)


def percent(value: float | None) -> str:
    return "   -" if value is None else f"{value * 100:3.0f}%"


def where(f: Finding) -> str:
    return f"{f.project} {f.path}:{cell(f)}{f.line} {f.rule}"


def cell(f: Finding) -> str:
    return f"cell {f.cell}:" if f.cell else ""


def render(outcomes: list[Outcome], comparison: judged_file.Comparison, commit: str) -> str:
    lines = [f"chatbound {commit}", "", "rule                         right wrong unknown misses precision recall"]
    for rule, s in comparison.scores.items():
        lines.append(
            f"{rule:28} {s.right:5} {s.wrong:5} {s.unknown:7} {s.misses:6} {percent(s.precision):>9} {percent(s.recall):>6}"
        )
    total = judged_file.RuleScore(
        *(sum(getattr(s, a) for s in comparison.scores.values()) for a in ("right", "wrong", "unknown", "misses"))
    )
    lines.append(
        f"{'all rules':28} {total.right:5} {total.wrong:5} {total.unknown:7} {total.misses:6} "
        f"{percent(total.precision):>9} {percent(total.recall):>6}"
    )
    sections = [
        ("appeared since the recorded run", [f"{where(f)}: {f.message}" for f in comparison.appeared]),
        (
            "vanished since the recorded run",
            [f"{where(f)} [{f.verdict or 'unjudged'}] {f.reason}" for f in comparison.vanished],
        ),
        ("unjudged (unknown)", [f"{where(f)}: {f.message}" for f in comparison.unjudged]),
        (
            "known misses now caught (judge the finding, then drop the miss)",
            [f"{where(f)} covers the miss at line {m.line}: {m.reason}" for m, f in comparison.caught],
        ),
    ]
    for title, items in sections:
        lines += ["", f"{title}: {len(items)}", *(f"  {item}" for item in items)]
    return "\n".join(lines + render_runs(outcomes))


def render_runs(outcomes: list[Outcome]) -> list[str]:
    """Run time, file and finding count per project, then every error line."""
    lines = ["", "project                                             files findings   seconds"]
    for o in outcomes:
        state = f"{o.seconds:8.1f}" if o.ran else "  not run"
        lines.append(f"{o.project.name:50} {o.files:6} {len(o.findings):8} {state}")
    lines.append(
        f"{'total':50} {sum(o.files for o in outcomes):6} "
        f"{sum(len(o.findings) for o in outcomes):8} {sum(o.seconds for o in outcomes):8.1f}"
    )
    errors = [(o.project.name, e) for o in outcomes for e in o.errors]
    return lines + ["", f"error lines: {len(errors)}", *(f"  {name}: {e}" for name, e in errors)]


def render_batch(
    batch: firstsight.Batch, result: firstsight.Result, outcomes: list[Outcome], commit: str, projects_run: set[str]
) -> str:
    """The frozen first-sight figures (or this run's, when it is the one being frozen), this
    run's beside them, what they missed and got wrong, and what moved since first sight."""
    info, frozen = batch.info, batch.first_sight
    labelled = f"labelled {info.get('labelled', '?')} at chatbound {info.get('chatbound_commit', '?')}"
    lines = [f"batch {info.get('name', '')}: {labelled}", f"chatbound {commit}"]
    if frozen:
        lines += [
            "",
            f"first sight (frozen: chatbound {frozen['chatbound_commit']} on {frozen['date']})",
            *score_table(*firstsight.frozen_scores(frozen)),
            "",
            "this run",
        ]
    else:
        lines += ["", "first sight (this run, frozen now)"]
    lines += score_table(result.scores, result.total)
    wrong = [f for f, match in result.marks if match == "wrong"]
    sections = [
        (
            "missed expectations",
            [f"{e.project} {e.rule} {e.path}:{e.lines[0]}-{e.lines[1]}: {e.reason}" for e in result.missed],
        ),
        (
            "wrong (not written down before the run)",
            [f"{f.project} {f.rule} {f.path}:{cell(f)}{f.line}: {f.message[:90]}" for f in wrong],
        ),
    ]
    if frozen:
        appeared, vanished = firstsight.since(frozen, result.marks, projects_run)
        sections += [
            ("appeared since first sight", [f"{where(f)} [{match}]: {f.message[:90]}" for f, match in appeared]),
            ("vanished since first sight", [f"{where(f)} [was {match}]: {f.message[:90]}" for f, match in vanished]),
        ]
    for title, items in sections:
        lines += ["", f"{title}: {len(items)}", *(f"  {item}" for item in items)]
    not_run = [o.project.name for o in outcomes if not o.ran]
    if not_run:
        lines += ["", f"not run, left out of the score: {', '.join(not_run)}"]
    return "\n".join(lines + render_runs(outcomes))


def score_table(scores: dict[str, firstsight.Score], total: firstsight.Score) -> list[str]:
    lines = ["rule                         expected matched right wrong borderline precision recall"]
    for rule, s in [*scores.items(), ("all rules", total)]:
        lines.append(
            f"{rule:28} {s.expected:8} {s.matched:7} {s.right:5} {s.wrong:5} {s.borderline:10} "
            f"{percent(s.precision):>9} {percent(s.recall):>6}"
        )
    return lines


def chatbound_commit(source: Path) -> str:
    done = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def install(source: Path) -> None:
    """Install the engine and the analyzer of `source`'s HEAD into this interpreter's
    environment from a clean export, so the numbers belong to that commit and the checkout
    gets no build folders."""
    export = Path(sys.prefix) / ".chatbound-src"
    shutil.rmtree(export, ignore_errors=True)
    export.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(source), "archive", "HEAD"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(export)], input=archive, check=True)
    packages = [str(export / "analyzer" / "compaction"), str(export)]
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--no-deps", "--force-reinstall", *packages], check=True)
    subprocess.run([*pip, *packages], check=True)  # dependencies the commit added
    INSTALLED.write_text(chatbound_commit(source) + "\n")


def tested_commit(source: Path) -> str:
    """The commit `--install` last installed; the source's HEAD, marked unverified, otherwise."""
    head = chatbound_commit(source)
    if not INSTALLED.exists():
        return f"{head} (not installed by --install: unverified)"
    installed = INSTALLED.read_text().strip()
    return installed if installed == head else f"{installed} (installed; {source} is now at {head})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirror",
        type=Path,
        help=f"folder of bare git dirs MIRROR/owner+name/repo (default "
        f"{MIRROR} when it exists; else each pinned commit is fetched from GitHub)",
    )
    parser.add_argument("--work", type=Path, default=WORK, help="where projects are laid out")
    parser.add_argument("--projects", type=Path, default=HERE / "projects.toml")
    parser.add_argument("--judged", type=Path, default=HERE / "judged.toml")
    parser.add_argument("--batch", type=Path, help="score a first-sight batch (firstsight/NAME.toml) instead")
    parser.add_argument("--freeze", action="store_true", help="write the batch's first scored run into it")
    parser.add_argument(
        "--chatbound",
        default=str(Path(sys.executable).with_name("chatbound")),
        help="the chatbound executable to run (install the commit under test first)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=HERE.parent.parent,
        help="the chatbound checkout that executable was installed from (for the commit)",
    )
    parser.add_argument(
        "--install", action="store_true", help="first install the chatbound of --source's HEAD into this environment"
    )
    parser.add_argument("--only", action="append", default=[], help="check only this project (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per project")
    parser.add_argument("--record", action="store_true", help="write the current findings into the judged file")
    args = parser.parse_args(argv)
    if args.freeze and not args.batch:
        parser.error("--freeze needs --batch")
    if args.record and args.batch:
        parser.error("--record writes the judged file; a batch is frozen with --freeze")

    if args.install:
        install(args.source)
    commit = tested_commit(args.source)
    batch = firstsight.load(args.batch) if args.batch else None
    refused = refusal(args.batch, batch, args.freeze, commit) if batch else ""
    if refused:
        print(refused, file=sys.stderr)
        return 2
    mirror = args.mirror or (MIRROR if MIRROR.is_dir() else None)
    projects = [p for p in load_projects(args.batch or args.projects) if not args.only or p.name in args.only]
    outcomes = []
    for project in projects:
        tree = lay_out(project, mirror, args.work)
        if isinstance(tree, str):
            outcomes.append(Outcome(project, [], 0.0, 0, [tree], False))
            continue
        outcomes.append(check(project, tree, args.chatbound, args.timeout))
        print(f"{project.name}: {len(outcomes[-1].findings)} findings, {outcomes[-1].seconds:.1f} s", file=sys.stderr)

    if batch:
        return score_batch(args.batch, batch, outcomes, commit, args.freeze)
    judged = judged_file.load(args.judged)
    current = [f for o in outcomes for f in o.findings]
    ran = {o.project.name for o in outcomes if o.ran}
    unchecked = frozenset((o.project.name, path) for o in outcomes for path in o.unchecked)
    print(render(outcomes, judged_file.compare(judged, current, ran, unchecked), commit))
    if args.record:
        run = {"chatbound_commit": commit.split()[0], "date": date.today().isoformat()}
        args.judged.write_text(judged_file.dumps(judged_file.record(judged, current, ran, run, unchecked)))
        print(f"\nrecorded {len(current)} findings in {args.judged}", file=sys.stderr)
    return 0


def refusal(path: Path, batch: firstsight.Batch, freeze: bool, commit: str) -> str:
    """Why the batch is not run (or ""): its first scored run is the frozen one, so a batch is
    scored before it is frozen only by the run that freezes it, and that run must name the
    commit it belongs to."""
    if freeze and batch.first_sight:
        return (
            f"{path} already holds its first sight (chatbound {batch.first_sight['chatbound_commit']} "
            f"on {batch.first_sight['date']}): the first-sight figures never move, run it without --freeze"
        )
    if not freeze and not batch.first_sight:
        return f"{path} has no first sight yet: its first scored run is the frozen one, so run it with --freeze"
    if freeze and " " in commit:
        return f"not frozen: the commit under test is unverified ({commit}); run with --install"
    return ""


def score_batch(path: Path, batch: firstsight.Batch, outcomes: list[Outcome], commit: str, freeze: bool) -> int:
    """Score the run against the batch and print it; with `freeze`, write it into the batch as its
    first sight, unless a project did not run (then nothing is scored or shown: the first sight
    must cover the whole batch)."""
    ran = {o.project.name for o in outcomes if o.ran}
    not_run = [o for o in outcomes if not o.ran]
    if freeze and (not_run or len(outcomes) < len(load_projects(path))):
        print("\n".join(render_runs(outcomes)))
        print(
            f"\nnot frozen, nothing scored: {len(not_run)} project(s) did not run and every project of the "
            "batch must (no --only)",
            file=sys.stderr,
        )
        return 2
    result = firstsight.score(batch, [f for o in outcomes for f in o.findings], ran)
    print(render_batch(batch, result, outcomes, commit, ran))
    if freeze:
        firstsight.freeze(path, result, {"chatbound_commit": commit, "date": date.today().isoformat()})
        print(f"\nfroze the first sight of {path}: {len(result.marks)} findings", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
