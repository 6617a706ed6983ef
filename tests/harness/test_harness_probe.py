"""Prove the _harness helpers against hand-written fixture projects.

Each fixture under fixtures/<harness>/ uses exactly the layout the compiler
emits for that harness. A harness that is not installed is skipped with the
reason from status.json in harness_dir() (~/.cache/oac/harnesses or $HARNESS_DIR), never passed silently.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import _harness as h

FIXTURES = Path(__file__).resolve().parent / "fixtures"

pytestmark = pytest.mark.harness


def need(name: str) -> None:
    reason = h.availability()[name]
    if reason:
        pytest.skip(reason)


def fixture_copy(tmp_path: Path, dialect: str) -> Path:
    dest = tmp_path / dialect
    shutil.copytree(FIXTURES / dialect, dest)
    return dest


def test_availability_covers_the_four_harnesses() -> None:
    avail = h.availability()
    assert tuple(avail) == h.HARNESSES
    for reason in avail.values():
        assert reason is None or (isinstance(reason, str) and reason)


# --------------------------------------------------------------------------- OpenCode


def test_opencode_lists_fixture_agents() -> None:
    need("opencode")
    listing = h.opencode_listing(FIXTURES / "opencode")
    assert listing.modes["coder"] == "primary"
    assert listing.modes["helper"] == "subagent"
    assert h.opencode_agents(FIXTURES / "opencode") == ["coder", "helper"]


def test_opencode_debug_agent_resolves_permissions() -> None:
    need("opencode")
    coder = h.opencode_agent(FIXTURES / "opencode", "coder")
    assert coder["name"] == "coder" and coder["native"] is False
    assert coder["model"] == {"providerID": "zai-coding-plan", "modelID": "glm-4.5-air"}
    assert coder["temperature"] == 0.2
    assert coder["options"] == {}
    assert coder["prompt"].startswith("You are the coder.")
    # The agent's own rules come after OpenCode's defaults, in file order.
    assert h.opencode_rules(coder, "bash") == [("*", "deny"), ("uv run scripts/echo.py *", "allow")]
    assert h.opencode_rules(coder, "edit") == [("*", "deny")]
    assert h.opencode_rules(coder, "webfetch") == [("*", "deny")]
    assert h.opencode_rules(coder, "task") == [("*", "deny"), ("helper", "allow")]
    assert h.opencode_rules(coder, "skill") == [("*", "deny"), ("echo-skill", "allow")]
    # `tools` is OpenCode's own summary: a tool is off only if fully denied.
    assert coder["tools"]["bash"] is True
    assert coder["tools"]["edit"] is False and coder["tools"]["write"] is False
    assert coder["tools"]["webfetch"] is False


def test_opencode_invalid_file_is_reported(tmp_path: Path) -> None:
    need("opencode")
    project = fixture_copy(tmp_path, "opencode")
    (project / ".opencode/agents/bad.md").write_text(
        "---\ndescription: bad\npermission:\n  bash: maybe\n---\nx\n")
    with pytest.raises(h.HarnessError, match="Expected PermissionActionConfig"):
        h.opencode_agent(project, "coder")


def test_opencode_unknown_key_lands_in_options(tmp_path: Path) -> None:
    need("opencode")
    project = fixture_copy(tmp_path, "opencode")
    (project / ".opencode/agents/odd.md").write_text(
        "---\ndescription: odd\nmode: subagent\nname: odd\nallowed_tools: Bash\n---\nx\n")
    assert h.opencode_agent(project, "odd")["options"] == {"allowed_tools": "Bash"}


# --------------------------------------------------------------------------- Claude Code


def test_claude_init_lists_fixture_agents() -> None:
    need("claude")
    init = h.claude_init(FIXTURES / "claude")
    assert {"coder", "helper"} <= set(init.agents)
    assert init.returncode == 1  # "Not logged in": expected, the init event came first
    assert "Bash" in init.tools
    assert "WebFetch" not in init.tools  # denied in .claude/settings.json
    assert h.claude_agents(FIXTURES / "claude") == ["coder", "helper"]


def test_claude_debug_log_explains_dropped_and_odd_files(tmp_path: Path) -> None:
    need("claude")
    project = fixture_copy(tmp_path, "claude")
    agents = project / ".claude/agents"
    (agents / "nodesc.md").write_text("---\nname: nodesc\n---\nx\n")
    (agents / "noname.md").write_text("---\ndescription: no name\n---\nx\n")
    (agents / "foreign.md").write_text(
        "---\nname: foreign\ndescription: d\nmode: subagent\ntemperature: 0.2\n---\nx\n")
    init = h.claude_init(project)
    assert "nodesc" not in init.agents
    assert "noname" not in init.agents  # skipped without any message
    assert "foreign" in init.agents
    messages = "\n".join(init.agent_messages())
    assert 'nodesc.md: Missing required "description"' in messages
    assert 'foreign.md has frontmatter keys Claude Code does not recognize' in messages


def test_claude_untrusted_project_drops_allow_rules() -> None:
    need("claude")
    init = h.claude_init(FIXTURES / "claude", trust=False)
    assert "has not been trusted" in init.stderr
    assert {"coder", "helper"} <= set(init.agents)


# --------------------------------------------------------------------------- Codex


def test_codex_lists_fixture_roles() -> None:
    need("codex")
    items = h.codex_prompt_input(FIXTURES / "codex")
    roles = h.codex_role_descriptions(items)
    assert list(roles)[:2] == ["helper", "reviewer"]
    assert {"default", "explorer", "worker"} <= set(roles)
    assert roles["reviewer"].startswith("Reviews code changes")
    assert "`gpt-5.1-codex-mini`" in roles["reviewer"] and "`low`" in roles["reviewer"]
    texts = [c.get("text", "") for item in items for c in item.get("content", [])]
    assert any(t.startswith("# AGENTS.md instructions for") and "scripts/echo.py" in t
               for t in texts)
    assert h.codex_roles(FIXTURES / "codex") == ["helper", "reviewer"]


def test_codex_ignores_bad_role_file_and_says_why(tmp_path: Path) -> None:
    need("codex")
    project = fixture_copy(tmp_path, "codex")
    (project / ".codex/agents/bad.toml").write_text(
        'name = "bad"\ndescription = "d"\ndeveloper_instructions = "x"\ntemperature = 0.2\n')
    assert h.codex_roles(project) == ["helper", "reviewer"]
    warnings = h.codex_warnings(project)
    assert any("bad.toml" in w and "unknown field `temperature`" in w for w in warnings)
    assert h.codex_warnings(FIXTURES / "codex") == []


# --------------------------------------------------------------------------- Pi


def test_pi_lists_fixture_agents() -> None:
    need("pi")
    assert h.pi_agents(FIXTURES / "pi") == ["scout", "writer"]
    offered = h.pi_agents(FIXTURES / "pi", builtin=True)
    assert {"general-purpose", "Explore", "Plan", "scout", "writer"} <= set(offered)
    assert h.pi_example_agents(FIXTURES / "pi") == ["scout", "writer"]


def test_pi_agent_config() -> None:
    need("pi")
    scout = h.pi_agent(FIXTURES / "pi", "scout")
    assert scout["builtinToolNames"] == ["read", "grep", "find", "ls", "bash"]
    assert scout["model"] == "zai/glm-4.5-air"
    assert scout["thinking"] == "low"
    assert scout["skills"] == ["echo-skill"]
    assert scout["promptMode"] == "replace"
    assert scout["systemPrompt"] == "You are the scout. Report what you find."
    writer = h.pi_agent(FIXTURES / "pi", "writer")
    assert writer["promptMode"] == "append" and writer["skills"] is True
    assert "model" not in writer


def test_pi_real_run_offers_fixture_agents() -> None:
    """End to end: Pi + pi-subagents against a scripted model on 127.0.0.1."""
    need("pi")
    types = h.pi_agent_tool_types(FIXTURES / "pi")
    assert types == ["general-purpose", "Explore", "Plan", "scout", "writer"]
