"""A registry written against the public package's API: one relay agent whose only bash is its script tool,
with capability tests that judge bash patterns under `bash`, as the public package's capability tests do."""

from open_agent_compiler import (
    AgentDefinition,
    AgentHeader,
    AgentRegistry,
    BashToolPermission,
    CapabilityTest,
    CompilationConfig,
    EqualsEvaluator,
    MockResponse,
    ModelParameters,
    PermissionAbsentEvaluator,
    PermissionPresentEvaluator,
    TemplateSlot,
    TemplateTree,
    ToolDefinition,
    ToolDefinitionHeader,
    ToolDefinitionLogicBash,
    ToolTest,
)


def relay_tool() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="relay-tool", description="Pass a message on.",
                                    usage_explanation_long="Pass the message on unchanged.",
                                    usage_explanation_short="relay", rules=[]),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(tool_name="bash", value="allow",
                                               allowed_commands=["python3 scripts/relay.py *"]),
            positive_examples=["python3 scripts/relay.py --message hello"],
            negative_examples=[], mode_specific_rules=[]),
        mock=MockResponse(kind="fixed", fixed_output={"message": "relayed"}),
        tool_tests=[ToolTest(name="relay-mock", input={"message": "hello"},
                             evaluators=(EqualsEvaluator(field="message", expected="relayed"),))],
    )


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    agent = AgentDefinition(
        header=AgentHeader(agent_id="relay", name="relay", description="Relays messages."),
        usage_explanation_long="Call relay-tool with the message.",
        usage_explanation_short="relay agent",
        system_prompt="Call relay-tool with the user's message and report what it returns.",
        extra_tools=[relay_tool()],
        capability_tests=[
            CapabilityTest(name="relay-may-run-bash",
                           evaluators=(PermissionPresentEvaluator(permission_key="bash"),)),
            CapabilityTest(name="relay-script-allowed",
                           evaluators=(PermissionPresentEvaluator(permission_key="bash",
                                                                  bash_pattern="python3 scripts/relay.py *"),)),
            CapabilityTest(name="no-wipe",
                           evaluators=(PermissionAbsentEvaluator(permission_key="bash", bash_pattern="rm -rf *",
                                                                 name="no_rm_rf"),)),
            CapabilityTest(name="no-write", evaluators=(PermissionAbsentEvaluator(permission_key="write"),)),
        ],
    )
    agent_id = reg.register_agent("relay", agent, ModelParameters(model_name="anthropic/claude-sonnet-4-5",
                                                                  temperature=0.0))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
