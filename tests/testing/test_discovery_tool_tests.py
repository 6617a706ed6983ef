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
