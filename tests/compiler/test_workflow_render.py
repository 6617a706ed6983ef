"""Workflow steps, todo modes, workspace, preamble/postamble, prompt_sections and inline skills in the
compiled instructions, worded for each harness."""

import pytest
from oac_builders import DIALECT_NAMES, agent, bash_tool

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.model.core.agent import AgentHeader
from open_agent_compiler.model.core.skill import SkillDefinition, WorkflowStep
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.workflow_model import (
    Criterion, Gate, GateCheck, Route, ToolUse, WorkflowStepDefinition,
)
from open_agent_compiler.model.registry import AgentRegistry

STEPS = [
    WorkflowStepDefinition(id=1, name="Classify", todo_name="classify", todo_description="Pick a severity.",
                           instructions="Read the ticket.",
                           evaluates=(Criterion(name="severity", question="How severe?",
                                                possible_values=("low", "high")),),
                           marks_done=("classify",)),
    WorkflowStepDefinition(id=2, name="Escalate", gate=Gate(checks=(GateCheck(variable="severity", value="high"),)),
                           instructions="Write an escalation note.",
                           tool_uses=(ToolUse(tool_name="notes", note="save it"),),
                           subagents=("critic",), routes=(Route(criteria_name="severity", value="low", goto_step=3),),
                           marks_done=("escalate",)),
    WorkflowStepDefinition(id=3, name="Answer", subagents=("stranger",)),
]


def body(dialect: str, slot: str = "primary", **fields) -> str:  # type: ignore[no-untyped-def]
    reg = AgentRegistry()
    reg.register_agent("lead", agent("lead", workflow=STEPS, extra_tools=[bash_tool("notes", "notes add *")],
                                     subagents=[AgentHeader(agent_id="critic-id", name="critic")], **fields))
    reg.register_agent("critic", agent("critic-id"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                        TemplateSlot(name="reviewer", default_agent_id="critic-id")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t", postfix="-x"))
    spec = DIALECTS[dialect]
    files = spec.compile(reg.resolve_config("c")).file_map()
    return spec.parse_agent("p", files[f"{spec.agents_dir}/{slot}-x{spec.agent_suffix}"])[1]


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_steps_gates_routes_and_handoffs(dialect: str) -> None:
    text = body(dialect)
    assert text.index("### Step 1: Classify") < text.index("### Step 2: Escalate") < text.index("### Step 3: Answer")
    assert "Do this step only when `severity` is `high`; otherwise skip it." in text
    assert "- Decide `severity`: How severe? Answer one of: `low`, `high`." in text
    assert "- If `severity` is `low`, continue at step 3." in text
    shell = DIALECTS[dialect].terms.shell
    assert f"- Use the tool `notes` (save it) — with {shell}: `notes add *`." in text
    # a step names the subagent by its name; the body calls it by its compiled name, the harness's way
    assert f"- Hand off to `reviewer-x` with {DIALECTS[dialect].terms.delegate_to('reviewer-x')}." in text
    assert "- Subagent `stranger`: not one of your subagents, so you cannot hand work to it." in text
    # the workflow is free text: it grants nothing
    assert read_body_facts(text).subagents == ("reviewer-x",)


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_strict_todo_mode(dialect: str) -> None:
    text = body(dialect)
    assert "### Before step 1: the todo list" in text and "- `classify`: Pick a severity." in text
    assert "- `Escalate`" in text  # no todo_name: the step's name
    assert "- `escalate`" in text  # only named by marks_done
    assert "- Mark the todo item `classify` done." in text and "### Finally" in text
    assert "Keep it in your messages as a checklist" in text


def test_lazy_and_none_todo_modes() -> None:
    lazy = body("opencode", todo_mode="lazy")
    assert "### Before step 1: the todo list" in lazy and "Mark the todo item" not in lazy and "### Finally" in lazy
    none = body("opencode", todo_mode="none")
    assert "todo" not in none.lower() and "### Step 1: Classify" in none


def test_workspace_preamble_postamble_and_sections() -> None:
    text = body("claude", workspace=".agent_workspace/{name}", preamble="PRE-TEXT", postamble="POST-TEXT",
                prompt_sections=[{"name": "persona", "content": "You are the lead."},
                                 {"name": "style", "content": "Be terse."}])
    assert "Keep every file you create under `.agent_workspace/primary-x/`" in text
    assert text.index("You are the lead.") < text.index("Be terse.") < text.index("PRE-TEXT") \
        < text.index("## Workflow") < text.index("POST-TEXT") < text.index("## Permissions")


def test_inline_skills_put_the_whole_skill_in_the_instructions() -> None:
    skill = SkillDefinition(name="triage", description="Triage tickets.", rules=["Never guess."],
                            workflow_steps=[WorkflowStep(header="Look", rule="Read it all.")])
    inline = body("pi", skills=[skill], inline_skills=True)
    assert "## Skill triage" in inline and "### Rules" in inline and "- Never guess." in inline
    referenced = body("pi", skills=[skill])
    assert "## Skill triage" not in referenced and "### Skill: triage" in referenced


def test_what_a_step_names_but_the_agent_lacks_is_warned() -> None:
    reg = AgentRegistry()
    steps = [*STEPS, WorkflowStepDefinition(id=4, name="Lost", routes=(Route(criteria_name="x", value="y",
                                                                             goto_step=9),),
                                            tool_uses=(ToolUse(tool_name="ghost"),))]
    reg.register_agent("lead", agent("lead", workflow=steps, extra_tools=[bash_tool("notes", "notes add *")],
                                     subagents=[AgentHeader(agent_id="critic-id", name="critic", mode="primary")]))
    reg.register_agent("critic", agent("critic-id"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                        TemplateSlot(name="reviewer", default_agent_id="critic-id")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    warnings = DIALECTS["claude"].compile(reg.resolve_config("c")).warnings
    mine = [w for w in warnings if w.startswith("claude: agent 'primary': ")]
    assert any("workflow step 3 ('Answer') hands off to 'stranger'" in w for w in mine)
    assert any("workflow step 4 ('Lost') uses tool 'ghost'" in w for w in mine)
    assert any("routes to step 9, which does not exist" in w for w in mine)
    assert any("subagent 'critic' is referenced with mode 'primary'" in w for w in mine)
