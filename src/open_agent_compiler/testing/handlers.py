"""Run a tool's real ScriptTool handler in a child process with a timeout."""

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.testing import zygote

STDERR_TAIL = 600


class HandlerOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: bool
    output: Any = None
    error: str = ""
    imported: tuple[str, ...] = ()  # project files the handler loaded (reported by the child): part of its key


def handler_scripts(tool: ToolDefinition, project_root: Path) -> list[dict[str, str]]:
    scripts: list[dict[str, str]] = []
    if tool.handler_script:
        scripts.append({"path": str(project_root / tool.handler_script)})
    for script in tool.scripts():
        if script.source_file_type not in (None, "python"):
            continue  # only Python scripts can hold a ScriptTool handler
        if script.source_file_path:
            scripts.append({"path": str(project_root / script.source_file_path)})
        elif script.script_contents is not None:
            scripts.append({"source": script.script_contents, "label": script.target_file_path})
    return scripts


def _tail(text: str) -> str:
    text = text.strip()
    return ("…" + text[-STDERR_TAIL:]) if len(text) > STDERR_TAIL else text


def _problem(tool: ToolDefinition, project_root: Path) -> tuple[list[dict[str, str]], str]:
    """(scripts, "") when the handler can run, else ([], why not)."""
    scripts = handler_scripts(tool, project_root)
    if not scripts:
        return [], f"tool {tool.name!r} has neither a mock nor a handler"
    missing = [s["path"] for s in scripts if "path" in s and not Path(s["path"]).is_file()]
    if missing:
        return [], f"handler script not found: {', '.join(missing)}"
    return scripts, ""


def run_handler(tool: ToolDefinition, payload: dict[str, Any], *, project_root: Path,
                timeout: float) -> HandlerOutcome:
    return start_handler(tool, payload, project_root=project_root, timeout=timeout).outcome()


def start_handler(tool: ToolDefinition, payload: dict[str, Any], *, project_root: Path,
                  timeout: float) -> "StartedHandler":
    """Start the handler now; `outcome()` waits for it. Its timeout counts from now."""
    scripts, problem = _problem(tool, project_root)
    if problem:
        return StartedHandler.failed(problem)
    request = {"tool": tool.name, "scripts": scripts, "input": payload}
    if hasattr(os, "fork") and not os.environ.get("OAC_HANDLER_SPAWN"):
        return StartedHandler.forked(request, project_root, timeout)
    return StartedHandler.finished(_run_spawned(request, project_root, timeout), timeout)


Answer = tuple[dict[str, Any] | None, str, int | None, bool]  # (answer, stderr, exit code, timed out)


