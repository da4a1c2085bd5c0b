"""Run chatbound on real public projects, pinned by commit, and compare with the judged findings.

    python benchmarks/ecosystem/run.py [--mirror /work/.mirror] [--work /work/eco] [--only NAME]
                                       [--record]

Each project of projects.toml is laid out from its fetched bare git directory
(MIRROR/owner+name/repo) at the pinned commit into WORK/owner+name (skipped when already
laid out at that commit), and checked as a user would: `chatbound check --output-format json
--no-cache --exit-zero .` from the project's root, with no configuration of ours. The report
gives per-rule precision (right / judged) and recall (right / (right + known misses still
missed)), the findings that appeared or vanished since the judged file was recorded, the
unjudged ones (unknown, never counted right), run time per project and every error line.
`--record` rewrites judged.toml with the current findings, keeping the verdicts of those
still reported: read every appeared and vanished finding first (README.md).

Never runs in CI: it needs the snapshots, which only the `fetch` tool brings.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import judged as judged_file  # noqa: E402  (a sibling module of this script, not a package)
from judged import Finding  # noqa: E402

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

MARKER = ".ecosystem-commit"
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


def lay_out(project: Project, mirror: Path, work: Path) -> Path | str:
    """The project's tree at its pinned commit, or why it could not be laid out.

    Written blob by blob rather than with `git archive`: a snapshot lacks its largest files
    (datasets, PDFs, bundles), and those are left out instead of failing the layout.
    """
    git_dir = mirror / folder_name(project) / "repo"
    target = work / folder_name(project)
    marker = target / MARKER
    if marker.exists() and marker.read_text().strip() == project.commit:
        return target
    if not git_dir.is_dir():
        return f"no snapshot at {git_dir} (bring it with the fetch tool)"
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
        )
        for f in report["findings"]
        if not f.get("suppressed")
    ]
    unchecked = tuple(str(e.get("path", "")).removeprefix("./") for e in report.get("errors", []))
    return Outcome(project, findings, seconds, report.get("files_checked", 0), errors, True, unchecked)


def percent(value: float | None) -> str:
    return "   -" if value is None else f"{value * 100:3.0f}%"


def where(f: Finding) -> str:
    cell = f"cell {f.cell}:" if f.cell else ""
    return f"{f.project} {f.path}:{cell}{f.line} {f.rule}"


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
    lines += ["", "project                                             files findings   seconds"]
    for o in outcomes:
        state = f"{o.seconds:8.1f}" if o.ran else "  not run"
        lines.append(f"{o.project.name:50} {o.files:6} {len(o.findings):8} {state}")
    lines.append(
        f"{'total':50} {sum(o.files for o in outcomes):6} "
        f"{sum(len(o.findings) for o in outcomes):8} {sum(o.seconds for o in outcomes):8.1f}"
    )
    errors = [(o.project.name, e) for o in outcomes for e in o.errors]
    lines += ["", f"error lines: {len(errors)}", *(f"  {name}: {e}" for name, e in errors)]
    return "\n".join(lines)


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
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of fetched bare git dirs")
    parser.add_argument("--work", type=Path, default=Path("/work/eco"), help="where projects are laid out")
    parser.add_argument("--projects", type=Path, default=HERE / "projects.toml")
    parser.add_argument("--judged", type=Path, default=HERE / "judged.toml")
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

    if args.install:
        install(args.source)
    projects = [p for p in load_projects(args.projects) if not args.only or p.name in args.only]
    outcomes = []
    for project in projects:
        tree = lay_out(project, args.mirror, args.work)
        if isinstance(tree, str):
            outcomes.append(Outcome(project, [], 0.0, 0, [tree], False))
            continue
        outcomes.append(check(project, tree, args.chatbound, args.timeout))
        print(f"{project.name}: {len(outcomes[-1].findings)} findings, {outcomes[-1].seconds:.1f} s", file=sys.stderr)

    commit = tested_commit(args.source)
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


if __name__ == "__main__":
    sys.exit(main())
