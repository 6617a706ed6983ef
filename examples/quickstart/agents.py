# agents.py
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest,
    BashToolPermission, CapabilityTest, CompilationConfig, EqualsEvaluator,
    JsonPathEvaluator, MockProfile, MockResponse, ModelParameters,
    PermissionAbsentEvaluator, SubstringEvaluator, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader,
    ToolDefinitionLogicBash, ToolTest, Turn,
)

def echo_tool() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(
            name="echo-tool", description="Echo text back.",
            usage_explanation_long="Echo the user's text.",
            usage_explanation_short="echo", rules=[],
        ),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(
                tool_name="bash", value="allow",
                allowed_commands=["uv run scripts/echo.py *"],
            ),
            positive_examples=["uv run scripts/echo.py --text hi"],
            negative_examples=[], mode_specific_rules=[],
        ),
        # The tool's default mock — what runs when no profile overrides it.
        mock=MockResponse(kind="fixed",
                          fixed_output={"text": "DEFAULT", "from": "tool.mock"}),
        tool_tests=[
            # Runs against the default mock (mock_profile=None).
            ToolTest(name="echo-default-mock", input={"text": "hi"},
                     evaluators=(EqualsEvaluator(field="from", expected="tool.mock"),)),
            # Runs against the 'ci' MockProfile registered below.
            ToolTest(name="echo-via-profile", input={"text": "hi"}, mock_profile="ci",
                     evaluators=(JsonPathEvaluator(path="from", expected="profile.ci"),)),
        ],
    )

def registry() -> AgentRegistry:
    reg = AgentRegistry()
    agent = AgentDefinition(
        header=AgentHeader(agent_id="echo-agent", name="echo-agent",
                           description="Echoes user text."),
        usage_explanation_long="Always call echo-tool; return its text field.",
        usage_explanation_short="echo agent",
        system_prompt="Call echo-tool with the user's text; return its `text`.",
        extra_tools=[echo_tool()],
        capability_tests=[
            CapabilityTest(name="echo-bash-allowed",
                           must_have_bash_patterns=("uv run scripts/echo.py *",)),
            CapabilityTest(name="write-off-by-default",
                           evaluators=(PermissionAbsentEvaluator(permission_key="write"),)),
        ],
        agent_tests=[
            # Multi-turn: same session threads across turns; per-turn asserts.
            AgentTest(name="echo-conversation", mock_profile="ci",
                      turns=(Turn(prompt="say hi",
                                  expected_tool_calls=("echo-tool",),
                                  evaluators=(SubstringEvaluator(needle="CI-MOCK"),)),
                             Turn(prompt="again",
                                  expected_tool_calls=("echo-tool",)))),
        ],
    )
    agent_id = reg.register_agent("echo-agent", agent,
                                  ModelParameters(model_name="zai-coding-plan/glm-4.5-air",
                                                  temperature=0.0))
    reg.register_template(TemplateTree(name="tpl",
        slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    reg.register_mock_profile(MockProfile(name="ci", responses={
        "echo-tool": MockResponse(kind="fixed",
                                  fixed_output={"text": "CI-MOCK", "from": "profile.ci"}),
    }))
    return reg
