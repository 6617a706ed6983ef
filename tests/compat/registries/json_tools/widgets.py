"""A registry in the public package's style with a tool offered in JSON format (`default_tool_format="json"`,
and a per-tool override to "both"), explicit permissions and a subagent: what 1.16.5 and oac write for OpenCode
and Pi differs here (tools as permission keys and `custom_tools`; `bash` for every Pi agent, `task`), and
tests/harness/test_migrated_tool_lists.py loads both outputs in the real harnesses.

    oac compile widgets:registry --config default --target build --dialect opencode
"""

from pathlib import Path

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, AgentHeader, CompilationConfig, MCPServerDefinition, ModelParameters, TemplateSlot, TemplateTree,
    ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.permissions_model import BashToolPermission, JsonToolPermission
from open_agent_compiler.model.core.tools_model import (
    ScriptDefinition, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolDefinitionLogicJson,
    ToolScriptDefinition,
)

HERE = Path(__file__).resolve().parent
COMMAND = "python3 scripts/widget_tool.py *"


def widget() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="widget", description="Makes widgets.", usage_explanation_long="Makes one.",
                                    usage_explanation_short="widget", rules=[]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission("bash", "bash", "allow", [COMMAND]),
                                          positive_examples=[], negative_examples=[], mode_specific_rules=[]),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission("widget", "custom_tool", "allow"),
            positive_examples=[], negative_examples=[], mode_specific_rules=[],
            tool_scripts=[ToolScriptDefinition(paths=None, scripts=[ScriptDefinition(
                target_file_path="scripts/widget_tool.py", source_file_path=HERE / "widget_tool.py",
                source_file_type="python", script_contents=None)])]),
    )


def agent(name: str, description: str, **fields) -> AgentDefinition:  # type: ignore[no-untyped-def]
    return AgentDefinition(header=AgentHeader(agent_id=name, name=name, description=description),
                           usage_explanation_long=description, usage_explanation_short=name,
                           system_prompt=f"You are the {name}.", **fields)


def registry(json_format: bool = True, temperature: float | None = None, stdio_server: bool = False) -> AgentRegistry:
    """`json_format=False`: every tool in bash format (the default), for comparison; `temperature`: the maker's;
    `stdio_server`: the helper lists an MCP server with no url (1.16.5's stdio server)."""
    reg = AgentRegistry()
    maker = agent("maker", "Makes widgets.", extra_tools=[widget()],
                  default_tool_format="json" if json_format else "bash",
                  subagents=[AgentHeader(agent_id="helper", name="helper", description="Looks things up.")],
                  tool_permissions=ToolPermissions(read=False, write=False, edit=False))
    checker = agent("checker", "Checks widgets.", extra_tools=[widget()],
                    tool_format_overrides={"widget": "both"} if json_format else {},
                    tool_permissions=ToolPermissions(read=True))
    wiki = MCPServerDefinition(name="wiki", description="The team wiki, a stdio server.")
    helper = agent("helper", "Looks things up.", tool_permissions=ToolPermissions(read=True),
                   mcp_servers=[wiki] if stdio_server else [])
    model = ModelParameters(model_name="anthropic/claude-sonnet-4-5")
    warm = ModelParameters(model_name="anthropic/claude-sonnet-4-5", temperature=temperature)
    ids = {name: reg.register_agent(name, definition, warm if name == "maker" else model)
           for name, definition in (("maker", maker), ("checker", checker), ("helper", helper))}
    reg.register_template(TemplateTree(name="shop", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=ids["maker"]),
        TemplateSlot(name="checker", default_agent_id=ids["checker"]),
        TemplateSlot(name="helper", default_agent_id=ids["helper"]),
    ]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="shop"))
    return reg
