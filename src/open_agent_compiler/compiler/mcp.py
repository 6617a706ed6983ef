"""MCP servers of a config, and each server's tool names in each harness.

Every server an agent lists in `mcp_servers` is granted (whatever `tool_permissions.mcp` says) and, when it says
how to reach it (`command` or `url`), connected in the harness's own MCP configuration; `allowed_tools` narrows
the grant to those tools (empty: every tool of the server). A server with neither (the public package's way of
writing a stdio server) is granted but not connected, and the compile warns: the user configures it.
- OpenCode: servers go to `.opencode/opencode.json` (`mcp`; OpenCode merges it with the user's root
  `opencode.json`, which stays theirs); permissions `<server>_*` and, with allowed tools, `<server>_<tool>`.
- Claude Code: `mcpServers` in the agent file; tools `mcp__<server>` or `mcp__<server>__<tool>`, allowed in
  `.claude/settings.json`.
- Codex: `mcp_servers.<server>` in the agent file, `enabled_tools` for allowed tools.
- Pi has no MCP: the servers are named in the instructions only, and the compile warns.
"""

from collections.abc import Iterable
from typing import Any

from open_agent_compiler.compiler.grants import granted_mcp_servers
from open_agent_compiler.compiler.identifiers import check_mcp_server
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import MCPServerDefinition
from open_agent_compiler.model.registry import ResolvedAgent


def connectable(server: MCPServerDefinition) -> bool:
    """True when the definition says how to start or reach the server (a `command` or a `url`)."""
    return bool(server.command or server.url)


def unconnected_warnings(dialect: str, agent: ResolvedAgent) -> list[str]:
    """One warning per granted server that cannot be connected because it has neither `command` nor `url`."""
    return [f"{dialect}: agent {agent.compiled_name!r}: MCP server {server.name!r} has neither command nor url, "
            "so it is granted but not connected; configure it in the harness yourself"
            for server in granted_mcp_servers(agent) if not connectable(server)]


def granted_servers(agents: Iterable[ResolvedAgent]) -> dict[str, MCPServerDefinition]:
    """Every server some agent is granted, once; two different servers with one name are an error."""
    found: dict[str, tuple[str, MCPServerDefinition]] = {}
    for agent in agents:
        for server in granted_mcp_servers(agent):  # not agent_grants: that checks every bash pattern again
            first = found.setdefault(check_mcp_server(server.name), (agent.compiled_name, server))
            if _connection(first[1]) != _connection(server):
                raise OacError(f"agents {first[0]!r} and {agent.compiled_name!r} define MCP server "
                               f"{server.name!r} differently")
    return {name: server for name, (_, server) in found.items()}


def _connection(server: MCPServerDefinition) -> tuple[Any, ...]:
    return (tuple(server.command), server.url, tuple(sorted(server.environment.items())))


def allowed_tools(server: MCPServerDefinition) -> tuple[str, ...]:
    for tool in server.allowed_tools:
        if not tool or any(not (ch.isalnum() or ch in "-_.") for ch in tool):
            raise OacError(f"MCP server {server.name!r}: allowed tool {tool!r} must be letters, digits, '-', '_', '.'")
    return tuple(dict.fromkeys(server.allowed_tools))


def opencode_server(server: MCPServerDefinition) -> dict[str, Any]:
    if server.command:
        config: dict[str, Any] = {"type": "local", "command": list(server.command)}
        if server.environment:
            config["environment"] = dict(server.environment)
    else:
        config = {"type": "remote", "url": server.url or ""}
    return {**config, "enabled": True}


def claude_tool_names(server: MCPServerDefinition) -> list[str]:
    """`mcp__<server>` (every tool) or one `mcp__<server>__<tool>` per allowed tool."""
    name = check_mcp_server(server.name)
    tools = allowed_tools(server)
    return [f"mcp__{name}__{tool}" for tool in tools] if tools else [f"mcp__{name}"]


def codex_server(server: MCPServerDefinition) -> dict[str, Any]:
    if server.command:
        config: dict[str, Any] = {"command": server.command[0], "args": list(server.command[1:])}
        if server.environment:
            config["env"] = dict(server.environment)
    else:
        config = {"url": server.url or ""}
    tools = allowed_tools(server)
    if tools:
        config["enabled_tools"] = list(tools)
    return config
