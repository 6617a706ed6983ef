"""What a dialect is (the `Dialect` protocol) and the parts the four dialects share."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.expand import with_primary_twins
from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.compiler.grants import AgentGrants, agent_grants
from open_agent_compiler.compiler.mcp import granted_servers, unconnected_warnings
from open_agent_compiler.compiler.model_ids import ModelSettings
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput, ManagedBlock, SettingsFragment
from open_agent_compiler.compiler.prompt import render_agent_body
from open_agent_compiler.compiler.terms import NEUTRAL, HarnessTerms
from open_agent_compiler.compiler.workflow import workflow_problems
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.compiler.scripts import script_files
from open_agent_compiler.compiler.skills import skill_files
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig


@runtime_checkable
class Dialect(Protocol):
    name: str
    agents_dir: str  # e.g. ".opencode/agents"
    agent_suffix: str  # ".md" or ".toml"
    skills_dir: str

    def compile(self, resolved: ResolvedConfig, *, source_root: Path | None = None,
                memo: RenderMemo | None = None, with_warnings: bool = True) -> CompiledOutput: ...

    def parse_agent(self, path: str, data: bytes) -> tuple[dict[str, Any], str]:
        """(config, body) of one compiled agent file; an OacError naming `path` when it cannot be read."""
        ...

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        """What the compiled agent may do, read from the compiled bytes (`files`: relative path → bytes)."""
        ...

    def capability_files(self, agent_name: str) -> tuple[str, ...]:
        """The relative paths `capabilities` reads for this agent (agent file first)."""
        ...


class AgentPlan(BaseModel):
    """One agent ready to render: its resolved slot, what it is granted, and its prompt body."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # warm runs use none

    agent: ResolvedAgent
    grants: AgentGrants
    body: str
    config_mcp_servers: tuple[str, ...] = ()  # every MCP server the config connects (to deny the others)


def plan_agent(agent: ResolvedAgent, descriptions: Mapping[str, str], terms: HarnessTerms = NEUTRAL,
               config_mcp_servers: tuple[str, ...] = ()) -> AgentPlan:
    """`descriptions` maps compiled agent names to descriptions (the body lists the agent's subagents); `terms`
    is the harness the body is written for."""
    grants = agent_grants(agent)
    return AgentPlan(agent=agent, grants=grants, body=render_agent_body(agent, grants, descriptions, terms),
                     config_mcp_servers=config_mcp_servers)


def plan_agents(resolved: ResolvedConfig, terms: HarnessTerms = NEUTRAL) -> list[AgentPlan]:
    descriptions = agent_descriptions(resolved)
    return [plan_agent(agent, descriptions, terms) for agent in resolved.agents]


def definition_problems(agent: ResolvedAgent) -> list[str]:
    """What the definition asks for that no dialect does as asked (the compile warns, the body says so)."""
    problems = workflow_problems(agent)
    # A reference with mode "primary" asks the public package for a dispatch through its opencode_manager.py
    # script; every harness here has a subagent tool, so the agent is delegated to like any other subagent.
    problems += [f"subagent {ref.name!r} is referenced with mode 'primary': it is called with the harness's "
                 "subagent tool, not dispatched as a separate primary session"
                 for ref in agent.definition.subagents if ref.mode == "primary"]
    # In the public package `tool_permissions.mcp` alone lets an agent use every MCP tool; here a server is granted
    # by listing it in `mcp_servers`, so the switch alone grants nothing.
    if agent.definition.permissions.mcp and not agent.definition.mcp_servers:
        problems.append("tool_permissions.mcp is on but the agent lists no mcp_servers: no MCP server is granted "
                        "(list each server the agent may use in mcp_servers)")
    # A JSON tool is run through its allowed command (JSON on stdin). The public package can instead build a
    # harness-native custom tool (`--native-tools`), which is not built here: without a command it is unusable.
    problems += [f"JSON tool {reachable.tool.name!r} has no allowed_commands, so the agent cannot run it "
                 "(native custom tools are not built here)"
                 for reachable in agent.tools
                 if reachable.tool.json_tool is not None
                 and agent.definition.chosen_format(reachable.tool) != "bash"
                 and not any(action != "deny" for _, action in reachable.tool.permission_rules())]
    return problems


def agent_descriptions(resolved: ResolvedConfig) -> dict[str, str]:
    return {agent.compiled_name: agent.description for agent in resolved.agents}


def render_input(agent: ResolvedAgent, descriptions: Mapping[str, str],
                 config_mcp_servers: tuple[str, ...] = ()) -> list[Any]:
    """Everything an AgentPlan is derived from: the agent itself, its subagents' descriptions and the config's
    MCP servers. Cheaper to digest than the plan, so an unchanged agent is neither planned nor rendered again."""
    return [agent.content_digest(), [(name, descriptions.get(name, "")) for name in agent.subagents],
            list(config_mcp_servers)]


