"""Mocks versus real handlers, hermetic mode, timeouts, and bad input as one line with exit 2."""

import re
import pytest

from engine_project import ONE_AGENT, SUMMARY, Project, summary_line

TIMING = re.compile(r" \[(?:capability|tool|agent)(?: \d+\.\d{3}s)?\]$")  # the kind/duration suffix of result lines

TOOLS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockProfile, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest, LLMJudgeEvaluator,
)


def tool(name, tests, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name), tool_tests=tests, **kw)


def registry():
    tools = [
        tool("raiser", [ToolTest(name="raises", input={})], handler_script="handlers.py"),
        tool("sleeper", [ToolTest(name="hangs", input={})], handler_script="handlers.py"),
        tool("nothing", [ToolTest(name="no-mock-no-handler", input={})]),
        tool("seq", [ToolTest(name="seq-first", input={}, evaluators=(EqualsEvaluator(field="v", expected=1),))],
             mock=MockResponse(kind="sequence", sequence=({"v": 1}, {"v": 2}))),
        tool("judged", [ToolTest(name="judge-missing", input={}, evaluators=(LLMJudgeEvaluator(criteria="nice"),))],
             mock=MockResponse(kind="echo")),
        tool("profiled", [ToolTest(name="profile-wins", input={}, mock_profile="ci",
                                   evaluators=(EqualsEvaluator(field="src", expected="profile"),))],
             mock=MockResponse(kind="fixed", fixed_output={"src": "default"}), handler_script="handlers.py"),
        tool("real", [ToolTest(name="real-ok", input={"x": 2}, evaluators=(EqualsEvaluator(field="y", expected=4),))],
             handler_script="handlers.py"),
    ]
    reg = one_agent(tools)
    reg.register_mock_profile(MockProfile(name="ci", responses={"profiled": MockResponse(fixed_output={"src": "profile"})}))
    return reg
''' + ONE_AGENT

HANDLERS = '''
import sys, time
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class Empty(BaseModel):
    pass


class XIn(BaseModel):
    x: int


class YOut(BaseModel):
    y: int


class Raiser(ScriptTool[Empty, Empty]):
    name = "raiser"

    def execute(self, input):
        print("about to explode", file=sys.stderr)
        raise RuntimeError("kaboom")


class Sleeper(ScriptTool[Empty, Empty]):
    name = "sleeper"

    def execute(self, input):
        time.sleep(30)
        return Empty()


class Real(ScriptTool[XIn, YOut]):
    name = "real"

    def execute(self, input):
        print("handler chatter on stdout")
        return YOut(y=input.x * 2)
