"""The scripted model server on its own: the three wire APIs, what it records, the tool endpoint the mock
shims reach, loopback only, always stopped."""

import json
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from open_agent_compiler import BashToolPermission, MockResponse, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash
from open_agent_compiler.testing.invokers.harness.base import Scratch
from open_agent_compiler.testing.invokers.model_server import ScriptedModelServer
from open_agent_compiler.testing.invokers.protocol import CompiledAgent, InvokerError, ToolDispatcher
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply
from open_agent_compiler.testing.mocks import MockSession

ECHO = ToolDefinition(header=ToolDefinitionHeader(name="echo-tool", description="e"),
                      bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                          allowed_commands=["uv run scripts/echo.py *"])),
                      mock=MockResponse(kind="sequence", sequence=({"n": 1}, {"n": 2})))


def server_for(tmp_path: Path, model: ScriptedModel) -> ScriptedModelServer:
    agent = CompiledAgent(dialect="opencode", build_dir=tmp_path, project_root=tmp_path, slot="primary",
                          compiled_name="primary", tools={"echo-tool": ECHO})
    dispatcher = ToolDispatcher(agent.tools, None, MockSession(), hermetic=True, timeout=5)
    return ScriptedModelServer(model, agent, dispatcher)


def post(url: str, body: dict) -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return response.read()


def sse(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


MODEL = ScriptedModel(turns=[[call("echo-tool", text="it's"), lambda view: reply(f"n={view.last_output['n']}")]])
BASH = {"type": "function", "function": {"name": "bash", "parameters": {}}}


def test_chat_completions_stream_a_tool_call_then_the_reply(tmp_path: Path) -> None:
    with server_for(tmp_path, MODEL) as server:
        server.begin_turn(1, "go")
        title = sse(post(server.base_url + "/v1/chat/completions", {"stream": True, "messages": []}))
        assert title[0]["choices"][0]["delta"]["content"]  # an auxiliary request without tools: not a script step
        body = {"stream": True, "tools": [BASH], "messages": [{"role": "system", "content": "SYSTEM PROMPT"}]}
        first = sse(post(server.base_url + "/v1/chat/completions", body))
        tool_call = first[0]["choices"][0]["delta"]["tool_calls"][0]["function"]
        command = json.loads(tool_call["arguments"])["command"]
        assert tool_call["name"] == "bash" and command == "uv run scripts/echo.py --text 'it'\"'\"'s'"
        assert first[-1]["choices"][0]["finish_reason"] == "tool_calls"
        assert json.loads(post(server.base_url + "/oac/tool", {"command": command})) == {"output": {"n": 1}, "error": None}
        second = sse(post(server.base_url + "/v1/chat/completions", body))
        assert second[0]["choices"][0]["delta"]["content"] == "n=1"
        recorded = [(r.api, r.turn, r.system_prompt, r.tools) for r in server.requests]
    assert recorded[1:] == [("chat", 1, "SYSTEM PROMPT", ("bash",))] * 2
    with socket.socket() as probe:  # stopped: nothing listens on its port any more
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0


def test_responses_and_messages_apis_speak_the_same_script(tmp_path: Path) -> None:
    with server_for(tmp_path, MODEL) as server:
        assert server._server.server_address[0] == "127.0.0.1"
        server.begin_turn(1, "go")
        events = sse(post(server.base_url + "/v1/responses",
                          {"instructions": "SYS", "tools": [{"type": "function", "name": "shell"}], "stream": True}))
        item = [e for e in events if e["type"] == "response.output_item.done"][0]["item"]
        assert item["type"] == "function_call" and item["name"] == "shell"
        assert json.loads(item["arguments"])["command"][:2] == ["bash", "-lc"]
        assert events[-1]["type"] == "response.completed"
        server.begin_turn(1, "go")  # replay the turn through the Anthropic API
        message = json.loads(post(server.base_url + "/v1/messages", {"system": "SYS", "tools": [{"name": "Bash"}]}))
        assert message["stop_reason"] == "tool_use" and message["content"][0]["name"] == "Bash"
        command = message["content"][0]["input"]["command"]
        post(server.base_url + "/oac/tool", {"command": command})
        streamed = sse(post(server.base_url + "/v1/messages", {"system": "SYS", "tools": [{"name": "Bash"}],
                                                               "stream": True}))
        texts = [e["delta"]["text"] for e in streamed if e["type"] == "content_block_delta"]
        assert texts == ["n=1"] and streamed[-1]["type"] == "message_stop"
        assert [r.api for r in server.requests] == ["responses", "messages", "messages"]


def test_script_errors_are_kept_for_the_invoker_and_unknown_commands_error(tmp_path: Path) -> None:
    with server_for(tmp_path, ScriptedModel(turns=[[call("rm", path="/")]])) as server:
        server.begin_turn(1, "go")
        post(server.base_url + "/v1/chat/completions", {"tools": [BASH], "messages": []})
        assert server.errors == ["script calls tool 'rm', which agent 'primary' cannot call (it can: echo-tool)"]
        answer = json.loads(post(server.base_url + "/oac/tool", {"command": "rm -rf /"}))
        assert answer["output"] is None and "no tool of agent 'primary'" in answer["error"]


def test_mock_build_shims_answer_tool_commands_from_the_mocks(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "echo.py").write_text("raise SystemExit('the real script must not run')\n")
    with server_for(tmp_path, MODEL) as server:
        scratch = Scratch(server.agent)
        try:
            scratch.write_shims(server.agent, server.base_url)
            run = subprocess.run(["bash", "-c", "uv run scripts/echo.py --text hi --count 2"], cwd=scratch.project,
                                 env=scratch.env({}), capture_output=True, text=True, timeout=30)
        finally:
            scratch.remove()
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"n": 1}
    assert [(c.tool_name, c.arguments) for c in server.dispatcher.log] == [("echo-tool", {"text": "hi", "count": 2})]
    assert not scratch.root.exists()


