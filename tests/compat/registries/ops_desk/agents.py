"""An operations desk written against the public package's definition API, using every compile feature:
workflow steps with gates, routes, criteria, tool uses, hand-offs and todo marks (strict, lazy, none), a
workspace, preamble/postamble, prompt sections, MCP servers narrowed to allowed tools, model presets, a primary
twin, inline skills with SkillExamples, tool formats, a JSON tool whose script paths are pathlib.Paths, and a
promoted snapshot applied when one exists.

    oac compile agents:registry --config prod --target build --dialect all
    oac test agents:registry --config prod
"""

from pathlib import Path

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, AgentToolPermissions, BashToolPermission,
    CapabilityTest, CompilationConfig, Criterion, EqualsEvaluator, Gate, GateCheck, JsonPathEvaluator,
    JsonToolPermission, MCPServerDefinition, MockProfile, MockResponse, ModelParameters, ModelPreset,
    PermissionAbsentEvaluator, PermissionPresentEvaluator, Route, SamplingDefaults, ScriptDefinition,
    SkillDefinition, SkillExample, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader,
    ToolDefinitionLogicBash, ToolDefinitionLogicJson, ToolScriptDefinition, ToolTest, ToolUse, Turn,
    WorkflowStep, WorkflowStepDefinition,
)

HERE = Path(__file__).resolve().parent
SCORE_SCRIPT = Path("scripts/ticket_score.py")
SCORE_COMMAND = f"python3 {SCORE_SCRIPT.as_posix()}"

CLAUDE_PRESET = ModelPreset(name="claude-sonnet", provider="anthropic", model_id="claude-sonnet-4-5",
                            sampling=SamplingDefaults(temperature=0.2), reasoning=True)
OPENAI_PRESET = ModelPreset(name="gpt-mini", provider="openai", model_id="gpt-5-mini",
                            provider_options={"reasoning_effort": "low"})


def list_tickets() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="list-tickets", description="List open tickets.", rules=[]),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission("bash", "bash", "allow", ["ls tickets/*"]),
            positive_examples=["ls tickets/*.md"], negative_examples=["rm tickets/1.md"],
        ),
        mock=MockResponse(kind="fixed", fixed_output={"files": ["tickets/1.md"]}),
        tool_tests=[ToolTest(name="list-tickets-mock", input={},
                             evaluators=(JsonPathEvaluator(path="files.0", expected="tickets/1.md"),))],
    )


def ticket_score() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="ticket-score", description="Score a ticket's urgency.",
                                    usage_explanation_long="Send the ticket text; read `severity`."),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(allowed_commands=[SCORE_COMMAND]),
            positive_examples=[f"{SCORE_COMMAND} <<'JSON'\n{{\"text\": \"site down\"}}\nJSON"],
        ),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(allowed_commands=[SCORE_COMMAND]),
            input_schema={"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
            output_schema={"type": "object", "properties": {"severity": {"type": "string"}}},
            tool_scripts=[ToolScriptDefinition(paths=None, scripts=[
                ScriptDefinition(target_file_path=SCORE_SCRIPT, source_file_path=HERE / "tools" / "ticket_score.py"),
            ])],
        ),
        handler_script="tools/ticket_score.py",  # the source, relative to the project root
        tool_tests=[
            ToolTest(name="ticket-score-real-handler", input={"text": "Full outage since 9am"},
                     evaluators=(EqualsEvaluator(field="severity", expected="high"),)),
            ToolTest(name="ticket-score-ci-profile", input={"text": "x"}, mock_profile="ci",
                     evaluators=(EqualsEvaluator(field="severity", expected="low"),)),
        ],
    )


def triage_skill() -> SkillDefinition:
    return SkillDefinition(
        name="ticket-triage", description="Decide how urgent a ticket is.",
        usage_explanation_long="Use it for every new ticket.",
        rules=["Never guess a severity: score it."],
        workflow_steps=[WorkflowStep(header="Score", condition="a new ticket", result="a severity",
                                     rule="Run ticket-score.", tools_used=[ticket_score()])],
        positive_examples=[SkillExample(header="Site down", condition="the ticket says outage", result="high")],
        negative_examples=["Marking a ticket high because the customer is angry."],
    )


