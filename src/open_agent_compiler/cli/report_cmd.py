"""`oac report`: write the test history as one self-contained HTML file."""

import os
from pathlib import Path

import click

from open_agent_compiler import fsio
from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.cli.results_cmd import read_history
from open_agent_compiler.history.report_html import render


@click.command("report")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="HTML file to write (default: .oac/report.html of the project).")
@click.option("--results", "results", type=click.Path(path_type=Path, dir_okay=False),
              help="JSONL results file (default: [tool.oac] results, else .oac/test_results.jsonl).")
@click.option("--since", help="Only records from then on: 7d, 12h, 30m, or an ISO date/datetime.")
@click.option("--coverage", "coverage", metavar="FACTORY",
              help="Add a Coverage section: FACTORY's grants and the tests covering them (see oac coverage).")
@click.option("--config", "config", help="With --coverage: the compilation config (default: [tool.oac] config).")
@one_line_errors
def report_command(output: Path | None, results: Path | None, since: str | None, coverage: str | None = None,
                   config: str | None = None) -> None:
    """Write the test history as one self-contained HTML page: no network, inline CSS, JS and SVG charts."""
    history = read_history(results, since)
    covered = None
    if coverage is not None:
        from open_agent_compiler.cli.coverage_cmd import load_coverage

        covered = load_coverage(coverage, config, None, history).as_json()
    if output is None:
        from open_agent_compiler.tasks.project import STATE_DIR, find_project

        output = find_project(Path.cwd()).root / STATE_DIR / "report.html"
    absolute = Path(os.path.abspath(output))
    data = render(history, covered).encode("utf-8")
    fsio.write_file(fsio.trusted_root(absolute), str(absolute), data, show=str(output))
    click.echo(f"oac report: wrote {output} ({len(data) / 1024:.0f} KiB; {history.records} records, "
               f"{len(history.tests)} tests, {len(history.runs)} runs)")
