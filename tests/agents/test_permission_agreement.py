"""`allow`, `ask`, `deny` and unlisted tools: the scripted simulator and each real harness agree, harness by
harness, on which tool commands run (see `testing/invokers/refusals.py` for the rule and what was measured).

The table test runs the simulator for every dialect; the `harness` tests play the same script through the real
binary and compare with the simulator of that dialect.
"""

import sys
import textwrap
from pathlib import Path

import pytest

from open_agent_compiler.compiler.dialects import get_dialect
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.testing.agent_runner import compiled_agent
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.invokers.protocol import Deadline, InvokerError, ToolDispatcher
from open_agent_compiler.testing.invokers.select import load_invoker
from open_agent_compiler.testing.mocks import MockSession
from open_agent_compiler.testing.runner import RunSettings

from test_harness_runs import binary_or_skip

AGENTS = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission,
    CompilationConfig, MockResponse, ModelParameters, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicBash, Turn)

def tool(action):
    return ToolDefinition(header=ToolDefinitionHeader(name=f"t-{action}", description=f"an {action} tool"),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(value=action,
            allowed_commands=[f"python3 scripts/t_{action}.py *"])),
        mock=MockResponse(kind="fixed", fixed_output={"ran": action}))

def registry():
    reg = AgentRegistry()
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="permission probe"),
        system_prompt="Run what you are told.", extra_tools=[tool("allow"), tool("ask"), tool("deny")],
        agent_tests=[AgentTest(name="probe", timeout_s=150, turns=tuple(Turn(prompt=p) for p in "1234"))])
    reg.register_agent("a", agent, ModelParameters(model_name="oac/oac-scripted"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="tpl"))
    return reg
'''

SCRIPTS = '''
from open_agent_compiler.testing.invokers.script import call, reply

def turn(tool):
    return [call(tool, text="x"), lambda view: reply("after " + ",".join(c.tool_name for c in view.tool_results))]

