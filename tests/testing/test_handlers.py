"""Real handlers run in child processes: forked by the zygote, by the engine, or a fresh interpreter."""

import os
import select
from pathlib import Path

import pytest

from open_agent_compiler import ToolDefinition, ToolDefinitionHeader
from open_agent_compiler.execution import zygote
from open_agent_compiler.execution.handlers import run_handler

HANDLER = '''
import os, subprocess, sys
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    mode: str


class Out(BaseModel):
    keeper_parent: int  # the handler runs under a keeper process; this is who started the keeper


class Probe(ScriptTool[In, Out]):
    name = "probe"

    def execute(self, input):
        if input.mode == "spawn-and-hang":
            child = subprocess.Popen(["sleep", "60"])
            with open("grandchild.pid", "w") as handle:
                handle.write(str(child.pid))
            child.wait()
        print("chatter")
        stat = open(f"/proc/{os.getppid()}/stat").read()
        return Out(keeper_parent=int(stat[stat.rfind(")") + 2:].split()[1]))
'''


def _ends(pid: int) -> bool:
    """True once process `pid` has terminated (killed with its process group): a pidfd becomes readable then."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # already gone and reaped
    try:
        readable, _, _ = select.select([handle], [], [], 10)
    finally:
        os.close(handle)
    return bool(readable)


@pytest.fixture
def tool(tmp_path: Path) -> ToolDefinition:
    (tmp_path / "probe.py").write_text(HANDLER)
    return ToolDefinition(header=ToolDefinitionHeader(name="probe", description="p"), handler_script="probe.py")


def test_direct_fork_when_no_zygote(tool: ToolDefinition, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(zygote, "_client", None)
    outcome = run_handler(tool, {"mode": "plain"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output == {"keeper_parent": os.getpid()}


def test_zygote_forks_the_child(tool: ToolDefinition, tmp_path: Path) -> None:
    zygote.start()
    outcome = run_handler(tool, {"mode": "plain"}, project_root=tmp_path, timeout=30)
    assert outcome.ok and outcome.output["keeper_parent"] not in (os.getpid(), 1)


@pytest.mark.parametrize("with_zygote", [True, False])
def test_timeout_kills_the_handler_and_what_it_started(tool: ToolDefinition, tmp_path: Path, monkeypatch,
                                                         with_zygote: bool) -> None:
    if with_zygote:
        zygote.start()
    else:
        monkeypatch.setattr(zygote, "_client", None)
    outcome = run_handler(tool, {"mode": "spawn-and-hang"}, project_root=tmp_path, timeout=1)
    assert not outcome.ok and "timed out after 1s" in outcome.error
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    assert _ends(grandchild), f"process {grandchild} that the handler started survived the timeout"


CHATTY = '''
import sys
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    size: int


class Out(BaseModel):
    size: int


class Chatty(ScriptTool[In, Out]):
    name = "chatty"

    def execute(self, input):
        sys.stderr.write("x" * input.size)  # more than a pipe holds: the child blocks until someone reads
        return Out(size=input.size)
'''


def _wait_until_done(started) -> None:
    """Read the child's pipes until it has closed them (no sleeping: each pump waits for nothing)."""
    while started.running():
        started.pump()


def test_a_handler_started_early_keeps_its_answer_until_asked(tmp_path: Path) -> None:
    from open_agent_compiler.execution.handlers import start_handler

    (tmp_path / "chatty.py").write_text(CHATTY)
    chatty = ToolDefinition(header=ToolDefinitionHeader(name="chatty", description="c"), handler_script="chatty.py")
    zygote.start()
    started = start_handler(chatty, {"size": 300_000}, project_root=tmp_path, timeout=30)
    _wait_until_done(started)
    outcome = started.outcome()
    assert outcome.ok and outcome.output == {"size": 300_000}
    assert started.outcome() is outcome  # asked twice, answered once


def test_cancel_kills_a_started_handler_and_what_it_started(tool: ToolDefinition, tmp_path: Path) -> None:
    from open_agent_compiler.execution.handlers import start_handler

    zygote.start()
    started = start_handler(tool, {"mode": "spawn-and-hang"}, project_root=tmp_path, timeout=60)
    marker = tmp_path / "grandchild.pid"
    while started.running() and not (marker.exists() and marker.read_text()):  # it has started its own child
        started.pump()
    assert marker.exists(), started.outcome()
    started.cancel()
    assert not started.outcome().ok
    assert _ends(int(marker.read_text())), "the cancelled handler's child survived"
