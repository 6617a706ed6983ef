"""The "blocking call" column of the user-code fault matrix: each of the 7 kinds of user code blocks for ever.

Inside a test (callable mock, handler, custom evaluator, model script, judge, invoker) the one deadline
(`execution.deadline`) ends it: that test FAILs `timed out after Ns` and the run goes on (the other test passes).
At load time (the registry factory, a judge factory, an invoker factory) the run's `--timeout` bounds it: one
line and exit 2. Nothing waits for the blocked code: every run ends within a few seconds of its deadline.
"""

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

OAC = str(Path(sys.executable).with_name("oac"))
TIMEOUT = "2"

BLOCK = "import threading\nthreading.Event().wait()  # blocks for ever\n"

AGENTS = '''
from typing import Literal

from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission,
                                 CompilationConfig, EqualsEvaluator, LLMJudgeEvaluator, MockResponse, TemplateSlot,
                                 TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash,
                                 ToolTest)
from open_agent_compiler.model.core.evaluator import Evaluator


class Blocking(Evaluator):
    kind: Literal["blocking"] = "blocking"

    def evaluate(self, context):
        import threading
        threading.Event().wait()


def tool(name, **fields):
    return ToolDefinition(header=ToolDefinitionHeader(name=name, description=name),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=[f"run-{name} *"])), **fields)


def registry():
    fine = tool("fine", mock=MockResponse(kind="fixed", fixed_output={"ok": 1}), tool_tests=[
        ToolTest(name="fine", input={}, evaluators=(EqualsEvaluator(field="ok", expected=1),)),
        ToolTest(name="evaluator-blocks", input={}, evaluators=(Blocking(),)),
        ToolTest(name="judge-blocks", input={}, evaluators=(LLMJudgeEvaluator(criteria="is fine"),)),
    ])
    mocked = tool("mocked", mock=MockResponse(kind="callable", callable_spec="blocking:mock"),
                  tool_tests=[ToolTest(name="mock-blocks", input={})])
    handled = tool("handled", handler_script="handler.py", tool_tests=[ToolTest(name="handler-blocks", input={})])
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), system_prompt="p",
                            extra_tools=[fine, mocked, handled],
                            agent_tests=[AgentTest(name="agent-blocks", prompt="hi", timeout_s=%s)])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="t"))
    return reg


def blocking_registry():
''' % TIMEOUT + textwrap.indent(BLOCK, "    ")

BLOCKING = '''
import threading
from contextlib import contextmanager

from open_agent_compiler.testing.invokers.protocol import InvokerInfo


def mock(payload):
    threading.Event().wait()


class Judge:
    def judge(self, *, criteria, target, model=None):
        threading.Event().wait()


def judge():
    return Judge()


def slow_judge():
    threading.Event().wait()


class Session:
    def turn(self, index, prompt):
        threading.Event().wait()


class Invoker:
    info = InvokerInfo(name="blocking")

    @contextmanager
    def session(self, agent, test, dispatcher, deadline):
        yield Session()


def invoker():
    return Invoker()


def slow_invoker():
    threading.Event().wait()
'''

HANDLER = '''
import threading
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class Empty(BaseModel):
    pass


class Handled(ScriptTool[Empty, Empty]):
    name = "handled"

    def execute(self, input):
        threading.Event().wait()
'''

