"""Run a tool's real ScriptTool handler in a child process with a timeout.

Each run goes through a keeper process (`execution.keeper`) that owns the handler's whole process tree: the
engine only holds two pipes to it, a lifeline (closing it, or dying, kills the tree) and the result.
"""

import contextlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.model.resource_handle import RESOURCES_ENV
from open_agent_compiler.execution import keeper, leftovers, zygote
from open_agent_compiler.execution.deadline import stop_at_deadline, waiting

STDERR_TAIL = 600
GRACE = 5.0  # seconds past its timeout before the engine stops waiting for a keeper that does not report


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
        if script.script_contents is not None:  # inline contents win, as in the compiled file
            scripts.append({"source": script.script_contents, "label": script.target_file_path})
        elif script.source_file_path:
            scripts.append({"path": str(project_root / script.source_file_path)})
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
    request = {"tool": tool.name, "scripts": scripts, "input": payload, "project_root": str(project_root),
               "timeout": timeout, "spawn": bool(os.environ.get("OAC_HANDLER_SPAWN")),
               "marker": leftovers.handler_marker(project_root),
               # as the run has it now (a forked child would keep the zygote's): the script command reads it too
               "resources": os.environ.get(RESOURCES_ENV)}
    if hasattr(os, "fork"):
        return StartedHandler.kept(request, timeout)
    return StartedHandler.finished(_run_spawned(request, project_root, timeout), timeout)


def _outcome(result: dict[str, Any], timeout: float) -> HandlerOutcome:
    """The keeper's report (or `_run_spawned`'s, same keys) as a pass or a one-line failure."""
    tail = _tail(result.get("output") or "")
    said = f"; stderr: {tail}" if tail else ""
    if result.get("overflow"):
        return HandlerOutcome(ok=False, error=f"handler killed: {result['overflow']}{said}")
    if result.get("timed_out"):
        return HandlerOutcome(ok=False, error=f"handler timed out after {timeout:g}s{said}")
    try:
        answer = json.loads(result["answer"]) if result.get("answer") else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return HandlerOutcome(ok=False, error=f"handler exited {result.get('exit')} without an answer; stderr: {tail}")
    if not answer.get("ok"):
        return HandlerOutcome(ok=False, error=str(answer.get("error")) + said)
    imported = answer.get("imported")
    return HandlerOutcome(ok=True, output=answer.get("output"),
                          imported=tuple(str(p) for p in imported) if isinstance(imported, list) else ())


_live: set["StartedHandler"] = set()  # started and not yet collected or cancelled


def cancel_all() -> None:
    """Kill every handler this process started and has not collected (an interrupted run)."""
    for started in list(_live):
        started.cancel()


