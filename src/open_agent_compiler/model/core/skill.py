"""Skills: named workflows an agent can load; the tools their steps use become reachable from the agent."""

from pydantic import Field

from open_agent_compiler.model.core.base import Frozen, Text, empty_list
from open_agent_compiler.model.core.test_model import ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition


class WorkflowStep(Frozen):
    header: Text = ""
    condition: str | None = None  # when this step applies
    result: str | None = None  # what it produces
    rule: Text = ""
    tools_used: list[ToolDefinition] = Field(default_factory=empty_list)


class SkillExample(Frozen):
    """A worked example (or counter-example) of using the skill: situation, outcome, rule, tools."""

    header: Text = ""
    condition: str | None = None
    result: str | None = None
    rule: str | None = None
    tools_used: list[ToolDefinition] = Field(default_factory=empty_list)

    def __str__(self) -> str:
        parts = [self.header]
        if self.condition:
            parts.append(f"when {self.condition}")
        if self.result:
            parts.append(f"→ {self.result}")
        if self.rule:
            parts.append(f"({self.rule})")
        if self.tools_used:
            parts.append("[tools: " + ", ".join(tool.name for tool in self.tools_used) + "]")
        return " ".join(part for part in parts if part)


class SkillDefinition(Frozen):
    name: str
    description: str
    usage_explanation_long: str = ""
    usage_explanation_short: str = ""
    rules: list[str] = Field(default_factory=empty_list)
    workflow_steps: list[WorkflowStep] = Field(default_factory=empty_list)
    positive_examples: list[SkillExample | str] = Field(default_factory=empty_list)
    negative_examples: list[SkillExample | str] = Field(default_factory=empty_list)
    tool_tests: list[ToolTest] = Field(default_factory=empty_list)  # skill-scoped: each names its `tool`

    def tools(self) -> list[ToolDefinition]:
        """Tools used by the workflow steps, in order; identical repeats dropped, same-name conflicts kept
        so that the resolver can report them."""
        tools: list[ToolDefinition] = []
        for step in self.workflow_steps:
            for tool in step.tools_used:
                if tool not in tools:
                    tools.append(tool)
        return tools
