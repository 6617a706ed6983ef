"""What every harness invoker shares: finding the binary, a scratch HOME with a copy of the build (the mock
build: each tool's command answers from the test's mocks through a shim), and running the harness bounded by
the test's deadline under the keeper that also runs real handlers (`execution.keeper`: subreaper, its own process
group, killed as a whole at the deadline, on signals and when the engine dies; the scratch folder goes with it)."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.errors import OacError
from open_agent_compiler.execution import leftovers
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


# bash builtins and keywords: a shim on PATH is never what runs for these, so the words after them would run
SHELL_WORDS = frozenset("""! [[ ]] { } case coproc do done elif else esac fi for function if in select then time
until while . : alias bg bind break builtin caller cd command compgen complete continue declare dirs disown echo
enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf
pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit
umask unalias unset wait""".split())


def shim_target(prefix: str) -> tuple[str, str | None]:
    """(the program a tool command runs, why it cannot be shimmed or None)."""
    lexer = shlex.shlex(prefix, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return prefix, "a command that does not parse"
    if not words:
        return prefix, "an empty command"
    program = words[0]
    if os.path.isabs(program):
        return program, "an absolute program path"
    if "=" in program:
        return program, "a variable assignment before the program"
    if program in SHELL_WORDS:
        return program, "a shell builtin or keyword"
    operators = [word for word in words if word and set(word) <= set("();<>|&")]
    if operators or any(c in prefix for c in "`$"):
        return program, f"shell syntax in the command ({(operators or ['$ or `'])[0]})"
    return program, None


class Scratch:
    """A throw-away directory: `home` (HOME and XDG dirs), `project` (a copy of the build), `bin` (shims)."""

    def __init__(self, agent: CompiledAgent) -> None:
        self.project_root = agent.project_root
        self.root, self.record = leftovers.make_scratch(agent.project_root)  # recorded: a killed run's is cleaned
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.bin = self.root / "bin"
        for path in (self.home / ".config", self.home / ".local/share", self.home / ".local/state",
                     self.home / ".cache", self.root / "tmp", self.bin):
            path.mkdir(parents=True)
        try:
            shutil.copytree(agent.build_dir, self.project, symlinks=True)
        except (OSError, shutil.Error) as exc:  # a build removed or unreadable since its compile: one line
            self.remove()
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "files could not be copied"
            raise InvokerError(f"cannot copy the build {agent.build_dir}: {why}") from None

    def write_shims(self, agent: CompiledAgent, url: str) -> None:
        """The mock build: every tool's program (first word of its command) answers through the shim. A command
        whose program cannot be replaced here (an absolute path, a path leaving the build, a shell builtin or
        an assignment or operator in the prefix) would run the real program: `InvokerError` naming it."""
        for tool in agent.tools.values():
            prefix = command_prefix(tool)
            if not prefix:
                continue
            program, why = shim_target(prefix)
            target = self.project / program if "/" in program else self.bin / program
            if why is None and not target.resolve().is_relative_to(self.root):
                why = "a path outside the build copy"
            if why is not None:
                raise InvokerError(f"tool {tool.name!r} runs {program!r} ({why}), which cannot be replaced by a "
                                   "mock shim: in a harness test no real tool program may run")
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
            leftovers.MARKER: str(self.root),  # how the next run recognises what a killed run left running
        }
        env.update(extra)
        return env

    def remove(self) -> None:
        leftovers.remove_scratch(self.project_root, self.root, self.record)


def run_bounded(argv: list[str], scratch: Scratch, env: dict[str, str], deadline: Deadline, what: str,
                started: list[int] | None = None) -> tuple[int, str, str]:
    """Run `argv` in the scratch project under the keeper (`execution.keeper`, the one that runs handlers): its own
    process group, everything it starts killed when it exits, at the deadline, or when the engine goes away.
    Past the deadline `InvokerTimeout` is raised. `started` collects the process group ids (for tests)."""
    from open_agent_compiler.execution.handlers import StartedHandler

    deadline.check(what)
    out_path, err_path = scratch.root / "turn.stdout", scratch.root / "turn.stderr"
    request = {"command": {"argv": argv, "cwd": str(scratch.project), "env": scratch.env(env),
                           "stdout": str(out_path), "stderr": str(err_path)},
               "timeout": max(deadline.remaining(), 0.01), "scratch": str(scratch.root)}
    running = StartedHandler.kept(request, float(request["timeout"]))
    forget = deadline.on_expiry(running.stop)  # enforced from outside too: the test's deadline kills the group
    try:
        report = running.report()
    finally:
        forget()
    if started is not None and isinstance(report.get("pid"), int):
        started.append(report["pid"])
    if report.get("timed_out") or report.get("exit") is None or deadline.passed():
        raise InvokerTimeout(f"{deadline.message(what)}; harness process group {report.get('pid', '?')} killed")
    out = _read_text(out_path)
    err = _read_text(err_path)
    return int(report["exit"]), out, err


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


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
