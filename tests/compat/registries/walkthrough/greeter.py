"""Step 1 — the smallest registry: one agent, one template, one config (no tests yet).

    oac compile greeter:registry --config default --target build
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry

from common import header


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    greeter = AgentDefinition(
        header=header("greeter", "Greets visitors of the museum."),
        usage_explanation_long="Say hello and point to the exhibition map.", usage_explanation_short="greeter",
        system_prompt="You greet visitors in one friendly sentence.",
        tool_permissions=ToolPermissions(read=True),
    )
    agent_id = reg.register_agent("greeter", greeter, ModelParameters(model_name="anthropic/claude-haiku-4-5"))
    reg.register_template(TemplateTree(name="front", description="The front desk.",
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="front"))
    return reg
