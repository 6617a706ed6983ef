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


def run_handler(tool: ToolDefinition, payload: dict[str, Any], *, project_root: Path,
                timeout: float) -> HandlerOutcome:
    scripts = handler_scripts(tool, project_root)
    if not scripts:
        return HandlerOutcome(ok=False, error=f"tool {tool.name!r} has neither a mock nor a handler")
    missing = [s["path"] for s in scripts if "path" in s and not Path(s["path"]).is_file()]
    if missing:
        return HandlerOutcome(ok=False, error=f"handler script not found: {', '.join(missing)}")
    request = {"tool": tool.name, "scripts": scripts, "input": payload}
    if hasattr(os, "fork") and not os.environ.get("OAC_HANDLER_SPAWN"):
        answer, stderr, exit_code, timed_out = _run_forked(request, project_root, timeout)
    else:
        answer, stderr, exit_code, timed_out = _run_spawned(request, project_root, timeout)
    tail = _tail(stderr)
    if timed_out:
        return HandlerOutcome(ok=False, error=f"handler timed out after {timeout:g}s" + (f"; stderr: {tail}" if tail else ""))
    if not isinstance(answer, dict):
        return HandlerOutcome(ok=False, error=f"handler exited {exit_code} without an answer; stderr: {tail}")
    if not answer.get("ok"):
        return HandlerOutcome(ok=False, error=str(answer.get("error")) + (f"; stderr: {tail}" if tail else ""))
    return HandlerOutcome(ok=True, output=answer.get("output"))


Answer = tuple[dict[str, Any] | None, str, int | None, bool]  # (answer, stderr, exit code, timed out)


def _collect(fds: list[int], deadline: float, *, until_first: int = 0) -> tuple[dict[int, bytes], bool]:
    """Read every pipe to EOF or until the deadline; with `until_first`, stop once fds[0] holds that many bytes."""
    chunks: dict[int, list[bytes]] = {fd: [] for fd in fds}
    got = 0
    timed_out = False
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and not (until_first and got >= until_first):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(remaining):
                block = os.read(key.fd, until_first - got if until_first and key.fd == fds[0] else 65536)
                if block:
                    chunks[key.fd].append(block)
                    if key.fd == fds[0]:
                        got += len(block)
                else:
                    selector.unregister(key.fd)
    return {fd: b"".join(parts) for fd, parts in chunks.items()}, timed_out


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _run_forked(request: dict[str, Any], project_root: Path, timeout: float) -> Answer:
    """Run the handler in a forked child that already has pydantic and this package imported (milliseconds,
    not a fresh interpreter's ~170 ms): forked by the zygote when one runs, else by this process."""
    request = {**request, "project_root": str(project_root)}
    answer_read, answer_write = os.pipe()
    err_read, err_write = os.pipe()
    deadline = time.monotonic() + timeout
    via_zygote = zygote.submit(request, answer_write, err_write)
    pid = 0
    if not via_zygote:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(answer_read)
            os.close(err_read)
            zygote.run_child(request, answer_write, err_write, announce_pid=False)
        with contextlib.suppress(OSError):  # also from this side: no window where a kill would miss the group
            os.setpgid(pid, pid)
    os.close(answer_write)
    os.close(err_write)
    prefix = b""
    timed_out = False
    if via_zygote:  # the child announces its pid first, so a timeout can kill its group
        first, timed_out = _collect([answer_read], deadline, until_first=zygote.PID.size)
        prefix = first[answer_read]
        if len(prefix) == zygote.PID.size:
            pid = zygote.PID.unpack(prefix)[0]
    data, late = ({answer_read: b"", err_read: b""}, True) if timed_out else _collect([answer_read, err_read], deadline)
    timed_out = timed_out or late
    if timed_out and pid:
        _kill_group(pid)
    exit_code = None
    if not via_zygote:
        exit_code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    os.close(answer_read)
    os.close(err_read)
    stderr = data[err_read].decode("utf-8", "replace")
    try:
        answer = json.loads(data[answer_read]) if not timed_out else None
    except ValueError:
        answer = None
    return answer, stderr, exit_code, timed_out


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
