"""Every dialect's compiled files parse back, carry the keys their harness needs and no others."""

import json
import tomllib

import pytest
import yaml
from oac_builders import DIALECT_NAMES, agent

from open_agent_compiler.compiler.claude import SETTINGS_PATH
from open_agent_compiler.compiler.codex import ALLOWED_KEYS as CODEX_KEYS
from open_agent_compiler.compiler.dialect import Dialect
from open_agent_compiler.compiler.dialects import DIALECTS, get_dialect
from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.compiler.opencode import ALLOWED_KEYS as OPENCODE_KEYS
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig


def frontmatter(data: bytes) -> dict:
    text = data.decode()
    assert text.startswith("---\n")
    _, yaml_text, _ = text.split("---\n", 2)
    return yaml.safe_load(yaml_text)


def test_table_lists_the_four_dialects_and_each_implements_the_protocol() -> None:
    assert list(DIALECTS) == list(DIALECT_NAMES)
    for name, dialect in DIALECTS.items():
        assert isinstance(dialect, Dialect) and dialect.name == name


def test_unknown_dialect_names_the_known_ones() -> None:
    with pytest.raises(OacError, match="unknown dialect 'cursor'; known: opencode, claude, pi, codex"):
        get_dialect("cursor")


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_agent_files_land_where_the_harness_looks(name: str, team: ResolvedConfig) -> None:
    dialect = DIALECTS[name]
    paths = {f.path for f in dialect.compile(team).files}
    for slot in ("primary", "researcher", "writer"):
        assert f"{dialect.agents_dir}/{slot}{dialect.agent_suffix}" in paths
    assert f"{dialect.skills_dir}/summarize/SKILL.md" in paths
    assert "scripts/stats.py" in paths


def test_opencode_frontmatter_uses_only_allowed_keys_and_denies_by_default(team: ResolvedConfig) -> None:
    files = DIALECTS["opencode"].compile(team).file_map()
    primary = frontmatter(files[".opencode/agents/primary.md"])
    researcher = frontmatter(files[".opencode/agents/researcher.md"])
    for config in (primary, researcher):
        assert set(config) <= set(OPENCODE_KEYS)
    assert primary["mode"] == "primary" and researcher["mode"] == "subagent"
    assert primary["model"] == "prov/model-l" and primary["temperature"] == 0.2
    assert "temperature" not in researcher
    permission = primary["permission"]
    assert permission["bash"] == {"*": "deny", "rg *": "allow", "git log *": "allow"}  # via the skill's step
    assert permission["task"] == {"*": "deny", "researcher": "allow", "writer": "allow"}
    assert permission["skill"] == {"*": "deny", "summarize": "allow"}
    assert permission["docs_*"] == "allow"
    assert permission["edit"] == "deny" and permission["webfetch"] == "deny"
    assert researcher["permission"]["bash"] == {"*": "deny", "rg *": "allow", "git log *": "allow"}
    assert list(researcher["permission"]["bash"])[0] == "*"  # last match wins: the catch-all goes first
    assert researcher["permission"]["task"] == "deny"
    writer = frontmatter(files[".opencode/agents/writer.md"])
    assert writer["permission"]["edit"] == "allow" and writer["permission"]["read"] == "deny"


def test_claude_agent_has_name_tools_and_settings_rules(team: ResolvedConfig) -> None:
    output = DIALECTS["claude"].compile(team)
    files = output.file_map()
    primary = frontmatter(files[".claude/agents/primary.md"])
    assert primary["name"] == "primary" and primary["description"] == "lead agent"
    assert primary["tools"] == "Bash, Read, Grep, Glob, Agent(researcher, writer), mcp__docs"
    assert primary["skills"] == ["summarize"] and primary["effort"] == "high"
    assert primary["mcpServers"] == [{"docs": {"type": "stdio", "command": "npx", "args": ["docs-server"]}}]
    assert primary["permissionMode"] == "dontAsk" and "temperature" not in primary
    assert frontmatter(files[".claude/agents/researcher.md"])["tools"] == "Bash, Read, Grep, Glob"
    settings = json.loads(files[SETTINGS_PATH])
    assert settings == {"permissions": {"allow": ["Bash(rg *)", "Bash(git log *)", "Read", "mcp__docs",
                                                  "Bash(python3 scripts/stats.py)", "Write", "Edit"]}}


