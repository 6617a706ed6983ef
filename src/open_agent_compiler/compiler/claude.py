"""Claude Code: `.claude/agents/<name>.md` plus permission rules merged into `.claude/settings.json`.

Per agent, the `tools` allowlist says which tools exist at all (`[]` when none: an absent `tools` key would
inherit every tool) and `permissionMode: dontAsk` turns every permission prompt into a denial, so only what
the settings rules allow runs. Settings rules are project-wide: `Bash(<pattern>)` for each pattern a tool
grants (allow → allow, ask → ask, deny → deny), `Read`/`Write`/`Edit` when an agent may read/write/edit,
`mcp__<server>` for granted MCP servers. An agent without `Bash` in its tools cannot use another agent's bash rules.
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from open_agent_compiler.compiler.dialect import AgentPlan, FileDialect, csv_items
from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.grants import ACTIONS, Action, agent_grants, least_to_most_restrictive, strictest
from open_agent_compiler.compiler.mcp import claude_tool_names, connectable
from open_agent_compiler.compiler.model_ids import CLAUDE_EFFORT, ModelSettings, agent_model_settings, claude_model
from open_agent_compiler.compiler.output import ManagedBlock, SettingsFragment
from open_agent_compiler.compiler.prompt import read_body_tools
from open_agent_compiler.compiler.terms import HarnessTerms
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import McpServer
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.registry import ResolvedAgent

SETTINGS_PATH = ".claude/settings.json"
PERMISSION_MODE = "dontAsk"
# What an agent file without `tools` inherits (the built-ins we reason about).
INHERITED_TOOLS = ("Bash", "Read", "Grep", "Glob", "Write", "Edit", "Agent", "WebFetch", "WebSearch")
_AGENT_TOOL = re.compile(r"(?:Agent|Task)(?:\((.*)\))?")
_BASH_RULE = re.compile(r"Bash\((.*)\)")


def tool_list(plan: AgentPlan) -> list[str]:
    grants = plan.grants
    tools = ["Bash"] if grants.runs_bash else []
    tools += ["Read", "Grep", "Glob"] if grants.read else []
    tools += ["Write"] if grants.write else []
    tools += ["Edit"] if grants.edit else []
    tools += [f"Agent({', '.join(grants.subagents)})"] if grants.subagents else []
    tools += [name for server in grants.mcp_servers for name in claude_tool_names(server)]
    return tools


def mcp_config(server: McpServer) -> dict[str, Any]:
    if server.command:
        config: dict[str, Any] = {"type": "stdio", "command": server.command[0], "args": list(server.command[1:])}
        if server.environment:
            config["env"] = dict(server.environment)
        return config
    return {"type": "http", "url": server.url or ""}


def split_tools(value: Any) -> list[str]:
    """`tools` as a list: YAML list, or a comma-separated string where commas inside (...) do not split."""
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    items, depth, current = [], 0, ""
    for ch in str(value or ""):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    return [item.strip() for item in items if item.strip()]


TERMS = HarnessTerms(
    harness="Claude Code",
    shell="the `Bash` tool",
    delegate='the `Task` tool with `subagent_type: "{name}"`',  # Claude Code 2.1 offers the model "Task"
    skill="Load a skill with the `Skill` tool (skill `{name}`) before you follow it.",
    mcp_tools="mcp__{server}__{tool}",
    commands_enforced=True,
)


def no_project_deny(agents: Sequence[ResolvedAgent]) -> list[str]:
    """One line when 1.16.5 would list a capability under `permissions.deny` (Read, Write or Edit that no agent
    with `tool_permissions` is granted) and this output does not (see docs/compatibility.md)."""
    explicit = [agent.definition.tool_permissions for agent in agents if agent.definition.tool_permissions is not None]
    denied = [rule for field, rule in (("read", "Read"), ("write", "Write"), ("edit", "Edit"))
              if explicit and not any(getattr(permissions, field) for permissions in explicit)]
    if not denied:
        return []
    return [f"claude: unlike open-agent-compiler 1.16.5, {SETTINGS_PATH} lists no `permissions.deny` for "
            f"{', '.join(denied)}, which no agent is granted: each agent's `tools:` leaves them out, and the project's "
            "own sessions and other agents keep them"]


class ClaudeDialect(FileDialect):
    name = "claude"
    agents_dir = ".claude/agents"
    agent_suffix = ".md"
    terms = TERMS
    skills_dir = ".claude/skills"

    def capability_files(self, agent_name: str) -> tuple[str, ...]:
        return (self.agent_path(agent_name), SETTINGS_PATH)

    def feature_warnings(self, agent: ResolvedAgent) -> list[str]:
        # dontAsk never asks: an `ask` rule refuses its command, in `claude -p` and interactively alike.
        warnings = super().feature_warnings(agent)  # MCP servers that cannot be connected
        asks = [pattern for pattern, action in agent_grants(agent).bash if action == "ask"]
        if asks:
            warnings.append(f"{self.name}: agent {agent.compiled_name!r}: runs with permissionMode: {PERMISSION_MODE},"
                            f" which refuses every command an ask rule covers instead of asking: "
                            f"{', '.join(map(repr, asks))}")
        return warnings

    def render_agent(self, plan: AgentPlan) -> bytes:
        agent, grants = plan.agent, plan.grants
        tools = tool_list(plan)
        config: dict[str, Any] = {
            "name": agent.compiled_name,
            "description": agent.description,
            "tools": ", ".join(tools) if tools else [],
        }
        config.update(self.model_settings(agent).fields)
        if grants.skills:
            config["skills"] = list(grants.skills)
        servers = [server for server in grants.mcp_servers if connectable(server)]
        if servers:
            config["mcpServers"] = [{server.name: mcp_config(server)} for server in servers]
        config["permissionMode"] = PERMISSION_MODE
        return render_markdown(config, plan.body)

    def model_settings(self, agent: ResolvedAgent) -> ModelSettings:
        # Claude Code agent files have no sampling keys: a temperature is warned about, not written.
        return agent_model_settings(self.name, agent.compiled_name, agent.model_parameters, claude_model,
                                    effort_key="effort", effort_table=CLAUDE_EFFORT)

    def extras(self, agents: Sequence[ResolvedAgent]) -> tuple[tuple[SettingsFragment, ...], tuple[ManagedBlock, ...]]:
        rules: dict[str, dict[str, None]] = {"allow": {}, "ask": {}, "deny": {}}
        for agent in agents:
            grants = agent_grants(agent)
            for pattern, action in grants.bash:
                rules[action][f"Bash({pattern})"] = None
            # The declared capabilities, allowed as the public package allows them (dontAsk refuses the rest).
            rules["allow"].update(dict.fromkeys(["Read"] if grants.read else []))
            rules["allow"].update(dict.fromkeys(["Write"] if grants.write else []))
            rules["allow"].update(dict.fromkeys(["Edit"] if grants.write or grants.edit else []))
            for server in grants.mcp_servers:
                rules["allow"].update(dict.fromkeys(claude_tool_names(server)))
        if not any(rules.values()):
            return (), ()
        fragment = SettingsFragment(path=SETTINGS_PATH, **{kind: tuple(found) for kind, found in rules.items()})
        return (fragment,), ()

    def config_warnings(self, agents: Sequence[ResolvedAgent]) -> list[str]:
        """Settings rules are project-wide and the strictest wins: a pattern one agent allows (or asks for) and
        another denies (or asks for) is denied (asked) for both."""
        strictest_of: dict[str, tuple[Action, str]] = {}
        granted: list[tuple[str, str, Action]] = []
        for agent in agents:
            for pattern, action in agent_grants(agent).bash:
                granted.append((agent.compiled_name, pattern, action))
                known = strictest_of.get(pattern)
                if known is None or ACTIONS.index(action) > ACTIONS.index(known[0]):
                    strictest_of[pattern] = (action, agent.compiled_name)
        return [f"{self.name}: agent {name!r}: bash pattern {pattern!r} is {action} here but {strictest} for agent "
                f"{other!r}; Claude Code applies settings rules project-wide, so it is {strictest} for every agent"
                for name, pattern, action in granted
                for strictest, other in [strictest_of[pattern]] if action != strictest] + no_project_deny(agents)

    def _settings_rules(self, files: Mapping[str, bytes]) -> dict[str, list[Action]]:
        data = files.get(SETTINGS_PATH)
        if data is None:
            return {}
        try:
            settings = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise OacError(f"{SETTINGS_PATH}: not valid JSON ({exc})") from None
        permissions = settings.get("permissions", {}) if isinstance(settings, dict) else {}
        found: dict[str, list[Action]] = {}
        for kind in ACTIONS:
            for rule in permissions.get(kind, []) if isinstance(permissions, dict) else []:
                if isinstance(rule, str):
                    found.setdefault(rule, []).append(kind)  # type: ignore[arg-type]
        return found

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        config, body = self.read_agent(agent_name, files)
        tools = split_tools(config["tools"]) if "tools" in config else list(INHERITED_TOOLS)
        rules = self._settings_rules(files)
        mode = config.get("permissionMode", "default")
        fallback: Action = "deny" if mode == "dontAsk" else "allow" if mode == "bypassPermissions" else "ask"

        def ruled(*names: str, default: Action = fallback) -> Action:
            return strictest([action for name in names for action in rules.get(name, [])]) or default

        names = {tool.split("(", 1)[0] for tool in tools}
        bash: dict[str, Action] = {}
        if "Bash" in names:
            everything = [*rules.get("Bash", []), *rules.get("Bash(*)", [])]  # `Bash(*)` is the same as `Bash`
            patterns = [(match.group(1), strictest([*actions, *everything]) or fallback)  # deny wins
                        for rule, actions in rules.items()
                        if (match := _BASH_RULE.fullmatch(rule)) and match.group(1) != "*"]
            # Claude decides deny > ask > allow whatever the order; as a "last match wins" list that is:
            # what no rule matches first, then allow, ask and deny rules.
            bash = {"*": strictest(everything) or fallback, **least_to_most_restrictive(patterns)}
        subagents = [
            name.strip()
            for tool in tools
            if (match := _AGENT_TOOL.fullmatch(tool)) and match.group(1)
            for name in match.group(1).split(",")
            if name.strip()
        ]
        server_actions: dict[str, Action] = {}
        for tool in tools:  # `mcp__<server>` or `mcp__<server>__<tool>`: a server is granted if any tool is
            if tool.startswith("mcp__"):
                server = tool[len("mcp__") :].split("__")[0]
                action = ruled(tool, f"mcp__{server}")
                server_actions[server] = "allow" if "allow" in (action, server_actions.get(server)) else action
        skills = csv_items(config.get("skills"))
        permissions: dict[str, Action] = {
            "read": ruled("Read", default="allow") if "Read" in names else "deny",
            "write": ruled("Edit", "Write") if "Write" in names else "deny",
            "edit": ruled("Edit") if "Edit" in names else "deny",
            "task": "allow" if names & {"Agent", "Task"} else "deny",
            "skill": "allow" if skills else "deny",
            "mcp": "allow" if "allow" in server_actions.values() else "deny",
            "webfetch": ruled("WebFetch") if "WebFetch" in names else "deny",
            "websearch": ruled("WebSearch") if "WebSearch" in names else "deny",
        }
        return Capabilities(
            agent=agent_name,
            dialect=self.name,
            bash=bash,
            permissions=permissions,
            tools=read_body_tools(body),
            skills=tuple(skills),
            subagents=tuple(subagents),
            mcp_servers=tuple(server for server, action in server_actions.items() if action == "allow"),
        )


CLAUDE = ClaudeDialect()