class StartedHandler:
    """A handler run in progress, seen from the engine: the keeper's result pipe, read as data arrives
    (`pump()` without blocking, `outcome()` until the keeper closes it), and the lifeline the engine closes
    to cancel. The keeper is forked by the zygote (milliseconds, not a fresh interpreter's ~170 ms), or by
    this process when no zygote runs."""

    def __init__(self) -> None:
        self.timeout = 0.0
        self.deadline = 0.0
        self.keeper_pid = 0  # set when this process forked the keeper itself (it must reap it)
        self._lifeline = self._result_fd = -1
        self._chunks: list[bytes] = []
        self._eof = False
        self._result: HandlerOutcome | None = None
        self._lifeline_lock = threading.Lock()

    @classmethod
    def failed(cls, error: str) -> "StartedHandler":
        started = cls()
        started._result = HandlerOutcome(ok=False, error=error)
        return started

    @classmethod
    def finished(cls, result: dict[str, Any], timeout: float) -> "StartedHandler":
        started = cls()
        started._result = _outcome(result, timeout)
        return started

    @classmethod
    def kept(cls, request: dict[str, Any], timeout: float) -> "StartedHandler":
        started = cls()
        started.timeout = timeout
        lifeline_read, lifeline_write = os.pipe()
        result_read, result_write = os.pipe()
        started.deadline = time.monotonic() + timeout + GRACE + (keeper.STARTUP if request.get("spawn") else 0.0)
        if not zygote.submit(request, lifeline_read, result_write):
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(lifeline_write)
                os.close(result_read)
                keeper.run(request, lifeline_read, result_write)
            started.keeper_pid = pid
        os.close(lifeline_read)
        os.close(result_write)
        os.set_blocking(result_read, False)
        started._lifeline, started._result_fd = lifeline_write, result_read
        _live.add(started)
        return started

    def pump(self) -> None:
        """Take what the keeper wrote so far, without waiting. Called before every test of a serial run, so a
        plain non-blocking read: no selector to set up."""
        if self._result is not None or self._eof:
            return
        while True:
            try:
                block = os.read(self._result_fd, 65536)
            except BlockingIOError:
                return
            if not block:
                self._eof = True
                return
            self._chunks.append(block)

    def running(self) -> bool:
        return self._result is None and not self._eof

    def _wait(self) -> None:
        """Read the result pipe until the keeper closes it or the engine's own deadline passes."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._result_fd, selectors.EVENT_READ)
            while not self._eof:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    return
                if selector.select(min(remaining, 3600.0)):  # capped: select refuses very large timeouts
                    self.pump()

    def report(self) -> dict[str, Any]:
        """The keeper's report, waiting for it (bounded by its deadline and the test's); the pipes are let go."""
        forget = stop_at_deadline(self.stop)  # the test's deadline (enforced from outside this thread) kills it
        try:
            self._wait()
        except BaseException:  # interrupted while waiting: the handler must not outlive the wait
            self.cancel()
            raise
        finally:
            forget()
        report: dict[str, Any] = {"timed_out": True}  # the keeper itself did not report in time
        if self._eof:
            try:
                report = json.loads(b"".join(self._chunks))
            except ValueError:
                report = {"answer": None, "exit": None, "output": "the handler's keeper ended without a report"}
        self._close()
        return report

    def outcome(self) -> HandlerOutcome:
        if self._result is None:
            waiting()
            self._result = _outcome(self.report(), self.timeout)
        return self._result

    def cancel(self) -> None:
        """Kill a handler whose outcome nobody will ask for (an interrupted run)."""
        if self._result is None:
            self._close()
            self._result = HandlerOutcome(ok=False, error="cancelled")

    def stop(self) -> None:
        """Kill the handler's tree now (its keeper sees the lifeline close), from any thread: the keeper then
        closes the result pipe, so a thread waiting in `outcome()` wakes up."""
        with self._lifeline_lock:
            fd, self._lifeline = self._lifeline, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _close(self) -> None:
        """Let go of the keeper: closing the lifeline makes it kill whatever of the handler still runs."""
        self.stop()
        if self._result_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._result_fd)
        self._result_fd = -1
        if self.keeper_pid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.keeper_pid, 0)
            self.keeper_pid = 0
        _live.discard(self)


def _run_spawned(request: dict[str, Any], project_root: Path, timeout: float) -> dict[str, Any]:
    """Where fork is unavailable (no keeper): a fresh interpreter in its own group, answering in a file of its own."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project_root), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="oac-handler-") as scratch:
        answer_path = Path(scratch) / "answer.json"
        process = subprocess.Popen(
            [sys.executable, "-m", "open_agent_compiler.execution.handler_child", "--answer-file", str(answer_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=project_root, env=env,
            start_new_session=hasattr(os, "setsid"),
        )
        try:
            output, _ = process.communicate(json.dumps(request, default=str).encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            return {"timed_out": True, "output": output.decode("utf-8", "replace")[-keeper.TAIL:]}
        answer = answer_path.read_bytes()[:keeper.ANSWER_LIMIT + 1] if answer_path.is_file() else b""
    return {"answer": answer.decode("utf-8", "replace") or None, "exit": process.returncode,
            "output": output.decode("utf-8", "replace")[-keeper.TAIL:]}
