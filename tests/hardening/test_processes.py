"""Handlers are bounded and leave nothing behind: timeouts, leftovers, floods, cancels and a dying engine kill
the handler's whole tree (its children, setsid'd ones and orphans included), and the answer comes from the
handler alone. Every wait here is bounded and event-driven (FIFOs, pidfds), never a sleep."""

import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from open_agent_compiler import ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.model.core.tool import (
    JsonToolPermission, ScriptDefinition, ToolDefinitionLogicJson, ToolScriptDefinition,
)
from open_agent_compiler.execution import zygote
from open_agent_compiler.execution import keeper
from open_agent_compiler.execution.handlers import run_handler, start_handler
from proc_helpers import Fifo, all_end, group_members, misbehaving_tool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process-tree checks read /proc")


@pytest.fixture(params=["zygote", "direct", "spawn"])
def mode(request, monkeypatch) -> str:
    """The three ways a handler starts: forked by the zygote, by the engine itself, a fresh interpreter."""
    monkeypatch.delenv("OAC_HANDLER_SPAWN", raising=False)
    if request.param == "zygote":
        zygote.start()
    else:
        monkeypatch.setattr(zygote, "_client", None)
    if request.param == "spawn":
        monkeypatch.setenv("OAC_HANDLER_SPAWN", "1")
    return request.param


@pytest.fixture
def fifo(tmp_path: Path):
    pipe = Fifo(tmp_path / "report.fifo")
    yield pipe
    pipe.close()


def test_timeout_kills_the_whole_tree(mode: str, tmp_path: Path, fifo: Fifo) -> None:
    tool = misbehaving_tool(tmp_path)
    started = start_handler(tool, {"mode": "tree-and-hang", "fifo": str(fifo.path)}, project_root=tmp_path, timeout=1)
    pids = fifo.read_json()
    outcome = started.outcome()
    assert not outcome.ok and "timed out after 1s" in outcome.error
    assert all_end(pids) == [], "the handler, its child, its setsid child or its orphan outlived the timeout"
    assert group_members(pids[0]) == [], "a process of the handler's group outlived the timeout"


def test_a_handler_started_early_is_killed_at_its_deadline_without_being_asked(tmp_path: Path, fifo: Fifo) -> None:
    """Serial prefetch starts handlers before their turn: the deadline holds even if nobody waits for them."""
    zygote.start()
    tool = misbehaving_tool(tmp_path)
    started = start_handler(tool, {"mode": "tree-and-hang", "fifo": str(fifo.path)}, project_root=tmp_path, timeout=1)
    pids = fifo.read_json()
    assert all_end(pids) == [], "a handler nobody waited for kept running past its timeout"
    assert "timed out after 1s" in started.outcome().error


def test_a_handler_that_closes_its_descriptors_and_hangs_is_killed(mode: str, tmp_path: Path, fifo: Fifo) -> None:
    tool = misbehaving_tool(tmp_path)
    started = start_handler(tool, {"mode": "close-fds-and-hang", "fifo": str(fifo.path)}, project_root=tmp_path,
                            timeout=1)
    pids = fifo.read_json()
    outcome = started.outcome()
    assert not outcome.ok and "timed out after 1s" in outcome.error
    assert all_end(pids) == []


def test_an_answer_counts_even_if_children_hold_the_pipes_and_they_are_killed(mode: str, tmp_path: Path) -> None:
    tool = misbehaving_tool(tmp_path)
    outcome = run_handler(tool, {"mode": "answer-and-leave-children"}, project_root=tmp_path, timeout=20)
    assert outcome.ok, outcome.error
    assert outcome.output["value"] == "answered"
    assert all_end(outcome.output["pids"]) == [], "children left behind by a finished handler survived it"


def test_an_output_flood_is_cut_off_and_fails_with_its_size(mode: str, tmp_path: Path) -> None:
    tool = misbehaving_tool(tmp_path)
    outcome = run_handler(tool, {"mode": "flood"}, project_root=tmp_path, timeout=60)
    assert not outcome.ok
    assert f"exceeded the {keeper.OUTPUT_LIMIT >> 20} MiB limit" in outcome.error
    read = int(re.search(r"\((\d+) bytes read\)", outcome.error).group(1))
    assert keeper.OUTPUT_LIMIT < read <= keeper.OUTPUT_LIMIT + (1 << 20)


def test_an_oversized_answer_fails_with_its_size(tmp_path: Path) -> None:
    zygote.start()
    outcome = run_handler(misbehaving_tool(tmp_path), {"mode": "huge-answer"}, project_root=tmp_path, timeout=60)
    assert not outcome.ok and f"answer exceeded the {keeper.ANSWER_LIMIT >> 20} MiB limit" in outcome.error


