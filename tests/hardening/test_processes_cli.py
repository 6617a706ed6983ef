"""`oac test` told to stop — SIGINT, SIGTERM, SIGHUP (serial and under -n 2) or kill -9 — leaves no process
behind (handlers, their children in other sessions, keepers, zygote, workers), prints the summary once with
every discovered test counted, writes JUnit when asked, and exits 128 + the signal."""

import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from open_agent_compiler.execution.process_tree import descendants
from proc_helpers import MISBEHAVING, Fifo, all_end

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process-tree checks read /proc")

OAC = str(Path(sys.executable).with_name("oac"))

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)

FIFO = {fifo!r}


def registry():
    hanging = ToolDefinition(
        header=ToolDefinitionHeader(name="misbehaving", description="hangs"), handler_script="misbehaving.py",
        tool_tests=[ToolTest(name="hangs", input={{"mode": "tree-and-hang", "fifo": FIFO}})])
    quick = [ToolDefinition(header=ToolDefinitionHeader(name=f"q{{i}}", description="echo"), mock=MockResponse(kind="echo"),
                            tool_tests=[ToolTest(name=f"quick-{{i}}", input={{"i": i}},
                                                 evaluators=(EqualsEvaluator(field="i", expected=i),))])
             for i in range(5)]
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=[*quick[:2], hanging, *quick[2:]])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''


@pytest.fixture
def fifo(tmp_path: Path):
    pipe = Fifo(tmp_path / "report.fifo")
    yield pipe
    pipe.close()


def start(tmp_path: Path, fifo: Fifo, *extra: str, own_group: bool = False) -> tuple[subprocess.Popen, list[int]]:
    """Start `oac test` and return once the hanging handler runs, with every process below `oac` at that time."""
    (tmp_path / "agents.py").write_text(AGENTS.format(fifo=str(fifo.path)))
    (tmp_path / "misbehaving.py").write_text(MISBEHAVING)
    env = {k: v for k, v in os.environ.items() if k != "OAC_HERMETIC"}
    proc = subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod", "--junit", "junit.xml", *extra],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=own_group)
    handler_tree = fifo.read_json()
    return proc, sorted(set(handler_tree) | set(descendants(proc.pid)))


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_the_run_in_order(tmp_path: Path, fifo: Fifo, signum: int, jobs: str) -> None:
    proc, pids = start(tmp_path, fifo, "-n", jobs)
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, out + err
    assert "Traceback" not in err, err
    summaries = [line for line in out.splitlines() if line.startswith("oac test:")]
    assert len(summaries) == 1, out
    assert summaries[0].startswith("oac test: discovered=6 "), summaries[0]
    assert f"interrupted by {signal.Signals(signum).name}" in err
    counts = dict(part.split("=") for part in summaries[0].split()[2:])
    finished = sum(int(counts[k]) for k in ("passed", "failed", "skipped", "not_runnable"))
    junit = ET.parse(tmp_path / "junit.xml").getroot()  # written, and holds exactly the tests that finished
    assert finished < 6 and len(list(junit.iter("testcase"))) == finished
    assert all_end(pids) == [], f"left running after {signal.Signals(signum).name}"


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: signal.Signals(s).name)
def test_a_signal_to_the_whole_process_group_ends_the_run_in_order(tmp_path: Path, fifo: Fifo, signum: int,
                                                                    jobs: str) -> None:
    """As a terminal's Ctrl-C or a CI runner's kill of the job delivers it: to oac and every process in its group."""
    proc, pids = start(tmp_path, fifo, "-n", jobs, own_group=True)
    os.killpg(proc.pid, signum)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, out + err
    assert "Traceback" not in err, err
    assert len([line for line in out.splitlines() if line.startswith("oac test:")]) == 1, out
    assert all_end(pids) == [], f"left running after {signal.Signals(signum).name} to the group"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_kill_minus_nine_of_oac_leaves_nothing_running(tmp_path: Path, fifo: Fifo, jobs: str) -> None:
    proc, pids = start(tmp_path, fifo, "-n", jobs)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert all_end(pids) == [], "left running after kill -9 of oac"


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_a_timeout_that_never_ends_is_refused(tmp_path: Path, value: str) -> None:
    (tmp_path / "agents.py").write_text("def registry():\n    raise AssertionError('must not load')\n")
    cli = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--timeout", value], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2, cli.stdout + cli.stderr
    assert "timeout" in cli.stderr and "Traceback" not in cli.stderr
    (tmp_path / "pyproject.toml").write_text(f'[tool.oac]\nfactory = "agents:registry"\nconfig = "prod"\ntimeout = {value}\n')
    toml = subprocess.run([OAC, "test"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert toml.returncode == 2, toml.stdout + toml.stderr
    assert "timeout" in toml.stderr and "finite" in toml.stderr and "Traceback" not in toml.stderr


SLOW_FACTORY = '''
import signal

def registry():
    with open({fifo!r}, "w") as pipe:  # tell the test the registry is loading, then wait to be stopped
        pipe.write("[]\\n")
    signal.pause()
'''


def test_a_signal_while_the_registry_loads_exits_with_its_code(tmp_path: Path, fifo: Fifo) -> None:
    (tmp_path / "agents.py").write_text(SLOW_FACTORY.format(fifo=str(fifo.path)))
    proc = subprocess.Popen([OAC, "test", "agents:registry", "--config", "prod"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        fifo.read_json()
        children = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, out + err
    assert "Traceback" not in err and "interrupted" in err
    assert all_end(children) == []
