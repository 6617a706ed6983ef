"""Issue 16, compile side: a registry written for open-agent-compiler 1.16.5 gets the same meaning in every
dialect — MCP servers granted by `mcp_servers`, Codex's sandbox and delegation, Claude's settings, Pi's tool
lists, the JSON tool format, the artifact loader, `oac compile --clean` — and the capability read-back decides
as each harness does (JavaScript key order, Claude's whole-tool deny, whole subagent names)."""

import json
import textwrap
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CapabilityTest, CompilationConfig, Criterion,
    Gate, GateCheck, JsonToolPermission, MCPServerDefinition, ModelParameters, ScriptDefinition, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolDefinitionLogicJson,
    ToolScriptDefinition, ToolUse, WorkflowStepDefinition,
)
from open_agent_compiler.cli.compile_cmd import CLEAN_NOTE, compile_command
from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.compiler.script import CompileScript
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent_model import ToolPermissions
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.testing.artifacts import load_agent_artifact
from open_agent_compiler.testing.capability import capability_checks
from open_agent_compiler.testing.permissions import bash_action, permission_action

DIALECT_NAMES = sorted(DIALECTS)
DOCS = MCPServerDefinition(name="docs", description="Team docs.", url="http://127.0.0.1:9/mcp")
FILES = MCPServerDefinition(name="files", description="Files.", command=["files-mcp", "--ro"])
BARE = MCPServerDefinition(name="wiki", description="A stdio server written as 1.16.5 writes one.")


def notes_tool(*, json_commands: tuple[str, ...] = ("python3 scripts/notes.py",)) -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="notes", description="Search notes.", usage_explanation_long="Query them.",
                                    usage_explanation_short="notes", rules=[]),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission("bash", "bash", "allow", ["grep -r *"]),
            positive_examples=["grep -r todo notes/"], negative_examples=[], mode_specific_rules=[]),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission("notes", "custom_tool", "allow", list(json_commands)),
            positive_examples=[], negative_examples=[], mode_specific_rules=[],
            input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
            tool_scripts=[ToolScriptDefinition(paths=None, scripts=[ScriptDefinition(
                target_file_path="scripts/notes.py", source_file_path=None, source_file_type="python",
                script_contents="print('{}')\n")])]),
    )


def no_push() -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name="no-push", description="Never push.", usage_explanation_long="",
                                    usage_explanation_short="", rules=[]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission("bash", "bash", "deny", ["git push *"]),
                                          positive_examples=[], negative_examples=[], mode_specific_rules=[]),
    )


def lead(**changes) -> AgentDefinition:  # type: ignore[no-untyped-def]
    fields = dict(
        header=AgentHeader(agent_id="lead", name="lead", description="Leads the team."),
        usage_explanation_long="The entry point.", usage_explanation_short="lead", system_prompt="You lead.",
        extra_tools=[notes_tool(), no_push()], subagents=[AgentHeader(agent_id="helper", name="helper")],
        tool_permissions=ToolPermissions(read=True, write=True, edit=True),  # `mcp` stays off
        mcp_servers=[DOCS, FILES],
        workflow=[WorkflowStepDefinition(id=1, name="Look", instructions="Look around.",
                                         evaluates=(Criterion(name="kind", question="Which kind?",
                                                              possible_values=("bug", "idea")),),
                                         tool_uses=(ToolUse(tool_name="notes"),)),
                  WorkflowStepDefinition(id=2, name="Ask", subagents=("helper",),
                                         gate=Gate(logic="all", checks=(GateCheck(variable="kind", value="bug"),)))],
    )
    return AgentDefinition(**{**fields, **changes})


def helper(**changes) -> AgentDefinition:  # type: ignore[no-untyped-def]
    fields = dict(header=AgentHeader(agent_id="helper", name="helper", description="Helps."),
                  usage_explanation_long="", usage_explanation_short="", system_prompt="You help.",
                  tool_permissions=ToolPermissions(read=True))
    return AgentDefinition(**{**fields, **changes})


