"""A stand-in for a real provider on 127.0.0.1: the three APIs (streaming included) of the scripted model server,
answering from the request alone, as a model would — the monitoring scenario's policy: check health after a user
message, page on-call once after an alert, then say what it saw. Run it in its own process (`python
fake_upstream.py`: prints its base URL, serves until stdin closes) or in-process with `FakeUpstream(...)`."""

import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from open_agent_compiler.execution.leftovers import PREFIX  # noqa: E402
from open_agent_compiler.testing.invokers.model_server import SHELL_TOOLS, ScriptedModelServer, _system_and_tools, _text  # noqa: E402
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, ToolDispatcher  # noqa: E402
from open_agent_compiler.testing.invokers.script import ModelStep, ScriptedModel, ToolUse  # noqa: E402
from open_agent_compiler.testing.mocks import MockSession  # noqa: E402

HEALTH = "oac-monitor health --service api"
PAGE = "oac-monitor page --service api"


def outputs_since_user(api: str, body: dict[str, Any]) -> list[str]:
    """The tool outputs the conversation holds after its last user message."""
    outputs: list[str] = []
    if api == "responses":
        for item in body.get("input") or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                outputs.append(_text(item.get("output")))
            elif item.get("role") == "user":
                outputs = []
        return outputs
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "tool":
            outputs.append(_text(content))
        elif message.get("role") == "user":
            results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"] \
                if isinstance(content, list) else []
            if results:
                outputs += [_text(block.get("content")) for block in results]
            else:
                outputs = []
    return outputs


def _last_user_text(api: str, body: dict[str, Any]) -> str:
    messages = [m for m in body.get("input" if api == "responses" else "messages") or []
                if isinstance(m, dict) and m.get("role") == "user"]
    return _text(messages[-1].get("content")) if messages else ""


COOKIE = "oac-cookie-PLANTED-9a8b7c6d"  # what a `leaky` upstream sets as a cookie on every answer
FOLDER = re.compile(r"/[^\s\"'\\<>]*?/" + PREFIX + r"[A-Za-z0-9_]+/project")  # a harness run's working folder


def split_deltas(events: list[tuple[str | None, Any]], size: int) -> list[tuple[str | None, Any]]:
    """The stream as a provider sends it: each text and tool-argument delta cut into pieces of `size` characters
    (Anthropic content_block_delta, OpenAI chat chunks; the Responses stream here has no deltas)."""
    out: list[tuple[str | None, Any]] = []
    for name, data in events:
        delta = data.get("delta") if isinstance(data, dict) and data.get("type") == "content_block_delta" else None
        key = next((k for k in ("text", "partial_json") if isinstance(delta, dict) and k in delta), None)
        if delta is not None and key is not None:
            out += [(name, dict(data, delta=dict(delta, **{key: piece}))) for piece in _cut(delta[key], size)]
            continue
        choices = data.get("choices") if isinstance(data, dict) else None
        chat = choices[0].get("delta") if choices and isinstance(choices[0].get("delta"), dict) else {}
        if isinstance(chat.get("content"), str):
            first, *rest = _cut(chat["content"], size)
            out.append((name, dict(data, choices=[dict(choices[0], delta=dict(chat, content=first))])))
            out += [(name, dict(data, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
                    for piece in rest]
        elif chat.get("tool_calls"):
            calls = chat["tool_calls"]
            heads = [dict(call, function=dict(call["function"], arguments="")) for call in calls]
            out.append((name, dict(data, choices=[dict(choices[0], delta=dict(chat, tool_calls=heads))])))
            for call in calls:
                out += [(name, dict(data, choices=[{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                    {"index": call["index"], "function": {"arguments": piece}}]}}]))
                    for piece in _cut(call["function"]["arguments"], size)]
        else:
            out.append((name, data))
    return out


def _cut(text: str, size: int) -> list[str]:
    return [text[at:at + size] for at in range(0, len(text), size)] or [""]


