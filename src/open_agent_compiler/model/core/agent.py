"""Agents: who they are, what they are told, which tools, skills and subagents they get, and their tests."""

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.base import Frozen, Text, empty_list
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.core.workflow_model import WorkflowStepDefinition
from open_agent_compiler.model.hashing import FAITHFUL, AnyValue

AgentMode = Literal["primary", "subagent", "all"]
ToolFormat = Literal["bash", "json", "both"]
TodoMode = Literal["strict", "lazy", "none"]
# Conventional values: off, minimal, low, medium, high, xhigh; each dialect writes what its harness accepts.
ReasoningEffort = str


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


_NO_PERMISSIONS = AgentToolPermissions()


class MCPServerDefinition(Frozen):
    """An MCP server the agent may use: a local `command` or a remote `url`.

    `allowed_tools` names the server's tools the agent may call; empty means all of them.
    """

    name: str
    description: Text = ""
    url: str | None = None
    allowed_tools: list[str] = Field(default_factory=empty_list)
    command: list[str] = Field(default_factory=empty_list)
    environment: dict[str, str] = Field(default_factory=dict)


McpServer = MCPServerDefinition  # our earlier name


class ModelParameters(Frozen):
    model_name: str
    temperature: Annotated[float | None, FAITHFUL] = None  # (FAITHFUL: NaN and inf kept apart from None)
    reasoning_effort: ReasoningEffort | None = None


def render_prompt_sections(sections: list[dict[str, Any]]) -> str:
    """The system prompt sections stand for: their non-empty `content`, by `order` then position."""
    ordered = sorted(enumerate(sections), key=lambda item: (item[1].get("order", 0), item[0]))
    texts = [str(section.get("content", "")).strip() for _, section in ordered]
    return "\n\n".join(text for text in texts if text)


class AgentDefinition(Frozen):
    header: AgentHeader
    usage_explanation_long: str = ""
    usage_explanation_short: str = ""
    system_prompt: str = ""
    skills: list[SkillDefinition] = Field(default_factory=empty_list)
    subagents: list[AgentHeader] = Field(default_factory=empty_list)
    extra_tools: list[ToolDefinition] = Field(default_factory=empty_list)
    tool_permissions: AgentToolPermissions | None = None
    mcp_servers: list[MCPServerDefinition] = Field(default_factory=empty_list)
    workflow: list[WorkflowStepDefinition] = Field(default_factory=empty_list)  # the mandatory procedure, in order
    todo_mode: TodoMode = "strict"  # strict: todo list + a mark per step; lazy: list only; none: no todo list
    workspace: str | None = None  # scratch directory pattern; "{name}" becomes the compiled agent name
    preamble: str = ""  # between system_prompt and the workflow (workflow only)
    postamble: str = ""  # after the workflow (workflow only)
    # when given, they make the system_prompt
    prompt_sections: list[dict[str, AnyValue]] = Field(default_factory=empty_list)
    inline_skills: bool = False  # workflow only: document each skill tool's command inline instead of by name
    default_tool_format: ToolFormat = "bash"
    tool_format_overrides: dict[str, ToolFormat] = Field(default_factory=dict)  # tool name -> format
    model_class: str = "default"
    capability_tests: list[CapabilityTest] = Field(default_factory=empty_list)
    tool_tests: list[ToolTest] = Field(default_factory=empty_list)
    agent_tests: list[AgentTest] = Field(default_factory=empty_list)

    @model_validator(mode="after")
    def _prompt_from_sections(self) -> "AgentDefinition":
        if self.prompt_sections:  # frozen: set once, during validation
            object.__setattr__(self, "system_prompt", render_prompt_sections(self.prompt_sections))
        return self

    @property
    def permissions(self) -> AgentToolPermissions:
        return self.tool_permissions or _NO_PERMISSIONS  # (four frozen bools: one shared default, not one a call)

    def chosen_format(self, tool: ToolDefinition) -> ToolFormat:
        """The format `tool` is offered in: its override, else the agent default, limited to what it has."""
        wanted = self.tool_format_overrides.get(tool.name, self.default_tool_format)
        has_bash, has_json = tool.bash_tool is not None, tool.json_tool is not None
        if wanted == "both":
            return "both" if has_bash and has_json else ("bash" if has_bash else "json")
        if wanted == "json" and not has_json:
            return "bash" if has_bash else "json"
        if wanted == "bash" and not has_bash:
            return "json" if has_json else "bash"
        return wanted

    def reachable_tools(self) -> list[ToolDefinition]:
        """extra_tools, then the tools of each skill's workflow steps; identical repeats dropped."""
        tools: list[ToolDefinition] = []
        for tool in [*self.extra_tools, *(t for skill in self.skills for t in skill.tools())]:
            if tool not in tools:
                tools.append(tool)
        return tools


class AgentWorkflowStep(Frozen):
    """A step of a hand-written agent workflow description (tools, skills and subagents it uses)."""

    header: Text = ""
    condition: str | None = None
    result: str | None = None
    rule: Text = ""
    tools_used: list[ToolDefinition] = Field(default_factory=empty_list)
    skills_used: list[SkillDefinition] = Field(default_factory=empty_list)
    subagents_used: list[AgentHeader] = Field(default_factory=empty_list)


class AgentVariant(Frozen):
    """A registered agent with its model: what `AgentRegistry.get_agent` returns and a config slot resolves to."""

    postfix: str = ""
    agent_mode: AgentMode = "primary"
    agent_definition: AgentDefinition
    model_parameters: ModelParameters | None = None  # None: the harness's default model
    also_compile_as_primary: bool = False
