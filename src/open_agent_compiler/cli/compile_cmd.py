"""`oac compile`: compile one config for one or more dialects into a target directory."""

import os
import sys
from pathlib import Path
from typing import Any

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.compiler.dialects import DEFAULT_DIALECT, DIALECTS, get_dialect
from open_agent_compiler.compiler.manifest import MANIFEST_PATH
from open_agent_compiler.compiler.writer import CHANGED, NOT_OURS, WriteReport, write_output
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.tasks.settings import ProjectSettings, find_project
from open_agent_compiler.tasks.compile_tasks import CompileEntry, compile_entries_through_doit, entries_from_pyproject

ALL = "all"
# Said at run time, because open-agent-compiler 1.16.5's --clean deletes the whole target directory.
CLEAN_NOTE = ("oac compile: --clean removes only files oac wrote (listed in its manifest, still unchanged), then "
              "builds; unlike open-agent-compiler 1.16.5 it never deletes the rest of the target")

# Said at run time, because 1.16.5's --native-tools also writes .opencode/tool/*.ts shims or an MCP tools server.
NATIVE_TOOLS_NOTE = ("oac compile: --native-tools changes nothing: unlike open-agent-compiler 1.16.5, oac writes no "
                     "native tool shims or tools server; tools compile as they do without the flag")


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
        click.echo(f"{wrote} {shown(rel)}" + (" (taken over: --adopt)" if rel in report.adopted else ""))
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


def foreign_files(reports: list[WriteReport]) -> int:
    """How many compiled paths hold a file oac did not write (a 1.16.5 build, a fresh clone behind the config)."""
    return sum(kept.reason == NOT_OURS for report in reports for kept in report.kept)


def refuse_stale(reports: list[WriteReport]) -> None:
    """A build left stale by files oac may not replace is never a silent exit 0: one line naming --adopt, exit 1."""
    count = foreign_files(reports)
    if count:
        click.echo(f"oac compile: {count} file(s) at compiled paths were not written by oac and still hold other "
                   f"bytes than this compile's (a build of open-agent-compiler 1.16.5, or a fresh clone whose "
                   f"{MANIFEST_PATH} is not committed): the build is stale; --adopt takes them over", err=True)
        sys.exit(1)


def _setting(project: ProjectSettings, key: str) -> Any:
    value = project.values.get(key)
    if key == "dialect" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = tuple(value)
    elif value is not None and not isinstance(value, str):
        raise OacError(f"{project.where(key)} must be a string, not {type(value).__name__}")
    if key == "dialect" and value is not None:
        for name in (value,) if isinstance(value, str) else value:
            if name not in (*DIALECTS, ALL):
                raise OacError(f"{project.where(key)}: unknown dialect {name!r} (dialects: {', '.join(DIALECTS)}, all)")
        return (value,) if isinstance(value, str) else value
    return value


def compile_request(factory: str | None, config: str | None, target: Path | None,
                    dialects: tuple[str, ...]) -> tuple[Path, str, str, Path, tuple[str, ...]]:
    """(project root, factory, config, target, dialects): the command line wins over `[tool.oac]` (found upwards
    from the current directory). A target from the table is relative to the project root."""
    project = find_project(Path.cwd())
    factory = factory or _setting(project, "factory")
    config = config or _setting(project, "config")
    if not factory:
        raise OacError("no factory given: pass FACTORY or set factory in [tool.oac] of pyproject.toml")
    if not config:
        raise OacError("no config given: pass --config or set config in [tool.oac] of pyproject.toml")
    if target is None:
        configured = _setting(project, "target")
        if not configured:
            raise OacError("no target given: pass --target or set target in [tool.oac] of pyproject.toml")
        target = project.root / configured
    return project.root, factory, config, target, dialects or _setting(project, "dialect") or ()


