"""Step 5 — workflows. `workflow` is the agent's procedure: steps with gates (do a step only when a criterion
has a value), criteria to decide, tools to use, subagents to hand off to, routes to jump to another step and a
todo list (`todo_mode`). Every harness gets it in the agent's instructions.

    oac compile release:registry --config default --target build --dialect all
    oac test release:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.test_model import CapabilityTest, PermissionAbsentEvaluator
from open_agent_compiler.model.core.workflow_model import (
    Criterion, Gate, GateCheck, Route, ToolUse, WorkflowStepDefinition,
)

from open_agent_compiler.model.core.tools_model import ToolDefinition

from common import bash_tool, header


def changelog() -> ToolDefinition:
    return bash_tool("changelog", "Read the unreleased changes.", ["git log --oneline *"])


def tagger() -> ToolDefinition:
    return bash_tool("tagger", "Tag a release.", ["git tag v*"], value="ask")


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    manager = AgentDefinition(
        header=header("release-manager", "Decides whether to cut a release."),
        usage_explanation_long="Reads the changes, decides, tags.", usage_explanation_short="release manager",
        system_prompt="You decide whether the main branch is ready for a release.",
        extra_tools=[changelog(), tagger()],
        tool_permissions=ToolPermissions(read=True),
        todo_mode="strict",
        workflow=[
            WorkflowStepDefinition(id=1, name="Collect", todo_name="collect",
                                   instructions="Collect the changes since the last tag.",
                                   tool_uses=(ToolUse(tool_name="changelog", note="since the last tag"),)),
            WorkflowStepDefinition(id=2, name="Judge", todo_name="judge",
                                   evaluates=(Criterion(name="risk", question="How risky are the changes?",
                                                        possible_values=("low", "high")),),
                                   routes=(Route(criteria_name="risk", value="high", goto_step=4),)),
            WorkflowStepDefinition(id=3, name="Tag", todo_name="tag",
                                   gate=Gate(logic="all", checks=(GateCheck(variable="risk", value="low"),)),
                                   tool_uses=(ToolUse(tool_name="tagger"),)),
            WorkflowStepDefinition(id=4, name="Report", todo_name="report",
                                   instructions="Say what you decided and why."),
        ],
        capability_tests=[
            CapabilityTest(name="manager-reads-the-log", must_have_tools=("changelog", "tagger"),
                           must_have_bash_patterns=("git log --oneline *",)),
            CapabilityTest(name="manager-asks-before-tagging", must_not_have_bash_patterns=("git tag v*", "git push *"),
                           evaluators=(PermissionAbsentEvaluator(permission_key="edit"),)),
        ],
    )
    agent_id = reg.register_agent("release-manager", manager, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="release", description=None,
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="release"))
    return reg
