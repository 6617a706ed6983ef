"""`oac results`: commands over JSONL results files. `oac results merge` combines the results of several runs
(the shards of a CI matrix); the group's own default (no subcommand) belongs to the report commands."""

import json
import os
import sys
from pathlib import Path

import click

from open_agent_compiler import fsio
from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.merge import merge
from open_agent_compiler.testing.results import read_records


@click.group("results", invoke_without_command=True)
@click.pass_context
def results_group(ctx: click.Context) -> None:
    """Work with JSONL results files."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@results_group.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the merged records here (JSONL).")
@one_line_errors
def merge_command(files: tuple[Path, ...], output: Path | None) -> None:
    """Merge FILES (e.g. one per shard) and print the combined summary. Exit 1 when a test failed or the same
    key both passed and failed (a conflict), else 0."""
    for path in files:
        if not path.is_file():
            raise OacError(f"results file {path} does not exist")
    merged = merge(list(read_records(path)) for path in files)
    if output is not None:
        data = "".join(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for record in merged.records).encode("utf-8", "backslashreplace")
        absolute = Path(os.path.abspath(output))
        fsio.write_file(fsio.trusted_root(absolute), str(absolute), data, show=str(output))
    for conflict in merged.conflicts:
        print(f"oac: conflict: {conflict.test_id} (config {conflict.config}) passed and failed under the same key "
              f"{conflict.key}", file=sys.stderr)
    print(merged.summary())
    if merged.failures:
        print("Failures:")
        for test_id, message in merged.failures:
            print(f"  - {test_id}: {' '.join(message.split())}")
    sys.exit(1 if merged.failures or merged.conflicts else 0)
