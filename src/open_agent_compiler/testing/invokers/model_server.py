"""A scripted model on 127.0.0.1 for real harnesses: OpenAI chat completions (streaming or not), the OpenAI
Responses API and Anthropic Messages, all answering from one `ScriptedModel`.

Tool calls of the script are offered to the harness as its own shell tool running the tool's command (see
`commands`); the mock shim those commands reach posts them back to `/oac/tool`, where the test's
`ToolDispatcher` answers from the mock set. Every model request is recorded (`requests`: the system prompt and
the tools the harness offered), so tests can assert what the compiled agent really sent. Binds loopback only;
use it as a context manager so it is always stopped.

Every endpoint sits under a per-run secret path (`base_url` carries it, so harness configs and shims reach
it as they are) and checks `Host`: another local process (or a web page rebinding a name to 127.0.0.1) gets 403
and can neither answer for the model nor run a tool through the dispatcher.
"""

import http.server
import itertools
import json
import secrets
import shlex
import sys
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.testing.invokers.commands import command_for, command_prefix, normalized, parse_flags, tool_of
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, InvokerError, ToolDispatcher
from open_agent_compiler.testing.invokers.script import (Message, ModelStep, ModelView, ScriptedModel, ToolUse,
                                                         check_tools)

SHELL_TOOLS = ("bash", "Bash", "shell", "exec_command", "shell_command")
MODEL_ID = "oac-scripted"
# path suffix → API of a model request (count_tokens is answered locally, never recorded)
MODEL_PATHS = (("/chat/completions", "chat"), ("/responses", "responses"), ("/messages", "messages"))


class RecordedRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    api: str  # "chat", "responses" or "messages"
    turn: int
    system_prompt: str
    tools: tuple[str, ...]
    body: dict[str, Any]


def _text(content: Any) -> str:
    """Text of a message content in any of the three APIs' shapes."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(part.get("text", part.get("content", ""))) if isinstance(part, dict) else str(part)
                         for part in content)
    return ""


def _system_and_tools(api: str, body: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    tools = []
    for tool in body.get("tools") or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            tools.append(name)
    if api == "messages":
        system = _text(body.get("system", ""))
    elif api == "responses":
        system = _text(body.get("instructions", ""))
        for item in body.get("input") or []:  # Codex sends AGENTS.md as a user message: it is instructions too
            text = _text(item.get("content")) if isinstance(item, dict) else ""
            if item.get("role") in ("system", "developer") or text.startswith("# AGENTS.md instructions"):
                system += "\n" + text
    else:
        system = "\n".join(_text(m.get("content")) for m in body.get("messages") or []
                           if isinstance(m, dict) and m.get("role") in ("system", "developer"))
    return system, tuple(tools)


class _QuietServer(http.server.ThreadingHTTPServer):
    """A client that hangs up (a harness killed at its deadline, a retry that gave up) is normal here: no
    traceback on stderr for it; any other handler error is still reported."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


