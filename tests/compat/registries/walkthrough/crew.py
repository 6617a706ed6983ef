"""Step 6 — subagents. A lead names its subagents by `AgentHeader`; the template gives each a slot, and the
compiled lead may call exactly those (each harness's own way: OpenCode `task`, Claude Code `Task`, Codex
`spawn_agent`, Pi's `Agent` tool).

    oac compile crew:registry --config default --target build --dialect all
    oac test crew:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.test_model import (
    CapabilityTest, PermissionAbsentEvaluator, PermissionPresentEvaluator,
)

from common import bash_tool, header


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    editor = AgentDefinition(
        header=header("editor", "Plans an issue of the newsletter."),
        usage_explanation_long="Splits the issue into pieces and hands them out.", usage_explanation_short="editor",
        system_prompt="Plan the issue, ask the writer for each piece and the checker to verify facts.",
        subagents=[header("writer", "Writes one piece."), header("checker", "Checks facts.")],
        tool_permissions=ToolPermissions(read=True),
        capability_tests=[CapabilityTest(name="editor-delegates",
                                         evaluators=(PermissionPresentEvaluator(permission_key="task"),
                                                     PermissionAbsentEvaluator(permission_key="write")))],
    )
    writer = AgentDefinition(
        header=header("writer", "Writes one piece."),
        usage_explanation_long="Writes the piece it is given into drafts/.", usage_explanation_short="writer",
        system_prompt="Write the piece in plain English.",
        tool_permissions=ToolPermissions(read=True, write=True, edit=True),
        capability_tests=[CapabilityTest(name="writer-writes-but-delegates-nothing",
                                         evaluators=(PermissionPresentEvaluator(permission_key="write"),
                                                     PermissionAbsentEvaluator(permission_key="task")))],
    )
    checker = AgentDefinition(
        header=header("checker", "Checks facts."),
        usage_explanation_long="Greps the sources for each claim.", usage_explanation_short="checker",
        system_prompt="Find a source for every claim.",
        extra_tools=[bash_tool("sources", "Search the sources.", ["grep -rn * sources/"])],
        tool_permissions=ToolPermissions(read=True),
        capability_tests=[CapabilityTest(name="checker-searches-sources", must_have_tools=("sources",),
                                         must_have_bash_patterns=("grep -rn * sources/",),
                                         must_not_have_bash_patterns=("rm *",))],
    )
    model = ModelParameters(model_name="anthropic/claude-sonnet-4-5")
    ids = {name: reg.register_agent(name, agent, model)
           for name, agent in (("editor", editor), ("writer", writer), ("checker", checker))}
    reg.register_template(TemplateTree(name="newsroom", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=ids["editor"]),
        TemplateSlot(name="writer", default_agent_id=ids["writer"]),
        TemplateSlot(name="checker", default_agent_id=ids["checker"]),
    ]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="newsroom"))
    return reg
