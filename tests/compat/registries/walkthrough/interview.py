"""Step 3 — multi-turn agent tests and mocks. An agent test drives the compiled agent through several turns;
its tools answer from mocks: a `sequence` (one answer per call), a `stateful_callable` that remembers earlier
calls, or a mock profile that replaces a tool's own mock for one test. Without an invoker (a harness or a model)
an agent test is reported not runnable; the tool tests run the mocks themselves.

    oac test interview:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, ModelParameters, TemplateSlot, TemplateTree, ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.mock_model import MockProfile, MockResponse, MockState
from open_agent_compiler.model.core.test_model import (
    AgentTest, EqualsEvaluator, SubstringEvaluator, ToolCalledEvaluator, ToolTest, Turn,
)

from open_agent_compiler.model.core.tools_model import ToolDefinition

from common import bash_tool, header


def next_question(_input: object, state: MockState) -> dict:
    """Asks the questions of the interview in order, remembering how many were asked."""
    asked = state.scratchpad.get("asked", 0) + 1
    state.scratchpad["asked"] = asked
    return {"number": asked, "question": ["Name?", "Role?", "Start date?"][min(asked, 3) - 1]}


def calendar() -> ToolDefinition:
    return bash_tool(
        "calendar", "Free interview slots.", ["cal-slots --week *"],
        mock=MockResponse(kind="sequence", sequence=(
            MockResponse(kind="fixed", fixed_output={"slots": ["Mon 10:00"]}),
            MockResponse(kind="fixed", fixed_output={"slots": []}),
        )),
        tool_tests=[ToolTest(name="calendar-first-answer-has-a-slot", input={"week": 12},
                             evaluators=(EqualsEvaluator(field="slots", expected=["Mon 10:00"]),)),
                    ToolTest(name="calendar-quiet-profile", input={"week": 12}, mock_profile="quiet",
                             evaluators=(EqualsEvaluator(field="slots", expected=[]),))],
    )


def questions() -> ToolDefinition:
    return bash_tool(
        "questions", "The next interview question.", ["questions next"],
        mock=MockResponse(kind="stateful_callable", callable_spec="interview:next_question"),
        tool_tests=[ToolTest(name="questions-start-with-the-name", input={},
                             evaluators=(EqualsEvaluator(field="question", expected="Name?"),))],
    )


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    interviewer = AgentDefinition(
        header=header("interviewer", "Schedules and runs first interviews."),
        usage_explanation_long="Books a slot, then asks the questions one by one.",
        usage_explanation_short="interviewer",
        system_prompt="Book a slot with the calendar tool, then ask each question the questions tool gives you.",
        extra_tools=[calendar(), questions()],
        tool_permissions=ToolPermissions(read=True),
        agent_tests=[
            AgentTest(name="interview-books-then-asks", turns=(
                Turn(prompt="Please book me an interview next week.", expected_tool_calls=("calendar",)),
                Turn(prompt="Booked? Then start.", expected_tool_calls=("questions",),
                     evaluators=(SubstringEvaluator(needle="Name", case_sensitive=False),)),
            )),
            AgentTest(name="interview-no-slot", prompt="Any slot this week?", mock_profile="quiet",
                      evaluators=(ToolCalledEvaluator(tool_name="calendar"),)),
        ],
    )
    agent_id = reg.register_agent("interviewer", interviewer, ModelParameters(model_name="openai/gpt-5-mini"))
    reg.register_template(TemplateTree(name="hr", description=None,
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="hr"))
    reg.register_mock_profile(MockProfile(name="quiet", description="A week without free slots.", responses={
        "calendar": MockResponse(kind="fixed", fixed_output={"slots": []})}))
    return reg
