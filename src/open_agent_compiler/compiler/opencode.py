"""OpenCode: `.opencode/agents/<name>.md` with V1 `permission` rules, deny by default.

Frontmatter keys are limited to `ALLOWED_KEYS`: OpenCode forwards unknown keys to the model provider.
Permission keys live in the tuples below so that a harness version that rejects one is a one-line change.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from open_agent_compiler.compiler.bash_match import js_key_order, opencode_match
from open_agent_compiler.compiler.dialect import AgentPlan, FileDialect
from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.grants import ACTIONS, Action, agent_grants
from open_agent_compiler.compiler.identifiers import check_mcp_server
from open_agent_compiler.compiler.mcp import allowed_tools, connectable, granted_servers, opencode_server
from open_agent_compiler.compiler.output import CompiledFile, render_json
from open_agent_compiler.compiler.model_ids import ModelSettings, agent_model_settings, qualified_model
from open_agent_compiler.compiler.prompt import read_body_tools
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
# Stands for a name or value no rule names (NUL is in no real name), to learn what a catch-all decides.
UNNAMED = "\x00"


def _flag(on: bool) -> Action:
    return "allow" if on else "deny"


def _named(names: tuple[str, ...]) -> dict[str, Action] | Action:
    return {"*": "deny", **{name: "allow" for name in names}} if names else "deny"


def permission_block(plan: AgentPlan) -> dict[str, Any]:
    """The agent's `permission` map. OpenCode flattens it into rules in key order and the LAST matching rule
    decides, so the catch-all deny comes first and each grant after it; bash patterns come allow → ask → deny
    (see `AgentGrants.bash`) so that the strictest of overlapping patterns wins."""
    grants = plan.grants
    permission: dict[str, Any] = {"*": "deny"}  # every tool not granted below, other agents' MCP tools included
    permission["read"] = dict(READ_ALLOW) if grants.read else "deny"
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


def json_format_tools(agent: ResolvedAgent) -> list[str]:
    """The agent's tools offered in JSON format (`default_tool_format`/`tool_format_overrides`: json or both)."""
    definition = agent.definition
    return [reachable.tool.name for reachable in agent.tools
            if reachable.tool.json_tool is not None and definition.chosen_format(reachable.tool) != "bash"]


def differences_from_1_16_5(agents: Sequence[ResolvedAgent], temperatures: Sequence[str]) -> list[str]:
    """One line naming where this output differs from what 1.16.5 writes for the same agents (see
    docs/compatibility.md): JSON-format tools (1.16.5: a `<tool>: allow` permission and a `custom_tools` block,
    which OpenCode 1.18 moves into the options it sends to the model provider, with no tool of that name), the
    `temperature` key (1.16.5 leaves it out) and the `read` rule (1.16.5: `read: allow`, which lets `.env` be read)."""
    parts = []
    tools = [f"{agent.compiled_name!r}: {', '.join(found)}" for agent in agents if (found := json_format_tools(agent))]
    if tools:
        parts.append(f"JSON-format tools run through their allowed commands with the bash tool ({'; '.join(tools)}), "
                     "with no `<tool>: allow` permission and no `custom_tools` block (OpenCode has no tool of that "
                     "name without native tool files, and sends unknown frontmatter keys to the model provider)")
    if temperatures:
        parts.append(f"`temperature` is written for {', '.join(map(repr, temperatures))} (1.16.5 leaves it out)")
    readers = [agent.compiled_name for agent in agents if agent_grants(agent).read]
    if readers:
        parts.append(f"read is granted to {', '.join(map(repr, readers))} with OpenCode's own rule that denies "
                     "`.env` files (1.16.5 writes `read: allow`)")
    return [f"opencode: unlike open-agent-compiler 1.16.5: {'; '.join(parts)}"] if parts else []


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


Rule = tuple[str, str, Action]  # (permission, pattern, action), as OpenCode lists them


def _rule_list(raw: Any, where: str) -> list[Rule]:
    """The agent's rules in the order OpenCode evaluates them (JS object key order), after its defaults."""
    rules: list[Rule] = [("*", "*", UNSET_DEFAULT)]
    if raw is None:
        return rules
    mapping = raw if isinstance(raw, dict) else {"*": raw}
    keyed = {str(key): value for key, value in mapping.items()}
    for key in js_key_order(keyed):
        value = keyed[key]
        if not isinstance(value, dict):  # one action for every pattern: the rule (key, "*", action)
            if value not in ACTIONS:
                raise OacError(f"{where}.{key}: '*' has action {value!r}; use allow, ask or deny")
            rules.append((key, "*", value))
            continue
        patterns = {str(p): a for p, a in value.items()}
        for pattern in js_key_order(patterns):
            action = patterns[pattern]
            if action not in ACTIONS:
                raise OacError(f"{where}.{key}: {pattern!r} has action {action!r}; use allow, ask or deny")
            rules.append((key, pattern, action))
    return rules


