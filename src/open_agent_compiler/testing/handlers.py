"""Run a tool's real ScriptTool handler in a child process with a timeout."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.tool import ToolDefinition

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
    request = json.dumps({"tool": tool.name, "scripts": scripts, "input": payload}, default=str)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project_root), env.get("PYTHONPATH")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "open_agent_compiler.testing.handler_child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project_root, env=env,
        text=True, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(request, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        tail = _tail(stderr)
        return HandlerOutcome(ok=False, error=f"handler timed out after {timeout:g}s" + (f"; stderr: {tail}" if tail else ""))
    lines = stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return HandlerOutcome(ok=False, error=f"handler exited {process.returncode} without an answer; stderr: {_tail(stderr)}")
    if not answer.get("ok"):
        tail = _tail(stderr)
        return HandlerOutcome(ok=False, error=str(answer.get("error")) + (f"; stderr: {tail}" if tail else ""))
    return HandlerOutcome(ok=True, output=answer.get("output"))
