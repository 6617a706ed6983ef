"""Issue 34: where 1.16.5's OpenCode and Pi output differs from ours for tools (a JSON-format tool as its own
permission key plus a `custom_tools` block; `bash` for every Pi agent and `task` for subagents), both outputs are
loaded in the real harness, which shows why ours differs: OpenCode 1.18 has no tool named like the JSON tool and
moves `custom_tools` into the options it sends to the model provider (and 1.16.5 gives that agent no bash to run
the command with); pi-subagents has no built-in `task`. The registry is tests/compat/registries/json_tools.
Skipped with the reason where a harness or the public package is missing (a failure when `CI` is set)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import _harness as h

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat"))
from _anchor import anchor_venv  # noqa: E402

pytestmark = pytest.mark.harness

REGISTRY = Path(__file__).resolve().parents[1] / "compat" / "registries" / "json_tools"
OURS = Path(sys.executable).with_name("oac")
COMMAND = "python3 scripts/widget_tool.py *"


def need(name: str) -> None:
    reason = h.availability()[name]
    if reason:
        pytest.skip(reason)


def build(tmp_path: Path, dialect: str) -> dict[str, Path]:
    """The registry compiled for `dialect` by 1.16.5 ("theirs") and by oac ("ours"), each in its own copy."""
    public = anchor_venv() / "bin/oac"
    targets = {}
    for name, oac in (("theirs", public), ("ours", OURS)):
        root = tmp_path / name
        shutil.copytree(REGISTRY, root, ignore=shutil.ignore_patterns("__pycache__"))
        done = subprocess.run([str(oac), "compile", "widgets:registry", "--config", "default", "--target", "build",
                               "--dialect", dialect], cwd=root, capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONDONTWRITEBYTECODE": "1"})
        assert done.returncode == 0, done.stderr
        targets[name] = root / "build"
    return targets


def test_opencode_has_no_tool_named_like_a_json_tool(tmp_path: Path) -> None:
    need("opencode")
    built = build(tmp_path, "opencode")
    theirs = h.opencode_agent(built["theirs"], "primary")
    # 1.16.5: `custom_tools` (and its `tool:` map) become provider options; `widget` is a rule for no tool; no bash
    assert theirs["options"]["custom_tools"][0]["name"] == "widget" and "tool" in theirs["options"]
    assert "widget" not in theirs["tools"] and theirs["tools"]["bash"] is False
    assert h.opencode_rules(theirs, "widget") == [("*", "allow")]
    ours = h.opencode_agent(built["ours"], "primary")
    # ours: nothing for the provider; the tool's command is allowed with the bash tool
    assert ours["options"] == {} and ours["tools"]["bash"] is True and "widget" not in ours["tools"]
    assert h.opencode_rules(ours, "bash")[-2:] == [("*", "deny"), (COMMAND, "allow")]
    assert h.opencode_rules(ours, "widget") == []
    checker = h.opencode_agent(built["ours"], "checker")  # the per-tool override to "both": the same
    assert checker["options"] == {} and h.opencode_rules(checker, "bash")[-1] == (COMMAND, "allow")


def test_pi_has_no_task_tool_and_bash_runs_any_command(tmp_path: Path) -> None:
    need("pi")
    built = build(tmp_path, "pi")
    theirs = h.pi_load(built["theirs"])["pi_subagents"]
    builtins = set(theirs["builtin_tool_names"])
    assert "task" not in builtins  # what 1.16.5 lists for an agent with subagents names no Pi tool
    assert "task" in theirs["custom"]["primary"]["builtinToolNames"]
    assert "bash" in theirs["custom"]["helper"]["builtinToolNames"]  # a reader given the whole shell
    assert "read" in theirs["custom"]["primary"]["disallowedTools"]
    ours = h.pi_load(built["ours"])["pi_subagents"]["custom"]
    assert set(ours["primary"]["builtinToolNames"]) == {"bash", "Agent"}
    assert "bash" not in ours["helper"]["builtinToolNames"] and "bash" in ours["helper"]["disallowedTools"]
    assert "read" in ours["primary"]["disallowedTools"]  # a read denial is listed, as in 1.16.5