class FileDialect:
    """Shared behaviour: one agent file per slot under `agents_dir`, skills under `skills_dir`, JSON tools'
    scripts at their target paths. Subclasses render one agent and read capabilities back."""

    # No harness has an equivalent of access profiles / resource bindings (runtime configuration of tools):
    # no dialect writes them; compiler.script.check_access_profile validates them. A preset's top_p, top_k,
    # min_p, penalties, limits and modalities have no per-agent key in any of the four agent formats.

    name: str
    agents_dir: str
    agent_suffix: str
    skills_dir: str
    terms: HarnessTerms = NEUTRAL  # how this harness's model calls subagents, skills, commands

    def agent_path(self, agent_name: str) -> str:
        return f"{self.agents_dir}/{agent_name}{self.agent_suffix}"

    def capability_files(self, agent_name: str) -> tuple[str, ...]:
        return (self.agent_path(agent_name),)

    def render_agent(self, plan: AgentPlan) -> bytes:
        raise NotImplementedError

    def model_settings(self, agent: ResolvedAgent) -> ModelSettings:
        """The agent's model keys in this harness's form, and warnings for what cannot be expressed."""
        return ModelSettings()

    def feature_warnings(self, agent: ResolvedAgent) -> list[str]:
        """What of the agent's definition this harness cannot express (beyond its model settings)."""
        return unconnected_warnings(self.name, agent)

    def config_warnings(self, agents: Sequence[ResolvedAgent]) -> list[str]:
        """What this harness cannot express about the agents together (e.g. rules it applies project-wide)."""
        return []

    def extra_files(self, agents: Sequence[ResolvedAgent]) -> list[CompiledFile]:
        """Whole files of this dialect besides agents, skills and scripts; none by default."""
        return []

    def extras(self, agents: Sequence[ResolvedAgent]) -> tuple[tuple[SettingsFragment, ...], tuple[ManagedBlock, ...]]:
        """Fragments merged into user-owned files; none by default."""
        return (), ()

    def _agent_file(self, agent: ResolvedAgent, descriptions: Mapping[str, str], memo: RenderMemo | None,
                    servers: tuple[str, ...] = ()) -> bytes:
        if memo is None:
            return self.render_agent(plan_agent(agent, descriptions, self.terms, servers))
        return memo.render(self.name, render_input(agent, descriptions, servers),
                           lambda: self.render_agent(plan_agent(agent, descriptions, self.terms, servers)))

    def compile(self, resolved: ResolvedConfig, *, source_root: Path | None = None,
                memo: RenderMemo | None = None, with_warnings: bool = True) -> CompiledOutput:
        """`with_warnings=False`: the output's `warnings` stay empty (a caller that reads only the files: `oac
        test`). They are messages derived from each agent (model settings, features, definition problems) that
        raise nothing a rendered agent did not (agent_grants is the render's own, computed once per agent)."""
        resolved = with_primary_twins(resolved)
        descriptions = agent_descriptions(resolved)
        servers = tuple(granted_servers(resolved.agents))
        files = [
            CompiledFile(path=self.agent_path(agent.compiled_name),
                         content=self._agent_file(agent, descriptions, memo, servers),
                         private=any(server.environment for server in agent.definition.mcp_servers))  # tokens: 0600
            for agent in resolved.agents
        ]
        files += skill_files(resolved, self.skills_dir)
        files += script_files(resolved, source_root)
        files += self.extra_files(resolved.agents)
        settings, blocks = self.extras(resolved.agents)
        warnings: tuple[str, ...] = ()
        if with_warnings:
            warnings = tuple(warning for agent in resolved.agents
                             for warning in (*self.model_settings(agent).warnings, *self.feature_warnings(agent),
                                             *(f"{self.name}: agent {agent.compiled_name!r}: {problem}"
                                               for problem in definition_problems(agent))))
            warnings += tuple(self.config_warnings(resolved.agents))
        return CompiledOutput(dialect=self.name, files=tuple(files), settings=settings, blocks=blocks,
                              warnings=warnings)

    def parse_agent(self, path: str, data: bytes) -> tuple[dict[str, Any], str]:
        return parse_markdown(data, path)

    def read_agent(self, agent_name: str, files: Mapping[str, bytes]) -> tuple[dict[str, Any], str]:
        path = self.agent_path(agent_name)
        data = files.get(path)
        if data is None:
            raise OacError(f"no compiled {self.name} agent {agent_name!r} (expected {path})")
        return self.parse_agent(path, data)


def csv_items(value: Any) -> list[str]:
    """A comma-separated string (or a YAML list) as a list of trimmed, non-empty items."""
    if value is None:
        return []
    parts = value if isinstance(value, list) else str(value).split(",")
    return [str(part).strip() for part in parts if str(part).strip()]
