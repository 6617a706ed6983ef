"""Skill files (`<skills_dir>/<name>/SKILL.md`): one per distinct skill in the config, same text everywhere."""

from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.identifiers import check_skill
from open_agent_compiler.compiler.output import CompiledFile
from open_agent_compiler.compiler.prompt import render_skill_body
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.registry import ResolvedConfig


def config_skills(resolved: ResolvedConfig) -> list[SkillDefinition]:
    """Every skill of the config once, checked; two different skills with one name are an error."""
    found: dict[str, tuple[str, SkillDefinition]] = {}
    for agent in resolved.agents:
        for skill in agent.definition.skills:
            check_skill(skill.name, skill.description)
            first = found.setdefault(skill.name, (agent.slot, skill))
            if first[1] != skill:
                raise OacError(
                    f"config {resolved.config.name!r}: two different skills are named {skill.name!r} "
                    f"(slots {first[0]!r} and {agent.slot!r})"
                )
    return [skill for _, skill in found.values()]


def skill_files(resolved: ResolvedConfig, skills_dir: str) -> list[CompiledFile]:
    return [
        CompiledFile(
            path=f"{skills_dir}/{skill.name}/SKILL.md",
            content=render_markdown({"name": skill.name, "description": skill.description}, render_skill_body(skill)),
        )
        for skill in config_skills(resolved)
    ]
