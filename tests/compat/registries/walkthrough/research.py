"""Step 4 — MCP servers. Listing a server in `mcp_servers` grants it to that agent (with `allowed_tools`, only
those tools); `tool_permissions.mcp` is not needed for that. Each harness gets the server in its own
configuration where it can (OpenCode `opencode.json`, Claude Code `mcpServers`, Codex `mcp_servers`); Pi has no
MCP client, and the compile says so.

    oac compile research:registry --config default --target build --dialect codex
    oac test research:registry --config default
"""

from open_agent_compiler.model.core.agent_model import (
    AgentDefinition, CompilationConfig, MCPServerDefinition, ModelParameters, TemplateSlot, TemplateTree,
    ToolPermissions,
)
from open_agent_compiler.model.core.agent_registry import AgentRegistry
from open_agent_compiler.model.core.test_model import (
    CapabilityTest, PermissionAbsentEvaluator, PermissionPresentEvaluator,
)

from common import header

PAPERS = MCPServerDefinition(name="papers", description="Search published papers.", url="http://127.0.0.1:8931/mcp",
                             allowed_tools=["search", "abstract"])
NOTEBOOK = MCPServerDefinition(name="notebook", description="The lab notebook.", url="http://127.0.0.1:8932/mcp")


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    scout = AgentDefinition(
        header=header("scout", "Finds related work."),
        usage_explanation_long="Searches papers and notes what it found.", usage_explanation_short="scout",
        system_prompt="Search for related work and summarise the three closest papers.",
        tool_permissions=ToolPermissions(read=True),
        mcp_servers=[PAPERS, NOTEBOOK],
        capability_tests=[
            CapabilityTest(name="scout-reads-and-uses-mcp",
                           evaluators=(PermissionPresentEvaluator(permission_key="read"),
                                       PermissionPresentEvaluator(permission_key="mcp"))),
            CapabilityTest(name="scout-never-writes", evaluators=(PermissionAbsentEvaluator(permission_key="write"),)),
        ],
    )
    agent_id = reg.register_agent("scout", scout, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="lab", description=None,
                                       slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="lab"))
    return reg
