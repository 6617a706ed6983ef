"""Capability tests judge what the harness computes: "ask" is not "allowed", skills are checked against the
skills the artifact grants (not its tools), and a capability test with nothing to check is not a pass."""

from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.skill import SkillDefinition, WorkflowStep
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.test_model import CapabilityTest
from open_agent_compiler.model.core.tool import BashToolPermission, ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.model.core.tool import ToolDefinitionLogicBash
from open_agent_compiler.model.registry import AgentRegistry
from open_agent_compiler.testing.capability import NOTHING_TO_CHECK, capability_checks
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.runner import RunSettings, run_case

CAPS = Capabilities(agent="a", dialect="opencode", bash={"*": "deny", "git *": "allow", "git push *": "ask"},
                    permissions={"read": "allow", "edit": "ask"}, tools=("summarize",), skills=("notes",))


def verdicts(**must: tuple[str, ...]) -> list[bool]:
    return [result.passed for result in capability_checks(CapabilityTest(name="t", **must), CAPS, "")]


def test_ask_is_not_allowed() -> None:
    assert verdicts(must_have_bash_patterns=("git push origin",)) == [False]
    assert verdicts(must_not_have_bash_patterns=("git push origin",)) == [True]
    assert verdicts(must_have_permissions=("edit",)) == [False]
    assert verdicts(must_not_have_permissions=("edit",)) == [True]
    assert verdicts(must_have_bash_patterns=("git log",), must_have_permissions=("read",)) == [True, True]


def test_a_bash_pattern_is_matched_like_the_harness_not_looked_up_by_text() -> None:
    assert verdicts(must_have_bash_patterns=("git status --short",)) == [True]
    assert verdicts(must_not_have_bash_patterns=("git status --short", "rm -rf /")) == [False, True]


def test_skills_are_checked_against_the_skills_not_the_tools() -> None:
    assert verdicts(must_have_skills=("summarize",)) == [False]  # a tool of that name is not a skill
    assert verdicts(must_not_have_skills=("summarize",)) == [True]
    assert verdicts(must_have_skills=("notes",), must_not_have_skills=("notes",)) == [True, False]
    assert verdicts(must_have_tools=("notes",)) == [False]  # and a skill is not a tool
    evidence = capability_checks(CapabilityTest(name="t", must_have_skills=("summarize",)), CAPS, "")[0].evidence
    assert "skill 'summarize' is not granted (granted skills: notes)" == evidence


def build(tmp_path: Path, dialect: str, test: CapabilityTest) -> tuple:  # type: ignore[type-arg]
    tool = ToolDefinition(header=ToolDefinitionHeader(name="summarize", description="Summarizes."),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=["summarize *"])))
    skill = SkillDefinition(name="notes", description="Takes notes.",
                            workflow_steps=[WorkflowStep(header="Write", tools_used=[tool])])
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="An agent."),
                            system_prompt="Work.", skills=[skill], capability_tests=[test])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    resolved = reg.resolve_config("c")
    spec = DIALECTS[dialect]
    write_output(spec.compile(resolved), tmp_path / "build", dialect=dialect)
    (case,) = [case for case in discover(resolved) if case.kind == "capability"]
    settings = RunSettings(project_root=tmp_path, build_dir=tmp_path / "build", dialect=dialect)
    return run_case(case, resolved, settings, spec.capability_files("primary"))


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_capability_test_with_nothing_to_check_is_skipped_not_passed(tmp_path: Path, dialect: str) -> None:
    outcome = build(tmp_path, dialect, CapabilityTest(name="empty"))
    assert outcome.status == "skipped" and outcome.skip_reason == NOTHING_TO_CHECK


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_skills_and_tools_of_a_compiled_agent(tmp_path: Path, dialect: str) -> None:
    good = build(tmp_path, dialect, CapabilityTest(name="ok", must_have_skills=("notes",),
                                                   must_have_tools=("summarize",)))
    assert good.status == "pass", good
    swapped = build(tmp_path, dialect, CapabilityTest(name="swapped", must_have_skills=("summarize",)))
    assert swapped.status == "fail", swapped
