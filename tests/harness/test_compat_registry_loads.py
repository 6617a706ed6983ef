"""Our public-package-style registry (tests/compat/registries/ops_desk), compiled with every feature, loads in
the real harnesses: every agent and the primary twin arrive, with workflow instructions, MCP servers narrowed to
their allowed tools, models in the harness's form. Skipped, with the reason, when a harness is not installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import _harness as h
from open_agent_compiler.compiler.script import CompileScript

pytestmark = pytest.mark.harness

OPS_DESK = Path(__file__).resolve().parents[1] / "compat" / "registries" / "ops_desk"
AGENTS = ["primary", "reviewer", "reviewer-primary", "scribe"]


def need(name: str) -> None:
    reason = h.availability()[name]
    if reason:
        pytest.skip(reason)


def compiled(tmp_path: Path, dialect: str) -> Path:
    source = tmp_path / "source"
    shutil.copytree(OPS_DESK, source, ignore=shutil.ignore_patterns("__pycache__", ".oac"))
    target = tmp_path / f"ops-{dialect}"
    CompileScript(target=target, factory_spec="agents:registry", config="prod", dialect=dialect,
                  source_root=source).run()
    return target


def test_opencode_resolves_workflow_mcp_and_twin(tmp_path: Path) -> None:
    need("opencode")
    project = compiled(tmp_path, "opencode")
    assert sorted(h.opencode_agents(project)) == sorted(AGENTS)
    primary = h.opencode_agent(project, "primary")
    assert primary["options"] == {}
    assert primary["model"] == {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
    assert "### Step 3: Escalate" in primary["prompt"]
    assert 'the `task` tool with `subagent_type: "reviewer"`' in primary["prompt"]
    # MCP narrowed to allowed tools: the server's catch-all denied, each allowed tool allowed after it
    assert h.opencode_rules(primary, "tickets_*")[-1] == ("*", "deny")
    assert h.opencode_rules(primary, "tickets_search")[-1] == ("*", "allow")
    assert h.opencode_rules(primary, "runbooks_*")[-1] == ("*", "allow")
    scribe = h.opencode_agent(project, "scribe")
    assert h.opencode_rules(scribe, "tickets_*")[-1] == ("*", "deny")  # the config's servers, not its own
    assert h.opencode_agent(project, "reviewer-primary")["mode"] == "primary"
    assert h.opencode_agent(project, "reviewer")["mode"] == "subagent"
    # the tools our instructions name are the ones OpenCode gives the agent
    assert {"task", "skill", "bash"} <= set(primary["tools"])


def test_claude_loads_every_agent(tmp_path: Path) -> None:
    need("claude")
    project = compiled(tmp_path, "claude")
    init = h.claude_init(project)
    assert set(AGENTS) <= set(init.agents), (init.agents, init.agent_messages())
    assert not [m for m in init.agent_messages() if "ERROR" in m or "skip" in m.lower()], init.agent_messages()
    # the tools our instructions name are the ones Claude Code offers the model
    assert {"Task", "Skill", "Bash"} <= set(init.init.get("tools", []))


def test_codex_loads_every_role_with_its_mcp_servers(tmp_path: Path) -> None:
    need("codex")
    project = compiled(tmp_path, "codex")
    assert set(AGENTS) <= set(h.codex_roles(project))
    # an unknown top-level key would void the file; inside mcp_servers Codex 0.171 ignores unknown keys, so
    # enabled_tools is written to its documented name and not proven here
    assert h.codex_warnings(project) == []
    # the tools our instructions name are the ones Codex offers the model
    offered = json.dumps(h.codex_prompt_input(project))
    assert all(f'"{name}"' in offered for name in ("spawn_agent", "wait_agent")) and "exec_command" in offered


def test_pi_loads_every_agent(tmp_path: Path) -> None:
    need("pi")
    project = compiled(tmp_path, "pi")
    loaded = h.pi_load(project)
    assert sorted(loaded["pi_subagents"]["custom"]) == sorted(AGENTS)
    primary = h.pi_agent(project, "primary")
    assert primary["model"] == "anthropic/claude-sonnet-4-5" and "bash" in primary["builtinToolNames"]
    assert 'the `Agent` tool with `subagent_type: "reviewer"`' in primary["systemPrompt"]
    # a real `pi -p` run offers the model pi-subagents' `Agent` tool, with our agents as its types
    assert {"reviewer", "scribe"} <= set(h.pi_agent_tool_types(project))
