"""1.16.5's module path of its OpenCode dialect, for registries and build scripts that import it: our OpenCode
dialect (`compiler.opencode`) under that name."""

from open_agent_compiler.compiler.opencode import OPENCODE, OpenCodeDialect

__all__ = ["OPENCODE", "OpenCodeDialect"]
