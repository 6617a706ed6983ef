"""What every harness invoker shares: finding the binary, a scratch HOME with a copy of the build (the mock
build: each tool's command answers from the test's mocks through a shim), and running the harness bounded by
the test's deadline in its own process group, killed as a whole on timeout."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.errors import OacError
from open_agent_compiler.testing.invokers.commands import command_prefix
from open_agent_compiler.testing.invokers.model_server import MODEL_ID, ScriptedModelServer
from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.testing.invokers.protocol import (CompiledAgent, Deadline, InvokerError, InvokerTimeout,
                                                            SubagentCall, TurnResult)

TAIL = 400


class ModelEndpoint(BaseModel):
    """A real model for harness runs, from OAC_MODEL_BASE_URL / OAC_MODEL / OAC_MODEL_API_KEY. The URL is given as
    the harness wants it (OpenAI-style `.../v1` for opencode and codex, the API root for claude)."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    model: str
    api_key: str | None = None


ENDPOINT_ENV = ("OAC_MODEL_BASE_URL", "OAC_MODEL", "OAC_MODEL_API_KEY")


def endpoint_from_env() -> ModelEndpoint | None:
    """The real model to use instead of the scripted one, or None (the default; CI never sets these)."""
    url_var, model_var, key_var = ENDPOINT_ENV
    base_url, model = os.environ.get(url_var), os.environ.get(model_var)
    if not base_url:
        return None
    if not model:
        raise OacError(f"{url_var} is set but {model_var} is not: name the model to run against")
    return ModelEndpoint(base_url=base_url.rstrip("/"), model=model, api_key=os.environ.get(key_var))


def provider_and_model(model: str | None) -> tuple[str, str]:
    """An agent's `provider/model` as the harness config names them; no model: the scripted one under `oac`,
    a bare id: that id under `oac`."""
    provider, _, model_id = (model or f"oac/{MODEL_ID}").partition("/")
    if not model_id:
        provider, model_id = "oac", provider
    return provider, model_id


