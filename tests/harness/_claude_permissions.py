"""Ask the real Claude Code what it lets an agent's Bash tool run.

:func:`bash_outcomes` runs ``claude -p --agent NAME`` against a scripted Anthropic-compatible model on
127.0.0.1: the model asks for one ``Bash`` call per command, in turn, and the tool results Claude Code sends
back say whether it ran the command or refused it. Only use commands that are harmless when allowed.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

import _harness as h

# How Claude Code 2.1 words a tool result for a call it did not run (a denial, or a prompt nobody can answer).
REFUSED = ("Permission to use Bash", "has been denied", "needs approval", "requires approval", "haven't granted")


def _events(blocks: list[dict[str, Any]], stop: str) -> bytes:
    message = {"id": "msg_oac", "type": "message", "role": "assistant", "model": "oac-fake", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        events += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                   ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": index})]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 1}}),
               ("message_stop", {"type": "message_stop"})]
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def _tool_results(body: dict[str, Any]) -> list[str]:
    results = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(part.get("text", "") for part in inner if isinstance(part, dict))
                results.append(str(inner))
    return results


class _ScriptedClaudeModel:
    """Answers every model request with one `Bash` call per command in turn, then the text `done`."""

    def __init__(self, commands: Sequence[str]) -> None:
        self.commands = list(commands)
        self.results: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                tools = [tool.get("name") for tool in body.get("tools", []) if isinstance(tool, dict)]
                done = _tool_results(body)
                if "Bash" in tools and len(done) < len(outer.commands):
                    call = {"type": "tool_use", "id": f"toolu_oac_{len(done)}", "name": "Bash",
                            "input": {"command": outer.commands[len(done)], "description": "scripted call"}}
                    payload, stop = [call], "tool_use"
                else:
                    if "Bash" in tools:
                        outer.results = done
                    payload, stop = [{"type": "text", "text": "done"}], "end_turn"
                if body.get("stream"):
                    self._send("text/event-stream", _events(payload, stop))
                else:
                    message = {"id": "msg_oac", "type": "message", "role": "assistant", "model": "oac-fake",
                               "content": payload, "stop_reason": stop, "stop_sequence": None,
                               "usage": {"input_tokens": 1, "output_tokens": 1}}
                    self._send("application/json", json.dumps(message).encode())

            def _send(self, ctype: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> _ScriptedClaudeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def bash_outcomes(project_dir: str | os.PathLike[str], agent: str, commands: Sequence[str], *,
                  timeout: float = h.DEFAULT_TIMEOUT) -> list[tuple[str, str]]:
    """("refused" | "ran", tool result text) for each command, as Claude Code ran ``agent``'s Bash calls."""
    binary = h.require("claude")["bin"]
    with h._scratch(project_dir) as s, _ScriptedClaudeModel(commands) as model:
        config_dir = s.home / ".claude"
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / ".claude.json").write_text(json.dumps(
            {"projects": {str(s.project): {"hasTrustDialogAccepted": True}}}))
        env = dict(h._CLAUDE_ENV, CLAUDE_CONFIG_DIR=str(config_dir), ANTHROPIC_API_KEY="oac-dummy",
                   ANTHROPIC_BASE_URL=f"http://127.0.0.1:{model.port}")
        cp = h._run([binary, "-p", "--agent", agent, "--", "run the commands"], s, env=env, timeout=timeout)
        results = list(model.results)
    if len(results) != len(commands):
        raise h.HarnessError(f"claude -p --agent {agent}: expected {len(commands)} tool results, got {results}",
                             cmd=cp.args, returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    return [("refused" if any(words in text for words in REFUSED) else "ran", text) for text in results]
