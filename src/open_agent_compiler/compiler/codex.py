"""Codex: `.codex/agents/<name>.toml`, a managed block in the root `AGENTS.md` listing the agents, and the project
config `.codex/config.toml` that makes the primary agent Codex's main thread.

`codex exec` / `codex` run one main thread; role files are only what it may spawn. So the primary agent's
`developer_instructions` and `sandbox_mode` also go into the project config (read, like role files, only in a
trusted project), and what the main thread is told is the primary agent's prompt, as the role file has it.

Only `ALLOWED_KEYS` are written: one unknown key makes Codex ignore the whole file. The prompt body is
`developer_instructions`. Writes are governed by `sandbox_mode` (read-only unless the agent may write or
edit); commands, reading, skills, subagents and MCP servers have no per-agent switch in an agent file, so they
are stated in the instructions and `capabilities` reads them from there.
"""

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli_w

from open_agent_compiler.compiler.dialect import AgentPlan, FileDialect
from open_agent_compiler.compiler.grants import Action, least_to_most_restrictive
from open_agent_compiler.compiler.mcp import codex_server, connectable
from open_agent_compiler.compiler.model_ids import CODEX_EFFORT, ModelSettings, agent_model_settings, codex_model
from open_agent_compiler.compiler.output import CompiledFile, CompiledOutput, ManagedBlock, SettingsFragment
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.compiler.terms import HarnessTerms
from open_agent_compiler.compiler.text import item
from open_agent_compiler.errors import OacError
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.compiler.render_memo import RenderMemo
from open_agent_compiler.model.registry import ResolvedAgent, ResolvedConfig

ALLOWED_KEYS = ("name", "description", "developer_instructions", "model", "model_reasoning_effort", "sandbox_mode",
                "mcp_servers")
AGENTS_MD = "AGENTS.md"
PROJECT_CONFIG = ".codex/config.toml"
MAIN_THREAD_KEYS = ("developer_instructions", "sandbox_mode")  # of the primary's role file, for the main thread
BLOCK_MARKER = "codex-agents"
WRITABLE_SANDBOXES = ("workspace-write", "danger-full-access")


# Codex has no per-command rules, no skill tool and (0.171) no plan tool: the body asks the model to keep to its
# commands, to read a skill's SKILL.md itself and to keep its todo list in its messages. Commands run through
# `exec_command` (0.171 offers it inside its `exec` tool).
TERMS = HarnessTerms(
    harness="Codex",
    shell="the `exec_command` tool",
    delegate='`spawn_agent` with `agent_type: "{name}"` (then `wait_agent` for its answer)',
    skill="Before you follow a skill, read its `.agents/skills/{name}/SKILL.md`.",
    mcp_tools="mcp__{server}__{tool}",
    commands_enforced=False,
)


def sandbox_mode(agent: ResolvedAgent) -> str:
    """Codex's own default (`workspace-write`, which its commands need to write their outputs) unless the
    definition's `tool_permissions` allow neither write nor edit: then `read-only`. As in the public package.
    The instructions state write/edit as granted, and the read-back takes the stricter of the two."""
    permissions = agent.definition.tool_permissions
    return "read-only" if permissions is not None and not (permissions.write or permissions.edit) else "workspace-write"