def raw_request(port: int, method: str, path: str, host: str, body: bytes = b"{}") -> int:
    """The status of one request with a chosen Host header (urllib would set its own)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True)
        connection.putheader("Host", host)
        connection.putheader("content-type", "application/json")
        connection.putheader("content-length", str(len(body)))
        connection.endheaders(body)
        return connection.getresponse().status
    finally:
        connection.close()


def test_endpoints_need_the_runs_secret_path_and_a_loopback_host(tmp_path: Path) -> None:
    with server_for(tmp_path, MODEL) as server:
        server.begin_turn(1, "go")
        secret = server.base_url.removeprefix(f"http://127.0.0.1:{server.port}")
        command = json.dumps({"command": "uv run scripts/echo.py --text hi"}).encode()
        assert len(secret) > 20
        for path in ("/oac/tool", "/v1/oac/tool", "/oac-wrong/oac/tool", secret + "x/oac/tool"):
            assert raw_request(server.port, "POST", path, f"127.0.0.1:{server.port}", command) == 403
        for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1:1", ""):
            assert raw_request(server.port, "POST", secret + "/oac/tool", host, command) == 403
        assert raw_request(server.port, "GET", "/v1/models", f"127.0.0.1:{server.port}") == 403
        assert server.dispatcher.log == [] and server.requests == []  # nothing ran, nothing was asked
        assert raw_request(server.port, "POST", secret + "/oac/tool", f"localhost:{server.port}", command) == 200
        assert len(server.dispatcher.log) == 1


@pytest.mark.parametrize("command, why", [
    ("{marker} *", "an absolute program path"),
    ("/usr/bin/env touch x *", "an absolute program path"),
    ("../../outside/run.sh *", "a path outside the build copy"),
    ("FOO=1 uv run scripts/echo.py *", "a variable assignment"),
    ("exec uv run scripts/echo.py *", "a shell builtin"),
    ("command uv run scripts/echo.py *", "a shell builtin"),
    ("uv run scripts/echo.py; touch x *", "shell syntax"),
    ("uv run scripts/echo.py && touch x *", "shell syntax"),
    ("uv run $(touch x) *", "shell syntax"),
])
def test_a_command_that_cannot_be_shimmed_fails_naming_it(tmp_path: Path, command: str, why: str) -> None:
    marker = tmp_path / "real-program-ran"
    real = tmp_path / "real.sh"
    real.write_text(f"#!/bin/sh\ntouch {marker}\n")
    real.chmod(0o755)
    tool = ToolDefinition(header=ToolDefinitionHeader(name="abs-tool", description="a"),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=[command.format(marker=real)])),
                          mock=MockResponse(kind="echo"))
    agent = CompiledAgent(dialect="opencode", build_dir=tmp_path, project_root=tmp_path, slot="primary",
                          compiled_name="primary", tools={"abs-tool": tool})
    scratch = Scratch(agent)
    try:
        with pytest.raises(InvokerError) as refused:
            scratch.write_shims(agent, "http://127.0.0.1:9/x")
    finally:
        scratch.remove()
    assert "tool 'abs-tool' runs" in str(refused.value) and why in str(refused.value)
    assert not marker.exists()


def test_a_harness_run_with_an_unshimmable_command_fails_the_test_before_the_harness_starts(tmp_path: Path) -> None:
    """With `--hermetic` and a mock on the tool, an absolute program path used to run the real program."""
    from open_agent_compiler.model.core.test_model import AgentTest
    from open_agent_compiler.testing.invokers.harness import HarnessInvoker
    from open_agent_compiler.testing.invokers.harness.base import HarnessBinary
    from open_agent_compiler.testing.invokers.protocol import Deadline

    started = tmp_path / "harness-started"
    fake = tmp_path / "fake-harness"
    fake.write_text(f"#!/bin/sh\ntouch {started}\n")
    fake.chmod(0o755)
    marker = tmp_path / "real-program-ran"
    tool = ToolDefinition(header=ToolDefinitionHeader(name="abs-tool", description="a"),
                          bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(
                              allowed_commands=[f"/usr/bin/touch {marker} *"])),
                          mock=MockResponse(kind="echo"))
    agent = CompiledAgent(dialect="opencode", build_dir=tmp_path, project_root=tmp_path, slot="primary",
                          compiled_name="primary", tools={"abs-tool": tool})
    invoker = HarnessInvoker("opencode", HarnessBinary(name="opencode", argv=(str(fake),)), {"t": MODEL}, "s", None)
    dispatcher = ToolDispatcher(agent.tools, None, MockSession(), hermetic=True, timeout=5)
    with pytest.raises(InvokerError, match="'/usr/bin/touch' \\(an absolute program path\\)"):
        with invoker.session(agent, AgentTest(name="t", prompt="p"), dispatcher, Deadline(30)) as session:
            session.turn(1, "p")
    assert not started.exists() and not marker.exists()


def test_a_client_hanging_up_is_no_traceback_but_other_errors_still_are(tmp_path: Path, capsys) -> None:
    with server_for(tmp_path, ScriptedModel(turns=[[reply("x")]])) as server:
        for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
            try:
                raise gone
            except OSError:
                server._server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real bug")
        except ValueError:
            server._server.handle_error(None, ("127.0.0.1", 1))
        assert "ValueError: a real bug" in capsys.readouterr().err
