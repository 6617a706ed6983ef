"""MCP servers with allowed_tools: each harness's own configuration and permissions, read back the same."""

import json
import tomllib

import pytest
from oac_builders import DIALECT_NAMES, agent

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import AgentToolPermissions, MCPServerDefinition
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig

DOCS = MCPServerDefinition(name="docs", description="Docs.", command=["npx", "docs-server"],
                           allowed_tools=["search", "fetch_page"])
WIKI = MCPServerDefinition(name="wiki", url="http://127.0.0.1:9/mcp")


def config(lead_servers: list[MCPServerDefinition], helper_servers: list[MCPServerDefinition] = ()) -> ResolvedConfig:
    reg = AgentRegistry()
    mcp = AgentToolPermissions(mcp=True)
    reg.register_agent("lead", agent("lead", mcp_servers=lead_servers, tool_permissions=mcp))
    reg.register_agent("helper", agent("helper", mcp_servers=list(helper_servers), tool_permissions=mcp))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="lead"),
                                                        TemplateSlot(name="helper", default_agent_id="helper")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_read_back_names_the_granted_servers(dialect: str) -> None:
    spec = DIALECTS[dialect]
    files = spec.compile(config([DOCS, WIKI])).file_map()
    assert spec.capabilities("primary", files).mcp_servers == ("docs", "wiki")
    assert spec.capabilities("helper", files).mcp_servers == ()


def test_opencode_connects_servers_and_narrows_to_allowed_tools() -> None:
    files = DIALECTS["opencode"].compile(config([DOCS, WIKI])).file_map()
    mcp = json.loads(files[".opencode/opencode.json"])["mcp"]
    assert mcp == {"docs": {"type": "local", "command": ["npx", "docs-server"], "enabled": True},
                   "wiki": {"type": "remote", "url": "http://127.0.0.1:9/mcp", "enabled": True}}
    lead = parse_markdown(files[".opencode/agents/primary.md"], "p")[0]["permission"]
    keys = list(lead)
    assert lead["docs_*"] == "deny" and lead["docs_search"] == lead["docs_fetch_page"] == "allow"
    assert keys.index("docs_*") < keys.index("docs_search")  # OpenCode: the last matching rule wins
    assert lead["wiki_*"] == "allow"
    # the helper sees the same servers in OpenCode, so it must be denied them
    helper = parse_markdown(files[".opencode/agents/helper.md"], "h")[0]["permission"]
    assert helper["docs_*"] == helper["wiki_*"] == "deny" and "docs_search" not in helper


def test_no_servers_no_opencode_config() -> None:
    assert ".opencode/opencode.json" not in DIALECTS["opencode"].compile(config([])).file_map()


def test_claude_tools_and_settings_name_each_allowed_tool() -> None:
    files = DIALECTS["claude"].compile(config([DOCS, WIKI])).file_map()
    lead = parse_markdown(files[".claude/agents/primary.md"], "p")[0]
    assert "mcp__docs__search, mcp__docs__fetch_page, mcp__wiki" in lead["tools"]
    assert lead["mcpServers"] == [{"docs": {"type": "stdio", "command": "npx", "args": ["docs-server"]}},
                                  {"wiki": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}]
    allow = json.loads(files[".claude/settings.json"])["permissions"]["allow"]
    assert {"mcp__docs__search", "mcp__docs__fetch_page", "mcp__wiki"} <= set(allow) and "mcp__docs" not in allow


def test_codex_agent_file_carries_its_servers() -> None:
    files = DIALECTS["codex"].compile(config([DOCS, WIKI])).file_map()
    table = tomllib.loads(files[".codex/agents/primary.toml"].decode())
    assert table["mcp_servers"] == {"docs": {"command": "npx", "args": ["docs-server"],
                                             "enabled_tools": ["search", "fetch_page"]},
                                    "wiki": {"url": "http://127.0.0.1:9/mcp"}}
    assert "mcp_servers" not in tomllib.loads(files[".codex/agents/helper.toml"].decode())


def test_pi_says_it_has_no_mcp() -> None:
    output = DIALECTS["pi"].compile(config([DOCS]))
    assert [w for w in output.warnings if "Pi has no MCP support" in w and "docs" in w]
    body = parse_markdown(output.file_map()[".pi/agents/primary.md"], "p")[1]
    assert "Pi cannot connect to MCP servers" in body


def test_one_name_two_servers_is_an_error() -> None:
    other = MCPServerDefinition(name="docs", command=["other"])
    with pytest.raises(OacError, match="define MCP server 'docs' differently"):
        DIALECTS["opencode"].compile(config([DOCS], [other]))


@pytest.mark.parametrize(("dialect", "names"), [
    ("opencode", "`docs_search`, `docs_fetch_page`"),
    ("claude", "`mcp__docs__search`, `mcp__docs__fetch_page`"),
    ("codex", "`mcp__docs__search`, `mcp__docs__fetch_page`"),
])
def test_instructions_name_the_allowed_tools_the_harness_way(dialect: str, names: str) -> None:
    spec = DIALECTS[dialect]
    files = spec.compile(config([DOCS, WIKI])).file_map()
    text = spec.parse_agent("p", files[f"{spec.agents_dir}/primary{spec.agent_suffix}"])[1]
    assert f"you may use only {names}" in text
    assert "its tools are called " + spec.terms.mcp_tool("wiki") in text