def test_claude_agent_without_tools_gets_an_empty_list_not_everything() -> None:
    from oac_builders import agent

    from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
    from open_agent_compiler.model.registry import AgentRegistry

    reg = AgentRegistry()
    reg.register_agent("quiet", agent("quiet"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="quiet")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    output = DIALECTS["claude"].compile(reg.resolve_config("c"))
    assert frontmatter(output.file_map()[".claude/agents/primary.md"])["tools"] == []
    assert output.settings == ()


def test_claude_ask_and_deny_patterns_go_to_their_lists() -> None:
    from oac_builders import agent, bash_tool

    from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
    from open_agent_compiler.model.registry import AgentRegistry

    reg = AgentRegistry()
    reg.register_agent("a", agent("a", extra_tools=[bash_tool("push", "git push *", value="ask"),
                                                    bash_tool("rm", "rm *", value="deny")]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    fragment = DIALECTS["claude"].compile(reg.resolve_config("c")).settings[0]
    assert fragment.allow == () and fragment.ask == ("Bash(git push *)",) and fragment.deny == ("Bash(rm *)",)


def test_pi_tools_and_skills_are_comma_strings(team: ResolvedConfig) -> None:
    files = DIALECTS["pi"].compile(team).file_map()
    primary = frontmatter(files[".pi/agents/primary.md"])
    assert primary["name"] == "primary" and primary["prompt_mode"] == "replace"
    assert primary["tools"] == "read, grep, find, ls, bash, Agent" and primary["skills"] == "summarize"
    assert primary["disallowed_tools"] == "edit, write"
    assert primary["thinking"] == "high" and primary["model"] == "prov/model-l"
    writer = frontmatter(files[".pi/agents/writer.md"])
    assert writer["tools"] == "bash, edit, write" and writer["skills"] == "none"
    assert writer["disallowed_tools"] == "read, grep, find, ls"
    assert set(primary) <= {"name", "description", "tools", "disallowed_tools", "model", "thinking", "skills",
                            "prompt_mode"}


def test_codex_toml_has_only_allowed_keys_and_agents_md_block(team: ResolvedConfig) -> None:
    output = DIALECTS["codex"].compile(team)
    files = output.file_map()
    for slot, sandbox in (("primary", "read-only"), ("researcher", "read-only"), ("writer", "workspace-write")):
        table = tomllib.loads(files[f".codex/agents/{slot}.toml"].decode())
        assert set(table) <= set(CODEX_KEYS)
        assert {"name", "description", "developer_instructions"} <= set(table)
        assert table["name"] == slot and table["sandbox_mode"] == sandbox
    primary = tomllib.loads(files[".codex/agents/primary.toml"].decode())
    assert primary["model_reasoning_effort"] == "high" and "### Tool: search" in primary["developer_instructions"]
    agents_md = files["AGENTS.md"].decode()
    assert "<!-- oac:begin codex-agents" in agents_md and "`writer` (.codex/agents/writer.toml)" in agents_md


def test_codex_main_thread_runs_the_primary_agent(make_team) -> None:
    """`codex exec` runs one main thread and spawns role files only on request: the project config gives the
    main thread the primary role's instructions and sandbox, byte for byte (no other key, none of a subagent)."""
    for postfix in ("", "-v2"):
        files = DIALECTS["codex"].compile(make_team(postfix)).file_map()
        main = tomllib.loads(files[".codex/config.toml"].decode())
        primary = tomllib.loads(files[f".codex/agents/primary{postfix}.toml"].decode())
        assert main == {key: primary[key] for key in ("developer_instructions", "sandbox_mode")}
        assert main["sandbox_mode"] == "read-only" and "### Tool: search" in main["developer_instructions"]
    assert ".codex/config.toml" not in DIALECTS["opencode"].compile(make_team()).file_map()


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_skill_files_have_name_and_description(name: str, team: ResolvedConfig) -> None:
    dialect = DIALECTS[name]
    data = dialect.compile(team).file_map()[f"{dialect.skills_dir}/summarize/SKILL.md"]
    config, body = parse_markdown(data, "SKILL.md")
    assert config == {"name": "summarize", "description": "Summarize findings."}
    assert "1. Collect: Search first." in body and "Tools: `search`" in body and "Be brief." in body


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_bodies_state_the_same_facts_in_every_dialect(name: str, team: ResolvedConfig) -> None:
    dialect = DIALECTS[name]
    opencode = DIALECTS["opencode"]
    for slot in ("primary", "researcher", "writer"):
        here = dialect.compile(team).file_map()
        there = opencode.compile(team).file_map()
        _, body = dialect.parse_agent("x", here[f"{dialect.agents_dir}/{slot}{dialect.agent_suffix}"])
        _, reference = opencode.parse_agent("x", there[f".opencode/agents/{slot}.md"])
        assert read_body_facts(body) == read_body_facts(reference)
        assert read_body_facts(body).structured
        # the user's text is the same; only the wording about the harness differs
        assert body.split("## Permissions")[0] == reference.split("## Permissions")[0]


# How a subagent is called, in each harness's own words.
DELEGATION = {
    "opencode": 'the `task` tool with `subagent_type: "<name>"`',
    "claude": 'the `Task` tool with `subagent_type: "<name>"`',  # the name Claude Code 2.1's init event lists
    "codex": '`spawn_agent` with `agent_type: "<name>"`',
    "pi": 'the `Agent` tool with `subagent_type: "<name>"`',
}


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_bodies_name_the_harness_own_mechanisms(name: str, team: ResolvedConfig) -> None:
    dialect = DIALECTS[name]
    files = dialect.compile(team).file_map()
    _, primary = dialect.parse_agent("p", files[f"{dialect.agents_dir}/primary{dialect.agent_suffix}"])
    assert "Hand work to a subagent with " + DELEGATION[name] in primary
    others = [phrase for other, phrase in DELEGATION.items() if phrase != DELEGATION[name]]
    assert not [phrase for phrase in others if phrase in primary]
    _, writer = dialect.parse_agent("w", files[f"{dialect.agents_dir}/writer{dialect.agent_suffix}"])
    shell = {"opencode": "the `bash` tool", "claude": "the `Bash` tool", "codex": "the `exec_command` tool",
             "pi": "the `bash` tool"}[name]
    assert f"Run `python3 scripts/stats.py` with {shell}, exactly as written" in writer


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_no_empty_sections_and_no_reference_to_a_missing_one(name: str) -> None:
    reg = AgentRegistry()
    reg.register_agent("solo", agent("solo"))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="solo")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    dialect = DIALECTS[name]
    files = dialect.compile(reg.resolve_config("c")).file_map()
    _, body = dialect.parse_agent("p", files[f"{dialect.agents_dir}/primary{dialect.agent_suffix}"])
    assert "(none)" not in body
    for heading in ("## Tools", "## Skills", "## Subagents", "## MCP servers", "Allowed commands"):
        assert heading not in body, heading
    assert "You may not run shell commands." in body and "## Permissions" in body


def test_body_documents_tools_skills_subagents_and_mcp(team: ResolvedConfig) -> None:
    files = DIALECTS["opencode"].compile(team).file_map()
    _, body = parse_markdown(files[".opencode/agents/primary.md"], "primary")
    for text in ("### Tool: search", "### Skill: summarize", "- `researcher`: researcher agent",
                 "- `docs`: Docs. (command: npx docs-server)", "- read: allow", "- write: deny"):
        assert text in body
    _, body = parse_markdown(files[".opencode/agents/writer.md"], "writer")
    assert "### Tool: stats" in body and "- `python3 scripts/stats.py` (allow)" in body
    assert "Input schema:" in body


def test_subagents_use_postfixed_names(make_team) -> None:  # type: ignore[no-untyped-def]
    files = DIALECTS["opencode"].compile(make_team("-dev")).file_map()
    primary = frontmatter(files[".opencode/agents/primary-dev.md"])
    assert primary["permission"]["task"] == {"*": "deny", "researcher-dev": "allow", "writer-dev": "allow"}
    _, body = parse_markdown(files[".opencode/agents/primary-dev.md"], "p")
    assert "- `writer-dev`:" in body


def test_script_is_executable_when_it_has_a_shebang(team: ResolvedConfig) -> None:
    script = next(f for f in DIALECTS["pi"].compile(team).files if f.path == "scripts/stats.py")
    assert script.executable and script.content.startswith(b"#!")
