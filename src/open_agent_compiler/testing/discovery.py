"""Find every test of a resolved config, with stable ids, once each.

Ids: `capability:<slot>::<name>`, `tool:<tool>::<name>`, `agent:<slot>::<name>`. A tool reachable from several
agents contributes its tests once; two different definitions behind one id are an error naming both places.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.errors import RegistryError
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig

TestKind = Literal["capability", "tool", "agent"]
KINDS: tuple[TestKind, ...] = ("capability", "tool", "agent")


class TestCase(BaseModel):
    """One discovered test and what it runs against."""

    model_config = ConfigDict(frozen=True)
    __test__ = False  # not a pytest class

    test_id: str
    kind: TestKind
    name: str
    target_name: str  # compiled agent name, or tool name
    where: str
    test: CapabilityTest | ToolTest | AgentTest
    found_in: str  # slot of the first agent this test was found through (tool tests included)
    slot: str | None = None
    tool: ToolDefinition | None = None

    @property
    def mock_profile(self) -> str | None:
        return None if isinstance(self.test, CapabilityTest) else self.test.mock_profile


def _tool_cases(agent: ResolvedAgent) -> list[TestCase]:
    reachable = {r.tool.name: r for r in agent.tools}
    cases = []
    for r in agent.tools:
        for test in r.tool.tool_tests:
            if test.tool not in (None, r.tool.name):
                raise RegistryError(
                    f"tool test {test.name!r} on tool {r.tool.name!r} names another tool {test.tool!r}"
                )
            cases.append(_tool_case(r.tool, test, f"tool {r.tool.name!r} ({r.where})", agent.slot))
    scoped = [(t, f"slot {agent.slot!r} tool_tests") for t in agent.definition.tool_tests]
    for skill in agent.definition.skills:
        scoped += [(t, f"slot {agent.slot!r} skill {skill.name!r} tool_tests") for t in skill.tool_tests]
    for test, where in scoped:
        if test.tool is None:
            raise RegistryError(f"tool test {test.name!r} in {where} must name its tool (ToolTest.tool)")
        if test.tool not in reachable:
            raise RegistryError(f"tool test {test.name!r} in {where} names tool {test.tool!r}, not reachable there")
        cases.append(_tool_case(reachable[test.tool].tool, test, where, agent.slot))
    return cases


def _tool_case(tool: ToolDefinition, test: ToolTest, where: str, found_in: str) -> TestCase:
    return TestCase(
        test_id=f"tool:{tool.name}::{test.name}", kind="tool", name=test.name, target_name=tool.name,
        where=where, test=test, tool=tool, found_in=found_in,
    )


def discover(resolved: ResolvedConfig) -> list[TestCase]:
    """All tests of the config in a stable order (slots in template order, then kinds)."""
    found: dict[str, TestCase] = {}

    def add(case: TestCase) -> None:
        first = found.setdefault(case.test_id, case)
        if first is case:
            return
        if first.test != case.test or first.tool != case.tool:
            raise RegistryError(f"two different tests have id {case.test_id!r}: in {first.where} and in {case.where}")

    for agent in resolved.agents:
        where = f"slot {agent.slot!r}"
        for test in agent.definition.capability_tests:
            add(TestCase(test_id=f"capability:{agent.slot}::{test.name}", kind="capability", name=test.name,
                         target_name=agent.compiled_name, where=f"{where} capability_tests", test=test,
                         slot=agent.slot, found_in=agent.slot))
        for case in _tool_cases(agent):
            add(case)
        for test in agent.definition.agent_tests:
            add(TestCase(test_id=f"agent:{agent.slot}::{test.name}", kind="agent", name=test.name,
                         target_name=agent.compiled_name, where=f"{where} agent_tests", test=test,
                         slot=agent.slot, found_in=agent.slot))
    for case in found.values():
        profile = case.mock_profile
        if profile is not None and profile not in resolved.mock_profiles:
            known = ", ".join(sorted(resolved.mock_profiles)) or "none"
            raise RegistryError(f"test {case.test_id!r} uses unknown mock profile {profile!r} (registered: {known})")
    return list(found.values())


def select(cases: list[TestCase], *, kind: str | None = None, text: str | None = None) -> list[TestCase]:
    """`kind` keeps one kind; `text` keeps tests whose name or id contains it."""
    return [
        c for c in cases
        if (kind is None or c.kind == kind) and (not text or text in c.name or text in c.test_id)
    ]
