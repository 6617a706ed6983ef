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
@one_line_errors
def report_command(output: Path | None, results: Path | None, since: str | None) -> None:
    """Write the test history as one self-contained HTML page: no network, inline CSS, JS and SVG charts."""
    history = read_history(results, since)
    if output is None:
        from open_agent_compiler.tasks.project import STATE_DIR, find_project

        output = find_project(Path.cwd()).root / STATE_DIR / "report.html"
    absolute = Path(os.path.abspath(output))
    data = render(history).encode("utf-8")
    fsio.write_file(fsio.trusted_root(absolute), str(absolute), data, show=str(output))
    click.echo(f"oac report: wrote {output} ({len(data) / 1024:.0f} KiB; {history.records} records, "
               f"{len(history.tests)} tests, {len(history.runs)} runs)")
