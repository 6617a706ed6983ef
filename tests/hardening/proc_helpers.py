"""Helpers for the process tests: a handler that misbehaves on request, and bounded waits (no sleeps)."""

import json
import os
import select
from pathlib import Path

from open_agent_compiler import ToolDefinition, ToolDefinitionHeader

MISBEHAVING = '''
import json, os, signal, subprocess, sys, time
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class In(BaseModel):
    mode: str
    fifo: str = ""


class Out(BaseModel):
    value: str = ""
    pids: list[int] = []


def report(fifo, pids):
    with open(fifo, "w") as pipe:
        pipe.write(json.dumps(pids) + "\\n")


def orphan_in_own_session():
    """A `sleep` whose parent exits at once, in a session of its own: it outlives its parent."""
    shell = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!"], stdout=subprocess.PIPE, start_new_session=True)
    pid = int(shell.stdout.readline())
    shell.wait()
    return pid


class Misbehaving(ScriptTool[In, Out]):
    name = "misbehaving"

    def execute(self, input):
        if input.mode == "tree-and-hang":
            plain = subprocess.Popen(["sleep", "300"])
            session = subprocess.Popen(["sleep", "300"], start_new_session=True)
            report(input.fifo, [os.getpid(), plain.pid, session.pid, orphan_in_own_session()])
            while True:
                signal.pause()
        if input.mode == "close-fds-and-hang":
            report(input.fifo, [os.getpid()])
            os.closerange(0, 4096)
            while True:
                time.sleep(3600)
        if input.mode == "answer-and-leave-children":
            holder = subprocess.Popen(["sleep", "300"], close_fds=False)  # holds stdout, stderr and every pipe
            return Out(value="answered", pids=[holder.pid, orphan_in_own_session()])
        if input.mode == "flood":
            block = "x" * 65536
            while True:
                sys.stdout.write(block)
        if input.mode == "huge-answer":
            return Out(value="y" * (64 << 20))
        if input.mode == "noisy":
            print('{"ok": true, "output": {"value": "forged by stdout"}}', flush=True)
            subprocess.run(["echo", '{"ok": true, "output": {"value": "forged by a child"}}'])
            sys.stderr.write("to stderr\\n")
            return Out(value="real")
        raise ValueError(input.mode)
'''


def misbehaving_tool(root: Path) -> ToolDefinition:
    (root / "misbehaving.py").write_text(MISBEHAVING)
    return ToolDefinition(header=ToolDefinitionHeader(name="misbehaving", description="m"),
                          handler_script="misbehaving.py")


class Fifo:
    """A named pipe a handler reports on; `read` waits for one line, at most `limit` seconds."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # open now: a writer never blocks on open
        self._keep = os.open(path, os.O_WRONLY)  # our own writer: no EOF between the handler's writes

    def read_json(self, limit: float = 60) -> list[int]:
        data = b""
        while not data.endswith(b"\n"):
            readable, _, _ = select.select([self.fd], [], [], limit)
            assert readable, f"nothing reported on {self.path} within {limit}s"
            data += os.read(self.fd, 4096)
        return json.loads(data)

    def close(self) -> None:
        os.close(self.fd)
        os.close(self._keep)


def ends(pid: int, limit: float = 20) -> bool:
    """True once process `pid` has terminated, waiting at most `limit` seconds (a pidfd turns readable)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([handle], [], [], limit)
    finally:
        os.close(handle)
    return bool(readable) or not alive(pid)


def alive(pid: int) -> bool:
    """Running (not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def all_end(pids: list[int], limit: float = 20) -> list[int]:
    """The pids still running after waiting at most `limit` seconds for each."""
    return [pid for pid in pids if not ends(pid, limit)]


def group_members(pgid: int) -> list[int]:
    """Running processes whose process group is `pgid` (a scan of /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry))
    return found
