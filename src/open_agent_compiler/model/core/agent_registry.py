"""The registry under the module path registries written for the public package import."""

from open_agent_compiler.model.registry import AgentRegistry

__all__ = ["AgentRegistry"]
