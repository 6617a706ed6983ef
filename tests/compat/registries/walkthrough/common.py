"""Small builders the walk-through registries share, written against the public package's definition API
(every field it requires is given, so the same files load on open-agent-compiler 1.16.5 and on oac)."""

from typing import Any

from open_agent_compiler.model.core.agent_model import AgentHeader
from open_agent_compiler.model.core.permissions_model import BashToolPermission
from open_agent_compiler.model.core.tools_model import ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash


def header(agent_id: str, description: str) -> AgentHeader:
    return AgentHeader(agent_id=agent_id, name=agent_id, description=description)


def bash_tool(name: str, description: str, commands: list[str], *, value: str = "allow",
              **extra: Any) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=description, usage_explanation_long=description,
                                    usage_explanation_short=name, rules=[]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission("bash", "bash", value, commands),
                                          positive_examples=[], negative_examples=[], mode_specific_rules=[]),
        **extra,
    )