class _Rules:
    """One agent's rules, indexed for OpenCode's evaluation: which rules apply to a permission is decided once
    per (artifact, permission), and without matching every rule. A key without a wildcard applies exactly to the
    permission it spells (after OpenCode's `\\` → `/`); only wildcard keys (`*`, `<server>_*`) are matched.
    A read-back asks ~25 permissions of ~20 rules: 500 matches an agent before, ~50 now."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.literal: dict[str, list[int]] = {}
        self.wild: list[tuple[int, str]] = []
        self.every: list[int] = []  # `*`: matches any text, so applies to every permission
        for index, (key, _, _) in enumerate(rules):
            if key == "*":
                self.every.append(index)
            elif "*" in key or "?" in key:
                self.wild.append((index, key))
            else:
                self.literal.setdefault(key.replace("\\", "/"), []).append(index)
        self.memo: dict[str, list[tuple[str, Action]]] = {}
        self.overall: dict[str, Action] = {}  # permission → `_overall`'s answer (a read-back asks some twice)

    def applicable(self, permission: str) -> list[tuple[str, Action]]:
        found = self.memo.get(permission)
        if found is None:
            indices = [index for index, key in self.wild if opencode_match(permission, key)] + self.every
            indices += self.literal.get(permission.replace("\\", "/"), ())
            found = self.memo[permission] = [self.rules[index][1:] for index in sorted(indices)]  # type: ignore[misc]
        return found


def _applicable(rules: _Rules, permission: str) -> list[tuple[str, Action]]:
    """(pattern, action) of the rules whose permission key matches `permission`, in order."""
    return rules.applicable(permission)


def _last(applicable: list[tuple[str, Action]], pattern: str) -> Action:
    """OpenCode's evaluation: the last rule whose pattern matches decides."""
    for rule_pattern, action in reversed(applicable):
        if opencode_match(pattern, rule_pattern):
            return action
    return "ask"  # OpenCode's answer when nothing matches (its own defaults always match first)


def _decide(rules: _Rules, permission: str, pattern: str) -> Action:
    """OpenCode's evaluation: the last rule whose permission and pattern both match."""
    return _last(_applicable(rules, permission), pattern)


def _in_order(applicable: list[tuple[str, Action]]) -> dict[str, Action]:
    """pattern → action in evaluation order (a repeated pattern keeps only its last, deciding, position)."""
    found: dict[str, Action] = {}
    for pattern, action in applicable:
        found.pop(pattern, None)
        found[pattern] = action
    return found


def _patterns(rules: _Rules, permission: str) -> dict[str, Action]:
    """The rules that apply to `permission`, pattern → action, in evaluation order."""
    return _in_order(_applicable(rules, permission))


def _overall(rules: _Rules, permission: str) -> Action:
    """Granted when any named pattern is allowed (e.g. one subagent); otherwise what an unnamed value gets."""
    found = rules.overall.get(permission)
    if found is None:
        applicable = _applicable(rules, permission)
        if all(pattern == "*" for pattern, _ in applicable):  # nothing named; `*` matches any text: the last decides
            found = applicable[-1][1] if applicable else "ask"
        elif any(_last(applicable, pattern) == "allow" for pattern in _in_order(applicable) if pattern != "*"):
            found = "allow"
        else:
            found = _last(applicable, UNNAMED)
        rules.overall[permission] = found
    return found


def _allowed_names(rules: _Rules, permission: str) -> tuple[str, ...]:
    applicable = _applicable(rules, permission)
    return tuple(name for name in _in_order(applicable) if name != "*" and _last(applicable, name) == "allow")


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

    def config_warnings(self, agents: Sequence[ResolvedAgent]) -> list[str]:
        temperatures = [agent.compiled_name for agent in agents if "temperature" in self.model_settings(agent).fields]
        return differences_from_1_16_5(agents, temperatures)

    def extra_files(self, agents: Sequence[ResolvedAgent]) -> list[CompiledFile]:
        servers = {name: server for name, server in granted_servers(agents).items() if connectable(server)}
        if not servers:
            return []
        config = {"$schema": "https://opencode.ai/config.json",
                  "mcp": {name: opencode_server(server) for name, server in servers.items()}}
        return [CompiledFile(path=MCP_CONFIG, content=render_json(config))]

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        config, body = self.read_agent(agent_name, files)
        rules = _Rules(_rule_list(config.get("permission"), f"{self.agent_path(agent_name)} permission"))
        keys = dict.fromkeys(key for key, _, _ in rules.rules if key != "*")
        servers = [key[:-2] for key in keys if key.endswith("_*") and len(key) > 2]
        # a server narrowed to some tools: `<server>_*` deny, then `<server>_<tool>` allow
        narrowed = {key for key in keys for server in servers if key.startswith(f"{server}_") and key != f"{server}_*"}
        permissions = {key: _overall(rules, key) for key in keys
                       if key not in servers and not key.endswith("_*") and key not in narrowed}
        permissions.update({key: _overall(rules, key) for key in ("read", "edit", "task", "skill", "webfetch",
                                                                     "websearch")})
        permissions["write"] = permissions["edit"]  # OpenCode's `edit` covers writing
        permissions["*"] = _decide(rules, UNNAMED, "*")  # any permission not named here
        # An MCP tool is called `<server>_<tool>`: a named server's tools, and a server nobody named.
        allowed = [server for server in servers if _decide(rules, f"{server}_{UNNAMED}", "*") == "allow"
                   or any(_decide(rules, key, "*") == "allow" for key in narrowed if key.startswith(f"{server}_"))]
        if _decide(rules, f"{UNNAMED}_{UNNAMED}", "*") == "allow":
            allowed.append("*")
        permissions["mcp"] = "allow" if allowed else "deny"
        return Capabilities(
            agent=agent_name,
            dialect=self.name,
            bash=_patterns(rules, "bash"),
            permissions=permissions,
            tools=read_body_tools(body),
            skills=_allowed_names(rules, "skill"),
            subagents=_allowed_names(rules, "task"),
            mcp_servers=tuple(allowed),
        )


OPENCODE = OpenCodeDialect()
