"""What a dialect is (the `Dialect` protocol) and the parts the four dialects share."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.compiler.frontmatter import parse_markdown
from open_agent_compiler.compiler.grants import AgentGrants, agent_grants
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput, ManagedBlock, SettingsFragment
from open_agent_compiler.compiler.prompt import render_agent_body
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
                memo: RenderMemo | None = None) -> CompiledOutput: ...

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

    model_config = ConfigDict(frozen=True)

    agent: ResolvedAgent
    grants: AgentGrants
    body: str


def plan_agents(resolved: ResolvedConfig) -> list[AgentPlan]:
    descriptions = {agent.compiled_name: agent.description for agent in resolved.agents}
    plans = []
    for agent in resolved.agents:
        grants = agent_grants(agent)
        plans.append(AgentPlan(agent=agent, grants=grants, body=render_agent_body(agent, grants, descriptions)))
    return plans


class FileDialect:
    """Shared behaviour: one agent file per slot under `agents_dir`, skills under `skills_dir`, JSON tools'
    scripts at their target paths. Subclasses render one agent and read capabilities back."""

    name: str
    agents_dir: str
    agent_suffix: str
    skills_dir: str

    def agent_path(self, agent_name: str) -> str:
        return f"{self.agents_dir}/{agent_name}{self.agent_suffix}"

    def capability_files(self, agent_name: str) -> tuple[str, ...]:
        return (self.agent_path(agent_name),)

    def render_agent(self, plan: AgentPlan) -> bytes:
        raise NotImplementedError

    def extras(self, plans: list[AgentPlan]) -> tuple[tuple[SettingsFragment, ...], tuple[ManagedBlock, ...]]:
        """Fragments merged into user-owned files; none by default."""
        return (), ()

    def compile(self, resolved: ResolvedConfig, *, source_root: Path | None = None,
                memo: RenderMemo | None = None) -> CompiledOutput:
        plans = plan_agents(resolved)
        files = [
            CompiledFile(
                path=self.agent_path(p.agent.compiled_name),
                content=memo.render(self.name, p, lambda p=p: self.render_agent(p)) if memo else self.render_agent(p),
            )
            for p in plans
        ]
        files += skill_files(resolved, self.skills_dir)
        files += script_files(resolved, source_root)
        settings, blocks = self.extras(plans)
        return CompiledOutput(dialect=self.name, files=tuple(files), settings=settings, blocks=blocks)

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