def _outcome(answer: dict[str, Any] | None, stderr: str, exit_code: int | None, timed_out: bool,
             timeout: float) -> HandlerOutcome:
    tail = _tail(stderr)
    if timed_out:
        return HandlerOutcome(ok=False, error=f"handler timed out after {timeout:g}s" + (f"; stderr: {tail}" if tail else ""))
    if not isinstance(answer, dict):
        return HandlerOutcome(ok=False, error=f"handler exited {exit_code} without an answer; stderr: {tail}")
    if not answer.get("ok"):
        return HandlerOutcome(ok=False, error=str(answer.get("error")) + (f"; stderr: {tail}" if tail else ""))
    imported = answer.get("imported")
    return HandlerOutcome(ok=True, output=answer.get("output"),
                          imported=tuple(str(p) for p in imported) if isinstance(imported, list) else ())


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class StartedHandler:
    """A handler running in a child forked from the zygote (milliseconds, not a fresh interpreter's ~170 ms),
    or forked from this process when no zygote runs. Its two pipes (answer, stderr) are read as data arrives:
    `pump()` without blocking, `outcome()` until the child closes them or the deadline passes."""

    def __init__(self) -> None:
        self.timeout = 0.0
        self.deadline = 0.0
        self.pid = 0
        self.via_zygote = False
        self._fds: dict[int, list[bytes]] = {}  # pipe → what was read from it
        self._open: set[int] = set()  # pipes the child has not closed yet
        self._answer_fd = self._err_fd = -1
        self._result: HandlerOutcome | None = None

    @classmethod
    def failed(cls, error: str) -> "StartedHandler":
        started = cls()
        started._result = HandlerOutcome(ok=False, error=error)
        return started

    @classmethod
    def finished(cls, answer: Answer, timeout: float) -> "StartedHandler":
        started = cls()
        started._result = _outcome(*answer, timeout)
        return started

    @classmethod
    def forked(cls, request: dict[str, Any], project_root: Path, timeout: float) -> "StartedHandler":
        started = cls()
        started.timeout = timeout
        request = {**request, "project_root": str(project_root)}
        answer_read, answer_write = os.pipe()
        err_read, err_write = os.pipe()
        started.deadline = time.monotonic() + timeout
        started.via_zygote = zygote.submit(request, answer_write, err_write)
        if not started.via_zygote:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(answer_read)
                os.close(err_read)
                zygote.run_child(request, answer_write, err_write, announce_pid=False)
            with contextlib.suppress(OSError):  # also from this side: no window where a kill would miss the group
                os.setpgid(pid, pid)
            started.pid = pid
        os.close(answer_write)
        os.close(err_write)
        for fd in (answer_read, err_read):
            os.set_blocking(fd, False)
        started._answer_fd, started._err_fd = answer_read, err_read
        started._fds = {answer_read: [], err_read: []}
        started._open = {answer_read, err_read}
        return started

    def _wait(self) -> None:
        """Read the open pipes until the child closes them or the deadline passes."""
        with selectors.DefaultSelector() as selector:
            for fd in self._open:
                selector.register(fd, selectors.EVENT_READ)
            while self._open:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return
                self.pump()
                for fd in set(selector.get_map()) - self._open:
                    selector.unregister(fd)

    def _learn_pid(self) -> bytes:
        """The answer read so far, without the pid a zygote child writes first (kept in `self.pid`)."""
        data = b"".join(self._fds[self._answer_fd])
        if not self.via_zygote:
            return data
        if len(data) >= zygote.PID.size:
            self.pid = zygote.PID.unpack(data[:zygote.PID.size])[0]
        return data[zygote.PID.size:]

    def pump(self) -> None:
        """Take what the child wrote so far, without waiting (keeps its pipes from filling up). Called before
        every test of a serial run, so plain non-blocking reads: no selector to set up."""
        if self._result is not None:
            return
        for fd in tuple(self._open):
            while True:
                try:
                    block = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not block:
                    self._open.discard(fd)
                    break
                self._fds[fd].append(block)

    def running(self) -> bool:
        return self._result is None and bool(self._open)

    def outcome(self) -> HandlerOutcome:
        if self._result is not None:
            return self._result
        self._wait()
        timed_out = bool(self._open)
        answer_bytes, exit_code = self._finish(kill=timed_out)
        try:
            answer = json.loads(answer_bytes) if not timed_out else None
        except ValueError:
            answer = None
        stderr = b"".join(self._fds[self._err_fd]).decode("utf-8", "replace")
        self._result = _outcome(answer, stderr, exit_code, timed_out, self.timeout)
        return self._result

    def cancel(self) -> None:
        """Kill a handler whose outcome nobody will ask for (an interrupted run)."""
        if self._result is None and self._fds:
            self.pump()
            self._finish(kill=True)
            self._result = HandlerOutcome(ok=False, error="cancelled")

    def _finish(self, *, kill: bool) -> tuple[bytes, int | None]:
        """Kill the child's process group if asked, reap a child we forked ourselves, close the pipes; return the
        answer read and the exit code (None when the zygote forked the child: it reaps its own)."""
        answer = self._learn_pid()
        if kill and self.pid:
            _kill_group(self.pid)
        exit_code = None
        if not self.via_zygote and self.pid:
            with contextlib.suppress(ChildProcessError):
                exit_code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        for fd in self._fds:
            os.close(fd)
        self._open.clear()
        return answer, exit_code


def _run_spawned(request: dict[str, Any], project_root: Path, timeout: float) -> Answer:
    """A fresh interpreter (where fork is unavailable, or OAC_HANDLER_SPAWN=1)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project_root), env.get("PYTHONPATH")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "open_agent_compiler.testing.handler_child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project_root, env=env,
        text=True, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(json.dumps(request, default=str), timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        return None, stderr, None, True
    lines = stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    return answer, stderr, process.returncode, False