def team(lead_agent: AgentDefinition | None = None, helper_agent: AgentDefinition | None = None) -> AgentRegistry:
    reg = AgentRegistry()
    lead_id = reg.register_agent("lead", lead_agent or lead(),
                                 ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    helper_id = reg.register_agent("helper", helper_agent or helper(), ModelParameters(model_name="claude-haiku-4-5"))
    reg.register_template(TemplateTree(name="t", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=lead_id),
        TemplateSlot(name="helper", default_agent_id=helper_id)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg


def compiled(dialect: str, reg: AgentRegistry | None = None):  # type: ignore[no-untyped-def]
    return DIALECTS[dialect].compile((reg or team()).resolve_config("c"))


def caps(dialect: str, name: str = "primary", reg: AgentRegistry | None = None) -> Capabilities:
    return DIALECTS[dialect].capabilities(name, compiled(dialect, reg).file_map())


def frontmatter(output, path: str) -> dict:  # type: ignore[no-untyped-def]
    return parse_markdown(output.file_map()[path], path)[0]


# --- 1. MCP servers: `mcp_servers` is the grant, in every dialect ------------------------------------------------
@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_listed_mcp_servers_are_granted_with_the_mcp_switch_off(dialect: str) -> None:
    found = caps(dialect)
    assert found.mcp_servers == ("docs", "files") and permission_action(found, "mcp")[0] == "allow"
    assert caps(dialect, "helper").mcp_servers == ()


def test_each_harness_connects_the_listed_servers() -> None:
    opencode = json.loads(compiled("opencode").file_map()[".opencode/opencode.json"])["mcp"]
    assert opencode == {"docs": {"type": "remote", "url": "http://127.0.0.1:9/mcp", "enabled": True},
                        "files": {"type": "local", "command": ["files-mcp", "--ro"], "enabled": True}}
    claude = frontmatter(compiled("claude"), ".claude/agents/primary.md")
    assert [list(server) for server in claude["mcpServers"]] == [["docs"], ["files"]]
    assert "mcp__docs" in claude["tools"] and "mcp__files" in claude["tools"]
    codex = tomllib.loads(compiled("codex").file_map()[".codex/agents/primary.toml"].decode())
    # Codex takes a URL server and a stdio server (command/args) in a role file alike.
    assert codex["mcp_servers"] == {"docs": {"url": "http://127.0.0.1:9/mcp"},
                                    "files": {"command": "files-mcp", "args": ["--ro"]}}
    pi = compiled("pi")
    assert [w for w in pi.warnings if "Pi has no MCP support" in w and "docs, files" in w]
    assert "`docs`" in load_body(pi, ".pi/agents/primary.md")


def load_body(output, path: str) -> str:  # type: ignore[no-untyped-def]
    return parse_markdown(output.file_map()[path], path)[1]


@pytest.mark.parametrize("dialect", ["opencode", "claude", "codex"])
def test_a_server_with_neither_command_nor_url_is_granted_not_connected_and_warned(dialect: str) -> None:
    reg = team(lead(mcp_servers=[BARE]))
    output = compiled(dialect, reg)
    assert [w for w in output.warnings if "'wiki' has neither command nor url" in w]
    assert caps(dialect, reg=reg).mcp_servers == ("wiki",)
    files = output.file_map()
    assert ".opencode/opencode.json" not in files
    if dialect == "claude":
        assert "mcpServers" not in frontmatter(output, ".claude/agents/primary.md")
    if dialect == "codex":
        assert "mcp_servers" not in tomllib.loads(files[".codex/agents/primary.toml"].decode())


# --- 2. compiled meaning per dialect ---------------------------------------------------------------------------
def codex_table(reg: AgentRegistry, name: str = "helper") -> dict:
    return tomllib.loads(compiled("codex", reg).file_map()[f".codex/agents/{name}.toml"].decode())


def test_codex_sandbox_is_workspace_write_unless_permissions_say_read_only() -> None:
    assert codex_table(team())["sandbox_mode"] == "read-only"  # explicit permissions without write/edit
    assert codex_table(team(), "primary")["sandbox_mode"] == "workspace-write"
    unset = team(helper_agent=helper(tool_permissions=None))
    assert codex_table(unset)["sandbox_mode"] == "workspace-write"  # Codex's own default, as in 1.16.5
    # the instructions still say what the definition grants, and the read-back takes the stricter
    assert permission_action(caps("codex", "helper", unset), "write")[0] == "deny"
    assert permission_action(caps("codex", "helper", team()), "write")[0] == "deny"
    assert permission_action(caps("codex", "primary", team()), "write")[0] == "allow"


def test_codex_delegates_to_subagents_and_carries_the_workflow() -> None:
    instructions = codex_table(team(), "primary")["developer_instructions"]
    assert '`spawn_agent` with `agent_type: "helper"`' in instructions
    assert "### Step 1: Look" in instructions and "Decide `kind`: Which kind? Answer one of: `bug`, `idea`." \
        in instructions
    assert caps("codex").subagents == ("helper",)


def test_claude_settings_allow_the_declared_capabilities_and_deny_what_is_denied() -> None:
    output = compiled("claude")
    rules = json.loads(output.file_map()[".claude/settings.json"])["permissions"]
    assert {"Read", "Write", "Edit", "Bash(grep -r *)", "Bash(python3 scripts/notes.py)"} <= set(rules["allow"])
    assert rules["deny"] == ["Bash(git push *)"] and "Bash(git push *)" not in rules["allow"]
    assert bash_action(caps("claude"), "git push origin main")[0] == "deny"
    assert permission_action(caps("claude", "helper"), "read")[0] == "allow"


def test_pi_lists_the_agents_tools_and_the_ones_it_may_not_use() -> None:
    output = compiled("pi")
    lead_fm = frontmatter(output, ".pi/agents/primary.md")
    assert lead_fm["tools"] == "read, grep, find, ls, bash, edit, write, Agent" and "disallowed_tools" not in lead_fm
    helper_fm = frontmatter(output, ".pi/agents/helper.md")
    assert helper_fm["tools"] == "read, grep, find, ls" and helper_fm["disallowed_tools"] == "bash, edit, write"
    helper_caps = caps("pi", "helper")
    assert helper_caps.bash == {} and permission_action(helper_caps, "write")[0] == "deny"
    assert caps("pi").subagents == ("helper",) and permission_action(caps("pi"), "task")[0] == "allow"
    body = load_body(output, ".pi/agents/primary.md")
    assert "Decide `kind`: Which kind? Answer one of: `bug`, `idea`." in body
    assert "Do this step only when `kind` is `bug`" in body


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_the_json_tool_format_documents_the_contract_per_tool(dialect: str) -> None:
    agent_path = DIALECTS[dialect].agent_path("primary")

    def notes_section(reg: AgentRegistry) -> str:
        output = compiled(dialect, reg)
        _, body = DIALECTS[dialect].parse_agent(agent_path, output.file_map()[agent_path])
        return body.split("### Tool: notes", 1)[1].split("### Tool:", 1)[0]

    as_json = notes_section(team(lead(default_tool_format="json")))
    assert "Run `python3 scripts/notes.py`" in as_json and '"query"' in as_json
    assert "grep -r todo notes/" not in as_json  # the bash examples belong to the bash format
    overridden = notes_section(team(lead(default_tool_format="json", tool_format_overrides={"notes": "bash"})))
    assert "grep -r todo notes/" in overridden and "JSON object on stdin" not in overridden
    both = notes_section(team(lead(tool_format_overrides={"notes": "both"})))
    assert "grep -r todo notes/" in both and "JSON object on stdin" in both


def test_a_json_tool_without_a_command_is_warned_about() -> None:
    silent = ToolDefinition(
        header=ToolDefinitionHeader(name="silent", description="Has no command.", usage_explanation_long="",
                                    usage_explanation_short="", rules=[]),
        json_tool=ToolDefinitionLogicJson(permission_json=JsonToolPermission("silent", "custom_tool", "allow"),
                                          positive_examples=[], negative_examples=[], mode_specific_rules=[],
                                          tool_scripts=[]))
    output = compiled("opencode", team(lead(extra_tools=[silent], default_tool_format="json")))
    assert [w for w in output.warnings if "JSON tool 'silent' has no allowed_commands" in w]
    assert "It has no command you may run" in load_body(output, ".opencode/agents/primary.md")


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_load_agent_artifact_returns_the_model(tmp_path: Path, dialect: str) -> None:
    CompileScript(target=tmp_path, factory=team, config="c", dialect=dialect).run()
    art = load_agent_artifact(tmp_path, "primary", dialect)
    expected = {"opencode": "anthropic/claude-sonnet-4-5", "claude": "claude-sonnet-4-5",
                "pi": "anthropic/claude-sonnet-4-5", "codex": None}[dialect]
    assert art.model == expected and art.agent_name == "primary"
    if dialect in ("opencode", "claude"):
        assert art.config["model"] == expected


# --- 3. oac compile --clean -------------------------------------------------------------------------------------
FACTORY = textwrap.dedent('''
    from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, ModelParameters,
        TemplateSlot, TemplateTree)

    def registry():
        reg = AgentRegistry()
        names = {names!r}
        for name in names:
            reg.register_agent(name, AgentDefinition(header=AgentHeader(agent_id=name, name=name, description="d"),
                usage_explanation_long="", usage_explanation_short="", system_prompt="Hi."),
                ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
        reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name=n, default_agent_id=reg.list_agents()[i])
                                                            for i, n in enumerate(["primary", *names[1:]])]))
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
        return reg
''')


def oac_compile(*args: str):  # type: ignore[no-untyped-def]
    group = click.Group("oac")
    group.add_command(compile_command, "compile")
    return CliRunner().invoke(group, ["compile", *args])


def test_clean_wipes_what_oac_wrote_then_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean_team.py").write_text(FACTORY.format(names=["a", "b"]))
    first = oac_compile("clean_team:registry", "--config", "c", "--target", "out")
    assert first.exit_code == 0, first.output
    mine = tmp_path / "out/.opencode/agents/notes.md"
    mine.write_text("my own agent\n")  # not in the manifest: never touched
    result = oac_compile("clean_team:registry", "--config", "c", "--target", "out", "--clean")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "removed out/.opencode/agents/b.md" in lines and "wrote out/.opencode/agents/b.md" in lines
    assert lines.index("removed out/.opencode/agents/b.md") < lines.index("wrote out/.opencode/agents/b.md")
    assert CLEAN_NOTE in lines  # the difference from 1.16.5 (which deletes the whole target) is said at run time
    assert (tmp_path / "out/.opencode/agents/primary.md").is_file() and mine.read_text() == "my own agent\n"


# --- 4. the read-back decides as each harness does ----------------------------------------------------------------
def test_opencode_read_back_iterates_keys_in_javascript_order() -> None:
    # JS objects list integer-like keys ("0", "7", "42") first, so `"*": deny` written first still comes after them
    # and wins: OpenCode denies these, and so must the read-back.
    text = (b"---\ndescription: d\npermission:\n  '*': deny\n  bash:\n    '*': deny\n    '42': allow\n    ls: allow\n"
            b"  task:\n    '*': deny\n    '7': allow\n    helper: allow\n---\nbody\n")
    found = DIALECTS["opencode"].capabilities("x", {".opencode/agents/x.md": text})
    assert bash_action(found, "42")[0] == "deny" and bash_action(found, "ls")[0] == "allow"
    assert found.subagents == ("helper",)


def test_digit_only_subagent_names_are_refused_at_compile() -> None:
    reg = team(lead(subagents=[AgentHeader(agent_id="7", name="7")]), helper(header=AgentHeader(
        agent_id="7", name="7", description="Seven.")))
    reg.register_template(TemplateTree(name="t7", description=None, slots=[
        TemplateSlot(name="primary", default_agent_id=reg.list_agents()[0]),
        TemplateSlot(name="7", default_agent_id=reg.list_agents()[1])]))
    reg.create_compilation_config(CompilationConfig(name="c7", template_name="t7"))
    with pytest.raises(OacError, match="subagent '7' is only digits"):
        DIALECTS["opencode"].compile(reg.resolve_config("c7"))


@pytest.mark.parametrize("mode", ["dontAsk", "default"])
@pytest.mark.parametrize("whole", ["Bash", "Bash(*)"])
def test_claude_whole_bash_deny_beats_a_specific_allow(whole: str, mode: str) -> None:
    agent = f"---\nname: x\ndescription: d\ntools: Bash\npermissionMode: {mode}\n---\nbody\n".encode()
    settings = json.dumps({"permissions": {"allow": ["Bash(git status)"], "deny": [whole]}}).encode()
    found = DIALECTS["claude"].capabilities("x", {".claude/agents/x.md": agent, ".claude/settings.json": settings})
    assert bash_action(found, "git status")[0] == "deny" and bash_action(found, "ls")[0] == "deny"


def test_must_have_subagents_matches_whole_names() -> None:
    found = Capabilities(agent="x", dialect="opencode", subagents=("reviewer-v2", "scribe"))
    test = CapabilityTest(name="t", must_have_subagents=("rev", "reviewer", "scribe", "scri"))
    assert [check.passed for check in capability_checks(test, found, "")] == [False, False, True, False]
    assert [check.passed for check in capability_checks(test, found, "-v2")] == [False, True, True, False]



def test_compile_script_clean_says_how_it_differs(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("mine\n")
    result = CompileScript(target=tmp_path, factory=team, config="c", clean=True).run()
    assert any(w.startswith("clean: only files oac wrote") for w in result.warnings)
    assert (tmp_path / "mine.txt").read_text() == "mine\n"


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_the_mcp_switch_without_servers_is_warned_about(dialect: str) -> None:
    output = compiled(dialect, team(lead(mcp_servers=[], tool_permissions=ToolPermissions(read=True, mcp=True))))
    assert [w for w in output.warnings if "tool_permissions.mcp is on but the agent lists no mcp_servers" in w]
    assert not [w for w in compiled(dialect).warnings if "tool_permissions.mcp is on" in w]


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_a_model_id_we_cannot_place_is_written_as_given(tmp_path: Path, dialect: str) -> None:
    def registry() -> AgentRegistry:
        reg = AgentRegistry()
        agent_id = reg.register_agent("probe", helper(), ModelParameters(model_name="m"))
        reg.register_template(TemplateTree(name="t", description=None,
                                           slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
        reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
        return reg

    result = CompileScript(target=tmp_path, factory=registry, config="c", dialect=dialect).run()
    art = load_agent_artifact(tmp_path, "primary", dialect)
    assert art.config.get("model") == art.model == "m"  # as 1.16.5 writes it; a harness config may define it
    assert [w for w in result.warnings if "written as given" in w] or dialect == "codex"


def test_claude_warns_when_one_agents_deny_overrides_anothers_allow() -> None:
    push = lambda value: ToolDefinition(  # noqa: E731
        header=ToolDefinitionHeader(name=f"push-{value}", description="Push.", usage_explanation_long="",
                                    usage_explanation_short="", rules=[]),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission("bash", "bash", value, ["git push *"]),
                                          positive_examples=[], negative_examples=[], mode_specific_rules=[]))
    reg = team(lead(extra_tools=[push("deny")]), helper(extra_tools=[push("allow")]))
    output = compiled("claude", reg)
    assert [w for w in output.warnings if "agent 'helper': bash pattern 'git push *' is allow here but deny for agent "
            "'primary'" in w]
    assert bash_action(caps("claude", "helper", reg), "git push origin")[0] == "deny"  # what Claude Code does
    assert not [w for w in compiled("claude").warnings if "project-wide" in w]