class HarnessBinary(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    argv: tuple[str, ...]  # how to start it (e.g. node + a .js launcher)
    version: str | None = None
    extension: str | None = None  # Pi: the subagents extension its compiled agents need


def harness_dir() -> Path:
    """Where `.ci/install-harnesses` installs the harness CLIs and writes `status.json`: `$HARNESS_DIR`, else
    `~/.cache/oac/harnesses` (one place for every project and clone; the invoker and the test suites read it)."""
    return Path(os.environ.get("HARNESS_DIR") or Path.home() / ".cache" / "oac" / "harnesses")


def find_binary(name: str, executable: str) -> HarnessBinary:
    """From `harness_dir()`/status.json (written by .ci/install-harnesses), else `executable` on PATH. Missing:
    one-line OacError."""
    directory = harness_dir()
    try:
        entry = json.loads((directory / "status.json").read_text())["harnesses"][name]
    except (OSError, ValueError, KeyError, TypeError):
        entry = None
    if isinstance(entry, dict) and entry.get("available") and entry.get("bin") and Path(entry["bin"]).exists():
        binary = str(entry["bin"])
        argv = ("node", binary) if binary.endswith(".js") else (binary,)
        return HarnessBinary(name=name, argv=argv, version=str(entry.get("version") or "") or None,
                             extension=entry.get("extension"))
    found = shutil.which(executable)
    if found is None:
        raise OacError(f"--invoker {name}: the {executable!r} binary was not found (not available in "
                       f"{directory}/status.json, not on PATH): run .ci/install-harnesses, or set HARNESS_DIR to "
                       "where it installed them")
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        version = ""
    return HarnessBinary(name=name, argv=(found,), version=version.splitlines()[0] if version else None)


SHIM = '''#!{python} -I
# oac mock shim: this tool command answers from the agent test's mock set (via the scripted model server).
import json, os, shlex, sys, urllib.request
command = shlex.join([{program!r}, *sys.argv[1:]])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
request = urllib.request.Request({url!r}, data=json.dumps({{"command": command}}).encode(),
                                 headers={{"content-type": "application/json"}})
with opener.open(request, timeout=300) as response:
    answer = json.load(response)
if answer.get("error"):
    print(answer["error"], file=sys.stderr)
    sys.exit(1)
print(json.dumps(answer.get("output")))
'''


class Scratch:
    """A throw-away directory: `home` (HOME and XDG dirs), `project` (a copy of the build), `bin` (shims)."""

    def __init__(self, agent: CompiledAgent) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="oac-invoke-")).resolve()
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.bin = self.root / "bin"
        for path in (self.home / ".config", self.home / ".local/share", self.home / ".local/state",
                     self.home / ".cache", self.root / "tmp", self.bin):
            path.mkdir(parents=True)
        shutil.copytree(agent.build_dir, self.project, symlinks=True)

    def write_shims(self, agent: CompiledAgent, url: str) -> None:
        """The mock build: every tool's program (first word of its command) answers through the shim."""
        for tool in agent.tools.values():
            prefix = command_prefix(tool)
            if not prefix:
                continue
            program = shlex.split(prefix)[0]
            target = self.project / program if "/" in program else self.bin / program
            if not target.resolve().is_relative_to(self.root):
                continue  # an absolute program path outside the scratch is never overwritten
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # never write through a copied symlink
            target.write_text(SHIM.format(python=sys.executable, program=program, url=url + "/oac/tool"))
            target.chmod(0o755)
        # login shells (`bash -lc`, as Codex runs commands) reset PATH from /etc/profile, then read these
        profile = f'export PATH="{self.bin}:$PATH"\n'
        for name in (".bash_profile", ".profile"):
            (self.home / name).write_text(profile)

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        """A minimal environment: no API keys or config of the user leak in."""
        env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home), "USER": os.environ.get("USER", "oac"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"), "XDG_CACHE_HOME": str(self.home / ".cache"),
            "TMPDIR": str(self.root / "tmp"), "NO_COLOR": "1", "CI": "1",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        }
        env.update(extra)
        return env

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def kill_group(process: subprocess.Popen[Any]) -> None:
    """SIGTERM then SIGKILL to the whole process group; reaps the leader."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=3)
            if sig == signal.SIGKILL:
                break
        except subprocess.TimeoutExpired:
            continue
    try:  # children that outlived the leader: the group id stays theirs
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def run_bounded(argv: list[str], scratch: Scratch, env: dict[str, str], deadline: Deadline, what: str,
                started: list[int] | None = None) -> tuple[int, str, str]:
    """Run `argv` in the scratch project in a new process group; past the deadline the group is killed and
    `InvokerTimeout` raised. `started` collects the group ids (for tests that check nothing is left)."""
    deadline.check(what)
    process = subprocess.Popen(argv, cwd=scratch.project, env=scratch.env(env), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                               start_new_session=True)
    if started is not None:
        started.append(process.pid)
    try:
        out, err = process.communicate(timeout=max(deadline.remaining(), 0.01))
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        raise InvokerTimeout(f"timed out after {deadline.seconds:g}s ({what}); harness process group "
                             f"{process.pid} killed") from None
    finally:
        if process.poll() is None:
            kill_group(process)
    try:  # a harness may leave background children behind in its group: they go with it
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return process.returncode, out, err


def run_turn(server: ScriptedModelServer, argv: list[str], scratch: Scratch, env: dict[str, str], deadline: Deadline,
             what: str, started: list[int]) -> tuple[int, str, str]:
    """`run_bounded` for one turn; a problem the scripted server met (e.g. the script went wrong) is the turn's
    error, whatever the harness printed about it."""
    code, out, err = run_bounded(argv, scratch, env, deadline, what, started)
    if server.errors:
        raise InvokerError(server.errors[0])
    return code, out, err


Resolve = Callable[[str], tuple[str | None, dict[str, Any]]]  # a shell command → (tool name, arguments)
# a harness's stdout → (session id, final text, tool calls, delegations, error)
SessionEvents = Callable[[str, Resolve], tuple[str | None, str, list[ToolCall], list[SubagentCall], str]]


def session_turn(server: ScriptedModelServer, argv: list[str], scratch: Scratch, env: dict[str, str],
                 deadline: Deadline, what: str, started: list[int], parse: SessionEvents,
                 command: str) -> tuple[str, TurnResult]:
    """One turn of a harness that names its session in its events: (that session id, the turn)."""
    code, out, err = run_turn(server, argv, scratch, env, deadline, what, started)
    session, text, calls, subagents, error = parse(out, server.resolve_command)
    if code != 0 or error or session is None:
        raise turn_failed(command, code, error, out, err)
    server.end_turn(text)
    return session, TurnResult(text=text, trajectory=tuple(calls), subagent_calls=tuple(subagents))


def turn_failed(command: str, code: int, error: str, out: str, err: str) -> InvokerError:
    """A failed harness run: the error its events reported, else the end of its stderr or stdout."""
    return InvokerError(f"{command} exited {code}: {error or tail(err) or tail(out) or 'no events'}")


def json_or_text(output: Any) -> Any:
    """A tool's output as the harness reported it: JSON text parsed, other text stripped, anything else as is."""
    if not isinstance(output, str):
        return output
    try:
        return json.loads(output)
    except ValueError:
        return output.strip()


def shell_call_as_tool(name: str, arguments: dict[str, Any], resolve: Callable[[str], tuple[str | None, dict[str, Any]]]
                       ) -> tuple[str, dict[str, Any]]:
    """A shell tool call (its `command` argument) as the agent's own tool when the command is one of theirs,
    else unchanged."""
    tool, tool_args = resolve(str(arguments.get("command", "")))
    return (tool, tool_args) if tool else (name, arguments)


def delegation(arguments: Mapping[str, Any], output: Any = None) -> SubagentCall:
    """A subagent call from the arguments of the harness's delegation tool (Task / Agent: subagent_type, prompt)."""
    return SubagentCall(name=str(arguments.get("subagent_type", "")), prompt=str(arguments.get("prompt", "")),
                        output=str(output or ""))


def json_events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects among a harness's output lines (every harness streams one event per line); other lines
    (progress, warnings, non-object JSON) are skipped."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def tail(text: str) -> str:
    text = " ".join(text.split())
    return ("…" + text[-TAIL:]) if len(text) > TAIL else text
