"""`oac coverage`: per agent, every grant and denial with the tests that check or exercise it (nothing runs)."""

import sys
from pathlib import Path

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.errors import OacError
from open_agent_compiler.history.views import History
from open_agent_compiler.testing.coverage import Coverage, coverage_lines


def _setting(project: object, name: str, given: str | None) -> str:
    """The option, else [tool.oac] NAME; neither is one line and exit 2."""
    if given:
        return given
    configured = project.values.get(name)  # type: ignore[attr-defined]
    if not isinstance(configured, str) or not configured:
        raise OacError(f"oac coverage needs a {name}: give it (FACTORY / --{name}) or set [tool.oac] {name}")
    return configured


def load_coverage(factory: str | None, config: str | None, dialect: str | None, history: History) -> Coverage:
    """The coverage of FACTORY's config from its definitions and `history`'s latest status per test."""
    from open_agent_compiler.model.factory import load_registry
    from open_agent_compiler.tasks.settings import find_project
    from open_agent_compiler.testing.coverage import coverage
    from open_agent_compiler.testing.discovery import discover

    project = find_project(Path.cwd())
    registry = load_registry(_setting(project, "factory", factory), str(project.root))
    resolved = registry.resolve_config(_setting(project, "config", config))
    chosen = dialect or project.values.get("dialect") or "opencode"
    if chosen not in DIALECTS:
        raise OacError(f"unknown dialect {chosen!r} (known: {', '.join(sorted(DIALECTS))})")
    statuses = {test_id: test.status for test_id, test in history.tests.items()}
    return coverage(resolved, discover(resolved), statuses, str(chosen))


@click.command("coverage")
@click.argument("factory", required=False)
@click.option("--config", "config", help="Compilation config (default: [tool.oac] config).")
@click.option("--dialect", type=click.Choice(sorted(DIALECTS)), help="Dialect whose bash matching decides which "
              "pattern a command checks (default: [tool.oac] dialect, else opencode).")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False),
              help="JSONL results file the tests' latest statuses come from (default .oac/test_results.jsonl).")
@click.option("--fail-under", "fail_under", type=click.FloatRange(0, 100), metavar="N",
              help="Exit 1 when fewer than N percent of the grants are covered.")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text", help="Table or JSON.")
@one_line_errors
def coverage_command(factory: str | None, config: str | None, dialect: str | None, results: Path | None,
                     fail_under: float | None, format_: str) -> None:
    """Which grants and denials of each agent of FACTORY's config a test checks or exercises."""
    from open_agent_compiler.cli.results_cmd import _results_and_state, read_history

    path, _ = _results_and_state(results)
    # no results yet: every test counts as "never run" (a given file that is missing is still an error)
    history = read_history(results, None) if results is not None or path.exists() else History(path=path)
    report = load_coverage(factory, config, dialect, history)
    if format_ == "json":
        click.echo(report.as_json_text())  # json.dumps(report.as_json()), each test's entry encoded once
    else:
        click.echo("\n".join(coverage_lines(report)))
    if fail_under is not None and report.percent < fail_under:
        click.echo(f"oac coverage: {report.percent:.1f}% of grants covered, under --fail-under {fail_under:g}",
                   err=True)
        sys.exit(1)
