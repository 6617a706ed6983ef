"""Our own registries written against the public package's API (tests/compat/registries/) compile to all four
dialects with every feature given its meaning, and their embedded tests pass under `oac test`."""

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import DIALECTS
from open_agent_compiler.compiler.prompt import read_body_facts
from open_agent_compiler.compiler.script import CompileScript
from open_agent_compiler.model.core.model_preset import ModelPreset
from open_agent_compiler.model.core.variant_spec import VariantSpec
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.testing.artifacts import load_agent_artifact, load_capabilities

REGISTRIES = Path(__file__).resolve().parent / "registries"
OPS_DESK = REGISTRIES / "ops_desk"
OAC = str(Path(sys.executable).with_name("oac"))
AGENTS = ("primary", "reviewer", "scribe", "reviewer-primary")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ops_desk"
    shutil.copytree(OPS_DESK, root, ignore=shutil.ignore_patterns(".oac", "__pycache__", "build"))
    return root


def compile_all(project: Path, **kwargs) -> Path:  # type: ignore[no-untyped-def]
    build = project / "build"
    CompileScript(target=build, factory_spec="agents:registry", config="prod", dialect=list(DIALECTS),
                  source_root=project, **kwargs).run()
    return build


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_agent_and_twin_compiles_with_the_same_meaning(project: Path, dialect: str) -> None:
    build = compile_all(project)
    reference = {name: load_capabilities(build, name, "opencode") for name in AGENTS}
    for name in AGENTS:
        caps = load_capabilities(build, name, dialect)
        assert caps.subagents == reference[name].subagents and caps.tools == reference[name].tools
        assert caps.skills == reference[name].skills and caps.mcp_servers == reference[name].mcp_servers
    primary = load_capabilities(build, "primary", dialect)
    assert primary.subagents == ("reviewer", "scribe") and primary.mcp_servers == ("tickets", "runbooks")
    assert primary.tools == ("list-tickets", "ticket-score")
    body = load_agent_artifact(build, "primary", dialect).body
    for text in ("You run the operations desk.", "Tickets live under tickets/.", "### Step 3: Escalate",
                 "Do this step only when `severity` is `high`", "- If `severity` is `low`, continue at step 4.",
                 "Keep every file you create under `.agent_workspace/primary/`", "## Skill ticket-triage",
                 "- Site down when the ticket says outage → high", "Never close a ticket yourself."):
        assert text in body, text
    assert DIALECTS[dialect].terms.delegate_to("reviewer") in body
    twin = load_agent_artifact(build, "reviewer-primary", dialect)
    assert twin.body == load_agent_artifact(build, "reviewer", dialect).body
    assert read_body_facts(load_agent_artifact(build, "scribe", dialect).body).structured
    assert (build / "scripts/ticket_score.py").read_bytes() == (OPS_DESK / "tools/ticket_score.py").read_bytes()


def test_models_in_each_harness_form(project: Path) -> None:
    build = compile_all(project)
    model = {d: load_agent_artifact(build, "primary", d).config.get("model") for d in DIALECTS}
    assert model == {"opencode": "anthropic/claude-sonnet-4-5", "claude": "claude-sonnet-4-5", "pi":
                     "anthropic/claude-sonnet-4-5", "codex": None}
    reviewer = {d: load_agent_artifact(build, "reviewer", d).config.get("model") for d in DIALECTS}
    assert reviewer == {"opencode": "openai/gpt-5-mini", "claude": None, "pi": "openai/gpt-5-mini",
                        "codex": "gpt-5-mini"}
    assert load_agent_artifact(build, "reviewer", "codex").config["model_reasoning_effort"] == "low"
    assert load_agent_artifact(build, "primary", "opencode").config["temperature"] == 0.2


def test_mcp_config_per_harness(project: Path) -> None:
    build = compile_all(project)
    assert set(json.loads((build / ".opencode/opencode.json").read_text())["mcp"]) == {"tickets", "runbooks"}
    codex = tomllib.loads((build / ".codex/agents/primary.toml").read_text())
    assert codex["mcp_servers"]["tickets"]["enabled_tools"] == ["search", "get_ticket"]
    settings = json.loads((build / ".claude/settings.json").read_text())
    assert "mcp__tickets__search" in settings["permissions"]["allow"]


def test_variants_compile_side_by_side(project: Path) -> None:
    deep = VariantSpec(name="deep", postfix="-deep",
                       preset=ModelPreset(name="opus", provider="anthropic", model_id="claude-opus-4-1"))
    build = compile_all(project, variants=[VariantSpec(name="default", postfix="",
                                                       preset=ModelPreset(name="sonnet", provider="anthropic",
                                                                          model_id="claude-sonnet-4-5")), deep])
    for dialect in DIALECTS:
        assert load_capabilities(build, "primary-deep", dialect).subagents == ("reviewer-deep", "scribe-deep")
        assert load_agent_artifact(build, "reviewer-deep-primary", dialect).body
    assert load_agent_artifact(build, "scribe-deep", "claude").config["model"] == "claude-opus-4-1"


def test_registry_answers_like_the_public_package() -> None:
    registry = load_registry("agents:registry", str(OPS_DESK))
    assert registry.get_preset("claude-sonnet") is not None and len(registry.list_agents()) == 3


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_embedded_tests_pass_under_oac_test(project: Path, dialect: str) -> None:
    done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--dialect", dialect, "-v"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    summary = [line for line in done.stdout.splitlines() if line.startswith("oac test:")]
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary == ["oac test: discovered=9 passed=8 failed=0 skipped=0 not_runnable=1"], done.stdout


def test_a_promoted_prompt_reaches_every_dialect(project: Path) -> None:
    promoted = project / ".oac" / "promoted"
    promoted.mkdir(parents=True)
    (promoted / "scribe.json").write_text(json.dumps({"schema_version": "1", "version": {
        "component_id": "scribe", "kind": "agent", "definition": {"system_prompt": "PROMOTED: append one line."},
        "metrics": {"pass_rate": 1.0}}}))
    build = compile_all(project)
    for dialect in DIALECTS:
        body = load_agent_artifact(build, "scribe", dialect).body
        assert body.startswith("PROMOTED: append one line.") and "Append the decision" not in body
        assert load_capabilities(build, "scribe", dialect).permissions["write"] == "allow"  # structure kept
