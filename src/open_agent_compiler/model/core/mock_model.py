"""Mock classes under the module path registries written for the public package import."""

from open_agent_compiler.model.core.mock import MockKind, MockProfile, MockResponse, MockState

__all__ = ["MockKind", "MockProfile", "MockResponse", "MockState"]