class CodexDialect(FileDialect):
    name = "codex"
    agents_dir = ".codex/agents"
    agent_suffix = ".toml"
    terms = TERMS
    skills_dir = ".agents/skills"

    def render_agent(self, plan: AgentPlan) -> bytes:
        agent, grants = plan.agent, plan.grants
        head = {"name": agent.compiled_name, "description": agent.description}
        tail: dict[str, Any] = {}
        tail.update(self.model_settings(agent).fields)
        tail["sandbox_mode"] = sandbox_mode(agent)
        servers = [server for server in grants.mcp_servers if connectable(server)]
        if servers:  # Codex takes stdio (`command`) and streamable HTTP (`url`) servers alike
            tail["mcp_servers"] = {server.name: codex_server(server) for server in servers}
        # Only the instructions as a readable multi-line string: tomli_w's multi-line form turns CRLF into LF.
        instructions = {"developer_instructions": plan.body}
        text = tomli_w.dumps(head) + tomli_w.dumps(instructions, multiline_strings="\r" not in plan.body)
        return (text + tomli_w.dumps(tail)).encode("utf-8")

    def compile(self, resolved: ResolvedConfig, *, source_root: Path | None = None,
                memo: RenderMemo | None = None, with_warnings: bool = True) -> CompiledOutput:
        output = super().compile(resolved, source_root=source_root, memo=memo, with_warnings=with_warnings)
        primary = next((agent for agent in resolved.agents if agent.primary), None)
        if primary is None:
            return output
        role = next(f for f in output.files if f.path == self.agent_path(primary.compiled_name))
        table = tomllib.loads(role.content.decode("utf-8"))
        return output.model_copy(update={"files": (*output.files, main_thread_config(table))})

    def model_settings(self, agent: ResolvedAgent) -> ModelSettings:
        # A Codex role file has no sampling keys (and one unknown key voids the file): temperature is warned.
        return agent_model_settings(self.name, agent.compiled_name, agent.model_parameters, codex_model,
                                    effort_key="model_reasoning_effort", effort_table=CODEX_EFFORT)

    def extras(self, agents: Sequence[ResolvedAgent]) -> tuple[tuple[SettingsFragment, ...], tuple[ManagedBlock, ...]]:
        lines = ["## Codex agents", ""]
        for agent in agents:
            summary = " ".join(agent.description.split())
            lines += item(f"`{agent.compiled_name}` ({self.agent_path(agent.compiled_name)}): {summary}")
        return (), (ManagedBlock(path=AGENTS_MD, marker=BLOCK_MARKER, content="\n".join(lines)),)

    def parse_agent(self, path: str, data: bytes) -> tuple[dict[str, Any], str]:
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise OacError(f"{path}: not valid TOML ({exc})") from None
        body = table.get("developer_instructions", "")
        return table, body if isinstance(body, str) else ""

    def capabilities(self, agent_name: str, files: Mapping[str, bytes]) -> Capabilities:
        table, body = self.read_agent(agent_name, files)
        facts = read_body_facts(body)
        told = facts.permissions
        sandbox = table.get("sandbox_mode")
        # The sandbox can forbid writing; a writable sandbox covers writing and editing alike, and within it our
        # instructions decide (a definition without tool_permissions gets Codex's writable default, told "deny").
        told_writes = "allow" in (told.get("write"), told.get("edit")) or not facts.structured
        writes: Action = "allow" if sandbox in (None, *WRITABLE_SANDBOXES) and told_writes else "deny"
        permissions: dict[str, Action] = {
            "read": told.get("read", "deny" if facts.structured else "allow"),  # Codex can always read
            "write": writes,
            "edit": writes,
            **{key: told.get(key, "deny") for key in ("task", "skill", "mcp", "webfetch", "websearch")},
        }
        return Capabilities(
            agent=agent_name,
            dialect=self.name,
            # Codex always has a shell; our instructions restrict it to the listed commands.
            bash={"*": "deny" if facts.structured else "allow", **least_to_most_restrictive(facts.bash.items())},
            permissions=permissions,
            tools=facts.tools,
            skills=facts.skills,
            subagents=facts.subagents,
            mcp_servers=facts.mcp_servers,
        )


def main_thread_config(role: Mapping[str, Any]) -> CompiledFile:
    """`.codex/config.toml`: the primary role's instructions and sandbox for Codex's main thread."""
    instructions = str(role.get("developer_instructions", ""))
    text = tomli_w.dumps({"sandbox_mode": role.get("sandbox_mode", "workspace-write")})
    text += tomli_w.dumps({"developer_instructions": instructions}, multiline_strings="\r" not in instructions)
    return CompiledFile(path=PROJECT_CONFIG, content=text.encode("utf-8"))


CODEX = CodexDialect()