class FakeUpstream(ScriptedModelServer):
    """`leaky`: like a provider that sets cookies (`set-cookie` on every answer) and echoes the credentials it
    was sent in its answers' text (as some error messages do): neither may reach any file or output.
    `split`: streamed text and tool arguments cut into deltas of that many characters, as a provider streams
    tokens. `names_folder`: the last answer of a turn names the harness's working folder (as a model names files
    by their absolute path)."""

    def __init__(self, leaky: bool = False, split: int = 0, names_folder: bool = False) -> None:
        self.leaky, self.split, self.names_folder = leaky, split, names_folder
        self.credentials: list[str] = []  # the authorization / x-api-key header values received
        self.cookies: list[str] = []  # the cookie header values received
        agent = CompiledAgent(dialect="-", build_dir=Path("."), project_root=Path("."), slot="-", compiled_name="-")
        super().__init__(ScriptedModel(turns=[]), agent, ToolDispatcher({}, None, MockSession(), hermetic=True,
                                                                        timeout=1))
        self.bodies: list[dict[str, Any]] = []

    def _next(self, api: str, body: dict[str, Any]) -> tuple[ModelStep, str | None]:
        with self._lock:
            self.bodies.append(body)
        _, tools = _system_and_tools(api, body)
        shell = next((name for name in SHELL_TOOLS if name in tools), None)
        if shell is None:
            return ModelStep(text="Service check"), None
        outputs = outputs_since_user(api, body)
        if "Agent" in tools:  # Pi's main thread: delegate to the compiled agent, then answer with what it said
            if not outputs:
                delegation = {"subagent_type": "primary", "prompt": _last_user_text(api, body), "description": "turn"}
                return ModelStep(tool_calls=(ToolUse(tool="-", args=delegation),)), "Agent"
            return ModelStep(text=outputs[-1]), None
        if not outputs:
            return ModelStep(tool_calls=(ToolUse(tool="-", args={"command": HEALTH}),)), shell
        if "alert" in outputs[0] and len(outputs) == 1:
            return ModelStep(tool_calls=(ToolUse(tool="-", args={"command": PAGE}),)), shell
        answer = "paged on-call" if "alert" in outputs[0] else "all quiet"
        folder = FOLDER.search(json.dumps(body)) if self.names_folder else None
        if folder:
            answer += f" (checked from {folder.group(0)})"
        if self.leaky and self.credentials:
            answer += f" (sent with {self.credentials[-1]})"
        return ModelStep(text=answer), None

    def _leaking(self, handler: Any) -> None:
        """Remember the credentials of this request; when leaky, answer with a cookie; when splitting, stream in
        pieces."""
        if self.split:
            sse = handler.sse
            handler.sse = lambda events: sse(split_deltas(events, self.split))
        credential = handler.headers.get("authorization") or handler.headers.get("x-api-key")
        with self._lock:
            self.credentials += [credential] if credential else []
            self.cookies += [handler.headers["cookie"]] if handler.headers.get("cookie") else []
        if self.leaky:
            end_headers = handler.end_headers

            def with_cookie() -> None:
                handler.send_header("set-cookie", f"oac_session={COOKIE}; Path=/; HttpOnly")
                end_headers()
            handler.end_headers = with_cookie

    def _chat(self, handler: Any, body: dict[str, Any]) -> None:
        self._leaking(handler)
        super()._chat(handler, body)

    def _responses(self, handler: Any, body: dict[str, Any]) -> None:
        self._leaking(handler)
        super()._responses(handler, body)

    def _messages(self, handler: Any, body: dict[str, Any]) -> None:
        self._leaking(handler)
        super()._messages(handler, body)

    def shell_arguments(self, shell: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if shell == "Agent":
            return dict(args)
        command = args["command"]
        if shell == "shell":
            return {"command": ["bash", "-lc", command]}
        if shell == "exec_command":
            return {"cmd": command}
        return {"command": command, "description": "check"}


if __name__ == "__main__":
    with FakeUpstream() as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()
        print(json.dumps(len(fake.bodies)), flush=True)
        threading.Event().wait(0)
