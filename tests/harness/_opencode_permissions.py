"""Ask the real OpenCode what an agent may do: the rules it resolved, the tools it offers the model, and
whether it lets a tool call through.

- :func:`decide` evaluates ``opencode debug agent`` rules exactly as OpenCode 1.18 does (its
  ``Wildcard.match``: ``*`` any text, ``?`` one character, a trailing `` *`` optional; the LAST rule whose
  permission and pattern both match decides; no match = ask). Written here from the measured behaviour, not
  imported from the compiler, so that it checks the compiler's own model instead of repeating it.
- :func:`tool_call` runs ``opencode debug agent NAME --tool TOOL --params JSON``: OpenCode checks the agent's
  permissions and then really runs the tool, so only call it with commands that are harmless when allowed.
- :func:`offered_tools` runs ``opencode run --agent NAME`` against a scripted model on 127.0.0.1 and returns the
  tool names OpenCode offered the model (a tool an agent may never use is not offered at all). MCP servers come
  from ``mcp`` (``opencode.json``'s ``mcp`` table); :data:`MCP_STUB` is a local stdio server with one tool,
  ``echo``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import _harness as h

MCP_STUB = Path(__file__).resolve().parent / "mcp_stub.py"
DENIED = "prevents you from using this specific tool call"
_MODEL = "oac/oac-fake"


def _regex(pattern: str) -> re.Pattern[str]:
    escaped = re.sub(r"[.+^${}()|\[\]\\]", lambda m: "\\" + m.group(0), pattern.replace("\\", "/"))
    escaped = escaped.replace("*", ".*").replace("?", ".")
    if escaped.endswith(" .*"):
        escaped = escaped[:-3] + "( .*)?"
    return re.compile(escaped, re.DOTALL)


def wildcard(text: str, pattern: str) -> bool:
    return _regex(pattern).fullmatch(text.replace("\\", "/")) is not None


def decide(agent: Mapping[str, Any], permission: str, value: str = "*") -> str:
    """The action OpenCode computes for ``permission`` (a tool id) and ``value`` (a command, path, name)."""
    for rule in reversed(agent.get("permission", [])):
        if wildcard(permission, rule["permission"]) and wildcard(value, rule["pattern"]):
            return str(rule["action"])
    return "ask"


def stub_mcp(name: str) -> dict[str, Any]:
    """An ``opencode.json`` ``mcp`` table naming :data:`MCP_STUB` as server ``name``."""
    return {name: {"type": "local", "command": [sys.executable, str(MCP_STUB)]}}


def tool_call(project_dir: str | os.PathLike[str], agent: str, tool: str, params: Mapping[str, Any], *,
              timeout: float = h.DEFAULT_TIMEOUT) -> tuple[str, str]:
    """("denied" | "ran", output) for one call of ``tool`` by ``agent``, as OpenCode enforces it."""
    binary = h.require("opencode")["bin"]
    with h._scratch(project_dir) as s:
        cp = h._run([binary, "debug", "agent", agent, "--tool", tool, "--params", json.dumps(dict(params))], s,
                    env=h._OPENCODE_ENV, timeout=timeout)
    output = cp.stdout + cp.stderr
    if DENIED in output:
        return "denied", output
    if cp.returncode == 0:
        return "ran", output
    raise h.HarnessError(f"opencode debug agent {agent} --tool {tool} failed", cmd=cp.args,
                         returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)


def offered_tools(project_dir: str | os.PathLike[str], agent: str, *, mcp: Mapping[str, Any] | None = None,
                  timeout: float = h.DEFAULT_TIMEOUT) -> list[str]:
    """Tool names OpenCode offered the model when running ``agent`` (which must be a primary agent)."""
    binary = h.require("opencode")["bin"]
    with h._scratch(project_dir) as s, h._LoopbackChatServer() as server:
        config: dict[str, Any] = {
            "provider": {"oac": {
                "npm": "@ai-sdk/openai-compatible", "name": "oac",
                "options": {"baseURL": f"http://127.0.0.1:{server.port}/v1", "apiKey": "dummy"},
                "models": {"oac-fake": {"name": "oac-fake", "tool_call": True}},
            }},
            "model": _MODEL, "small_model": _MODEL, "mcp": dict(mcp or {}),
        }
        (s.project / "opencode.json").write_text(json.dumps(config))
        cp = h._run([binary, "run", "--agent", agent, "--model", _MODEL, "hi"], s, env=h._OPENCODE_ENV,
                    timeout=timeout)
        requests = list(server.requests)
    if cp.returncode != 0 or "Falling back" in cp.stdout + cp.stderr:
        raise h.HarnessError(f"opencode run --agent {agent} failed", cmd=cp.args, returncode=cp.returncode,
                             stdout=cp.stdout, stderr=cp.stderr)
    offered = [tool.get("function", tool).get("name") for request in requests for tool in request.get("tools", [])]
    if not offered:
        raise h.HarnessError(f"opencode run --agent {agent}: the model was offered no tools at all", cmd=cp.args,
                             returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    return sorted(set(offered))
