"""What the project pass costs on real applications: each project of the ecosystem check,
already laid out by run.py, checked cold twice back to back, with the pass off
(`--project-max-mb 0`) and as a user runs it, and the ratio of their CPU times.

    python benchmarks/ecosystem/pass_cost.py [--work DIR] [--only owner/name]

Printed per project: CPU seconds without and with the pass (both processes and their
workers), the ratio, and the findings each run reports; then the totals. The benchmark
corpus of benchmarks/scan.py is library code (the standard library and four SDKs), where the
pass is off by default; this is the code it is for.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import WORK, folder_name, load_projects  # noqa: E402  (a sibling script, not a package)

HERE = Path(__file__).resolve().parent


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def checked(root: Path, *options: str) -> tuple[float, int]:
    """(CPU seconds, findings) of one cold check of `root` (a file it cannot check exits 2 and
    still reports the others)."""
    before = children_cpu()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chatbound",
            "check",
            "--output-format",
            "json",
            "--no-cache",
            "--exit-zero",
            "-q",
            *options,
            ".",
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    findings = json.loads(done.stdout)["findings"]
    return children_cpu() - before, sum(1 for f in findings if not f.get("suppressed"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=WORK, help="where run.py laid the projects out")
    parser.add_argument("--only", help="one project, owner/name")
    args = parser.parse_args()
    totals = [0.0, 0.0, 0, 0]
    print(f"{'project':<48} {'off s':>7} {'on s':>7} {'ratio':>6} {'found off':>9} {'on':>4}")
    for project in load_projects(HERE / "projects.toml"):
        root = args.work / folder_name(project) / project.root
        if (args.only and project.name != args.only) or not root.is_dir():
            continue
        off, found_off = checked(root, "--project-max-mb", "0")
        on, found_on = checked(root)
        totals = [totals[0] + off, totals[1] + on, totals[2] + found_off, totals[3] + found_on]
        print(f"{project.name:<48} {off:7.1f} {on:7.1f} {on / off:6.2f} {found_off:9d} {found_on:4d}")
    if totals[0]:
        print(
            f"{'total':<48} {totals[0]:7.1f} {totals[1]:7.1f} {totals[1] / totals[0]:6.2f} {totals[2]:9d} {totals[3]:4d}"
        )


if __name__ == "__main__":
    main()