SCRIPTS = {"probe": [turn("t-allow"), turn("t-ask"), turn("t-deny"), turn("t-unlisted")]}
'''

PERMISSIONS = ("allow", "ask", "deny", "unlisted")
# runs: the mock answered; refused: the call is in the trajectory with an error, the model went on;
# rejected: refused and the turn ended there; unavailable: the agent has no such tool (the test fails)
EXPECTED = {
    "opencode": ("runs", "rejected", "refused", "unavailable"),
    "claude": ("runs", "refused", "refused", "unavailable"),
    "codex": ("runs", "runs", "runs", "unavailable"),
    "pi": ("runs", "runs", "runs", "unavailable"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("permission-probe")
    (root / "agents.py").write_text(textwrap.dedent(AGENTS))
    (root / "agents_scripts.py").write_text(textwrap.dedent(SCRIPTS))
    return root


def outcomes(project: Path, invoker_name: str, dialect: str, build: Path) -> tuple[str, ...]:
    """Play the probe (one turn per permission) and classify what happened to each call."""
    sys.path.insert(0, str(project))
    try:
        resolved = load_registry("agents:registry", str(project)).resolve_config("c")
    finally:
        sys.path.remove(str(project))
    for path, data in get_dialect(dialect).compile(resolved, source_root=project).file_map().items():
        (build / path).parent.mkdir(parents=True, exist_ok=True)
        (build / path).write_bytes(data)
    case = [c for c in discover(resolved) if c.kind == "agent"][0]
    invoker = load_invoker(invoker_name, root=project, factory="agents:registry", dialect=dialect)
    agent = compiled_agent(case, resolved, RunSettings(project_root=project, build_dir=build, dialect=dialect))
    dispatcher = ToolDispatcher(agent.tools, None, MockSession(), hermetic=True, timeout=10)
    seen: list[str] = []
    with invoker.session(agent, case.test, dispatcher, Deadline(400)) as session:  # a loaded machine: ~40 s per opencode turn seen
        for index, permission in enumerate(PERMISSIONS, start=1):
            before = len(dispatcher.log)
            try:
                result = session.turn(index, str(index))
            except InvokerError as exc:
                assert "which agent 'primary' cannot call" in str(exc), exc
                seen.append("unavailable")
                continue
            ran = [c.tool_name for c in dispatcher.log[before:]]
            call = [c for c in result.trajectory if c.tool_name == f"t-{permission}"]
            assert len(call) == 1, result.trajectory
            if ran == [f"t-{permission}"]:
                assert call[0].error is None and result.text == f"after t-{permission}"
                seen.append("runs")
            else:
                assert not ran and call[0].error, (ran, call)
                seen.append("rejected" if result.text == "" else "refused")
                if invoker_name == "scripted":  # the simulator says why, naming the harness's rule
                    assert call[0].error.startswith(f"refused: `python3 scripts/t_{permission}.py --text x` is "
                                                    f"{permission} for agent 'primary';"), call[0].error
                if seen[-1] == "refused":
                    assert result.text == "after ", result.text  # the refused call is not among the results
    return tuple(seen)


@pytest.mark.parametrize("dialect", sorted(EXPECTED))
def test_the_simulator_applies_each_harness_rule(dialect: str, project: Path, tmp_path: Path) -> None:
    assert outcomes(project, "scripted", dialect, tmp_path / "build") == EXPECTED[dialect]


@pytest.mark.harness
@pytest.mark.parametrize("harness", sorted(EXPECTED))
def test_each_real_harness_agrees_with_the_simulator(harness: str, project: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    binary_or_skip(harness, monkeypatch)
    real = outcomes(project, harness, harness, tmp_path / "real")
    assert real == outcomes(project, "scripted", harness, tmp_path / "simulated") == EXPECTED[harness]


def test_a_failing_turn_says_which_call_was_refused_and_why(project: Path, tmp_path: Path) -> None:
    from open_agent_compiler.model.core.test_model import AgentTest, Turn
    from open_agent_compiler.testing.agent_runner import run_agent_test
    from open_agent_compiler import SubstringEvaluator

    sys.path.insert(0, str(project))
    try:
        resolved = load_registry("agents:registry", str(project)).resolve_config("c")
    finally:
        sys.path.remove(str(project))
    build = tmp_path / "build"
    for path, data in get_dialect("claude").compile(resolved, source_root=project).file_map().items():
        (build / path).parent.mkdir(parents=True, exist_ok=True)
        (build / path).write_bytes(data)
    case = [c for c in discover(resolved) if c.kind == "agent"][0]
    test = AgentTest(name="probe", turns=(Turn(prompt="1"), Turn(prompt="2", evaluators=(
        SubstringEvaluator(needle="after t-ask"),))))
    invoker = load_invoker("scripted", root=project, factory="agents:registry")
    settings = RunSettings(project_root=project, build_dir=build, dialect="claude", hermetic=True)
    outcome = run_agent_test(case.model_copy(update={"test": test}), resolved, settings, invoker)
    assert outcome.status == "fail"
    assert ("failed calls: t-ask: refused: `python3 scripts/t_ask.py --text x` is ask for agent 'primary'; Claude "
            "Code runs the agent with permissionMode: dontAsk") in outcome.first_failure()


def test_claude_compile_warns_about_ask_rules_under_dont_ask(project: Path) -> None:
    sys.path.insert(0, str(project))
    try:
        resolved = load_registry("agents:registry", str(project)).resolve_config("c")
    finally:
        sys.path.remove(str(project))
    warnings = get_dialect("claude").compile(resolved).warnings
    assert ("claude: agent 'primary': runs with permissionMode: dontAsk, which refuses every command an ask rule "
            "covers instead of asking: 'python3 scripts/t_ask.py *'") in warnings
    assert not [w for w in get_dialect("opencode").compile(resolved).warnings if "dontAsk" in w]
