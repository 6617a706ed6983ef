"""`oac init [DIR]`: scaffold a project that passes `oac test` and `doit test` at once — one agent, a JSON tool
with a real handler, a bash tool with a stateful callable mock, a capability, tool and two-turn agent test, the
model script, `[tool.oac]` with the project's name (its folder's, written once: the shared state's namespace),
a dodo.py and the CI workflow of docs/ci.md. It never overwrites a file: if any of them exists,
nothing is written."""

import os
import re
from pathlib import Path

import click

from open_agent_compiler import fsio
from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.cli.scaffold_files import FILES
from open_agent_compiler.errors import OacError


@click.command("init")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@one_line_errors
def init_command(directory: Path) -> None:
    """Create a starter project in DIRECTORY (default: the current one)."""
    root = Path(directory)
    present = [rel for rel in FILES if fsio.inspect(root, rel, read=False).kind != "absent"]
    if present:
        raise OacError(f"init: {root / present[0]} exists; oac init writes only into a folder without "
                       f"{', '.join(FILES)} (nothing was written)")
    project = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(os.path.abspath(root)).name).strip("-.") or "agents"
    for rel, text in FILES.items():
        fsio.write_file(root, rel, text.replace("__OAC_PROJECT__", project).encode())
        click.echo(f"wrote {root / rel}")
    where = "" if root == Path(".") else f"cd {root} && "
    click.echo(f"oac init: next: {where}oac test   (then: doit test, oac compile; see docs/tutorial.md)")
