"""`testing.coverage`: a grant is covered exactly when a test of its slot checks it or a test calls what grants it.

The oracle: each grant kind has one capability test that checks it; a random subset of those tests covers
exactly the grants it names, and every other grant is listed UNCOVERED.
"""

from hypothesis import given, settings, strategies as st

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission, CapabilityTest, CompilationConfig,
    JsonPathEvaluator, PermissionAbsentEvaluator, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader,
    ToolDefinitionLogicBash, ToolTest,
)
from open_agent_compiler.model.core.agent import MCPServerDefinition
from open_agent_compiler.model.core.skill import SkillDefinition
from open_agent_compiler.testing.coverage import coverage, coverage_lines
from open_agent_compiler.testing.discovery import discover

# (kind, name) of a grant of the main agent -> a capability test that reads it back
CHECKS: dict[tuple[str, str], CapabilityTest] = {
    ("tool", "mover"): CapabilityTest(name="has-mover", must_have_tools=("mover",)),
    ("bash", "mv *"): CapabilityTest(name="mv-allowed", must_have_bash_patterns=("mv a b",)),
    ("bash", "rm *"): CapabilityTest(name="rm-denied", evaluators=(PermissionAbsentEvaluator(bash_pattern="rm x"),)),
    ("permission", "write"): CapabilityTest(name="no-write", must_not_have_permissions=("write",)),
    ("permission", "webfetch"): CapabilityTest(name="no-fetch", evaluators=(
        PermissionAbsentEvaluator(permission_key="webfetch"),)),
    ("mcp", "files"): CapabilityTest(name="mcp-files", evaluators=(
        JsonPathEvaluator(path="mcp_servers", expected=["files"]),)),
    ("skill", "tidy"): CapabilityTest(name="has-tidy", must_have_skills=("tidy",)),
    ("subagent", "helper"): CapabilityTest(name="calls-helper", must_have_subagents=("helper",)),
}


def _tool(tests: list[ToolTest]) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="mover", description="Move files.", usage_explanation_long="Move.",
                                    usage_explanation_short="move", rules=[]),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(tool_name="bash", value="allow", allowed_commands=["mv *"]),
            positive_examples=[], negative_examples=[], mode_specific_rules=[]),
        tool_tests=tests)


def _deny_tool() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="guard", description="No removal.", usage_explanation_long="Never rm.",
                                    usage_explanation_short="guard", rules=[]),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(tool_name="bash", value="deny", allowed_commands=["rm *"]),
            positive_examples=[], negative_examples=[], mode_specific_rules=[]))


def _resolved(capability: list[CapabilityTest], tool_tests: list[ToolTest] = (),
              agent_tests: list[AgentTest] = ()):
    reg = AgentRegistry()
    helper = AgentDefinition(header=AgentHeader(agent_id="helper", name="helper", description="Helps."))
    main = AgentDefinition(
        header=AgentHeader(agent_id="main", name="main", description="Main."),
        extra_tools=[_tool(list(tool_tests)), _deny_tool()],
        skills=[SkillDefinition(name="tidy", description="Tidy up.")],
        subagents=[helper.header],
        mcp_servers=[MCPServerDefinition(name="files", command=["files-mcp"])],
        capability_tests=capability, agent_tests=list(agent_tests))
    reg.register_agent("helper", helper)
    reg.register_agent("main", main)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="main"),
                                                          TemplateSlot(name="helper", default_agent_id="helper")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg.resolve_config("prod")


def _main_grants(resolved, statuses=None):
    report = coverage(resolved, discover(resolved), statuses or {})
    return report, {(g.kind, g.name): g for g in report.agents[0].grants}


@settings(max_examples=40, deadline=None)
@given(st.sets(st.sampled_from(sorted(CHECKS))))
def test_a_grant_is_covered_exactly_when_a_test_checks_it(chosen: set[tuple[str, str]]) -> None:
    report, grants = _main_grants(_resolved([CHECKS[pair] for pair in sorted(chosen)]))
    assert set(CHECKS) <= set(grants)  # every kind of grant and denial is listed
    assert {pair for pair, grant in grants.items() if grant.covered} == chosen
    for pair, grant in grants.items():
        expected = [f"capability:primary::{CHECKS[pair].name}"] if pair in chosen else []
        assert [ref.test_id for ref in grant.checked_by] == expected
    lines = coverage_lines(report)
    for kind, name in set(grants) - chosen:  # an uncovered grant is listed as such
        assert any(line.split()[0] == kind and f" {name}: UNCOVERED" in line for line in lines), lines


def test_tool_and_agent_tests_exercise_the_tool_and_its_patterns() -> None:
    tool_test = ToolTest(name="moves", input={})
    _, grants = _main_grants(_resolved([], tool_tests=[tool_test]))
    assert [r.test_id for r in grants[("tool", "mover")].exercised_by] == ["tool:mover::moves"]
    assert [r.test_id for r in grants[("bash", "mv *")].exercised_by] == ["tool:mover::moves"]
    assert not grants[("bash", "rm *")].covered  # granted by another tool that nothing calls
    calls = AgentTest(name="moves-things", prompt="move a", expected_tool_calls=("mover",))
    resolved = _resolved([], agent_tests=[calls])
    _, grants = _main_grants(resolved, {"agent:primary::moves-things": "pass"})
    assert grants[("tool", "mover")].covered and grants[("bash", "mv *")].covered
    # an agent test that never judged anything (no invoker) covers nothing
    _, grants = _main_grants(resolved, {"agent:primary::moves-things": "not_runnable"})
    assert not grants[("tool", "mover")].covered
    assert grants[("tool", "mover")].exercised_by[0].status == "not_runnable"


def test_percent_counts_every_agent() -> None:
    report, grants = _main_grants(_resolved([CHECKS[("skill", "tidy")]]))
    assert report.covered == 1 and report.total == sum(len(a.grants) for a in report.agents) > len(grants)
    assert report.as_json()["percent"] == round(100 / report.total, 1)


@settings(max_examples=30, deadline=None)
@given(st.sets(st.sampled_from(sorted(CHECKS))),
       st.sampled_from(["pass", "fail", "not_runnable", "skipped", "caf\u00e9 \"quoted\"\n"]))
def test_the_json_text_is_json_dumps_of_the_json_view(chosen: set[tuple[str, str]], status: str) -> None:
    """`oac coverage --format json` writes its text directly (each test encoded once): the bytes `json.dumps`
    gives for the same report, whatever the statuses, the coverage and the characters."""
    import json

    tests = [CHECKS[pair] for pair in sorted(chosen)]
    resolved = _resolved(tests, tool_tests=[ToolTest(name="moves", input={})])
    statuses = {f"capability:primary::{test.name}": status for test in tests}
    report = coverage(resolved, discover(resolved), statuses)
    assert report.as_json_text() == json.dumps(report.as_json())