SCRIPTS = '''
import threading


def blocks(view):
    threading.Event().wait()


SCRIPTS = {"agent-blocks": blocks}
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("blocking")
    (root / ".git").mkdir()
    for name, text in (("agents.py", AGENTS), ("blocking.py", BLOCKING), ("handler.py", HANDLER),
                       ("agents_scripts.py", SCRIPTS)):
        (root / name).write_text(text)
    return root


def oac(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([OAC, "test", "agents:registry", "--config", "prod", "--timeout", TIMEOUT, "--force",
                           "-v", *args], cwd=project, capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - started


# kind → (the test whose user code blocks, extra arguments of the run)
IN_A_TEST = {
    "callable mock": ("mock-blocks", ("--kind", "tool")),
    "handler": ("handler-blocks", ("--kind", "tool")),
    "custom evaluator": ("evaluator-blocks", ("--kind", "tool")),
    "judge": ("judge-blocks", ("--kind", "tool", "--judge", "blocking:judge")),
    "model script": ("agent-blocks", ("--invoker", "scripted")),
    "invoker": ("agent-blocks", ("--invoker", "blocking:invoker")),
}


@pytest.mark.parametrize("kind", IN_A_TEST)
def test_user_code_blocking_inside_a_test_fails_that_test_at_its_deadline(kind: str, project: Path) -> None:
    name, extra = IN_A_TEST[kind]
    done, took = oac(project, *extra)
    lines = done.stdout.splitlines()
    failed = [line for line in lines if line.startswith(f"  FAIL '{name}'")]
    assert failed and f"timed out after {TIMEOUT}s" in failed[0], done.stdout + done.stderr
    assert any(line.startswith("  pass 'fine' ") for line in lines), done.stdout  # the run went on
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert took < 40, took  # every blocked test ends at its deadline, not at some later time


LOAD_TIME = {
    "factory": ("agents:blocking_registry", ()),
    "judge factory": ("agents:registry", ("--judge", "blocking:slow_judge")),
    "invoker factory": ("agents:registry", ("--invoker", "blocking:slow_invoker")),
}


@pytest.mark.parametrize("kind", LOAD_TIME)
def test_user_code_blocking_at_load_time_is_one_line_and_exit_2(kind: str, project: Path) -> None:
    factory, extra = LOAD_TIME[kind]
    started = time.monotonic()
    done = subprocess.run([OAC, "test", factory, "--config", "prod", "--timeout", TIMEOUT, *extra], cwd=project,
                          capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stdout + done.stderr
    assert f"timed out after {TIMEOUT}s while loading" in lines[0] and "Traceback" not in done.stderr
    assert "discovered=" not in done.stdout
    assert took < 30, took


def test_at_the_deadline_its_stoppers_run_and_one_registered_late_runs_at_once() -> None:
    import threading

    from open_agent_compiler.execution.deadline import Deadline, TimedOut, stop_at_deadline

    stopped = threading.Event()

    def blocked() -> str:
        stop_at_deadline(stopped.set)  # what a harness turn / handler registers: the deadline stops it
        stopped.wait(30)
        return "woke"

    deadline = Deadline(0.3)
    with pytest.raises(TimedOut, match="timed out after 0.3s") as raised:
        deadline.run(blocked, what="turn")
    assert stopped.is_set() and raised.value.late == (True, "woke")  # stopped, it ended within SETTLE
    late = threading.Event()
    deadline.on_expiry(late.set)
    assert late.is_set()


def test_an_outer_deadline_stops_what_runs_under_an_inner_one() -> None:
    """A harness turn (inner deadline, long) inside a test (outer deadline, short): the test's deadline stops it."""
    import threading

    from open_agent_compiler.execution.deadline import Deadline, TimedOut, stop_at_deadline

    stopped = threading.Event()

    def blocked() -> None:
        stop_at_deadline(stopped.set)
        stopped.wait(30)

    with pytest.raises(TimedOut):
        Deadline(0.3).run(lambda: Deadline(30).run(blocked))
    assert stopped.wait(5), "the outer deadline did not stop what the inner one ran"


def test_a_thread_whose_body_ended_carries_the_next_one_and_a_blocked_one_is_left_alone() -> None:
    """Bodies run one after another reuse one thread; a body still blocked at its deadline keeps its thread, so
    the next body runs in another one and ends on time; the thread-local deadline stack is the body's only."""
    import threading

    from open_agent_compiler.execution.deadline import Deadline, TimedOut, current

    def here() -> tuple[int, bool]:
        return threading.get_ident(), current() is not None

    first, second = Deadline(5).run(here), Deadline(5).run(here)
    assert first == second and first[1]  # the same thread, running under its deadline
    release = threading.Event()
    with pytest.raises(TimedOut):
        Deadline(0.2).run(release.wait, 30)
    started = time.monotonic()
    after = Deadline(5).run(here)
    assert after[0] != first[0] and time.monotonic() - started < 2  # not queued behind the blocked body
    release.set()
    assert Deadline(5).run(lambda: current() is not None) and current() is None


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork")
def test_a_forked_child_runs_bodies_in_threads_of_its_own() -> None:
    """A doit `-n` worker is a fork of the engine, whose idle carrier thread does not exist in the child."""
    import os

    from open_agent_compiler.execution.deadline import Deadline

    assert Deadline(5).run(lambda: 1) == 1  # the parent now holds an idle carrier
    pid = os.fork()
    if pid == 0:
        try:
            code = 0 if Deadline(3).run(lambda: 7) == 7 else 1
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
