"""Tool tests are found on their tools and in a slot's `tool_tests` (naming a reachable tool); misplaced ones are
one clear error."""

import pytest

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolTest,
)
from open_agent_compiler.errors import RegistryError
from open_agent_compiler.testing.discovery import discover


def _resolved(own: list[ToolTest], scoped: list[ToolTest]):  # type: ignore[no-untyped-def]
    tested = ToolDefinition(header=ToolDefinitionHeader(name="a", description="a"), tool_tests=own)
    quiet = ToolDefinition(header=ToolDefinitionHeader(name="b", description="b"))
    agent = AgentDefinition(header=AgentHeader(agent_id="x", name="x"), extra_tools=[tested, quiet],
                            tool_tests=scoped)
    reg = AgentRegistry()
    reg.register_agent("x", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="x")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def test_tool_tests_on_the_tool_and_in_the_slot_name_their_tool() -> None:
    cases = discover(_resolved([ToolTest(name="own", input={})], [ToolTest(name="scoped", input={}, tool="b")]))
    found = {case.test_id: (case.target_name, case.tool.name if case.tool else None, case.where) for case in cases}
    assert found == {"tool:a::own": ("a", "a", "tool 'a' (slot 'primary' extra_tools)"),
                     "tool:b::scoped": ("b", "b", "slot 'primary' tool_tests")}


@pytest.mark.parametrize(("own", "scoped", "message"), [
    ([ToolTest(name="t", input={}, tool="b")], [], "tool test 't' on tool 'a' names another tool 'b'"),
    ([], [ToolTest(name="t", input={})], "must name its tool"),
    ([], [ToolTest(name="t", input={}, tool="zz")], "names tool 'zz', not reachable there"),
])
def test_a_misplaced_tool_test_is_one_error(own: list[ToolTest], scoped: list[ToolTest], message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        discover(_resolved(own, scoped))


def test_discovered_cases_are_what_validation_gives(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`TestCase.found` skips validation: every case equals the validated `TestCase(...)` of its given fields,
    field by field (the same objects), in its fields set and in its dump."""
    import shutil
    from pathlib import Path

    from open_agent_compiler.model.factory import load_registry
    from open_agent_compiler.testing.discovery import TestCase

    registries = Path(__file__).resolve().parents[1] / "compat" / "registries"
    kinds = set()
    for name, factory in (("ops_desk", "agents:registry"), ("walkthrough", "interview:registry")):
        shutil.copytree(registries / name, tmp_path / name, ignore=shutil.ignore_patterns(".oac", "__pycache__"))
        registry = load_registry(factory, str(tmp_path / name))
        for config in registry.list_configs():
            for case in discover(registry.resolve_config(config)):
                given = {field: getattr(case, field) for field in case.model_fields_set}
                validated = TestCase(**given)
                assert case == validated and case.model_fields_set == validated.model_fields_set
                assert all(getattr(case, field) is getattr(validated, field) for field in TestCase.model_fields)
                assert case.model_dump() == validated.model_dump()
                kinds.add(case.kind)
            resolved = registry.resolve_config(config)
            by_id = {case.test_id: case for case in discover(resolved)}
            for agent in resolved.agents:  # what discovery gives a capability or agent test, validated
                for kind, tests in (("capability", agent.definition.capability_tests),
                                    ("agent", agent.definition.agent_tests)):
                    for test in tests:
                        expected = TestCase(test_id=f"{kind}:{agent.slot}::{test.name}", kind=kind, name=test.name,
                                            target_name=agent.compiled_name, where=f"slot {agent.slot!r} {kind}_tests",
                                            test=test, slot=agent.slot, found_in=agent.slot)
                        found = by_id[expected.test_id]
                        assert found == expected and found.model_fields_set == expected.model_fields_set
    assert kinds == {"capability", "tool", "agent"}