def test_only_the_handler_answers_not_what_it_or_its_children_print(mode: str, tmp_path: Path) -> None:
    outcome = run_handler(misbehaving_tool(tmp_path), {"mode": "noisy"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output == {"value": "real", "pids": []}


def test_cancel_kills_the_tree(tmp_path: Path, fifo: Fifo) -> None:
    zygote.start()
    started = start_handler(misbehaving_tool(tmp_path), {"mode": "tree-and-hang", "fifo": str(fifo.path)},
                            project_root=tmp_path, timeout=300)
    pids = fifo.read_json()
    started.cancel()
    assert all_end(pids) == []


ENGINE = '''
import sys
from pathlib import Path
from open_agent_compiler.execution import zygote
from open_agent_compiler.execution.handlers import run_handler
sys.path.insert(0, {helpers!r})
from proc_helpers import misbehaving_tool

if sys.argv[1] == "zygote":
    zygote.start()
root = Path(sys.argv[2])
run_handler(misbehaving_tool(root), {{"mode": "tree-and-hang", "fifo": sys.argv[3]}}, project_root=root, timeout=300)
'''


@pytest.mark.parametrize("how", ["zygote", "direct"])
def test_kill_minus_nine_of_the_engine_kills_the_handlers_tree(how: str, tmp_path: Path, fifo: Fifo) -> None:
    script = tmp_path / "engine.py"
    script.write_text(ENGINE.format(helpers=str(Path(__file__).parent)))
    engine = subprocess.Popen([sys.executable, str(script), how, str(tmp_path), str(fifo.path)])
    try:
        pids = fifo.read_json()
        engine.send_signal(signal.SIGKILL)
        engine.wait(timeout=60)
        assert all_end(pids) == [], "the handler's tree outlived the engine"
    finally:
        engine.kill()


INLINE = textwrap.dedent('''
    import os
    from pydantic import BaseModel
    from open_agent_compiler import ScriptTool


    class In(BaseModel):
        q: str


    class Inline(ScriptTool[In, In]):
        name = "inline"

        def execute(self, input):
            with open("inline-ran.txt", "a") as log:  # cwd is the project root
                log.write(input.q)
            return In(q=input.q.upper())
''')


def test_an_inline_script_contents_handler_runs(mode: str, tmp_path: Path) -> None:
    script = ScriptDefinition(target_file_path="tools/inline.py", script_contents=INLINE)
    tool = ToolDefinition(header=ToolDefinitionHeader(name="inline", description="i"), json_tool=ToolDefinitionLogicJson(
        permission_json=JsonToolPermission(allowed_commands=["python tools/inline.py"]),
        tool_scripts=[ToolScriptDefinition(scripts=[script])]))
    outcome = run_handler(tool, {"q": "abc"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output == {"q": "ABC"}, outcome.error
    assert (tmp_path / "inline-ran.txt").read_text() == "abc"


SIBLING = textwrap.dedent('''
    import os, sys
    from pydantic import BaseModel
    from open_agent_compiler import ScriptTool
    import helper  # next to this script, as `python handlers/tool.py` would find it


    class In(BaseModel):
        q: str


    class Out(BaseModel):
        answer: str
        cwd: str
        path_head: list[str]


    class Sibling(ScriptTool[In, Out]):
        name = "sibling"

        def execute(self, input):
            return Out(answer=helper.shout(input.q), cwd=os.getcwd(), path_head=sys.path[:2])
''')


def test_a_handler_imports_a_module_next_to_it_and_runs_from_the_project_root(mode: str, tmp_path: Path) -> None:
    (tmp_path / "handlers").mkdir()
    (tmp_path / "handlers" / "tool.py").write_text(SIBLING)
    (tmp_path / "handlers" / "helper.py").write_text("def shout(text):\n    return text.upper() + '!'\n")
    tool = ToolDefinition(header=ToolDefinitionHeader(name="sibling", description="s"), handler_script="handlers/tool.py")
    outcome = run_handler(tool, {"q": "hi"}, project_root=tmp_path, timeout=30)
    assert outcome.ok, outcome.error
    assert outcome.output == {"answer": "HI!", "cwd": str(tmp_path), "path_head": [str(tmp_path / "handlers"), str(tmp_path)]}


def test_without_fork_a_fresh_interpreter_answers_in_a_file_of_its_own(tmp_path: Path, monkeypatch) -> None:
    """Where os.fork does not exist there is no keeper: the answer still never comes from stdout."""
    monkeypatch.delattr(os, "fork")
    outcome = run_handler(misbehaving_tool(tmp_path), {"mode": "noisy"}, project_root=tmp_path, timeout=60)
    assert outcome.ok and outcome.output == {"value": "real", "pids": []}, outcome.error
