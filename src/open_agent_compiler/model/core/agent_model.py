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
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.core.workflow_model import WorkflowStepDefinition

ToolPermissions = AgentToolPermissions

__all__ = [
    "AgentDefinition", "AgentHeader", "AgentMode", "AgentTest", "AgentToolPermissions", "AgentVariant",
    "AgentWorkflowStep", "CapabilityTest", "CompilationConfig", "MCPServerDefinition", "ModelParameters",
    "SkillDefinition", "TemplateSlot", "TemplateTree", "TodoMode", "ToolDefinition", "ToolFormat", "ToolPermissions",
    "ToolTest", "WorkflowStepDefinition",
]
