"""default_tool_format / tool_format_overrides: which contract of a tool the instructions document."""

import pytest
from oac_builders import agent

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import (
    BashToolPermission, JsonToolPermission, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash,
    ToolDefinitionLogicJson,
)
from open_agent_compiler.model.registry import AgentRegistry

DUAL = ToolDefinition(
    header=ToolDefinitionHeader(name="lookup", description="Looks things up."),
    bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=["lookup --q *"]),
                                      positive_examples=["lookup --q cats"]),
    json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission(allowed_commands=["lookup --json"]),
                                      input_schema={"type": "object"}, positive_examples=['{"q": "cats"}']),
)


def body(**fields) -> str:  # type: ignore[no-untyped-def]
    reg = AgentRegistry()
    reg.register_agent("a", agent("a", extra_tools=[DUAL], **fields))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    files = DIALECTS["opencode"].compile(reg.resolve_config("c")).file_map()
    return DIALECTS["opencode"].parse_agent("p", files[".opencode/agents/primary.md"])[1]


@pytest.mark.parametrize(("fields", "bash_doc", "json_doc"), [
    ({}, True, False),  # default: bash
    ({"default_tool_format": "json"}, False, True),
    ({"default_tool_format": "both"}, True, True),
    ({"default_tool_format": "json", "tool_format_overrides": {"lookup": "bash"}}, True, False),
])
def test_format_picks_what_is_documented(fields: dict, bash_doc: bool, json_doc: bool) -> None:
    text = body(**fields)
    assert ("- lookup --q cats" in text) == bash_doc
    assert ("Input schema:" in text and "Run `lookup --json`" in text) == json_doc
    # the grant does not depend on the format
    assert read_body_facts(text).bash == {"lookup --q *": "allow", "lookup --json": "allow"}
