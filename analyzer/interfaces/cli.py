"""The command line: wires options to the runner and the reporters, nothing more."""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from pathlib import Path

import click

from chatbound.findings import Finding, Severity
from chatbound.interfaces.reporters.text import summary
from chatbound.run.cache import CACHE_DIR, clean
from chatbound.run.config import ConfigError, Settings, load_settings
from chatbound.run.registry import all_rules, rule_by_id, unknown_codes
from chatbound.run.runner import RunResult, plain_warnings, run
from chatbound.version import __version__

FORMATS = ("text", "concise", "json", "sarif", "github")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: tuple[str, ...]) -> list[str]:
    codes = [c.strip().upper() for v in values for c in v.split(",") if c.strip()]
    bad = unknown_codes(codes)
    if bad:
        raise click.UsageError(f"unknown rule or prefix {bad[0]!r} (see `chatbound rules`)")
    return codes


def _patterns(values: tuple[str, ...]) -> list[str]:
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def _colour(stream) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _settings(paths: list[Path], config: Path | None, options: bool = True, **overrides) -> Settings:
    try:
        settings = load_settings(paths, config, options)
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    for key, value in overrides.items():
        if value:
            setattr(settings, key, value)
    return settings


def _statistics(findings: list[Finding]) -> str:
    counts = Counter(f.rule_id for f in findings)
    lines = []
    for rule_id, count in counts.most_common():
        rule = rule_by_id(rule_id)
        lines.append(f"{count:>5}  {rule_id:<28} [{rule.SEVERITY.label}] {rule.SUMMARY}")
    return "\n".join(lines) + ("\n" if lines else "")


def _without_baselined(findings: list[Finding], path: Path) -> list[Finding]:
    from chatbound.run.baseline import BaselineError, new_findings, read_baseline

    try:
        return new_findings(findings, read_baseline(path))
    except BaselineError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def _adopt(result: RunResult, baseline: Path | None, add_noqa: bool, root: Path) -> int:
    """`--write-baseline` / `--add-noqa`: record or comment the findings instead of reporting."""
    from chatbound.run.baseline import write_baseline

    errors = list(result.errors)
    if baseline:
        try:
            write_baseline(baseline, result.active, root)
            click.echo(f"Wrote {len(result.active)} findings to {baseline}.", err=True)
        except OSError as exc:
            errors.append(f"cannot write {baseline}: {exc.strerror or exc}")
    if add_noqa:
        from chatbound.run import noqa  # LibCST checks each edited file: loaded only here

        added = noqa.add_noqa(result.active)
        errors += added.errors
        for warning in added.warnings:
            click.echo(f"warning: {warning}", err=True)
        comments = f"{added.added} ignore comment{'s' if added.added != 1 else ''}"
        click.echo(f"Added {comments} to {added.files} file{'s' if added.files != 1 else ''}.", err=True)
    for error in errors[len(result.errors) :]:
        click.echo(f"error: {error}", err=True)
    return EXIT_ERROR if errors else EXIT_OK


def exit_code(result: RunResult, fail_on: Severity, exit_zero: bool) -> int:
    if result.errors:
        return EXIT_ERROR
    if not exit_zero and any(f.severity >= fail_on for f in result.active):
        return EXIT_FINDINGS
    return EXIT_OK


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="chatbound")
def main() -> None:
    """Find chat code that pays for its whole history on every model call."""
    plain_warnings()


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule ids or prefixes to run (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule ids or prefixes to skip (comma-separated).")
@click.option("--exclude", multiple=True, help="Replace the exclude patterns (gitignore syntax).")
@click.option("--extend-exclude", multiple=True, help="Add exclude patterns.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too.")
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--output-file", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of findings.")
@click.option("--fail-on", type=click.Choice(["low", "medium", "high"]), help="Lowest severity that fails the run.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Read settings from this TOML file.")
@click.option("--show-suppressed", is_flag=True, help="Also list findings silenced by `# chatbound: ignore`.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no warnings.")
@click.option(
    "--baseline",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Report only findings not in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Record the current findings in this baseline file.",
)
@click.option("--add-noqa", is_flag=True, help="Write `# chatbound: ignore[ID]` comments for the current findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes (bound what is sent; the stored history is untouched).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, apply unsafe fixes too.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache (.chatbound_cache/).")
@click.option(
    "--no-notebooks", is_flag=True, help="Skip Jupyter notebooks (.ipynb); `notebooks = false` in the config."
)
@click.option(
    "--project-max-mb",
    type=click.IntRange(min=0),
    help="Link modules through their imports in trees of up to this many MB of modules (default 8; 0: never).",
)
def check(
    paths,
    select,
    ignore,
    exclude,
    extend_exclude,
    force_exclude,
    output_format,
    output_file,
    statistics,
    fail_on,
    exit_zero,
    config,
    show_suppressed,
    quiet,
    baseline,
    write_baseline,
    add_noqa,
    fix,
    unsafe_fixes,
    diff,
    no_cache,
    no_notebooks,
    project_max_mb,
) -> None:
    """Check PATHS (default: the current directory)."""
    paths = list(paths) or [Path(".")]
    settings = _settings(
        paths,
        config,
        options=False,  # checked by the run when it loads the rules
        select=_codes(select),
        ignore=_codes(ignore),
        exclude=_patterns(exclude),
        extend_exclude=_patterns(extend_exclude),
        fail_on=fail_on and Severity.parse(fail_on),
    )
    settings.notebooks = settings.notebooks and not no_notebooks
    if project_max_mb is not None:
        settings.project_max_mb = project_max_mb
    try:
        result = run(paths, settings, force_exclude=force_exclude, cache=not no_cache, progress=True)
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    fixes = None
    if fix or diff:
        from chatbound.run.fixing import fix_messages, fix_run

        result, fixes = fix_run(
            result, settings, paths, unsafe_fixes, write=not diff, force_exclude=force_exclude, cache=not no_cache
        )
        for line in fix_messages(fixes):
            click.echo(line, err=True)
        if diff:
            patch = fixes.diff()
            sys.stdout.write(patch)
            code = EXIT_ERROR if fixes.errors else exit_code(result, settings.fail_on, exit_zero)
            sys.exit(EXIT_FINDINGS if patch and code == EXIT_OK and not exit_zero else code)
    if baseline:
        result.findings = _without_baselined(result.findings, baseline)
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    if not quiet:
        for warning in result.warnings:
            click.echo(f"warning: {warning}", err=True)
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
    if write_baseline or add_noqa:
        sys.exit(_adopt(result, write_baseline, add_noqa, settings.root))

    shown = result.findings if show_suppressed else result.active
    stream = open(output_file, "w", encoding="utf-8") if output_file else sys.stdout
    try:
        if statistics:
            stream.write(_statistics(result.active))
        else:
            reporter = importlib.import_module(f"chatbound.interfaces.reporters.{output_format}")
            stream.write(reporter.render(result, shown, colour=not output_file and _colour(sys.stdout)))
            if output_format == "text" and not quiet:
                from chatbound.run.fixing import fix_summary  # fixes load only where a run reports or applies them

                stream.write(
                    ("\n" if shown else "")
                    + " ".join(filter(None, [summary(result), fix_summary(result.active, fixes)]))
                    + "\n"
                )
    finally:
        if output_file:
            stream.close()
    sys.exit(EXIT_ERROR if fixes and fixes.errors else exit_code(result, settings.fail_on, exit_zero))


