"""Real harness binaries run agent tests against the scripted model server on 127.0.0.1, with a mock build.

Skipped with the reason only when the harness binary is unavailable (see .ci/install-harnesses / $HARNESS_DIR).
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.testing.agent_runner import compiled_agent, run_agent_test
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.invokers.harness.base import harness_dir
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import ToolDispatcher
from open_agent_compiler.testing.invokers.script import ModelStep, ModelView, ScriptedModel, call, reply
from open_agent_compiler.testing.mocks import MockSession
from open_agent_compiler.testing.invokers.select import load_invoker
from open_agent_compiler.testing.runner import RunSettings

from agent_project import OAC, REPO, SUMMARY, harness_or_skip, summary

HARNESS_DIR = harness_dir()  # the invoker's own default: $HARNESS_DIR, else ~/.cache/oac/harnesses
MONITORING = REPO / "examples" / "monitoring"


def binary_or_skip(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    harness_or_skip(name)


def compiled(root: Path, config: str, dialect: str, build: Path):
    sys.path.insert(0, str(root))
    try:
        resolved = load_registry("agents:registry", str(root)).resolve_config(config)
    finally:
        sys.path.remove(str(root))
    for path, data in get_dialect(dialect).compile(resolved, source_root=root).file_map().items():
        target = build / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    case = [c for c in discover(resolved) if c.kind == "agent"][0]
    return case, resolved


def group_gone(pgid: int, within: float = 10.0) -> bool:
    """Bounded polling: True once no process of group `pgid` is left."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        threading.Event().wait(0.05)
    return False


@pytest.mark.harness
@pytest.mark.parametrize("harness", ["opencode", "claude", "codex", "pi"])
def test_three_turn_scenario_runs_in_the_real_harness(harness: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    binary_or_skip(harness, monkeypatch)
    case, resolved = compiled(MONITORING, "ci", harness, tmp_path / "build")
    invoker = load_invoker(harness, root=MONITORING, factory="agents:registry", dialect=harness)
    settings = RunSettings(project_root=MONITORING, build_dir=tmp_path / "build", dialect=harness, hermetic=True)
    outcome = run_agent_test(case, resolved, settings, invoker)
    assert outcome.status == "pass", outcome.first_failure()
    assert invoker.info.version and invoker.info.key().startswith(harness + " version=")
    # what the harness really sent the model: the compiled agent's prompt, and a shell tool to run commands with
    # (under Pi the agent is a subagent: its requests are those without the main thread's Agent tool)
    main = [r for r in invoker.last_server.requests if r.tools and "Agent" not in r.tools]
    # in every harness the main thread is the compiled primary agent (Codex: its project config's instructions)
    assert main and all("Page on-call with page-oncall only when" in r.system_prompt for r in main)
    if harness == "pi":  # the main thread delegated each turn through pi-subagents' Agent tool
        assert {1, 2, 3} <= {r.turn for r in invoker.last_server.requests if "Agent" in r.tools}
    assert {1, 2, 3} <= {r.turn for r in main}
    assert all(group_gone(pgid) for pgid in invoker.started)


@pytest.mark.harness
def test_oac_test_with_the_opencode_invoker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example) -> None:
    binary_or_skip("opencode", monkeypatch)
    project = example("quickstart")
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "opencode", "--hermetic")
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout) == SUMMARY.format(5, 5, 0, 0, 0)
    agent = [r for r in project.records() if r["test_kind"] == "agent"][0]
    assert agent["invoker"].startswith("opencode version=1.") and agent["dialect"] == "opencode"
    again = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "opencode", "--hermetic")
    assert summary(again.stdout) == SUMMARY.format(5, 0, 0, 5, 0)  # green, same key: not run again


@pytest.mark.harness
def test_a_hung_harness_is_killed_at_timeout_and_leaves_no_process(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    binary_or_skip("opencode", monkeypatch)
    case, resolved = compiled(MONITORING, "ci", "opencode", tmp_path / "build")
    release = threading.Event()

    def never_answers(view: ModelView) -> ModelStep:
        release.wait(120)  # the model never answers while the harness lives
        raise RuntimeError("released")

    invoker = load_invoker("opencode", root=MONITORING, factory="agents:registry")
    invoker.scripts = {case.name: never_answers}
    test = case.test.model_copy(update={"timeout_s": 8.0})
    settings = RunSettings(project_root=MONITORING, build_dir=tmp_path / "build", hermetic=True)
    try:
        outcome = run_agent_test(case.model_copy(update={"test": test}), resolved, settings, invoker)
        gone = [group_gone(pgid) for pgid in invoker.started]  # checked while the model still hangs
    finally:
        release.set()
    assert outcome.status == "fail"
    assert "turn 1: timed out after 8s (opencode, turn 1); harness process group" in outcome.first_failure()
    assert gone and all(gone)


def test_missing_harness_binary_or_wrong_dialect_is_one_line_exit_2(example, tmp_path: Path) -> None:
    project = example("quickstart")
    env = {"PATH": str(Path(sys.executable).parent), "HARNESS_DIR": str(tmp_path / "none"), "HOME": str(tmp_path)}
    done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--invoker", "opencode"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--invoker opencode: the 'opencode' binary was not found" in done.stderr
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "claude")
    assert done.returncode == 2 and "pass --dialect claude" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.harness
def test_with_a_real_endpoint_configured_the_harness_talks_to_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """OAC_MODEL_BASE_URL/OAC_MODEL/OAC_MODEL_API_KEY replace the scripted model (here a second loopback server
    stands in for the real one); tool calls still answer from the test's mocks."""
    binary_or_skip("opencode", monkeypatch)
    quickstart = REPO / "examples" / "quickstart"
    case, resolved = compiled(quickstart, "prod", "opencode", tmp_path / "build")
    settings = RunSettings(project_root=quickstart, build_dir=tmp_path / "build", hermetic=True)
    agent = compiled_agent(case, resolved, settings)
    # the stand-in sees one long turn (nobody tells it where turns start): call, reply, call, reply
    remote_model = ScriptedModel(function=lambda view: reply("CI-MOCK") if view.step % 2 else call("echo-tool", text="x"))
    unused = ToolDispatcher(agent.tools, None, MockSession(), hermetic=True, timeout=5)
    with ScriptedModelServer(remote_model, agent, unused) as remote:
        monkeypatch.setenv("OAC_MODEL_BASE_URL", remote.base_url + "/v1")
        monkeypatch.setenv("OAC_MODEL", "remote/model-x")
        monkeypatch.setenv("OAC_MODEL_API_KEY", "k")
        invoker = load_invoker("opencode", root=tmp_path, factory="no_scripts_needed:registry")
        assert invoker.info.key() == f"opencode version={invoker.info.version} model=remote/model-x"
        remote.begin_turn(1, "")
        outcome = run_agent_test(case, resolved, settings, invoker)
        remote_requests = [r for r in remote.requests if r.tools]
    assert outcome.status == "pass", outcome.first_failure()
    assert remote_requests and not [r for r in invoker.last_server.requests]  # the local server only ran tools
    assert [(c.tool_name, c.output["text"]) for c in invoker.last_server.dispatcher.log] == [("echo-tool", "CI-MOCK")] * 2


def test_a_missing_harness_skips_with_the_reason_and_fails_under_ci(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_DIR", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="codex: no entry in .*status.json"):
        harness_or_skip("codex")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set, so a harness test may not be skipped: codex"):
        harness_or_skip("codex")
