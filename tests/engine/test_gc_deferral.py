"""The garbage collector during a run (`tasks.gc_tuning`): off while planning, on once a test executes (in the
process that executes it, a `-n` worker included), and as it was after an in-process run."""

import gc
import io

import pytest

from engine_project import ONE_AGENT, SUMMARY, Project, summary_line
from open_agent_compiler.tasks import build_options, run_tests

AGENTS = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CompilationConfig,
    EqualsEvaluator, MockResponse, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader,
    ToolDefinitionLogicBash, ToolTest)


def tool(name):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description="Says whether the collector runs."),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(allowed_commands=[f"{name} *"])),
        mock=MockResponse(kind="callable", callable_spec="gcprobe:probe"),
        tool_tests=[ToolTest(name=f"{name}-collects", input={},
                             evaluators=(EqualsEvaluator(field="collecting", expected=True),))],
    )


def registry():
    return one_agent([tool("first"), tool("second"), tool("third")])
''' + ONE_AGENT

PROBE = '''
import gc


def probe(payload):
    return {"collecting": gc.isenabled()}
'''


@pytest.fixture
def probe_project(tmp_path) -> Project:
    return Project.of(tmp_path, {"agents.py": AGENTS, "gcprobe.py": PROBE})


@pytest.mark.parametrize("jobs", [(), ("-n", "2")])
def test_a_test_runs_with_the_collector_on(probe_project: Project, jobs: tuple[str, ...]) -> None:
    done = probe_project.test(*jobs)
    assert summary_line(done.stdout) == SUMMARY.format(3, 3, 0, 0, 0), done.stdout + done.stderr


def _passes_during(run) -> tuple[int, list[int]]:
    passes: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(count)
    try:
        return run(), passes
    finally:
        gc.callbacks.remove(count)


def test_a_green_run_never_collects_and_leaves_the_collector_as_it_was(probe_project: Project,
                                                                       monkeypatch) -> None:
    monkeypatch.chdir(probe_project.root)
    monkeypatch.delenv("OAC_HERMETIC", raising=False)

    def run() -> str:
        out = io.StringIO()
        assert run_tests(build_options(probe_project.root, {"factory": "agents:registry", "config": "prod"}),
                         out) == 0, out.getvalue()
        return summary_line(out.getvalue())

    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    assert run() == SUMMARY.format(3, 3, 0, 0, 0)
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
    for _ in range(200_000):  # enough allocations for several passes of the youngest generation, were it on
        [[]]
    summary, passes = _passes_during(run)
    assert summary == SUMMARY.format(3, 0, 0, 3, 0)
    assert passes == []
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_collector_turned_off_by_the_caller_stays_off(probe_project: Project, monkeypatch) -> None:
    monkeypatch.chdir(probe_project.root)
    monkeypatch.delenv("OAC_HERMETIC", raising=False)
    gc.disable()
    try:
        out = io.StringIO()
        run_tests(build_options(probe_project.root, {"factory": "agents:registry", "config": "prod"}), out)
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    assert summary_line(out.getvalue()) == SUMMARY.format(3, 0, 3, 0, 0)  # the probe saw the caller's setting
