"""`oac cassettes`: the agent tests' cassettes (beside each test's definition, and the old project-level
`cassettes/*.jsonl`): age, model, size, and which no test uses; `--prune` removes those (only files whose first
line is a cassette header, never through a symlink)."""

from pathlib import Path

import click

from open_agent_compiler import fsio
from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.tasks.settings import find_project
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.invokers.cassette import listing, locate


@click.command("cassettes")
@click.argument("factory", required=False)
@click.option("--prune", is_flag=True, help="Remove the cassettes no agent test of FACTORY uses.")
@one_line_errors
def cassettes_command(factory: str | None, prune: bool) -> None:
    """List the cassettes of FACTORY's agent tests (default: [tool.oac] factory)."""
    project = find_project(Path.cwd())
    factory = factory or project.values.get("factory")
    if not isinstance(factory, str) or not factory:
        raise OacError("oac cassettes: name the factory (module:callable) or set [tool.oac] factory")
    registry = load_registry(factory, str(project.root))
    used = set()
    for config in registry.list_configs():  # a test id's slot comes from the config's template
        for case in discover(registry.resolve_config(config)):
            if case.kind == "agent":
                where = locate(project.root, case.test, case.slot or "")
                used.add(where.found or where.rel)
    entries = list(listing(project.root, used))
    for entry in entries:
        state = "used" if entry["used"] else "unused"
        old = "  (old location)" if entry["legacy"] else ""
        click.echo(f"{entry['path']}  {state}  model={entry['model'] or '-'}  {entry['size']} bytes  "
                   f"{entry['age_days']} days old{old}")
        if prune and not entry["used"]:
            fsio.remove_file(project.root, entry["path"])
            click.echo(f"  removed {entry['path']}")
    unused = sum(not entry["used"] for entry in entries)
    click.echo(f"oac cassettes: {len(entries)} cassettes, {unused} unused" + (" (removed)" if prune and unused else ""))
