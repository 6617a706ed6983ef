"""Skill classes under the module path registries written for the public package import."""

from open_agent_compiler.model.core.skill import SkillDefinition, SkillExample, WorkflowStep

__all__ = ["SkillDefinition", "SkillExample", "WorkflowStep"]
