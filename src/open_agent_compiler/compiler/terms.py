"""`HarnessTerms`: how the model inside one harness does what a compiled body asks (each dialect has its own)."""

from pydantic import BaseModel, ConfigDict


class HarnessTerms(BaseModel):
    """How the model inside one harness does what the body asks: each dialect module defines its own, so the
    instructions name that harness's real tools (a model told to use a tool it does not have improvises)."""

    model_config = ConfigDict(frozen=True)

    harness: str  # shown to the model: "OpenCode"
    shell: str  # how a command is run: "the `bash` tool"
    delegate: str  # how to call subagent {name}
    skill: str  # the sentence saying how a skill ({name}) is loaded here
    mcp_tools: str | None  # how tool {tool} of server {server} is named; None: the harness has no MCP
    commands_enforced: bool  # True: the harness itself refuses commands that are not listed
    todo: str | None = None  # the plan/todo tool every agent has here; None: keep the list in messages

    def delegate_to(self, name: str) -> str:
        return self.delegate.format(name=name)

    def load_skill(self, name: str) -> str:
        return self.skill.format(name=name)

    def mcp_tool(self, server: str, tool: str = "<tool>") -> str:
        return f"`{(self.mcp_tools or '{server}/{tool}').format(server=server, tool=tool)}`"


# Dialect-neutral wording, for callers that render a body outside any dialect.
NEUTRAL = HarnessTerms(
    harness="your harness",
    shell="your shell tool",
    delegate="your subagent tool (agent `{name}`)",
    skill="Load a skill with your skill tool (skill `{name}`) before you follow it.",
    mcp_tools="{server} {tool}",
    commands_enforced=False,
)
