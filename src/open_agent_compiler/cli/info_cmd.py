"""`oac info`: what a registry holds (configs, templates, agents, mock profiles) and the known dialects."""

from pathlib import Path

import click

from open_agent_compiler.cli.errors import one_line_errors
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.tasks.settings import find_project
from open_agent_compiler.model.registry import AgentRegistry


def registry_lines(registry: AgentRegistry) -> list[str]:
    lines = ["configs:"]
    for config in registry.list_compilation_configs():
        postfix = f", postfix {config.postfix!r}" if config.postfix else ""
        overrides = ", ".join(f"{slot}={agent}" for slot, agent in config.slot_overrides.items())
        lines.append(f"  {config.name}: template {config.template_name}{postfix}"
                     + (f", overrides {overrides}" if overrides else ""))
    lines.append("templates:")
    for template in registry.templates():
        slots = ", ".join(f"{slot.name}={slot.default_agent_id}" for slot in template.slots)
        lines.append(f"  {template.name}: {slots or 'no slots'}")
    lines.append("agents:")
    for agent in registry.registered_agents():
        model = agent.model_parameters.model_name if agent.model_parameters else "default model"
        also = f" as {agent.registry_id}" if agent.registry_id != agent.agent_id else ""
        lines.append(f"  {agent.name} (id {agent.agent_id}, {model}){also}")
    lines.append("mock profiles:")
    for profile in registry.mock_profiles():
        lines.append(f"  {profile.name}: {', '.join(profile.responses) or 'no tools'}")
    return lines


def dialect_lines() -> list[str]:
    return ["dialects:"] + [
        f"  {name}: agents in {dialect.agents_dir}/*{dialect.agent_suffix}, skills in {dialect.skills_dir}/"
        for name, dialect in DIALECTS.items()
    ]


@click.command("info")
@click.argument("factory", required=False)
@click.option("--dialects", "show_dialects", is_flag=True, help="Also list the dialects oac compiles for.")
@one_line_errors
def info_command(factory: str | None, show_dialects: bool) -> None:
    """Show what FACTORY (module:callable; default: [tool.oac] factory) registers; without any, list the dialects."""
    project = find_project(Path.cwd())
    if factory is None:
        configured = project.values.get("factory")
        if configured is not None and not isinstance(configured, str):
            raise OacError(f"{project.where('factory')} must be a string, not {type(configured).__name__}")
        factory = configured or None
    lines = registry_lines(load_registry(factory, str(project.root))) if factory else []
    if show_dialects or not factory:
        lines += dialect_lines()
    click.echo("\n".join(lines))
