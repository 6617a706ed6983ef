# agents.py — a three-turn monitoring scenario: the health check answers quiet → alert → quiet (a sequence mock),
# and the agent must page on-call only on the alert. Run: oac test agents:registry --config ci --invoker scripted
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission, CompilationConfig, MockProfile,
    MockResponse, ModelParameters, PathOrderEvaluator, SubstringEvaluator, TemplateSlot, TemplateTree,
    ToolCalledEvaluator, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolNotCalledEvaluator, Turn,
)


def bash_tool(name: str, description: str, command: str, mock: MockResponse) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=description, usage_explanation_short=description),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(value="allow", allowed_commands=[command + " *"]),
            positive_examples=[command + " --service api"]),
        mock=mock,
    )


def registry() -> AgentRegistry:
    health = bash_tool("check-health", "Report a service's health.", "oac-monitor health",
                       MockResponse(kind="fixed", fixed_output={"status": "unknown"}))
    page = bash_tool("page-oncall", "Page the on-call engineer.", "oac-monitor page",
                     MockResponse(kind="echo"))
    quiet, alert = {"status": "ok", "errors": 0}, {"status": "alert", "errors": 37}
    monitor = AgentDefinition(
        header=AgentHeader(agent_id="monitor", name="monitor", description="Watches a service, pages on alerts."),
        system_prompt="Check the service's health with check-health. Page on-call with page-oncall only when the "
                      "status is alert. Answer 'all quiet' or 'paged on-call'.",
        extra_tools=[health, page],
        agent_tests=[
            AgentTest(name="quiet-alert-quiet", mock_profile="incident", timeout_s=120, turns=(
                Turn(prompt="check api", expected_tool_calls=("check-health",),
                     evaluators=(SubstringEvaluator(needle="all quiet"),
                                 ToolNotCalledEvaluator(tool_name="page-oncall"))),
                Turn(prompt="check api again", expected_tool_calls=("check-health", "page-oncall"),
                     evaluators=(SubstringEvaluator(needle="paged on-call"),
                                 ToolCalledEvaluator(tool_name="page-oncall", with_args_subset={"service": "api"}))),
                Turn(prompt="and now?", expected_tool_calls=("check-health",),
                     evaluators=(SubstringEvaluator(needle="all quiet"),
                                 ToolNotCalledEvaluator(tool_name="page-oncall"))),
            ), evaluators=(
                ToolCalledEvaluator(tool_name="check-health", min_count=3),
                PathOrderEvaluator(steps=("check-health", "page-oncall", "check-health"), contiguous=True),
            )),
        ],
    )
    reg = AgentRegistry()
    agent_id = reg.register_agent("monitor", monitor, ModelParameters(model_name="scripted/monitor", temperature=0.0))
    reg.register_template(TemplateTree(name="ops", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="ci", template_name="ops"))
    reg.register_mock_profile(MockProfile(name="incident", responses={
        # one MockSession per test: call 1 → quiet, call 2 → alert, call 3 (and later) → quiet
        "check-health": MockResponse(kind="sequence", sequence=(quiet, alert, quiet)),
    }))
    return reg