@main.command("rules")
def list_rules() -> None:
    """List every rule: id, severity, what it finds."""
    for rule in all_rules():
        click.echo(f"{rule.ID:<28} {rule.SEVERITY.label:<7} {rule.SUMMARY}")


@main.command("rule")
@click.argument("rule_id")
def show_rule(rule_id: str) -> None:
    """Print a rule's documentation: its page, docs/rules/ID.md."""
    from chatbound.interfaces import docs

    rule = rule_by_id(rule_id)
    if rule is None:
        raise click.UsageError(f"unknown rule {rule_id!r} (see `chatbound rules`)")
    click.echo(docs.page(rule), nl=False)


@main.command("clean")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="The project's settings file.")
def clean_cache(config) -> None:
    """Remove the result cache (.chatbound_cache/ in the project root)."""
    settings = _settings([Path(".")], config)
    folder = settings.root / CACHE_DIR
    click.echo(f"removed {folder}" if clean(settings.root) else f"no cache at {folder}", err=True)


@main.command("lsp")
def language_server() -> None:
    """Run the language server on stdin/stdout (for editors)."""
    from chatbound.interfaces.lsp import serve

    serve()


@main.command("cost")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--turns", type=click.IntRange(min=1), default=50, show_default=True, help="Turns in the simulated session."
)
@click.option(
    "--turn-tokens",
    type=click.IntRange(min=1),
    help="Tokens of one turn (default: turn-tokens in [tool.chatbound], 400).",
)
@click.option("--price-in", type=click.FloatRange(min=0), help="Input price in $ per million tokens.")
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the growth chart of the costliest finding as SVG.",
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Read settings from this TOML file.")
def cost_command(paths, turns, turn_tokens, price_in, plot, config) -> None:
    """What each history finding costs over a simulated session, as written and bounded."""
    from chatbound.cost import tables as cost
    from chatbound.cost.projection import PROJECTED_RULES

    paths = list(paths) or [Path(".")]
    settings = _settings(paths, config, turn_tokens=turn_tokens)
    settings.select = [rule_id for rule_id in PROJECTED_RULES if rule_by_id(rule_id)] or ["NONE-"]
    result = run(paths, settings) if rule_by_id(settings.select[0]) else RunResult()
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    items = cost.costed(result.active, turns, settings.turn_tokens, settings.encoding)
    click.echo(cost.table(items, price_in))
    if items:
        click.echo("\n" + cost.chart(cost.largest(items)))
        if plot:
            try:
                plot.write_text(cost.svg(cost.largest(items)), encoding="utf-8")
            except OSError as exc:
                click.echo(f"error: cannot write {plot}: {exc.strerror or exc}", err=True)
                sys.exit(EXIT_ERROR)
            click.echo(f"\nWrote {plot}.")
    sys.exit(EXIT_ERROR if result.errors else EXIT_OK)


@main.command("verify")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--turns", type=click.IntRange(min=4), default=60, show_default=True, help="Turns in each simulated session."
)
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Read settings from this TOML file.")
def verify_command(paths, turns, config) -> None:
    """Simulate every bounded history in PATHS: does the bound hold, and keep turns whole?"""
    from chatbound.run.verification import verify_paths

    paths = list(paths) or [Path(".")]
    outcome = verify_paths(paths, _settings(paths, config), turns)
    for error in outcome.errors:
        click.echo(f"error: {error}", err=True)
    for line in outcome.lines:
        click.echo(line)
    click.echo(outcome.summary())
    sys.exit(EXIT_ERROR if outcome.errors else EXIT_FINDINGS if outcome.failed else EXIT_OK)
