"""examples/multi_agent compiles to all four dialects, its capability tests hold everywhere, and its handler
really runs."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from oac_builders import DIALECT_NAMES

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.writer import write_output
from open_agent_compiler.model.registry import AgentRegistry, ResolvedConfig
from open_agent_compiler.testing.artifacts import list_agent_artifacts, load_agent_artifact, load_capabilities
from open_agent_compiler.testing.permissions import bash_action, permission_action

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "multi_agent"


def load_module(name: str, path: Path) -> ModuleType:
    """Import by path under a unique name (another test's `agents` module must not shadow this one)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def registry() -> AgentRegistry:
    return load_module("multi_agent_example_agents", EXAMPLE / "agents.py").registry()


@pytest.fixture(scope="module")
def resolved() -> ResolvedConfig:
    return registry().resolve_config("prod")


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_example_compiles_and_its_capability_tests_hold(dialect: str, resolved: ResolvedConfig, tmp_path: Path) -> None:
    output = DIALECTS[dialect].compile(resolved, source_root=EXAMPLE)
    report = write_output(output, tmp_path, dialect=dialect)
    assert report.kept == () and "scripts/word_stats.py" in report.written
    assert (tmp_path / "scripts/word_stats.py").read_bytes() == (EXAMPLE / "scripts/word_stats.py").read_bytes()
    assert list_agent_artifacts(tmp_path, dialect) == ["editor", "primary", "researcher"]
    assert "summarize-notes" in load_agent_artifact(tmp_path, "primary", dialect).body
    for agent in resolved.agents:
        caps = load_capabilities(tmp_path, agent.compiled_name, dialect)
        for test in agent.definition.capability_tests:
            for pattern in test.must_have_bash_patterns:
                assert bash_action(caps, pattern)[0] == "allow", (test.name, pattern)
            for pattern in test.must_not_have_bash_patterns:
                assert bash_action(caps, pattern)[0] != "allow", (test.name, pattern)
            for key in test.must_have_permissions:
                assert permission_action(caps, key)[0] == "allow", (test.name, key)
            for key in test.must_not_have_permissions:
                assert permission_action(caps, key)[0] != "allow", (test.name, key)
            assert set(test.must_have_tools) <= set(caps.tools)
            assert set(test.must_have_skills) <= set(caps.skills)
            assert set(test.must_have_subagents) <= set(caps.subagents)
    assert load_capabilities(tmp_path, "primary", dialect).mcp_servers == ("notes-fs",)


def test_dev_config_postfixes_every_name(tmp_path: Path) -> None:
    resolved = registry().resolve_config("dev")
    write_output(DIALECTS["opencode"].compile(resolved, source_root=EXAMPLE), tmp_path, dialect="opencode")
    assert list_agent_artifacts(tmp_path) == ["editor-dev", "primary-dev", "researcher-dev"]
    permission = load_agent_artifact(tmp_path, "primary-dev").config["permission"]
    assert permission["task"] == {"*": "deny", "researcher-dev": "allow", "editor-dev": "allow"}


def test_handler_in_process() -> None:
    handler = load_module("multi_agent_example_word_stats", EXAMPLE / "scripts" / "word_stats.py")
    assert handler.WordStats().call({"text": "b a b", "top": 1}) == {"words": 3, "unique": 2, "top": ["b"]}


def test_handler_as_a_cli() -> None:
    script = EXAMPLE / "scripts" / "word_stats.py"
    done = subprocess.run([sys.executable, str(script)], input=json.dumps({"text": "to be or not to be", "top": 2}),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"words": 6, "unique": 4, "top": ["be", "to"]}
    bad = subprocess.run([sys.executable, str(script)], input='{"top": 2}', capture_output=True, text=True,
                         timeout=60, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("word-stats: invalid input")