@click.command("compile")
@click.argument("factory", required=False)
@click.option("--config", "config_name", help="Compilation config to compile (default: [tool.oac] config).")
@click.option("--target", type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write into (usually the project root the harness runs in; default: [tool.oac] "
                   "target).")
@click.option("--dialect", "dialects", multiple=True, type=click.Choice([*DIALECTS, ALL]),
              help=f"Harness to compile for; repeat for several, or 'all' (default: [tool.oac] dialect, else "
                   f"{DEFAULT_DIALECT}).")
@click.option("--clean", is_flag=True,
              help="First take back what earlier compiles wrote for these dialects (only files listed in the "
                   "manifest and still unchanged), then build. Unlike open-agent-compiler 1.16.5, never deletes "
                   "the rest of the target.")
@click.option("--adopt", is_flag=True,
              help="Take over files at compiled paths that oac did not write (e.g. after a fresh clone) or that "
                   "were edited since: they are overwritten. Symbolic links are still left alone.")
@click.option("--native-tools", is_flag=True,
              help="Accepted for open-agent-compiler 1.16.5's command line; oac writes no native tool shims (said "
                   "at run time).")
@click.option("--dry-run", is_flag=True, help="Check and report, change nothing.")
@click.option("--check", is_flag=True,
              help="Change nothing; exit 1 listing what would change when the compiled files are not up to date "
                   "(for CI).")
@click.option("-v", "--verbose", is_flag=True, help="Also list unchanged files.")
@one_line_errors
def compile_command(factory: str | None, config_name: str | None, target: Path | None, dialects: tuple[str, ...],
                    clean: bool, adopt: bool, native_tools: bool, dry_run: bool, check: bool, verbose: bool) -> None:
    """Compile config --config of FACTORY (module:callable returning an AgentRegistry) into --target; with no
    arguments, every [[tool.oac.compile]] entry of pyproject.toml.

    Only files oac wrote are ever replaced or removed; user files, settings keys and rules stay.
    """
    project = find_project(Path.cwd())
    if not (factory or config_name or target or dialects) and project.values.get("compile"):
        factory, entries = entries_from_pyproject(project.root)  # every [[tool.oac.compile]] entry
        root = project.root
        entries = [entry.model_copy(update={"target": root / entry.target}) for entry in entries]
    else:
        root, factory, config_name, target, dialects = compile_request(factory, config_name, target, dialects)
        entries = [CompileEntry(config=config_name, dialect=name, target=target) for name in dialect_names(dialects)]
    if native_tools:
        click.echo(NATIVE_TOOLS_NOTE, err=True)
    passes = (True, False) if clean else (False,)  # --clean: take back what we wrote, then build
    if clean:
        click.echo(CLEAN_NOTE, err=True)
    if dry_run or check:
        registry = load_registry(factory, str(root))
        resolved = {config: registry.resolve_config(config) for config in dict.fromkeys(e.config for e in entries)}
        outputs = [(entry, get_dialect(entry.dialect).compile(resolved[entry.config], source_root=root))
                   for entry in entries]
        previews = [write_output(o, entry.target, dialect=o.dialect, clean=wipe, dry_run=True, adopt=adopt)
                    for wipe in passes for entry, o in outputs]
        for warning in (w for _, o in outputs for w in o.warnings):
            click.echo(f"warning: {warning}", err=True)
        for report in previews:
            print_report(report, verbose)
        if dry_run and not check and foreign_files(previews):
            click.echo("oac compile: files oac did not write are at compiled paths; --adopt takes them over", err=True)
        # stale: what a compile would write or remove, and files at compiled paths that differ from the output
        stale = sum(len(r.written) + len(r.removed) + sum(k.reason in (NOT_OURS, CHANGED) for k in r.kept)
                    for r in previews)
        if check and stale:
            click.echo(f"oac compile --check: {stale} file(s) would change or differ from the compiled output",
                       err=True)
            sys.exit(1)
        return
    warnings: list[str] = []
    # the same doit tasks `doit compile` runs (tasks.compile_tasks): unchanged, only doit's up-to-date check runs
    reports = [report for wipe in passes
               for report in compile_entries_through_doit(factory, entries, clean=wipe, adopt=adopt, root=root,
                                                          warnings=warnings)]
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    for report in reports:
        print_report(report, verbose)
    refuse_stale(reports)