def triage() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="triage", name="triage", description="Triages incoming tickets."),
        usage_explanation_long="The desk's entry point.", usage_explanation_short="ticket triage",
        prompt_sections=[{"name": "persona", "content": "You run the operations desk."},
                         {"name": "tone", "content": "Write short, factual notes."}],
        preamble="Tickets live under tickets/.", postamble="Never close a ticket yourself.",
        workspace=".agent_workspace/{name}", todo_mode="strict", inline_skills=True, default_tool_format="both",
        workflow=[
            WorkflowStepDefinition(id=1, name="Read", todo_name="read", todo_description="Read the new tickets.",
                                   instructions="List the open tickets.",
                                   tool_uses=(ToolUse(tool_name="list-tickets", note="open ones only"),),
                                   marks_done=("read",)),
            WorkflowStepDefinition(id=2, name="Score", todo_name="score",
                                   evaluates=(Criterion(name="severity", question="How urgent is it?",
                                                        possible_values=("low", "high")),),
                                   tool_uses=(ToolUse(tool_name="ticket-score"),),
                                   routes=(Route(criteria_name="severity", value="low", goto_step=4),),
                                   marks_done=("score",)),
            WorkflowStepDefinition(id=3, name="Escalate", todo_name="escalate",
                                   gate=Gate(logic="all", checks=(GateCheck(variable="severity", value="high"),)),
                                   instructions="Ask the reviewer for a second opinion.", subagents=("reviewer",),
                                   marks_done=("escalate",)),
            WorkflowStepDefinition(id=4, name="Record", todo_name="record", subagents=("scribe",),
                                   marks_done=("record",)),
        ],
        skills=[triage_skill()],
        extra_tools=[list_tickets()],
        subagents=[AgentHeader(agent_id="reviewer", name="reviewer", mode="subagent"),
                   AgentHeader(agent_id="scribe", name="scribe")],
        tool_permissions=AgentToolPermissions(read=True, mcp=True),
        mcp_servers=[
            MCPServerDefinition(name="tickets", description="The ticket tracker.", url="http://127.0.0.1:9/mcp",
                                allowed_tools=["search", "get_ticket"]),
            MCPServerDefinition(name="runbooks", description=None, command=["runbook-mcp", "--read-only"]),
        ],
        capability_tests=[
            CapabilityTest(name="triage-delegates", must_have_subagents=("reviewer", "scribe"),
                           must_have_skills=("ticket-triage",), must_have_tools=("list-tickets", "ticket-score")),
            CapabilityTest(name="triage-scores-and-lists", must_have_bash_patterns=("ls tickets/*", SCORE_COMMAND),
                           must_not_have_bash_patterns=("rm *", "curl *")),
            CapabilityTest(name="triage-reads-uses-mcp-never-writes", must_have_permissions=("read",),
                           must_not_have_permissions=("write", "edit"),
                           evaluators=(PermissionPresentEvaluator(permission_key="mcp"),)),
        ],
        agent_tests=[AgentTest(name="triage-outage", mock_profile="ci",
                               turns=(Turn(prompt="New ticket: site down", expected_tool_calls=("ticket-score",)),))],
    )


def reviewer() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="reviewer", name="reviewer", description="Second opinion on urgent tickets."),
        usage_explanation_long="Checks a high-severity call.", usage_explanation_short="reviewer",
        system_prompt="Re-read the ticket and say whether it is really urgent.",
        todo_mode="lazy", tool_permissions=AgentToolPermissions(read=True),
        workflow=[WorkflowStepDefinition(id=1, name="Re-read"), WorkflowStepDefinition(id=2, name="Verdict")],
        capability_tests=[CapabilityTest(name="reviewer-reads-only", must_have_permissions=("read",),
                                         evaluators=(PermissionAbsentEvaluator(permission_key="write"),
                                                     PermissionAbsentEvaluator(permission_key="task")))],
    )


def scribe() -> AgentDefinition:
    return AgentDefinition(
        header=AgentHeader(agent_id="scribe", name="scribe", description="Writes the triage log."),
        usage_explanation_long="Appends one line per ticket to log.md.", usage_explanation_short="scribe",
        system_prompt="Append the decision to log.md.", todo_mode="none",
        workflow=[WorkflowStepDefinition(id=1, name="Append", instructions="One line per ticket.")],
        tool_permissions=AgentToolPermissions(write=True, edit=True),
        capability_tests=[CapabilityTest(name="scribe-writes-no-shell", must_have_permissions=("write", "edit"),
                                         must_not_have_bash_patterns=("*",))],
    )


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    triage_id = reg.register_agent_with_preset("triage", triage(), CLAUDE_PRESET)
    reviewer_id = reg.register_agent_with_preset("reviewer", reviewer(), OPENAI_PRESET)
    # A prompt promoted into .oac/promoted/scribe.json (by `oac promote`) replaces the scribe's, when present.
    scribe_id = reg.register_with_improvements("scribe", scribe(),
                                               ModelParameters(model_name="zai-coding-plan/glm-4.5-air"),
                                               project_root=HERE)
    reg.register_template(TemplateTree(name="desk", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=triage_id),
        TemplateSlot(name="reviewer", default_agent_id=reviewer_id, also_compile_as_primary=True),
        TemplateSlot(name="scribe", default_agent_id=scribe_id),
    ]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="desk"))
    reg.register_mock_profile(MockProfile(name="ci", description=None, responses={
        "ticket-score": MockResponse(kind="fixed", fixed_output={"severity": "low", "hits": []}),
    }))
    return reg
