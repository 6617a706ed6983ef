"""The process mutants no test caught (issue 32's audit): the keeper's evidence is the *last* 16 KiB of a
handler's output; a reused pid does not make a dead engine look alive; `leftovers.clean` removes only scratch
folders directly under the temp dir, whatever a pid file names."""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from open_agent_compiler import ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.execution import keeper, leftovers, zygote
from open_agent_compiler.execution.handlers import run_handler

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

LOUD = '''
import sys
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    size: int


class Loud(ScriptTool[In, In]):
    name = "loud"

    def execute(self, input):
        sys.stderr.write("FIRST-WORDS " + "." * input.size + " LAST-WORDS\\n")
        sys.stderr.flush()
        raise SystemExit(3)
'''


def test_the_evidence_of_a_failed_handler_is_the_end_of_its_output(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(LOUD)
    tool = ToolDefinition(header=ToolDefinitionHeader(name="loud", description="l"), handler_script="loud.py")
    zygote.start()
    outcome = run_handler(tool, {"size": 4 * keeper.TAIL}, project_root=tmp_path, timeout=60)
    assert not outcome.ok
    assert "LAST-WORDS" in outcome.error, outcome.error  # the end, where the error is, not the first 16 KiB
    assert "FIRST-WORDS" not in outcome.error


@pytest.fixture
def scratch():
    folder = Path(tempfile.mkdtemp(prefix=leftovers.PREFIX)).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_reused_pid_does_not_keep_a_dead_engines_scratch(tmp_path: Path, scratch: Path) -> None:
    """The pid file names a pid that is alive now, but with another start time: a different process."""
    procs = tmp_path / leftovers.PROCS
    procs.mkdir(parents=True)
    stranger = subprocess.Popen(["sleep", "300"])
    try:
        started = leftovers._start_time(stranger.pid)
        assert started is not None
        wrong = str(int(started) - 1)
        (procs / "dead.json").write_text(json.dumps({"pid": stranger.pid, "started": wrong, "scratch": str(scratch)}))
        assert leftovers.clean(tmp_path) == [str(scratch)]
        assert not scratch.exists() and not (procs / "dead.json").exists()
        assert stranger.poll() is None  # the stranger is not ours: not killed (it is not marked with the folder)
    finally:
        stranger.kill()
        stranger.wait()


def test_a_zombie_engine_is_dead(tmp_path: Path, scratch: Path) -> None:
    """An engine killed with its watchdog parent stays a zombie where init does not reap (a container's): its
    pid file names a pid that is listed, with the same start time, yet the run is over."""
    procs = tmp_path / leftovers.PROCS
    procs.mkdir(parents=True)
    engine = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        started = leftovers._start_time(engine.pid)
        (procs / "engine.json").write_text(json.dumps({"pid": engine.pid, "started": started,
                                                       "scratch": str(scratch)}))
        assert leftovers.clean(tmp_path) == []  # alive: its run is in progress
        engine.stdin.close()
        import os
        os.waitid(os.P_PID, engine.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
        assert leftovers.clean(tmp_path) == [str(scratch)]
        assert not scratch.exists() and not (procs / "engine.json").exists()
    finally:
        engine.kill()
        engine.wait()


def test_a_planted_pid_file_cannot_get_a_folder_outside_the_temp_dir_removed(tmp_path: Path) -> None:
    """Named like a scratch folder, but not directly under the temp dir: left alone, only the pid file goes."""
    procs = tmp_path / leftovers.PROCS
    procs.mkdir(parents=True)
    victim = tmp_path / "elsewhere" / f"{leftovers.PREFIX}victim"
    victim.mkdir(parents=True)
    (victim / "precious.txt").write_text("keep me")
    (procs / "planted.json").write_text(json.dumps({"pid": 999999999, "started": "1", "scratch": str(victim)}))
    assert Path(tempfile.gettempdir()).resolve() != victim.parent
    assert leftovers.clean(tmp_path) == []
    assert (victim / "precious.txt").read_text() == "keep me"
