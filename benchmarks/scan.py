"""How fast chatbound checks a big tree, against a bare LibCST parse and agentguard-lint.

    pip install ./analyzer/compaction '.[bench]' && python benchmarks/scan.py [--keep CORPUS_DIR]

The corpus is real Python copied into a temporary folder: this interpreter's standard
library (without its test suites) and the installed chat SDKs and frameworks (openai,
anthropic, langchain-core, llama-index-core). Files either tool skips by folder name, and
files over chatbound's size cap, are left out, so both tools see the same files.

Printed: lines/s; chatbound's cold (fresh cache) and warm (re-run) wall time as a user runs
it (`chatbound check`, a new process each); agentguard-lint's wall time on the same folder;
for the files chatbound parsed, a bare `libcst.parse_module` against chatbound's whole
per-file analysis, both timed serially in this process; the project pass's own seconds
(linking files through their imports, summarising the modules they import), from one more
cold run in this process, with the pass forced on when the corpus is above project-max-mb
(the timed runs then check one module at a time, as a user's run does); peak memory. Targets: cold <= 0.5x agentguard-lint, warm <= 5 % of
cold, analysis <= 1.2x bare parse on parsed files.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import libcst

from chatbound.run.config import DEFAULT_EXCLUDE, Settings, load_settings
from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import select_rules
from chatbound.run.runner import MAX_FILE_BYTES, MB, rule_options, rules_to_run, run

PACKAGES = ("openai", "anthropic", "langchain_core", "llama_index.core")
STDLIB_SKIP = {"test", "tests", "idlelib", "site-packages", "dist-packages", "__pycache__", "lib2to3", "turtledemo"}
AGENTGUARD_SKIP = {"dist", "build", "env", "venv", "coverage", "node_modules", "site-packages"}


def _skipped(relative: Path) -> bool:
    folders = relative.parts[:-1]
    return any(
        part.startswith(".") or part in DEFAULT_EXCLUDE or part in AGENTGUARD_SKIP or part.endswith(".egg-info")
        for part in folders
    )


def _sources() -> list[tuple[str, Path]]:
    roots = [("stdlib", Path(sysconfig.get_paths()["stdlib"]))]
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            sys.exit(f"{package} is not installed: pip install ./analyzer/compaction '.[bench]'")
        roots.append((package.replace(".", "_"), Path(list(spec.submodule_search_locations)[0])))
    return roots


def build_corpus(target: Path) -> tuple[int, int]:
    """Copy the corpus into `target`; (files, lines)."""
    files = lines = 0
    for name, root in _sources():
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root)
            if (name == "stdlib" and STDLIB_SKIP & set(relative.parts)) or _skipped(relative):
                continue
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
            destination = target / name / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
            files += 1
            lines += data.count(b"\n")
    return files, lines


def snapshot(target: Path) -> dict[str, str]:
    """A frozen copy of chatbound for the timed runs, and the environment that imports it: the
    cache key includes chatbound's code, so an edit to the working tree between the cold and
    the warm run (others commit while this runs) would make the warm run cold again."""
    import chatbound.rules
    import chatbound.version

    shutil.copytree(
        Path(chatbound.version.__file__).parent,
        target / "chatbound",
        ignore=shutil.ignore_patterns("__pycache__", "rules"),
    )
    shutil.copytree(
        Path(chatbound.rules.__file__).parent,
        target / "chatbound" / "rules",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return {**os.environ, "PYTHONPATH": str(target)}


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, int, float]:
    """(wall seconds, exit code, peak RSS in MB of the largest process in the run, CPU seconds
    of the whole process tree: less sensitive than wall time to other load on the machine)."""
    probe = (
        "import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(code, usage.ru_maxrss // 1024, usage.ru_utime + usage.ru_stime)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe, *command], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    code, peak, cpu = done.stdout.split()
    return wall, int(code), int(peak), float(cpu)


def parse_versus_analysis(files: list[Path]) -> tuple[float, float, int]:
    """Serial seconds of a bare parse and of chatbound's analysis over `files`, in this process
    (each file with the rules whose triggers it holds, as `chatbound check` runs it)."""
    rules = select_rules()
    options = rule_options(Settings())
    parse = analysis = 0.0
    failed = 0
    for path in files:
        source = path.read_bytes()
        start = time.perf_counter()
        try:
            libcst.parse_module(source)
        except Exception:
            failed += 1
        parse += time.perf_counter() - start
        applicable = rules_to_run(source, rules, options)[0]  # the pre-check, timed as part of the cold run, not here
        start = time.perf_counter()
        analyze_source(source, path.name, applicable, options, directory=str(path.parent))
        analysis += time.perf_counter() - start
    return parse, analysis, failed


def project_pass(corpus: Path, megabytes: int) -> tuple[float, int]:
    """(seconds, files whose result rests on other modules) of the project pass in a cold run
    of this process with project-max-mb at `megabytes`, summed over its worker processes: the
    timed runs are separate processes and do not say."""
    settings = load_settings([corpus])
    settings.project_max_mb = megabytes
    result = run([corpus], settings, cache=False)
    return result.project_seconds, result.linked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build (or reuse) the corpus here instead of a temporary folder")
    parser.add_argument(
        "--sample",
        type=int,
        default=400,
        help="files (of those chatbound parses) timed serially for parse versus analysis; 0: all",
    )
    args = parser.parse_args()
    agentguard = shutil.which("agentguard", path=str(Path(sys.executable).parent))
    if agentguard is None:
        sys.exit("agentguard-lint is not installed: pip install ./analyzer/compaction '.[bench]'")
    chatbound = [sys.executable, "-m", "chatbound", "check", "--exit-zero", "--output-format", "json"]

    with tempfile.TemporaryDirectory(prefix="chatbound-bench-") as temporary:
        work = args.keep or Path(temporary)
        corpus = work / "corpus"
        if not corpus.is_dir():
            corpus.mkdir(parents=True)
            build_corpus(corpus)
        files = sorted(corpus.rglob("*.py"))
        lines = sum(path.read_bytes().count(b"\n") for path in files)
        print(f"corpus: {len(files)} files, {lines:,} lines ({corpus})")
        print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

        shutil.rmtree(work / ".chatbound_cache", ignore_errors=True)
        shutil.rmtree(work / "snapshot", ignore_errors=True)
        env = snapshot(work / "snapshot")
        cold, code, cold_peak, cold_cpu = timed([*chatbound, "corpus"], work, env)
        warm, _, warm_peak, warm_cpu = timed([*chatbound, "corpus"], work, env)
        theirs, their_code, their_peak, their_cpu = timed(
            [agentguard, "--no-config", "--no-costs", "-f", "json", "corpus"], work
        )

        rules = select_rules()
        options = rule_options(Settings())
        parsed = [path for path in files if rules_to_run(path.read_bytes(), rules, options)[0]]
        parsed_lines = sum(path.read_bytes().count(b"\n") for path in parsed)
        print(f"rules: {', '.join(rule.ID for rule in rules)}")
        print(
            f"pre-check: {len(parsed)} of {len(files)} files parsed ({parsed_lines:,} lines); "
            + (
                "every rule declares TRIGGERS"
                if all(r.TRIGGERS is not None for r in rules)
                else "a rule without TRIGGERS: every file"
            )
        )
        print()
        print(
            f"chatbound cold (fresh cache)   {cold:8.2f} s  {lines / cold:10,.0f} lines/s  CPU {cold_cpu:7.1f} s  "
            f"exit {code}  peak {cold_peak} MB"
        )
        print(
            f"chatbound warm (re-run)        {warm:8.2f} s  {lines / warm:10,.0f} lines/s  CPU {warm_cpu:7.1f} s  "
            f"peak {warm_peak} MB"
        )
        print(
            f"agentguard-lint                {theirs:8.2f} s  {lines / theirs:10,.0f} lines/s  CPU {their_cpu:7.1f} s  "
            f"exit {their_code}  peak {their_peak} MB"
        )
        print()
        print(
            f"cold / agentguard-lint         {cold / theirs:8.2f}   (target <= 0.50; CPU time {cold_cpu / their_cpu:.2f})"
        )
        print(
            f"warm / cold                    {warm / cold:8.1%}   (target <= 5 %; CPU time {warm_cpu / cold_cpu:.1%})"
        )
        megabytes = sum(path.stat().st_size for path in files) / MB
        cap = Settings().project_max_mb
        seconds, linked = project_pass(corpus, max(cap, math.ceil(megabytes)))
        print(
            f"project pass                   {seconds:8.2f} s  {seconds / cold_cpu:8.1%} of cold CPU  "
            f"({linked} files rest on other modules; another cold run, in this process)"
        )
        if megabytes > cap:
            print(
                f"                               off in the runs above: {megabytes:.1f} MB of modules is above "
                f"project-max-mb = {cap}; forced on for this line"
            )
        sample = random.Random(0).sample(parsed, args.sample) if 0 < args.sample < len(parsed) else parsed
        if sample:
            sample_lines = sum(path.read_bytes().count(b"\n") for path in sample)
            parse, analysis, failed = parse_versus_analysis(sample)
            print(f"timed serially in this process: {len(sample)} of the parsed files ({sample_lines:,} lines)")
            print(
                f"bare LibCST parse              {parse:8.2f} s  {sample_lines / parse:10,.0f} lines/s  ({failed} fail to parse)"
            )
            print(f"chatbound analysis             {analysis:8.2f} s  {sample_lines / analysis:10,.0f} lines/s")
            print(
                f"analysis / bare parse          {analysis / parse:8.2f}   (target <= 1.20; rules alone "
                f"{(analysis - parse) / parse:.2f}x the parse)"
            )
        print(f"peak RSS of this process       {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
