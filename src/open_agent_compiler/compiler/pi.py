"""Pi with `@tintinweb/pi-subagents`: `.pi/agents/<name>.md`.

`tools` is a comma-separated string of the built-ins the agent is granted, plus pi-subagents' `Agent` tool when it
has subagents (a subagent session never gets it: pi-subagents does not nest); `disallowed_tools` names every
other built-in; `tools: none` only for an agent granted none of them. `skills` is a comma-separated string or `none` (an
absent `skills` would inherit every skill). Pi has no per-command bash rules, no subagent allowlist and no MCP:
those are stated in the prompt body only, and `capabilities` reads them from there.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from open_agent_compiler.compiler.dialect import AgentPlan, FileDialect, csv_items
from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.grants import Action, agent_grants, least_to_most_restrictive
from open_agent_compiler.compiler.model_ids import PI_THINKING, ModelSettings, agent_model_settings, qualified_model
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.compiler.terms import HarnessTerms
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.registry import ResolvedAgent

READ_TOOLS = ("read", "grep", "find", "ls")
DEFAULT_TOOLS = ("read", "bash", "edit", "write", "grep", "find", "ls")  # what an absent `tools` gives
NOTHING = "none"


SUBAGENT_TOOL = "Agent"  # pi-subagents' tool for handing work to a subagent


def tool_names(plan: AgentPlan) -> list[str]:
    """The agent's tools: granted built-ins, and pi-subagents' `Agent` tool when it has subagents."""
    grants = plan.grants
    tools = list(READ_TOOLS) if grants.read else []
    tools += ["bash"] if grants.runs_bash else []
    tools += ["edit"] if grants.edit else []
    tools += ["write"] if grants.write else []
    tools += [SUBAGENT_TOOL] if grants.subagents else []
    return tools


def disallowed_names(plan: AgentPlan) -> list[str]:
    """Every built-in the agent is not granted (pi-subagents removes them even where another setting adds them)."""
    granted = set(tool_names(plan))
    return [tool for tool in DEFAULT_TOOLS if tool not in granted]


def tool_list_notes(agents: Sequence[ResolvedAgent]) -> list[str]:
    """One line when an agent's `tools` differ from what 1.16.5 writes: it gives every agent `bash` (Pi then runs
    any command: no per-command rules) and names the subagent tool `task`, which pi-subagents reports as "not a
    known built-in" and grants nothing."""
    grants = {agent.compiled_name: agent_grants(agent) for agent in agents}
    without_bash = [name for name, granted in grants.items() if not granted.runs_bash]
    delegating = [name for name, granted in grants.items() if granted.subagents]
    parts = []
    if without_bash:
        parts.append(f"no `bash` tool for {', '.join(map(repr, without_bash))} (no command of theirs needs it, and "
                     "Pi lets an agent with bash run any command)")
    if delegating:
        parts.append(f"`{SUBAGENT_TOOL}` (pi-subagents' subagent tool), not `task`, for "
                     f"{', '.join(map(repr, delegating))} (`task` names no tool in Pi or pi-subagents)")
    if not parts:
        return []
    return ["pi: unlike open-agent-compiler 1.16.5, which lists `bash` for every agent and `task` for subagents: "
            + "; ".join(parts)]


def _items(value: Any, absent: tuple[str, ...]) -> list[str]:
    if value is None:
        return list(absent)
    items = csv_items(value)
    return [] if items == [NOTHING] else items


# Pi has no per-command rules and no MCP; subagents are pi-subagents' `Agent` tool, and the skills an agent
# lists are preloaded into its prompt by pi-subagents.
TERMS = HarnessTerms(
    harness="Pi",
    shell="the `bash` tool",
    delegate='the `Agent` tool with `subagent_type: "{name}"`',
    skill="pi-subagents adds the full text of each skill below (its SKILL.md) to your instructions: follow it.",
    mcp_tools=None,
    commands_enforced=False,
)


class PiDialect(FileDialect):
    name = "pi"
    agents_dir = ".pi/agents"
    agent_suffix = ".md"
    terms = TERMS
    skills_dir = ".pi/skills"

    def render_agent(self, plan: AgentPlan) -> bytes:
        agent = plan.agent
        config: dict[str, Any] = {
            "name": agent.compiled_name,
            "description": agent.description,
            "tools": ", ".join(tool_names(plan)) or NOTHING,
        }
        disallowed = disallowed_names(plan)
        if disallowed:
            config["disallowed_tools"] = ", ".join(disallowed)
        config.update(self.model_settings(agent).fields)
        config["skills"] = ", ".join(plan.grants.skills) or NOTHING
        config["prompt_mode"] = "replace"
        return render_markdown(config, plan.body)

    def model_settings(self, agent: ResolvedAgent) -> ModelSettings:
        # pi-subagents agent files have no sampling keys: temperature is warned about, not written.
        return agent_model_settings(self.name, agent.compiled_name, agent.model_parameters, qualified_model,
                                    effort_key="thinking", effort_table=PI_THINKING)

    def config_warnings(self, agents: Sequence[ResolvedAgent]) -> list[str]:
        return tool_list_notes(agents)

    def feature_warnings(self, agent: ResolvedAgent) -> list[str]:
        # Pi has no MCP client: granted servers are named in the instructions only (and read back from there).
        servers = [server.name for server in agent_grants(agent).mcp_servers]
        if not servers:
            return []
        return [f"{self.name}: agent {agent.compiled_name!r}: Pi has no MCP support; MCP servers "
                f"{', '.join(servers)} are named in the instructions only, not connected"]

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        config, body = self.read_agent(agent_name, files)
        facts = read_body_facts(body)
        tools = set(_items(config.get("tools"), DEFAULT_TOOLS)) - set(_items(config.get("disallowed_tools"), ()))

        def has(tool: str) -> Action:
            return "allow" if tool in tools else "deny"

        told = facts.permissions
        skills = _items(config.get("skills"), ())
        permissions: dict[str, Action] = {
            "read": has("read"),
            "write": has("write"),
            "edit": has("edit"),
            "task": told.get("task", "deny") if SUBAGENT_TOOL in tools or "tools" not in config else "deny",
            "skill": "allow" if skills or "skills" not in config else "deny",
            "mcp": told.get("mcp", "deny"),
            "webfetch": "deny",
            "websearch": "deny",
        }
        return Capabilities(
            agent=agent_name,
            dialect=self.name,
            # Pi runs any command once `bash` is granted; our bodies restrict it to the listed commands.
            bash=({"*": "deny" if facts.structured else "allow", **least_to_most_restrictive(facts.bash.items())}
                  if "bash" in tools else {}),
            permissions=permissions,
            tools=facts.tools,
            skills=tuple(skills),
            subagents=facts.subagents if permissions["task"] == "allow" else (),
            mcp_servers=facts.mcp_servers,
        )


PI = PiDialect()
