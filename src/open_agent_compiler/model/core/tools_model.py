"""Tool classes under the module path registries written for the public package import."""

from open_agent_compiler.model.core.tool import (
    ScriptDefinition,
    ScriptType,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
    ToolScriptDefinition,
)

SupportedScriptTypes = ScriptType

__all__ = [
    "ScriptDefinition", "SupportedScriptTypes", "ToolDefinition", "ToolDefinitionHeader", "ToolDefinitionLogicBash",
    "ToolDefinitionLogicJson", "ToolScriptDefinition",
]
