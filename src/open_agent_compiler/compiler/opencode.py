"""OpenCode: `.opencode/agents/<name>.md` with V1 `permission` rules, deny by default.

Frontmatter keys are limited to `ALLOWED_KEYS`: OpenCode forwards unknown keys to the model provider.
Permission keys live in the tuples below so that a harness version that rejects one is a one-line change.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from open_agent_compiler.compiler.dialect import AgentPlan, FileDialect
from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.grants import ACTIONS, Action
from open_agent_compiler.compiler.identifiers import check_mcp_server
from open_agent_compiler.compiler.mcp import allowed_tools, granted_servers, opencode_server
from open_agent_compiler.compiler.output import CompiledFile, render_json
from open_agent_compiler.compiler.model_ids import ModelSettings, agent_model_settings, qualified_model
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.compiler.terms import HarnessTerms
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.registry import ResolvedAgent

MCP_CONFIG = ".opencode/opencode.json"  # OpenCode merges it with the project's own opencode.json
ALLOWED_KEYS = ("description", "mode", "model", "temperature", "permission")
# Read-only file tools granted together with `read`.
READ_KEYS = ("glob", "grep", "list")
# Keys we always deny: we never grant them. All are permission keys OpenCode 1.18 validates (it takes any
# other key silently as a rule, so a made-up key would look deliberate while meaning nothing).
ALWAYS_DENIED = ("lsp", "todowrite", "webfetch", "websearch", "external_directory", "doom_loop")
# OpenCode's own read default keeps .env files out; an agent-level `read: allow` would undo it.
READ_ALLOW: dict[str, Action] = {"*": "allow", "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow"}
# What OpenCode does for a permission key nobody set (its documented defaults).
UNSET_DEFAULT: Action = "allow"


def _flag(on: bool) -> Action:
    return "allow" if on else "deny"


def _named(names: tuple[str, ...]) -> dict[str, Action] | Action:
    return {"*": "deny", **{name: "allow" for name in names}} if names else "deny"


def permission_block(plan: AgentPlan) -> dict[str, Any]:
    grants = plan.grants
    permission: dict[str, Any] = {"read": dict(READ_ALLOW) if grants.read else "deny"}
    permission.update({key: _flag(grants.read) for key in READ_KEYS})
    permission["edit"] = _flag(grants.write or grants.edit)  # OpenCode's `edit` covers write and patch
    permission["bash"] = {"*": "deny", **dict(grants.bash)}
    permission["task"] = _named(grants.subagents)
    permission["skill"] = _named(grants.skills)
    granted = {server.name for server in grants.mcp_servers}
    for server in plan.agent.definition.mcp_servers:
        permission[f"{check_mcp_server(server.name)}_*"] = _flag(server.name in granted)
    permission.update({key: "deny" for key in ALWAYS_DENIED})
    return permission


def mcp_permissions(permission: dict[str, Any], plan: AgentPlan) -> dict[str, Any]:
    """Every server the config connects is visible to every OpenCode agent: deny the ones this agent is not
    granted, and narrow a granted server to its `allowed_tools` (the catch-all first: the last match wins)."""
    granted = {server.name: server for server in plan.grants.mcp_servers}
    for name in plan.config_mcp_servers:
        server = granted.get(name)
        tools = allowed_tools(server) if server is not None else ()
        permission[f"{name}_*"] = "allow" if server is not None and not tools else "deny"
        permission.update({f"{name}_{tool}": "allow" for tool in tools})
    return permission


def _rules(value: Any, where: str) -> dict[str, Action]:
    """A permission value (one action, or a pattern → action map) as a checked pattern map."""
    rules: dict[str, Action] = {}
    for pattern, action in (value if isinstance(value, dict) else {"*": value}).items():
        if action not in ACTIONS:
            raise OacError(f"{where}: {pattern!r} has action {action!r}; use allow, ask or deny")
        rules[str(pattern)] = action
    return rules


def _overall(rules: dict[str, Action]) -> Action:
    """Granted when any named pattern is allowed (e.g. one subagent); otherwise the catch-all decides."""
    if any(action == "allow" for pattern, action in rules.items() if pattern != "*"):
        return "allow"
    return rules.get("*", UNSET_DEFAULT)


def _allowed_names(rules: dict[str, Action]) -> tuple[str, ...]:
    return tuple(name for name, action in rules.items() if name != "*" and action == "allow")


TERMS = HarnessTerms(
    harness="OpenCode",
    shell="the `bash` tool",
    delegate='the `task` tool with `subagent_type: "{name}"`',
    skill='Load a skill with the `skill` tool (`name: "{name}"`) before you follow it.',
    mcp_tools="{server}_{tool}",
    commands_enforced=True,
)


class OpenCodeDialect(FileDialect):
    name = "opencode"
    agents_dir = ".opencode/agents"
    agent_suffix = ".md"
    terms = TERMS
    skills_dir = ".opencode/skills"

    def model_settings(self, agent: ResolvedAgent) -> ModelSettings:
        # OpenCode has no agent-level reasoning key (an unknown key would be sent to the provider): warned.
        return agent_model_settings(self.name, agent.compiled_name, agent.model_parameters, qualified_model,
                                    effort_key=None, temperature_key="temperature")

    def render_agent(self, plan: AgentPlan) -> bytes:
        agent = plan.agent
        config: dict[str, Any] = {"description": agent.description, "mode": "primary" if agent.primary else "subagent"}
        config.update(self.model_settings(agent).fields)
        config["permission"] = mcp_permissions(permission_block(plan), plan)
        return render_markdown(config, plan.body)

    def extra_files(self, agents: Sequence[ResolvedAgent]) -> list[CompiledFile]:
        servers = granted_servers(agents)
        if not servers:
            return []
        config = {"$schema": "https://opencode.ai/config.json",
                  "mcp": {name: opencode_server(server) for name, server in servers.items()}}
        return [CompiledFile(path=MCP_CONFIG, content=render_json(config))]

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        config, body = self.read_agent(agent_name, files)
        where = f"{self.agent_path(agent_name)} permission"
        raw = config.get("permission")
        permission = raw if isinstance(raw, dict) else {}
        catch_all = raw if raw is not None and not isinstance(raw, dict) else permission.get("*", UNSET_DEFAULT)
        everything = _rules(catch_all, where)["*"]

        def rules(key: str) -> dict[str, Action]:
            return _rules(permission[key], f"{where}.{key}") if key in permission else {"*": everything}

        mcp = {key[:-2]: _overall(rules(key)) for key in permission if isinstance(key, str) and key.endswith("_*")}
        for server in mcp:  # a server narrowed to some tools: `<server>_*` deny, `<server>_<tool>` allow
            if any(key.startswith(f"{server}_") and key != f"{server}_*" and value == "allow"
                   for key, value in permission.items() if isinstance(key, str)):
                mcp[server] = "allow"
        permissions = {key: _overall(rules(key)) for key in ("read", "edit", "task", "skill", "webfetch", "websearch")}
        permissions["write"] = permissions["edit"]  # OpenCode's `edit` covers writing
        if mcp:
            permissions["mcp"] = "allow" if "allow" in mcp.values() else "deny"
        return Capabilities(
            agent=agent_name,
            dialect=self.name,
            bash=rules("bash"),
            permissions=permissions,
            tools=read_body_facts(body).tools,
            skills=_allowed_names(rules("skill")),
            subagents=_allowed_names(rules("task")),
            mcp_servers=tuple(server for server, action in mcp.items() if action == "allow"),
        )


OPENCODE = OpenCodeDialect()