'''


@pytest.fixture
def tools(tmp_path) -> Project:
    return Project.of(tmp_path / "tools", {"agents.py": TOOLS, "handlers.py": HANDLERS})


def line_for(output: str, name: str) -> str:
    matches = [line for line in output.splitlines() if f"'{name}'" in line and line.startswith("  ")]
    assert matches, output
    return TIMING.sub("", matches[0])


@pytest.mark.parametrize("spawn", ["", "1"], ids=["forked-child", "fresh-interpreter"])
def test_handlers_mocks_and_missing_context(tools: Project, spawn: str) -> None:
    done = tools.test("--timeout", "1", code=1, env={"OAC_HANDLER_SPAWN": spawn})
    out = done.stdout
    assert line_for(out, "raises").startswith("  FAIL 'raises': ")
    assert "kaboom" in line_for(out, "raises") and "about to explode" in line_for(out, "raises")
    assert "timed out after 1s" in line_for(out, "hangs")
    assert "neither a mock nor a handler" in line_for(out, "no-mock-no-handler")
    assert line_for(out, "seq-first") == "  pass 'seq-first'"
    assert line_for(out, "profile-wins") == "  pass 'profile-wins'"
    assert line_for(out, "real-ok") == "  pass 'real-ok'"
    assert line_for(out, "judge-missing").startswith("  skip 'judge-missing': every evaluator skipped")
    assert summary_line(out) == SUMMARY.format(7, 3, 3, 1, 0)
    records = {r["test_name"]: r for r in tools.records()}
    assert records["judge-missing"]["status"] == "skipped" and records["judge-missing"]["evidence"][0]["skipped"]
    assert records["profile-wins"]["mock_profile"] == "ci"


def test_hermetic_fails_fast_instead_of_running_handlers(tools: Project) -> None:
    for extra, env in ((("--hermetic",), None), ((), {"OAC_HERMETIC": "1"})):
        done = tools.test("--force", *extra, code=1, env=env)
        assert "--hermetic" in line_for(done.stdout, "real-ok")
        assert "--hermetic" in line_for(done.stdout, "raises")
        assert line_for(done.stdout, "seq-first") == "  pass 'seq-first'"


@pytest.mark.parametrize("edit, message", [
    (('mock_profile="ci"', 'mock_profile="nope"'), "unknown mock profile 'nope'"),
    (('tool("seq", [ToolTest(name="seq-first"', 'tool("real", [ToolTest(name="seq-first"'), "two different tools are named 'real'"),
    (('name="hangs"', 'name="raises"'), None),
])
def test_bad_registries_exit_2_with_one_line(tools: Project, edit, message) -> None:
    tools.edit("agents.py", *edit)
    done = tools.test(code=None)
    if message is None:  # same test name on two different tools is fine: ids differ
        assert done.returncode == 1
        return
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tools.root / ".oac" / "test_results.jsonl").exists()


def test_duplicate_test_names_on_one_target_exit_2(tools: Project) -> None:
    tools.edit("agents.py", 'ToolTest(name="real-ok", input={"x": 2}',
               'ToolTest(name="real-ok", input={"x": 3}), ToolTest(name="real-ok", input={"x": 2}')
    done = tools.test(code=2)
    assert "tool:real::real-ok" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (("test", "nosuchmodule:registry", "--config", "prod"), "no module 'nosuchmodule'"),
    (("test", "agents:nothing", "--config", "prod"), "has no attribute 'nothing'"),
    (("test", "agents:registry", "--config", "nope"), "unknown compilation config 'nope'"),
    (("test", "agents", "--config", "prod"), "must look like 'module:callable'"),
    (("test", "--config", "prod"), "no factory given"),
])
def test_usage_errors(tools: Project, args, message) -> None:
    done = tools.oac(*args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_pyproject_supplies_defaults(tools: Project) -> None:
    tools.write("pyproject.toml", '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n')
    done = tools.oac("test", "--kind", "tool", "--filter", "seq")
    assert done.returncode == 0 and summary_line(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0)
    tools.write("pyproject.toml", "[tool.oac\n")
    done = tools.oac("test")
    assert done.returncode == 2 and "pyproject.toml" in done.stderr


def test_handlers_under_two_processes_match_serial(tools: Project) -> None:
    serial = tools.test("--timeout", "1", code=1)
    parallel = tools.test("--timeout", "1", "--force", "-n", "2", code=1)
    assert summary_line(parallel.stdout) == summary_line(serial.stdout) == SUMMARY.format(7, 3, 3, 1, 0)
    assert "timed out after 1s" in line_for(parallel.stdout, "hangs")
    assert line_for(parallel.stdout, "real-ok") == "  pass 'real-ok'"


COUNTED = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, TemplateSlot, TemplateTree,
    ToolDefinition, ToolDefinitionHeader, ToolTest,
)


def registry():
    tools = [ToolDefinition(header=ToolDefinitionHeader(name=f"h{i}", description="counted"),
                            handler_script="counted.py",
                            tool_tests=[ToolTest(name=f"count-{i}", input={"i": i},
                                                 evaluators=(EqualsEvaluator(field="i", expected=i),))])
             for i in range(8)]
    return one_agent(tools)
''' + ONE_AGENT

COUNTED_HANDLERS = "\n".join(['''
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class Io(BaseModel):
    i: int
'''] + [f'''

class H{i}(ScriptTool[Io, Io]):
    name = "h{i}"

    def execute(self, input):
        with open("executions.log", "a") as log:
            log.write("h{i}\\n")
        return input
''' for i in range(8)])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_handler_runs_exactly_once_however_many_start_early(tmp_path, jobs: str) -> None:
    proj = Project.of(tmp_path / "counted", {"agents.py": COUNTED, "counted.py": COUNTED_HANDLERS})
    done = proj.test("-n", jobs)
    assert summary_line(done.stdout) == SUMMARY.format(8, 8, 0, 0, 0)
    assert sorted(proj.executions()) == [f"h{i}" for i in range(8)]
    proj.test("-n", jobs)
    assert len(proj.executions()) == 8  # green: nothing ran again
