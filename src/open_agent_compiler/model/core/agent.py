"""Agents: who they are, what they are told, which tools, skills and subagents they get, and their tests."""

from typing import Literal

from pydantic import Field

from open_agent_compiler.model.core.base import Frozen
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition

AgentMode = Literal["primary", "subagent", "all"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class AgentHeader(Frozen):
    agent_id: str
    name: str
    description: str | None = None
    mode: AgentMode | None = None


class AgentToolPermissions(Frozen):
    """Built-in file and MCP capabilities. Everything is denied unless switched on."""

    read: bool = False
    write: bool = False
    edit: bool = False
    mcp: bool = False


class McpServer(Frozen):
    """An MCP server the agent may use: a local command or a remote URL."""

    name: str
    command: list[str] = Field(default_factory=list)
    url: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    description: str = ""


class ModelParameters(Frozen):
    model_name: str
    temperature: float | None = None
    reasoning_effort: ReasoningEffort | None = None


class AgentDefinition(Frozen):
    header: AgentHeader
    usage_explanation_long: str = ""
    usage_explanation_short: str = ""
    system_prompt: str = ""
    skills: list[SkillDefinition] = Field(default_factory=list)
    subagents: list[AgentHeader] = Field(default_factory=list)
    extra_tools: list[ToolDefinition] = Field(default_factory=list)
    tool_permissions: AgentToolPermissions | None = None
    mcp_servers: list[McpServer] = Field(default_factory=list)
    capability_tests: list[CapabilityTest] = Field(default_factory=list)
    tool_tests: list[ToolTest] = Field(default_factory=list)
    agent_tests: list[AgentTest] = Field(default_factory=list)

    @property
    def permissions(self) -> AgentToolPermissions:
        return self.tool_permissions or AgentToolPermissions()

    def reachable_tools(self) -> list[ToolDefinition]:
        """extra_tools, then the tools of each skill's workflow steps; identical repeats dropped."""
        tools: list[ToolDefinition] = []
        for tool in [*self.extra_tools, *(t for skill in self.skills for t in skill.tools())]:
            if tool not in tools:
                tools.append(tool)
        return tools
