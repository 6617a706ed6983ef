"""Access profiles: which concrete resource each symbolic resource name (`ToolDefinition.requires_resources`)
is bound to. A profile may extend one other profile; its own bindings win."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from open_agent_compiler.model.core.base import Frozen, Text
from open_agent_compiler.model.hashing import AnyValue

ResourceKind = Literal[
    "api", "postgres", "sqlite", "mysql", "redis", "fs", "mcp", "vector_store", "queue", "websocket", "vllm",
    "anthropic", "openai", "other",
]


class ResourceBinding(Frozen):
    """`config` is opaque to oac (passed to the tool's runtime). A `mock_only` binding may only be used by
    tools a mock profile covers: tests never reach the real resource."""

    kind: ResourceKind
    config: dict[str, AnyValue] = Field(default_factory=dict)
    mock_only: bool = False
    description: Text = ""


class AccessProfile(Frozen):
    name: str
    description: Text = ""
    extends: str | None = None
    bindings: dict[str, ResourceBinding] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _named(self) -> "AccessProfile":
        if not self.name.strip():
            raise ValueError("an AccessProfile needs a non-empty name")
        return self


class AccessProfileRegistry(BaseModel):
    """Profiles by name, resolved along their `extends` chain."""

    model_config = ConfigDict(extra="forbid")

    profiles: dict[str, AccessProfile] = Field(default_factory=dict)

    def register(self, profile: AccessProfile) -> None:
        if profile.name in self.profiles:
            raise ValueError(f"access profile {profile.name!r} is already registered")
        if profile.extends and profile.extends not in self.profiles:
            raise ValueError(f"access profile {profile.name!r} extends unregistered {profile.extends!r}")
        self.profiles[profile.name] = profile

    def get(self, name: str) -> AccessProfile | None:
        return self.profiles.get(name)

    def resolve(self, name: str) -> dict[str, ResourceBinding]:
        """Effective bindings of `name`: ancestors first, each descendant overriding. Raises on a cycle or gap."""
        chain: list[AccessProfile] = []
        current: str | None = name
        while current is not None:
            if any(p.name == current for p in chain):
                raise ValueError("access profile cycle: " + " -> ".join([*(p.name for p in chain), current]))
            profile = self.profiles.get(current)
            if profile is None:
                where = f" (extended by {chain[-1].name!r})" if chain else ""
                raise ValueError(f"access profile {current!r} is not registered{where}")
            chain.append(profile)
            current = profile.extends
        bindings: dict[str, ResourceBinding] = {}
        for profile in reversed(chain):
            bindings.update(profile.bindings)
        return bindings

    def validate_against(
        self, profile_name: str, tool_requirements: dict[str, list[str]], mock_covered: set[str] | None = None
    ) -> None:
        """Raise ValueError listing every required resource that is unbound, or mock_only for an unmocked tool."""
        bindings = self.resolve(profile_name)
        covered = mock_covered or set()
        problems = []
        for tool, resources in tool_requirements.items():
            for resource in resources:
                binding = bindings.get(resource)
                if binding is None:
                    problems.append(f"tool {tool!r} needs resource {resource!r}, unbound in {profile_name!r}")
                elif binding.mock_only and tool not in covered:
                    problems.append(f"tool {tool!r} uses mock_only resource {resource!r} but no mock covers it")
        if problems:
            raise ValueError(f"access profile {profile_name!r}: " + "; ".join(problems))
