"""Ctrl-C of `oac test -n 2` while one worker is inside a hung handler (issue 32, case 14): every test whose
work had ended on the other worker is still recorded — its result may be in the pipe, held by its worker, or
half read by the engine when the signal lands. The moment of the signal moves across the quick tests' ends, so
the in-flight result is a different one in each round; exit 130, one line, nothing left running."""

import json
import signal
import subprocess
import sys
import threading

import pytest

from engine_project import OAC, Project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and -n workers of Linux")
QUICK = 6

AGENTS = f'''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse, TemplateSlot,
    TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)


def tool(name, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name), **kw,
                          tool_tests=[ToolTest(name=name + "-t", input={{}},
                                               evaluators=(EqualsEvaluator(field="n", expected=1),))])


def registry():
    quick = [tool(f"q{{i}}", mock=MockResponse(kind="callable", callable_spec="mockmod:answer"))
             for i in range({QUICK})]
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                            extra_tools=[tool("hang", handler_script="handlers/hang.py"), *quick])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

HANG = '''
import os
import time
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class E(BaseModel):
    pass


class N(BaseModel):
    n: int


class Hang(ScriptTool[E, N]):
    name = "hang"

    def execute(self, input):
        with open("hang.pid", "w") as out:
            out.write(str(os.getpid()))
        while True:
            time.sleep(3600)
'''

MOCK = '''
def answer(payload):
    with open("done.log", "a") as log:  # the test's work has ended once this line is written
        log.write("x\\n")
    return {"n": 1}
'''


def lines(path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


@pytest.mark.parametrize("ended", range(1, QUICK + 1))
def test_ctrl_c_under_n_2_keeps_every_record_of_a_test_that_ended(tmp_path, ended: int) -> None:
    proj = Project.of(tmp_path / "p", {"agents.py": AGENTS, "handlers/hang.py": HANG, "mockmod.py": MOCK,
                                        "pyproject.toml": '[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\n'})
    run = subprocess.Popen([OAC, "test", "-n", "2"], cwd=proj.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    done, hang = proj.root / "done.log", proj.root / "hang.pid"
    try:
        for _ in range(1200):  # bounded wait for observable progress, not for time
            if hang.exists() and lines(done) >= ended:
                break
            if run.poll() is not None:
                break
            threading.Event().wait(0.01)
        assert run.poll() is None, run.communicate()
        before = lines(done)  # quick tests whose work ended before the signal
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 130, out + err
    assert err.strip().splitlines() == [err.strip().splitlines()[-1]] and "Traceback" not in err, err
    results = proj.root / ".oac" / "test_results.jsonl"
    records = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    quick = [record for record in records if record["test_id"].split("::")[-1] != "hang-t"]
    assert len(quick) >= before, (before, [record["test_id"] for record in records], out, err)
    assert all(record["status"] == "pass" for record in quick)
    pid = int(hang.read_text())
    assert subprocess.run(["sh", "-c", f"test -d /proc/{pid} && ! grep -q '^State:.*Z' /proc/{pid}/status"]
                          ).returncode != 0, "the hung handler outlived the run"
