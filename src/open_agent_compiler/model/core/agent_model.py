"""Agent, template and config classes under the module path registries written for the public package import."""

from open_agent_compiler.model.core.agent import (
    AgentDefinition,
    AgentHeader,
    AgentMode,
    AgentToolPermissions,
    AgentVariant,
    AgentWorkflowStep,
    MCPServerDefinition,
    ModelParameters,
    TodoMode,
    ToolFormat,
)
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree

ToolPermissions = AgentToolPermissions

__all__ = [
    "AgentDefinition", "AgentHeader", "AgentMode", "AgentToolPermissions", "AgentVariant", "AgentWorkflowStep",
    "CompilationConfig", "MCPServerDefinition", "ModelParameters", "TemplateSlot", "TemplateTree", "TodoMode",
    "ToolFormat", "ToolPermissions",
]
