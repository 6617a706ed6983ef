"""`--repeat N` and flakiness: a handler that fails one time in three (a counter file, no randomness)."""

import json
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from engine_project import ONE_AGENT, Project

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)


def registry():
    flaky = ToolDefinition(header=ToolDefinitionHeader(name="flaky", description="fails every third call"),
                           mock=MockResponse(kind="callable", callable_spec="counter:answer"),
                           tool_tests=[ToolTest(name="sometimes", input={},
                                                evaluators=(EqualsEvaluator(field="ok", expected=True),))])
    steady = ToolDefinition(header=ToolDefinitionHeader(name="steady", description="always fine"),
                            mock=MockResponse(kind="fixed", fixed_output={"ok": True}),
                            tool_tests=[ToolTest(name="always", input={},
                                                 evaluators=(EqualsEvaluator(field="ok", expected=True),))])
    return one_agent([flaky, steady])
''' + ONE_AGENT

COUNTER = '''
import fcntl
import os


def answer(payload):
    fd = os.open("calls.txt", os.O_RDWR | os.O_CREAT)  # one count across -n workers: under a lock
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        calls = int(os.read(fd, 32) or b"0") + 1
        os.lseek(fd, 0, 0)
        os.write(fd, str(calls).encode())
    finally:
        os.close(fd)
    return {"ok": calls % 3 != 0}