class ScriptedModelServer:
    def __init__(self, model: ScriptedModel, agent: CompiledAgent, dispatcher: ToolDispatcher) -> None:
        self.model = model
        self.agent = agent
        self.dispatcher = dispatcher
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []  # script problems; the invoker fails the turn with the first one
        self.commands: list[str] = []  # every tool command the mock shims ran, as they received it
        self.conversation: list[Message] = []
        self._lock = threading.Lock()
        self._turn = 0
        self._prompt = ""
        self._step = 0
        self._turn_start = 0
        self._emitted: dict[str, tuple[str, dict[str, Any]]] = {}  # command → (tool, args) the script asked for
        # Harnesses whose compiled agents run only as subagents (Pi): the main thread, recognised by this tool,
        # delegates each turn to the agent and answers with what it said; the script plays the agent.
        self.delegate_tool: str | None = None
        self._main_step = 0
        self._agent_text = ""
        self._ids = itertools.count(1)
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.token = secrets.token_urlsafe(24)
        self._prefix = f"/oac-{self.token}"
        self._hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self._thread = threading.Thread(target=self._server.serve_forever, name="oac-model-server", daemon=True)
        self.tape: Any = None  # a `cassette.Tape`: model requests answered from a cassette or a recording proxy

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self._prefix}"

    def __enter__(self) -> "ScriptedModelServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    # turns ------------------------------------------------------------------------------------------------
    def begin_turn(self, index: int, prompt: str) -> None:
        with self._lock:
            self._turn, self._prompt, self._step, self._main_step, self._agent_text = index, prompt, 0, 0, ""
            self._turn_start = len(self.dispatcher.log)

    def end_turn(self, text: str) -> None:
        with self._lock:
            self.conversation += [Message(role="user", text=self._prompt), Message(role="assistant", text=text)]

    def turn_calls(self) -> list[Any]:
        with self._lock:
            return list(self.dispatcher.log[self._turn_start:])

    # the model ---------------------------------------------------------------------------------------------
    def _next(self, api: str, body: dict[str, Any]) -> tuple[ModelStep, str | None]:
        """The script's next step and the harness shell tool to express tool calls with (None: text only)."""
        system, tools = _system_and_tools(api, body)
        with self._lock:
            self.requests.append(RecordedRequest(api=api, turn=self._turn, system_prompt=system, tools=tools,
                                                 body=body))
            if self.delegate_tool and self.delegate_tool in tools:
                self._main_step += 1
                if self._main_step > 1:
                    return ModelStep(text=self._agent_text), None
                delegation = {"subagent_type": self.agent.compiled_name, "prompt": self._prompt,
                              "description": f"turn {self._turn}"}
                return ModelStep(tool_calls=(ToolUse(tool=self.delegate_tool, args=delegation),)), self.delegate_tool
            shell = next((name for name in SHELL_TOOLS if name in tools), None)
            if shell is None:  # an auxiliary request (session title, summary): no step of the script
                return ModelStep(text="oac scripted session"), None
            if self.errors:
                return ModelStep(text="(script error)"), None
            view = ModelView(turn=self._turn, step=self._step, prompt=self._prompt, tools=self.agent.tool_names,
                             tool_results=tuple(self.dispatcher.log[self._turn_start:]),
                             conversation=tuple(self.conversation), system_prompt=system)
            self._step += 1
        try:  # outside the lock: a slow (or hung) script must not block the tool endpoint
            step = self.model.next_step(view)
            check_tools(step, self.agent.tool_names, self.agent.compiled_name)
            commands = {normalized(command_for(self.agent.tools[use.tool], use.args)): (use.tool, dict(use.args))
                        for use in step.tool_calls}
        except InvokerError as exc:
            with self._lock:
                self.errors.append(str(exc))
            return ModelStep(text="(script error)"), None
        with self._lock:
            self._emitted.update(commands)
            if not step.tool_calls:
                self._agent_text = step.text
        return step, shell

    def shell_arguments(self, shell: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        command = command_for(self.agent.tools[tool], args)
        if shell in ("shell",):
            return {"command": ["bash", "-lc", command]}
        if shell == "exec_command":
            return {"cmd": command}
        return {"command": command, "description": f"oac tool {tool}"}

    # tools -------------------------------------------------------------------------------------------------
    def resolve_command(self, command: str) -> tuple[str | None, dict[str, Any]]:
        """(tool, arguments) a shell command stands for: the call the script asked for, else the tool whose
        command pattern matches (arguments read from its `--name value` flags); (None, {}) for no tool."""
        with self._lock:
            known = self._emitted.get(normalized(command))
        if known is not None:
            return known[0], dict(known[1])
        tool = tool_of(command, self.agent.tools)
        if tool is None:
            return None, {}
        rest = normalized(command)[len(command_prefix(self.agent.tools[tool])):]
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        return tool, parse_flags(words)

    def run_tool(self, command: str) -> dict[str, Any]:
        """What the mock shim gets for `command`: the dispatcher's answer for the tool it belongs to."""
        with self._lock:
            self.commands.append(command)
        tool, args = self.resolve_command(command)
        if tool is None:
            return {"output": None, "error": f"no tool of agent {self.agent.compiled_name!r} has command {command!r}"}
        call = self.dispatcher.dispatch(tool, args)
        return {"output": call.output, "error": call.error}

    # HTTP --------------------------------------------------------------------------------------------------
    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _allowed(self) -> bool:
                """The run's secret path prefix and a loopback Host, else 403 (nothing read, nothing run)."""
                path = self.path.split("?")[0]
                if self.headers.get("host") in server._hosts and path.startswith(server._prefix + "/"):
                    return True
                self.close_connection = True
                self._json({"error": "forbidden"}, 403)
                return False

            def do_GET(self) -> None:
                if self._allowed():
                    self._json({"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "oac"}]})

            def do_POST(self) -> None:
                if not self._allowed():
                    return
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?")[0][len(server._prefix):]
                api = next((name for suffix, name in MODEL_PATHS if path.endswith(suffix)), None)
                if server.tape is not None and api is not None:
                    server._taped(self, api, path, raw, body)
                elif path.endswith("/oac/tool"):
                    self._json(server.run_tool(str(body.get("command", ""))))
                elif path.endswith("/chat/completions"):
                    server._chat(self, body)
                elif path.endswith("/responses"):
                    server._responses(self, body)
                elif path.endswith("/messages/count_tokens"):
                    self._json({"input_tokens": 1})
                elif path.endswith("/messages"):
                    server._messages(self, body)
                else:
                    self._json({"error": f"unknown path {path}"}, 404)

            def _json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def sse(self, events: list[tuple[str | None, Any]]) -> None:
                raw = b""
                for name, data in events:
                    if name:
                        raw += f"event: {name}\n".encode()
                    raw += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler

    def _taped(self, handler: Any, api: str, path: str, raw: bytes, body: dict[str, Any]) -> None:
        """A model request answered by the tape (cassette or recording proxy); a mismatch fails the turn."""
        system, tools = _system_and_tools(api, body)
        with self._lock:
            self.requests.append(RecordedRequest(api=api, turn=self._turn, system_prompt=system, tools=tools,
                                                 body=body))
            turn = self._turn
        try:
            status, content_type, answer = self.tape.answer(turn, api, path, handler.headers, raw, body or None)
        except InvokerError as exc:
            with self._lock:
                self.errors.append(str(exc))
            handler._json({"type": "error", "error": {"type": "invalid_request_error", "message": str(exc)}}, 400)
            return
        handler.send_response(status)
        handler.send_header("content-type", content_type or "application/json")
        handler.send_header("content-length", str(len(answer)))
        handler.end_headers()
        handler.wfile.write(answer)

    def _calls(self, step: ModelStep, shell: str | None) -> list[tuple[str, str, dict[str, Any]]]:
        """(call id, shell tool, its arguments) per tool call of the step."""
        if shell is None:
            return []
        if shell == self.delegate_tool:
            return [(f"call_{next(self._ids)}", shell, dict(use.args)) for use in step.tool_calls]
        return [(f"call_{next(self._ids)}", shell, self.shell_arguments(shell, use.tool, use.args))
                for use in step.tool_calls]

    def _chat(self, handler: Any, body: dict[str, Any]) -> None:
        step, shell = self._next("chat", body)
        calls = self._calls(step, shell)
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": None if calls else step.text}
            if calls:
                message["tool_calls"] = [{"id": cid, "type": "function",
                                          "function": {"name": name, "arguments": json.dumps(args)}}
                                         for cid, name, args in calls]
            handler._json({"id": "chatcmpl-oac", "object": "chat.completion", "created": 0, "model": MODEL_ID,
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
            return
        chunk = {"id": "chatcmpl-oac", "object": "chat.completion.chunk", "created": 0, "model": MODEL_ID}
        if calls:
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [
                {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (cid, name, args) in enumerate(calls)]}
        else:
            delta = {"role": "assistant", "content": step.text}
        handler.sse([(None, dict(chunk, choices=[{"index": 0, "delta": delta, "finish_reason": None}])),
                     (None, dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage)),
                     (None, "[DONE]")])

    def _responses(self, handler: Any, body: dict[str, Any]) -> None:
        step, shell = self._next("responses", body)
        calls = self._calls(step, shell)
        items: list[dict[str, Any]] = [
            {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name, "arguments": json.dumps(args),
             "status": "completed"} for cid, name, args in calls]
        if not calls:
            items.append({"type": "message", "id": f"msg_{next(self._ids)}", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": step.text, "annotations": []}]})
        response = {"id": f"resp_{next(self._ids)}", "object": "response", "model": MODEL_ID, "status": "completed",
                    "output": items, "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                                               "input_tokens_details": {"cached_tokens": 0},
                                               "output_tokens_details": {"reasoning_tokens": 0}}}
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": dict(response, status="in_progress", output=[])})]
        for index, item in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                          "item": item}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                         "item": item}))
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        handler.sse(events)

    def _messages(self, handler: Any, body: dict[str, Any]) -> None:
        step, shell = self._next("messages", body)
        calls = self._calls(step, shell)
        blocks: list[dict[str, Any]] = [{"type": "tool_use", "id": cid.replace("call_", "toolu_"), "name": name,
                                         "input": args} for cid, name, args in calls]
        if not calls:
            blocks = [{"type": "text", "text": step.text}]
        stop = "tool_use" if calls else "end_turn"
        usage = {"input_tokens": 1, "output_tokens": 1}
        message = {"id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant", "model": MODEL_ID,
                   "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            handler._json(message)
            return
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": dict(message, content=[], stop_reason=None)})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                events += [("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": {"type": "text", "text": ""}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "text_delta", "text": block["text"]}})]
            else:
                events += [("content_block_start", {"type": "content_block_start", "index": index,
                                                    "content_block": dict(block, input={})}),
                           ("content_block_delta", {"type": "content_block_delta", "index": index,
                                                    "delta": {"type": "input_json_delta",
                                                              "partial_json": json.dumps(block["input"])}})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 1}}),
                   ("message_stop", {"type": "message_stop"})]
        handler.sse(events)
