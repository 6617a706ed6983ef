"""What one compiled agent may do, computed once from its resolved definition; every dialect renders this.

Deny by default: an agent gets only the bash patterns its reachable tools grant, read/write/edit only when
`tool_permissions` switches them on, its own subagents and skills, and the MCP servers it lists (`mcp_servers`,
granted whatever `tool_permissions.mcp` says, as in the public package: the list is the per-server grant).
"""

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import ConfigDict

from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.agent import McpServer
from open_agent_compiler.model.core.base import SharedFieldsSet, private_attributes
from open_agent_compiler.model.registry import ResolvedAgent

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")  # least to most restrictive


def strictest(actions: Iterable[Action]) -> Action | None:
    """The most restrictive of `actions` (None for none): deny beats ask beats allow."""
    return max(actions, key=ACTIONS.index, default=None)


class AgentGrants(SharedFieldsSet):
    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    # (pattern, action): the strictest action per pattern, ordered allow → ask → deny (first-seen order within
    # each), so that where patterns overlap the strictest decides under "last matching rule wins" (OpenCode).
    bash: tuple[tuple[str, Action], ...]
    read: bool
    write: bool
    edit: bool
    subagents: tuple[str, ...]  # compiled names
    skills: tuple[str, ...]
    mcp_servers: tuple[McpServer, ...]  # the agent's `mcp_servers`, each granted

    @property
    def runs_bash(self) -> bool:
        """True when at least one pattern is allowed or asked: only then does the agent get a shell."""
        return any(action != "deny" for _, action in self.bash)

    def permission_summary(self) -> dict[str, Action]:
        """Built-in permission keys and their action, the same for every dialect."""
        def flag(on: bool) -> Action:
            return "allow" if on else "deny"

        return {
            "read": flag(self.read),
            "write": flag(self.write),
            "edit": flag(self.edit),
            "task": flag(bool(self.subagents)),
            "skill": flag(bool(self.skills)),
            "mcp": flag(bool(self.mcp_servers)),
            "webfetch": "deny",
            "websearch": "deny",
        }


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # one regex search, not a Python loop over every character


def _check_pattern(pattern: str, tool: str) -> str:
    if not pattern.strip() or _CONTROL.search(pattern):
        raise OacError(f"tool {tool!r}: bash pattern {pattern!r} must be one non-empty line without control characters")
    if pattern.isascii() and pattern.isdigit():
        # OpenCode reads its rules from a JS object, which moves such keys before every other one.
        raise OacError(f"tool {tool!r}: bash pattern {pattern!r} is only digits, which OpenCode would reorder")
    return pattern


def _check_name(name: str, what: str) -> str:
    if name.isascii() and name.isdigit():
        # OpenCode's `task`/`skill` maps are JS objects: such a key would move before the catch-all deny.
        raise OacError(f"{what} {name!r} is only digits, which OpenCode would reorder before its catch-all rule")
    return name


def least_to_most_restrictive(rules: Iterable[tuple[str, Action]]) -> dict[str, Action]:
    """`rules` ordered allow, then ask, then deny (stable), so that under "last matching rule wins" the strictest
    of the overlapping patterns decides — what Claude Code computes whatever the order."""
    return dict(sorted(rules, key=lambda rule: ACTIONS.index(rule[1])))


def granted_mcp_servers(agent: ResolvedAgent) -> tuple[McpServer, ...]:
    """The agent's MCP servers. Listing a server grants it; `tool_permissions.mcp` (the public package's older
    switch for "MCP in general") neither adds nor removes a listed server. An agent that lists none has none."""
    return tuple(agent.definition.mcp_servers)


def agent_grants(agent: ResolvedAgent) -> AgentGrants:
    """What `agent` may do. Computed once per agent object (a frozen model; copies are validated anew, see
    `expand._copy`): a compile asks for it while planning the body and again for warnings and settings (Claude
    Code: four times an agent, also when the render memo serves the file)."""
    private = private_attributes(agent)
    grants = private["_grants"]
    if grants is None:
        grants = private["_grants"] = _agent_grants(agent)
    return grants


def _agent_grants(agent: ResolvedAgent) -> AgentGrants:
    bash: dict[str, Action] = {}
    for reachable in agent.tools:
        for pattern, action in reachable.tool.permission_rules():
            _check_pattern(pattern, reachable.tool.name)
            known = bash.get(pattern)  # a pattern seen before keeps the stricter action
            bash[pattern] = action if known is None or known == action else strictest((action, known)) or action
    permissions = agent.definition.permissions
    return AgentGrants(
        bash=tuple(least_to_most_restrictive(bash.items()).items()),
        read=permissions.read,
        write=permissions.write,
        edit=permissions.edit,
        subagents=tuple(_check_name(name, "subagent") for name in agent.subagents),
        skills=tuple(dict.fromkeys(_check_name(skill.name, "skill") for skill in agent.definition.skills)),
        mcp_servers=granted_mcp_servers(agent),
    )