'''


def project(tmp_path) -> Project:
    return Project.of(tmp_path / "proj", {"agents.py": AGENTS, "counter.py": COUNTER})


def test_repeat_reports_flaky_with_its_pass_rate_in_summary_junit_and_jsonl(tmp_path) -> None:
    proj = project(tmp_path)
    done = proj.test("--repeat", "5", "--junit", "junit.xml", code=1)  # --flaky-as fail is the default
    assert (proj.root / "calls.txt").read_text() == "5"  # five independent runs, no green skip between them
    lines = done.stdout.splitlines()
    assert lines[-4:] == ["", "oac test: discovered=2 passed=1 failed=0 skipped=0 not_runnable=0 flaky=1",
                          "Failures:", lines[-1]]
    flaky = [line for line in lines if line.startswith("  FLAKY ")]
    assert len(flaky) == 1 and flaky[0].startswith("  FLAKY 'sometimes': flaky: 4/5 runs passed (pass@5=1.00, "
                                                   "pass^5=0.00); a failing run: equals: 'ok'")
    records = proj.records()
    runs = [r for r in records if r["repeat"]]
    assert sorted((r["test_id"], r["repeat"]) for r in runs) == sorted(
        (t, i) for t in ("tool:flaky::sometimes", "tool:steady::always") for i in range(1, 6))
    assert [r["status"] for r in runs if r["test_id"] == "tool:flaky::sometimes"].count("fail") == 1
    verdicts = {r["test_id"]: r for r in records if r["repeats"]}
    sometimes = verdicts["tool:flaky::sometimes"]
    assert sometimes["flaky"] is True and sometimes["status"] == "fail"
    assert sometimes["repeats"]["runs"] == 5 and sometimes["repeats"]["passes"] == 4
    assert sometimes["repeats"]["pass_rate"] == 0.8
    assert sometimes["repeats"]["pass_at_k"]["1"] == 0.8 and sometimes["repeats"]["pass_at_k"]["2"] == 1.0
    assert sometimes["repeats"]["pass_hat_k"]["1"] == 0.8 and sometimes["repeats"]["pass_hat_k"]["2"] == 0.6
    assert verdicts["tool:steady::always"]["flaky"] is False and verdicts["tool:steady::always"]["status"] == "pass"
    suite = ET.parse(proj.root / "junit.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    case = next(c for c in suite if c.get("name") == "sometimes")
    assert case.find("failure").get("type") == "flaky" and "4/5 runs passed" in case.find("failure").get("message")
    assert case.find("properties/property").attrib == {"name": "flaky", "value": "true"}
    # a repeat never makes a test green: the next plain run runs both
    again = proj.test(code=1)  # the sixth call fails
    assert "discovered=2 passed=1 failed=1 skipped=0" in again.stdout


def test_flaky_as_pass_exits_0_and_n_spreads_the_repeats(tmp_path) -> None:
    proj = project(tmp_path)
    done = proj.test("--repeat", "3", "--flaky-as", "pass", "-n", "2", "--junit", "junit.xml", code=0)
    assert "flaky=1" in done.stdout and (proj.root / "calls.txt").read_text() == "3"
    suite = ET.parse(proj.root / "junit.xml").getroot()
    assert suite.get("failures") == "0"
    case = next(c for c in suite if c.get("name") == "sometimes")
    assert case.find("failure") is None and case.find("properties/property").get("name") == "flaky"
    assert "2/3 runs passed" in case.find("system-out").text
    # each repeat was its own doit task: the state DB knows them by their repeat ids
    import sqlite3
    names = {row[0] for row in sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3").execute(
        "select task_id from doit")}
    assert {f"test:prod:tool:flaky::sometimes@r{i}" for i in (1, 2, 3)} <= names


def test_repeat_of_a_steady_failure_is_a_failure_not_flaky(tmp_path) -> None:
    proj = project(tmp_path)
    proj.edit("counter.py", "calls % 3 != 0", "False")
    done = proj.test("--repeat", "2", "--kind", "tool", "--filter", "sometimes", code=1)
    assert "flaky=0" in done.stdout and "failed=1" in done.stdout
    verdict = [r for r in proj.records() if r["repeats"]][0]
    assert verdict["flaky"] is False and verdict["repeats"]["pass_rate"] == 0.0
    assert json.dumps(verdict["repeats"]["pass_at_k"]) == '{"1": 0.0, "2": 0.0}'


def doit_test(proj: Project, table: str) -> subprocess.CompletedProcess[str]:
    """`doit test` from a user's dodo.py, the repeats set in [tool.oac]."""
    proj.write("dodo.py", "from open_agent_compiler.tasks import DOIT_CONFIG, task_test  # noqa: F401\n")
    proj.write("pyproject.toml", f'[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n{table}')
    return subprocess.run([str(Path(sys.executable).with_name("doit")), "test"], cwd=proj.root,
                          capture_output=True, text=True, timeout=120)


def saved_tasks(proj: Project) -> dict[str, dict]:
    """task id → what the state holds for it: doit's saved success (`_values_:` …) or our failure mark."""
    return {row[0]: json.loads(row[1]) for row in sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3").execute(
        "select task_id, task_data from doit")}


def test_a_failing_repeat_is_a_failed_doit_task_so_doit_test_fails_and_saves_nothing(tmp_path) -> None:
    proj = project(tmp_path)
    proj.edit("counter.py", "calls % 3 != 0", "False")  # every run of 'sometimes' fails
    done = doit_test(proj, "repeat = 2\n")
    assert done.returncode == 2, done.stdout + done.stderr  # doit: a task of the `test` group failed
    assert "discovered=2 passed=1 failed=1" in done.stdout
    saved = saved_tasks(proj)
    for i in (1, 2):  # passing repeats: doit saved their success (and no key: a repeat proves nothing green)
        assert "_values_:" in saved[f"test:prod:tool:steady::always@r{i}"]
        assert saved[f"test:prod:tool:flaky::sometimes@r{i}"] == {"_failed_": True}  # failed: no success saved
    # a flaky test (one run of three fails) fails the doit run too, --flaky-as fail being the default
    flaky = project(tmp_path / "flaky")
    done = doit_test(flaky, "repeat = 3\n")
    assert done.returncode == 2 and "flaky=1" in done.stdout, done.stdout + done.stderr
    saved = saved_tasks(flaky)
    assert saved["test:prod:tool:flaky::sometimes@r3"] == {"_failed_": True}  # the third call failed
    assert "_values_:" in saved["test:prod:tool:flaky::sometimes@r2"]
    # flaky-as = "pass" fails nothing in the summary, but the failing run stays a failed doit task (doit saves
    # no success for it), so doit's own exit code stays non-zero (docs/testing.md, exit codes)
    tolerant = project(tmp_path / "tolerant")
    done = doit_test(tolerant, 'repeat = 3\nflaky_as = "pass"\n')
    assert "passed=1 failed=0 skipped=0 not_runnable=0 flaky=1" in done.stdout and "Failures:" not in done.stdout
    assert done.returncode == 2 and saved_tasks(tolerant)["test:prod:tool:flaky::sometimes@r3"] == {"_failed_": True}
