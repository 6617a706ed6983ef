"""`oac state`: where green state lives (local sqlite, shared PostgreSQL), how much it holds, pruning, and carrying
the shared outcomes in a file (export, import)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.tasks.shared_store import parse_age

if TYPE_CHECKING:
    from open_agent_compiler.tasks.shared_store import SharedStore


@click.group("state")
def state_group() -> None:
    """Green state: `status` (where it lives, how many keys it holds), `prune`, `export` and `import`."""


@state_group.command("status")
@click.option("--format", "format_", type=click.Choice(["text", "json"]), default="text", help="Output format.")
@one_line_errors
def status_command(format_: str) -> None:
    """Show where the state lives and how many keys and tests it holds."""
    from open_agent_compiler.tasks.state_admin import local_status, shared_store, state_options

    options = state_options(Path.cwd())
    report = {"local": local_status(options.state_db), "shared": None}
    store = shared_store(options)
    if store is not None:
        try:
            report["shared"] = store.status()
        finally:
            store.close()
    if format_ == "json":
        click.echo(json.dumps(report, indent=2))
        return
    local = report["local"]
    click.echo(f"local: {local['where']}" + (f" ({local['tasks']} tests, {local['green']} green, "
                                             f"{local['unpushed']} results not yet pushed)" if local["exists"]
                                             else " (not created yet)"))
    shared = report["shared"]
    if shared is None:
        click.echo("shared: none (set [tool.oac] state or OAC_STATE_URL to a postgresql:// URL)")
    else:
        click.echo(f"shared: {shared['where']} project {shared['project']!r}, schema v{shared['schema_version']}: "
                   f"{shared['keys']} keys of {shared['tests']} tests ({shared['passed']} passed, "
                   f"{shared['failed']} failed), newest {shared['newest'] or '-'}")


@state_group.command("prune")
@click.option("--older-than", "older_than", required=True, help="Age, e.g. 30d, 12h, 90m (a bare number is days).")
@one_line_errors
def prune_command(older_than: str) -> None:
    """Forget shared outcomes recorded longer ago than --older-than."""
    from open_agent_compiler.errors import OacError
    from open_agent_compiler.tasks.state_admin import shared_store, state_options

    seconds = parse_age(older_than)
    store = shared_store(state_options(Path.cwd()))
    if store is None:
        raise OacError("no shared state to prune: set [tool.oac] state or OAC_STATE_URL (local state is pruned "
                       "by deleting .oac/)")
    try:
        removed = store.prune(seconds)
    finally:
        store.close()
    click.echo(f"oac state prune: removed {removed} outcomes older than {older_than} from {store.where}")


def _required_store() -> "SharedStore":
    from open_agent_compiler.errors import OacError
    from open_agent_compiler.tasks.state_admin import shared_store, state_options

    store = shared_store(state_options(Path.cwd()))
    if store is None:
        raise OacError("no shared state: set [tool.oac] state or OAC_STATE_URL to a postgresql:// URL")
    return store


@state_group.command("export")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The JSONL file to write (replaced atomically).")
@click.option("--since", default=None, help="Only outcomes that finished within this age, e.g. 30d (s, m, h, d, w).")
@one_line_errors
def export_command(output: Path, since: str | None) -> None:
    """Write every shared outcome of the project (test, key, pass/fail, finish time, files) to a JSONL file."""
    from open_agent_compiler.tasks.state_transfer import export_outcomes

    since_s = parse_age(since) if since is not None else None
    store = _required_store()
    try:
        count = export_outcomes(store, output, since_s)
    finally:
        store.close()
    click.echo(f"oac state export: wrote {count} outcomes of {store.where} to {output}")


@state_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@one_line_errors
def import_command(files: tuple[Path, ...]) -> None:
    """Push the outcomes of `oac state export` files: under each key the run that finished last wins."""
    from open_agent_compiler.tasks.state_transfer import read_outcomes

    outcomes = read_outcomes(list(files))  # every line checked before anything is pushed
    store = _required_store()
    try:
        store.push(outcomes)
    finally:
        store.close()
    click.echo(f"oac state import: {len(outcomes)} outcomes from {len(files)} files into {store.where}")
