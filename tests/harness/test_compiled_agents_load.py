"""What our compiler writes, loaded by the real harnesses: every compiled agent must arrive, with the
permissions we meant. Skipped, with the reason, when a harness is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

import _harness as h
from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.model.factory import load_registry

pytestmark = pytest.mark.harness

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = {"quickstart": ["primary"], "multi_agent": ["primary", "researcher", "editor"]}


def need(name: str) -> None:
    reason = h.availability()[name]
    if reason:
        pytest.skip(reason)


def compiled(tmp_path: Path, example: str, dialect: str) -> Path:
    root = EXAMPLES / example
    resolved = load_registry("agents:registry", str(root)).resolve_config("prod")
    target = tmp_path / f"{example}-{dialect}"
    write_output(get_dialect(dialect).compile(resolved, source_root=root), target, dialect=dialect)
    return target


@pytest.mark.parametrize("example", sorted(CASES))
def test_opencode_loads_every_agent_with_our_permissions(tmp_path: Path, example: str) -> None:
    need("opencode")
    project = compiled(tmp_path, example, "opencode")
    assert sorted(h.opencode_agents(project)) == sorted(CASES[example])
    for name in CASES[example]:
        agent = h.opencode_agent(project, name)
        assert agent["options"] == {}, f"{name}: unknown frontmatter keys reached the provider options"
        assert agent["mode"] == ("primary" if name == "primary" else "subagent")
        bash = h.opencode_rules(agent, "bash")
        assert ("*", "deny") in bash, bash
        # deny by default: the agent's own '*' rule comes after OpenCode's defaults, so it wins
        assert bash.index(("*", "deny")) > max((i for i, r in enumerate(bash) if r[0] == "*" and r[1] != "deny"), default=-1)
    if example == "quickstart":
        primary = h.opencode_agent(project, "primary")
        assert ("uv run scripts/echo.py *", "allow") in h.opencode_rules(primary, "bash")
        assert h.opencode_rules(primary, "edit")[-1] == ("*", "deny")
        assert primary["temperature"] == 0.0
        assert primary["model"] == {"providerID": "zai-coding-plan", "modelID": "glm-4.5-air"}
    else:
        coordinator = h.opencode_agent(project, "primary")
        task = h.opencode_rules(coordinator, "task")
        assert ("researcher", "allow") in task and ("editor", "allow") in task and ("*", "deny") in task


@pytest.mark.parametrize("example", sorted(CASES))
def test_claude_init_lists_every_agent(tmp_path: Path, example: str) -> None:
    need("claude")
    project = compiled(tmp_path, example, "claude")
    init = h.claude_init(project)
    assert set(CASES[example]) <= set(init.agents), (init.agents, init.agent_messages())
    assert not [m for m in init.agent_messages() if "ERROR" in m or "skip" in m.lower()], init.agent_messages()


@pytest.mark.parametrize("example", sorted(CASES))
def test_codex_lists_every_role(tmp_path: Path, example: str) -> None:
    need("codex")
    project = compiled(tmp_path, example, "codex")
    assert set(CASES[example]) <= set(h.codex_roles(project))
    assert h.codex_warnings(project) == []


@pytest.mark.parametrize("example", sorted(CASES))
def test_pi_subagent_extension_loads_every_agent(tmp_path: Path, example: str) -> None:
    need("pi")
    project = compiled(tmp_path, example, "pi")
    loaded = h.pi_load(project)
    assert sorted(loaded["pi_subagents"]["custom"]) == sorted(CASES[example])
    example_names = [agent["name"] for agent in loaded["example_subagent"]["agents"]]
    assert set(CASES[example]) <= set(example_names)
    if example == "multi_agent":
        editor = h.pi_agent(project, "editor")
        assert "write" in editor["builtinToolNames"] and "bash" in editor["builtinToolNames"]
        researcher = h.pi_agent(project, "researcher")
        assert "write" not in researcher["builtinToolNames"] and "edit" not in researcher["builtinToolNames"]
