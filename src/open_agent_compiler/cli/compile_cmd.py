"""`oac compile`: compile one config for one or more dialects into a target directory."""

import os
from pathlib import Path

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, DIALECTS, get_dialect
from open_agent_compiler.compiler.writer import WriteReport, write_output
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.tasks.compile_tasks import compile_through_doit

ALL = "all"


def dialect_names(chosen: tuple[str, ...]) -> list[str]:
    """The dialects to compile, in table order when 'all' is among them, else as given (repeats dropped)."""
    if ALL in chosen:
        return list(DIALECTS)
    return list(dict.fromkeys(chosen or (DEFAULT_DIALECT,)))


def print_report(report: WriteReport, verbose: bool) -> None:
    wrote, removed = ("would write", "would remove") if report.dry_run else ("wrote", "removed")

    def shown(rel: str) -> str:
        return os.path.join(report.target, rel)

    for rel in report.written:
        click.echo(f"{wrote} {shown(rel)}")
    for rel in report.removed:
        click.echo(f"{removed} {shown(rel)}")
    for kept in report.kept:
        click.echo(f"kept {shown(kept.path)} ({kept.reason})")
    if verbose:
        for rel in report.unchanged:
            click.echo(f"unchanged {shown(rel)}")
    click.echo(
        f"oac compile: {report.dialect} -> {report.target}: written={len(report.written)} "
        f"unchanged={len(report.unchanged)} removed={len(report.removed)} kept={len(report.kept)}"
        + (" (dry run: nothing changed)" if report.dry_run else "")
    )


@click.command("compile")
@click.argument("factory")
@click.option("--config", "config_name", required=True, help="Compilation config to compile.")
@click.option("--target", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write into (usually the project root the harness runs in).")
@click.option("--dialect", "dialects", multiple=True, type=click.Choice([*DIALECTS, ALL]),
              help=f"Harness to compile for; repeat for several, or 'all' (default {DEFAULT_DIALECT}).")
@click.option("--clean", is_flag=True,
              help="Take back what earlier compiles wrote for these dialects (only files still unchanged) and "
                   "write nothing.")
@click.option("--dry-run", is_flag=True, help="Check and report, change nothing.")
@click.option("-v", "--verbose", is_flag=True, help="Also list unchanged files.")
@one_line_errors
def compile_command(factory: str, config_name: str, target: Path, dialects: tuple[str, ...], clean: bool,
                    dry_run: bool, verbose: bool) -> None:
    """Compile config --config of FACTORY (module:callable returning an AgentRegistry) into --target.

    Only files oac wrote are ever replaced or removed; user files, settings keys and rules stay.
    """
    resolved = load_registry(factory).resolve_config(config_name)
    outputs = [get_dialect(name).compile(resolved, source_root=Path.cwd()) for name in dialect_names(dialects)]
    previews = [write_output(o, target, dialect=o.dialect, clean=clean, dry_run=True) for o in outputs]
    if dry_run:
        for report in previews:
            print_report(report, verbose)
        return
    for report in compile_through_doit(factory, config_name, dialect_names(dialects), target, clean=clean):
        print_report(report, verbose)  # the same doit tasks `doit compile` runs (tasks.compile_tasks)
