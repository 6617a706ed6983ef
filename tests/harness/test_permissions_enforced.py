"""Deny by default, proven with the real harnesses: what OpenCode resolves for a compiled agent, what it lets a
tool call do and which tools it offers the model; which Bash calls Claude Code refuses. Our capability
read-back must say the same."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import _harness as h
import _opencode_permissions as oc
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader, AgentToolPermissions, McpServer
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.tool import BashToolPermission, ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.model.core.tool import ToolDefinitionLogicBash
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig
from open_agent_compiler.testing.permissions import bash_action, permission_action

pytestmark = pytest.mark.harness

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COMMANDS = ("git push origin main", "git push", "git status", "git", "gitk", "rm -rf /", "ls notes/a.md",
            "ls notes", "python3 scripts/word_stats.py <<'JSON'", "curl http://127.0.0.1")


def need_opencode() -> None:
    reason = h.availability()["opencode"]
    if reason:
        pytest.skip(reason)


def tool(name: str, *patterns: str, value: str = "allow") -> ToolDefinition:
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=f"The {name} tool."),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(value=value, allowed_commands=list(patterns))),  # type: ignore[arg-type]
    )


def agent(agent_id: str, **fields) -> AgentDefinition:  # type: ignore[no-untyped-def]
    header = AgentHeader(agent_id=agent_id, name=agent_id, description=f"The {agent_id} agent.")
    return AgentDefinition(header=header, system_prompt=f"You are {agent_id}.", **fields)


def compiled(resolved: ResolvedConfig, target: Path) -> Path:
    write_output(get_dialect("opencode").compile(resolved), target, dialect="opencode")
    return target


def read_back(project: Path, name: str):  # type: ignore[no-untyped-def]
    files = {str(p.relative_to(project)): p.read_bytes() for p in (project / ".opencode").rglob("*.md")}
    return get_dialect("opencode").capabilities(name, files)


def git_registry() -> ResolvedConfig:
    """The issue's case: a tool allowing `git *` listed AFTER one denying `git push *`."""
    reg = AgentRegistry()
    reg.register_agent("gitter", agent("gitter", extra_tools=[tool("no-push", "git push *", value="deny"),
                                                              tool("git", "git *")]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="gitter")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def test_a_later_git_allow_does_not_let_git_push_through(tmp_path: Path) -> None:
    need_opencode()
    project = compiled(git_registry(), tmp_path / "git")
    resolved = h.opencode_agent(project, "primary")
    assert oc.decide(resolved, "bash", "git push origin main") == "deny"
    assert oc.decide(resolved, "bash", "git status") == "allow"
    assert oc.decide(resolved, "bash", "rm -rf /") == "deny"
    # OpenCode itself refuses the call (and runs an allowed, harmless one)
    assert oc.tool_call(project, "primary", "bash", {"command": "git push origin main", "description": "push"})[0] \
        == "denied"
    assert oc.tool_call(project, "primary", "bash", {"command": "git --version", "description": "version"})[0] == "ran"
    caps = read_back(project, "primary")
    for command in COMMANDS:
        assert bash_action(caps, command)[0] == oc.decide(resolved, "bash", command), command


def mcp_registry(primary: str) -> ResolvedConfig:
    """`keeper` may use the `notes-fs` MCP server, `loner` has none; `primary` says which one runs."""
    reg = AgentRegistry()
    # the compiled .opencode/opencode.json configures the server: point it at the stub
    server = McpServer(name="notes-fs", command=[sys.executable, str(oc.MCP_STUB)])
    reg.register_agent("keeper", agent("keeper", tool_permissions=AgentToolPermissions(read=True, mcp=True),
                                       mcp_servers=[server]))
    reg.register_agent("loner", agent("loner", tool_permissions=AgentToolPermissions(read=True),
                                      extra_tools=[tool("ls", "ls notes/*")]))
    other = "loner" if primary == "keeper" else "keeper"
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id=primary),
                                                        TemplateSlot(name=other, default_agent_id=other)]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg.resolve_config("c")


def test_an_agent_without_mcp_is_not_offered_another_agents_mcp_tools(tmp_path: Path) -> None:
    need_opencode()
    servers = oc.stub_mcp("notes-fs")
    keeper = oc.offered_tools(compiled(mcp_registry("keeper"), tmp_path / "keeper"), "primary", mcp=servers)
    assert "notes-fs_echo" in keeper, keeper  # the stub server works and a granted agent gets its tool
    loner_project = compiled(mcp_registry("loner"), tmp_path / "loner")
    loner = oc.offered_tools(loner_project, "primary", mcp=servers)
    assert "notes-fs_echo" not in loner, loner
    assert "read" in loner and "bash" in loner and "webfetch" not in loner, loner
    resolved = h.opencode_agent(loner_project, "primary")
    assert oc.decide(resolved, "notes-fs_echo") == "deny"
    caps = read_back(loner_project, "primary")
    assert caps.mcp_servers == () and permission_action(caps, "mcp")[0] == "deny"


def test_multi_agent_researcher_cannot_use_the_coordinators_notes_fs(tmp_path: Path) -> None:
    need_opencode()
    root = EXAMPLES / "multi_agent"
    resolved = load_registry("agents:registry", str(root)).resolve_config("prod")
    project = tmp_path / "multi"
    write_output(get_dialect("opencode").compile(resolved, source_root=root), project, dialect="opencode")
    for name, notes_fs in (("primary", "allow"), ("researcher", "deny"), ("editor", "deny")):
        real = h.opencode_agent(project, name)
        assert oc.decide(real, "notes-fs_read_file") == notes_fs, name
        assert oc.decide(real, "other-server_tool") == "deny", name  # a server nobody named
        assert oc.decide(real, "codesearch") == "deny", name  # a built-in tool nobody granted
        caps = read_back(project, name)
        assert ("notes-fs" in caps.mcp_servers) is (notes_fs == "allow") and "*" not in caps.mcp_servers, name
        for command in COMMANDS:
            assert bash_action(caps, command)[0] == oc.decide(real, "bash", command), (name, command)
        for key in ("read", "edit", "webfetch", "websearch", "codesearch", "lsp"):
            assert permission_action(caps, key)[0] == oc.decide(real, key), (name, key)


def test_claude_code_refuses_what_the_read_back_denies(tmp_path: Path) -> None:
    """The same grants compiled for Claude Code: deny > ask > allow, whatever the order, and `dontAsk` refuses an
    ask. (Claude Code also runs some read-only commands, e.g. `printf`, with no rule at all: not used here.)"""
    reason = h.availability()["claude"]
    if reason:
        pytest.skip(reason)
    import _claude_permissions as cl

    reg = AgentRegistry()
    reg.register_agent("gitter", agent("gitter", extra_tools=[
        tool("no-push", "git push *", value="deny"), tool("git", "git *"), tool("commit", "git commit *", value="ask")]))
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="gitter")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    spec = get_dialect("claude")
    output = spec.compile(reg.resolve_config("c"))
    project = tmp_path / "claude"
    write_output(output, project, dialect="claude")
    commands = {"git push origin main": "refused", "git --version": "ran", "git commit -m x": "refused",
                "touch oac-marker": "refused"}
    outcomes = cl.bash_outcomes(project, "primary", list(commands))
    assert [outcome for outcome, _ in outcomes] == list(commands.values()), outcomes
    assert outcomes[1][1].startswith("git version")
    files = {path: (project / path).read_bytes() for path in spec.capability_files("primary")}
    caps = spec.capabilities("primary", files)
    for command, outcome in commands.items():
        assert (bash_action(caps, command)[0] == "allow") is (outcome == "ran"), command
