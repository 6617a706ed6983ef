"""What a compiled agent may do, read back from a compiled artifact: the view capability tests check."""

from typing import Literal

from pydantic import ConfigDict, Field

from open_agent_compiler.model.core.base import Frozen

Action = Literal["allow", "ask", "deny"]


class Capabilities(Frozen):
    """Normalized across dialects.

    `bash` maps each bash permission pattern to its action ("*" is the fallback, normally deny);
    `permissions` maps built-in keys (read, write, edit, mcp, task, skill, webfetch, ...) to their action —
    a key that is missing is denied. `tools`, `skills`, `subagents`, `mcp_servers` list names the artifact grants.
    """

    model_config = ConfigDict(defer_build=True)  # (Frozen's, built on first use): warm runs use none

    agent: str
    dialect: str
    bash: dict[str, Action] = Field(default_factory=dict)
    permissions: dict[str, Action] = Field(default_factory=dict)
    tools: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    subagents: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = ()
