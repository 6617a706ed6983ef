"""Ask the real agent harnesses which agents they load from a project.

The CLIs are installed by ``.ci/install-harnesses`` into ``~/.cache/oac/harnesses``
or ``$HARNESS_DIR`` (one npm prefix per harness; ``harness_dir()``, the place
``oac test --invoker`` reads too) and described by its ``status.json``. Every function
here runs a real CLI, offline, with a scratch ``HOME``/XDG/config directory, a
minimal environment (no API keys are inherited) and a ``timeout``, on a *copy*
of the project made in that scratch directory (so that nothing above the
project, such as this repository's own ``AGENTS.md`` or ``.opencode/``, can leak
in). No network is needed: the only sockets are on 127.0.0.1 (a connection
attempt to a closed port in :func:`codex_warnings`, and a scripted model server
in :func:`pi_run_requests`). Everything passes inside ``unshare -n``.

What is parsed, per harness (shapes seen with the versions pinned in
``.ci/install-harnesses``):

OpenCode (``opencode agent list`` / ``opencode debug agent NAME``)
    ``agent list`` prints, per agent, a line ``NAME (MODE)`` at column 0
    (MODE is ``primary``, ``subagent`` or ``all``; nested files give
    ``team/helper``) followed by its permission rules as an indented,
    pretty-printed JSON array ending with ``]`` at column 0. ``debug agent``
    prints one JSON object: ``name``, ``mode``, ``native``, ``description``,
    ``model`` (``{"providerID", "modelID"}``), ``temperature``, ``options``
    (where unknown frontmatter keys end up), ``prompt``, ``permission`` (the
    ordered rule list ``{"permission", "pattern", "action"}``: defaults first,
    then the agent's own; the last matching rule wins) and ``tools`` (tool id ->
    enabled). An invalid file makes both commands exit 1 with
    ``Configuration is invalid at PATH`` on stderr; a file whose YAML does not
    parse is dropped without any message.

Claude Code (``claude -p --output-format stream-json --verbose -- x``)
    stdout is JSON lines; the first is ``{"type": "system", "subtype": "init",
    "agents": [...], "tools": [...], "permissionMode": ..., ...}``. With no
    credentials the run then ends with ``Not logged in · Please run /login`` and
    exit status 1; that is expected. ``--debug-file`` gets the reasons files were
    dropped or keys ignored (lines containing ``Agent file``). Project
    ``permissions.allow`` rules are ignored unless the workspace is trusted,
    which :func:`claude_init` does by default in the scratch ``.claude.json``.

Codex (``codex debug prompt-input "hi"``)
    stdout is a JSON list of model input items. The roles are in the tool named
    ``spawn_agent`` (found anywhere in that tree; in 0.171 it sits in namespace
    ``collaboration``), in ``parameters.properties.agent_type.description``::

        ...Available roles:
        helper: {
        Answers small questions
        - This role's model is set to `gpt-5.1-codex-mini` and ...
        }
        default: {
        Default agent.
        }

    i.e. a ``NAME: {`` line, the description (plus model/effort notes) and a
    ``}`` line. Project roles are read only when the project is trusted
    (scratch ``config.toml``). A role file that is invalid is skipped silently
    here; ``codex exec`` prints ``warning: Ignoring malformed agent role
    definition: ...`` for it, which :func:`codex_warnings` collects.

Pi (``tests/harness/pi_agents.mjs`` on the Node 22 installed for Pi)
    Pi has no listing command and needs a model to start a session, so the
    script imports the extensions' *own* loaders through jiti (as Pi does) and
    prints JSON: ``pi_subagents.custom`` (name -> AgentConfig built by
    ``@tintinweb/pi-subagents``' ``loadCustomAgents``), ``available_types``
    (what its Agent tool offers), and ``example_subagent.agents`` (Pi's bundled
    example ``subagent`` extension's ``discoverAgents``). This is hermetic and
    takes about a second; it reports what the installed extension code builds
    from the files, not what a model would later do with it.
    :func:`pi_agent_tool_types` is the end-to-end cross-check: it runs
    ``pi -p`` with the extension against a scripted OpenAI-compatible model on
    127.0.0.1 and reads the ``Agent`` tool Pi offered (about two seconds).

Typical use in a test::

    reason = availability()["opencode"]
    if reason:
        pytest.skip(reason)
    assert "coder" in opencode_agents(project_dir)
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from open_agent_compiler.testing.invokers.harness.base import harness_dir

__all__ = [
    "HARNESSES",
    "ClaudeInit",
    "HarnessError",
    "HarnessUnavailable",
    "availability",
    "claude_agents",
    "claude_init",
    "codex_prompt_input",
    "codex_role_descriptions",
    "codex_roles",
    "codex_warnings",
    "opencode_agent",
    "opencode_agents",
    "opencode_listing",
    "opencode_rules",
    "pi_agent",
    "pi_agent_tool_types",
    "pi_agents",
    "pi_example_agents",
    "pi_load",
    "pi_run_requests",
    "require",
    "status",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
HARNESS_DIR = harness_dir()
STATUS_FILE = HARNESS_DIR / "status.json"
PI_SCRIPT = Path(__file__).resolve().parent / "pi_agents.mjs"

#: The four harnesses the compiler targets, in a stable order.
HARNESSES: tuple[str, ...] = ("opencode", "claude", "codex", "pi")

#: Default bound, in seconds, for one CLI invocation.
DEFAULT_TIMEOUT = 90.0

# Directories never copied into the scratch project.
_COPY_IGNORE = shutil.ignore_patterns(".git", "node_modules", ".venv", "__pycache__", ".harnesses")


class HarnessUnavailable(RuntimeError):
    """The harness is not installed or not usable here; ``str()`` is the reason."""


class HarnessError(RuntimeError):
    """A harness CLI failed in an unexpected way (its output is kept for the report)."""

    def __init__(self, message: str, *, cmd: Sequence[str] = (), returncode: int | None = None,
                 stdout: str = "", stderr: str = "") -> None:
        detail = message
        if cmd:
            detail += f"\n  command: {' '.join(map(str, cmd))}\n  exit: {returncode}"
        if stderr.strip():
            detail += f"\n  stderr (tail): {stderr.strip()[-2000:]}"
        if stdout.strip():
            detail += f"\n  stdout (head): {stdout.strip()[:2000]}"
        super().__init__(detail)
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


# --------------------------------------------------------------------------- status


def status() -> dict[str, Any]:
    """Return ``.harnesses/status.json`` (``{}`` when it does not exist or is unreadable)."""
    try:
        data = json.loads(STATUS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(name: str) -> dict[str, Any]:
    entry = status().get("harnesses", {}).get(name, {})
    return entry if isinstance(entry, dict) else {}


def availability() -> dict[str, str | None]:
    """For each of :data:`HARNESSES`: ``None`` if it can be run, else why not.

    The reason comes from ``status.json`` (written by ``.ci/install-harnesses``)
    or from a missing file, so a test can ``pytest.skip(reason)`` honestly.
    """
    if not STATUS_FILE.exists():
        why = f"{STATUS_FILE} not found: run .ci/install-harnesses"
        return {name: why for name in HARNESSES}
    result: dict[str, str | None] = {}
    for name in HARNESSES:
        result[name] = _unavailable_reason(name)
    return result


def _unavailable_reason(name: str) -> str | None:
    entry = _entry(name)
    if not entry:
        return f"{name}: no entry in {STATUS_FILE}: run .ci/install-harnesses {name}"
    if not entry.get("available"):
        return f"{name}: {entry.get('reason', 'unavailable')}"
    needed = [entry.get("bin")]
    if name == "pi":
        needed += [entry.get("node"), entry.get("extension"), str(PI_SCRIPT)]
    for path in needed:
        if not path or not Path(path).exists():
            return f"{name}: {path or 'binary path'} is missing: rerun .ci/install-harnesses {name}"
    if name == "codex" and shutil.which("node") is None:
        return "codex: its launcher needs `node` on PATH"
    return None


def require(name: str) -> dict[str, Any]:
    """Return the status entry of harness ``name`` or raise :class:`HarnessUnavailable`."""
    reason = _unavailable_reason(name)
    if reason:
        raise HarnessUnavailable(reason)
    return _entry(name)


# --------------------------------------------------------------------------- running


@dataclass
class _Scratch:
    """A throw-away HOME with a copy of the project inside it."""

    root: Path
    home: Path
    project: Path

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A minimal environment: PATH, locale, scratch HOME/XDG/TMPDIR, plus ``extra``."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "root"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "TMPDIR": str(self.root / "tmp"),
            "NO_COLOR": "1",
            "CI": "1",
        }
        env.update(extra or {})
        return env


@contextlib.contextmanager
def _scratch(project_dir: str | os.PathLike[str], copy: bool = True) -> Iterator[_Scratch]:
    src = Path(project_dir).resolve()
    if not src.is_dir():
        raise FileNotFoundError(f"project directory not found: {src}")
    root = Path(tempfile.mkdtemp(prefix="oac-harness-")).resolve()
    try:
        home = root / "home"
        for sub in (home / ".config", home / ".local" / "share", home / ".cache",
                    home / ".local" / "state", root / "tmp"):
            sub.mkdir(parents=True, exist_ok=True)
        if copy:
            project = root / "project"
            shutil.copytree(src, project, ignore=_COPY_IGNORE, symlinks=True)
        else:
            project = src
        yield _Scratch(root=root, home=home, project=project)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(args: Sequence[str], scratch: _Scratch, *, env: Mapping[str, str] | None = None,
         timeout: float = DEFAULT_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``args`` in the scratch project, bounded by ``timeout`` (whole process group)."""
    proc = subprocess.Popen(
        list(args), cwd=scratch.project, env=scratch.env(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise HarnessError(f"timed out after {timeout:.0f}s", cmd=args, returncode=None,
                           stdout=out, stderr=err) from None
    return subprocess.CompletedProcess(list(args), proc.returncode, _strip_ansi(out),
                                       _strip_ansi(err))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


# --------------------------------------------------------------------------- OpenCode

_OPENCODE_ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",   # no models.dev download
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",  # would be installed from npm at start
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}
_OPENCODE_AGENT_LINE = re.compile(r"^(?P<name>\S.*?) \((?P<mode>primary|subagent|all)\)$")


@dataclass
class OpencodeListing:
    """``opencode agent list`` for one project."""

    modes: dict[str, str]           #: agent name -> mode, in listing order
    stdout: str
    stderr: str
    log: str                        #: text of OpenCode's own log file from the run


def opencode_listing(project_dir: str | os.PathLike[str], *, copy: bool = True,
                     timeout: float = DEFAULT_TIMEOUT) -> OpencodeListing:
    """Run ``opencode agent list`` and return every agent (built-ins included) with its mode."""
    binary = require("opencode")["bin"]
    with _scratch(project_dir, copy) as s:
        cp = _run([binary, "agent", "list"], s, env=_OPENCODE_ENV, timeout=timeout)
        log = "\n".join(p.read_text(errors="replace")
                        for p in sorted((s.home / ".local/share/opencode/log").glob("*.log")))
    if cp.returncode != 0:
        raise HarnessError("opencode agent list failed", cmd=cp.args, returncode=cp.returncode,
                           stdout=cp.stdout, stderr=cp.stderr)
    modes: dict[str, str] = {}
    for line in cp.stdout.splitlines():
        m = _OPENCODE_AGENT_LINE.match(line)
        if m:
            modes[m["name"]] = m["mode"]
    return OpencodeListing(modes=modes, stdout=cp.stdout, stderr=cp.stderr, log=log)


_builtin_cache: dict[str, frozenset[str]] = {}


def _builtins(name: str, lister: Any) -> frozenset[str]:
    """Names a harness lists for an empty project (computed once per process)."""
    if name not in _builtin_cache:
        with tempfile.TemporaryDirectory(prefix="oac-empty-") as empty:
            _builtin_cache[name] = frozenset(lister(empty, builtin=True))
    return _builtin_cache[name]


def opencode_agents(project_dir: str | os.PathLike[str], *, builtin: bool = False,
                    timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Agent names OpenCode loads for the project, in its listing order.

    Without ``builtin`` the names OpenCode lists for an empty project (build,
    plan, general, ...) are left out; a project file that reuses such a name is
    then reported only with ``builtin=True`` (see :func:`opencode_agent`,
    whose ``native`` is false for it).
    """
    names = list(opencode_listing(project_dir, timeout=timeout).modes)
    if builtin:
        return names
    known = _builtins("opencode", opencode_agents)
    return [n for n in names if n not in known]


def opencode_agent(project_dir: str | os.PathLike[str], name: str, *,
                   timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The resolved agent, as ``opencode debug agent NAME`` prints it (see module doc).

    Raises :class:`HarnessError` if the agent does not exist or the config is
    invalid; the message then holds OpenCode's own explanation.
    """
    binary = require("opencode")["bin"]
    with _scratch(project_dir) as s:
        cp = _run([binary, "debug", "agent", name], s, env=_OPENCODE_ENV, timeout=timeout)
    if cp.returncode != 0:
        raise HarnessError(f"opencode debug agent {name} failed", cmd=cp.args,
                           returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    try:
        data: dict[str, Any] = json.loads(cp.stdout)
    except ValueError as exc:
        raise HarnessError(f"opencode debug agent {name}: output is not JSON ({exc})",
                           cmd=cp.args, returncode=cp.returncode, stdout=cp.stdout,
                           stderr=cp.stderr) from None
    return data


def opencode_rules(agent: Mapping[str, Any], permission: str) -> list[tuple[str, str]]:
    """``(pattern, action)`` pairs of one permission of an :func:`opencode_agent` result.

    In file order; OpenCode's defaults come first and the last matching rule wins.
    """
    return [(r["pattern"], r["action"]) for r in agent.get("permission", [])
            if r.get("permission") == permission]


# --------------------------------------------------------------------------- Claude Code

_CLAUDE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@dataclass
class ClaudeInit:
    """What one ``claude -p --output-format stream-json`` start-up reported."""

    init: dict[str, Any]               #: the ``{"type": "system", "subtype": "init"}`` event
    events: list[dict[str, Any]]       #: every JSON event on stdout
    debug_log: str                     #: text of ``--debug-file``
    stderr: str
    returncode: int
    project: str                       #: the (scratch) project path the run used

    @property
    def agents(self) -> list[str]:
        return list(self.init.get("agents", []))

    @property
    def tools(self) -> list[str]:
        return list(self.init.get("tools", []))

    def agent_messages(self) -> list[str]:
        """Debug-log lines about agent files (why one was dropped, which keys were ignored)."""
        return [line for line in self.debug_log.splitlines()
                if "Agent file" in line or "parse agent" in line]


def claude_init(project_dir: str | os.PathLike[str], *, trust: bool = True,
                timeout: float = DEFAULT_TIMEOUT) -> ClaudeInit:
    """Start Claude Code headless in the project and return its ``init`` event.

    With ``trust`` the scratch ``$CLAUDE_CONFIG_DIR/.claude.json`` marks the
    project as trusted, so ``.claude/settings.json`` allow rules are applied
    (untrusted, Claude Code drops them with a message on stderr).
    """
    binary = require("claude")["bin"]
    with _scratch(project_dir) as s:
        config_dir = s.home / ".claude"
        config_dir.mkdir(parents=True, exist_ok=True)
        if trust:
            (config_dir / ".claude.json").write_text(json.dumps(
                {"projects": {str(s.project): {"hasTrustDialogAccepted": True}}}))
        debug_file = s.root / "claude-debug.log"
        env = dict(_CLAUDE_ENV, CLAUDE_CONFIG_DIR=str(config_dir))
        cp = _run([binary, "-p", "--output-format", "stream-json", "--verbose",
                   "--debug-file", str(debug_file), "--", "x"], s, env=env, timeout=timeout)
        debug_log = debug_file.read_text(errors="replace") if debug_file.exists() else ""
        project = str(s.project)
    events: list[dict[str, Any]] = []
    for line in cp.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
    init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"),
                None)
    if init is None:
        raise HarnessError("claude printed no init event", cmd=cp.args,
                           returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    return ClaudeInit(init=init, events=events, debug_log=debug_log, stderr=cp.stderr,
                      returncode=cp.returncode, project=project)


def claude_agents(project_dir: str | os.PathLike[str], *, builtin: bool = False,
                  timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Agent names in Claude Code's ``init`` event (built-ins left out unless ``builtin``).

    Use :func:`claude_init` to also get the debug log explaining dropped files.
    """
    names = claude_init(project_dir, timeout=timeout).agents
    if builtin:
        return names
    known = _builtins("claude", claude_agents)
    return [n for n in names if n not in known]


# --------------------------------------------------------------------------- Codex


def _codex_home(s: _Scratch, extra_toml: str = "") -> dict[str, str]:
    codex_home = s.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"{extra_toml}\n[projects.{json.dumps(str(s.project))}]\ntrust_level = \"trusted\"\n")
    return {"CODEX_HOME": str(codex_home)}


def codex_prompt_input(project_dir: str | os.PathLike[str], *,
                       timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
    """The model input Codex would send for "hi" (``codex debug prompt-input``), parsed.

    The project is trusted in a scratch ``CODEX_HOME/config.toml``; Codex reads
    ``.codex/agents/*.toml`` only for trusted projects. ``AGENTS.md`` shows up as
    a user message starting ``# AGENTS.md instructions for <dir>``.
    """
    binary = require("codex")["bin"]
    with _scratch(project_dir) as s:
        cp = _run(["node", binary, "debug", "prompt-input", "hi"], s, env=_codex_home(s),
                  timeout=timeout)
    if cp.returncode != 0:
        raise HarnessError("codex debug prompt-input failed", cmd=cp.args,
                           returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    try:
        items: list[dict[str, Any]] = json.loads(cp.stdout)
    except ValueError as exc:
        raise HarnessError(f"codex prompt-input is not JSON ({exc})", cmd=cp.args,
                           returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr) from None
    return items


def _find_tool(node: Any, name: str) -> dict[str, Any] | None:
    if isinstance(node, dict):
        if node.get("name") == name and "parameters" in node:
            return node
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _find_tool(child, name)
        if found is not None:
            return found
    return None


_CODEX_ROLE = re.compile(r"^(?P<name>[^\s{}:][^\n{}]*?): \{\n(?P<body>.*?)\n\}$", re.M | re.S)


def codex_role_descriptions(items: list[dict[str, Any]]) -> dict[str, str]:
    """``role -> text`` parsed from a :func:`codex_prompt_input` result (format in module doc).

    Codex adds the ``agent_type`` parameter (and with it the built-in roles
    default, explorer and worker) only when at least one role file loaded; with
    none, this returns ``{}``.
    """
    tool = _find_tool(items, "spawn_agent")
    if tool is None:
        raise HarnessError("no spawn_agent tool in codex prompt input (multi-agent disabled?)")
    agent_type = tool.get("parameters", {}).get("properties", {}).get("agent_type")
    if agent_type is None:
        return {}
    desc = agent_type.get("description", "")
    _, sep, roles_text = desc.partition("Available roles:\n")
    if not sep:
        raise HarnessError("spawn_agent.agent_type has no 'Available roles:' list: " + desc[:500])
    return {m["name"]: m["body"] for m in _CODEX_ROLE.finditer(roles_text)}


def _codex_declared_names(project_dir: str | os.PathLike[str]) -> set[str]:
    """``name`` values of the project's ``.codex/agents/*.toml`` files that parse."""
    names: set[str] = set()
    for path in sorted(Path(project_dir, ".codex", "agents").glob("*.toml")):
        try:
            value = tomllib.loads(path.read_text()).get("name")
        except (OSError, ValueError):
            continue
        if isinstance(value, str):
            names.add(value)
    return names


def codex_roles(project_dir: str | os.PathLike[str], *, builtin: bool = False,
                timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Role names Codex offers to ``spawn_agent``, in its order.

    Without ``builtin`` only roles that a project file declares are kept (so a
    project role that replaces a built-in such as ``worker`` is still reported,
    and a file Codex ignored is absent).
    """
    names = list(codex_role_descriptions(codex_prompt_input(project_dir, timeout=timeout)))
    if builtin:
        return names
    declared = _codex_declared_names(project_dir)
    return [n for n in names if n in declared]


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def codex_warnings(project_dir: str | os.PathLike[str], *, timeout: float = 30.0) -> list[str]:
    """Codex's start-up warnings about role files it ignored (deduplicated, in order).

    ``codex exec`` is the only command that reports them. It is pointed at a
    model provider on a closed 127.0.0.1 port and stopped as soon as it starts
    retrying the connection, so no request ever leaves the machine.
    """
    binary = require("codex")["bin"]
    port = _free_loopback_port()
    provider = (
        'model_provider = "oac_offline"\nmodel = "offline"\n'
        "[model_providers.oac_offline]\n"
        'name = "offline"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n'
        'wire_api = "responses"\nrequires_openai_auth = false\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    lines: list[str] = []
    with _scratch(project_dir) as s:
        args = ["node", binary, "exec", "--skip-git-repo-check", "hi"]
        proc = subprocess.Popen(args, cwd=s.project, env=s.env(_codex_home(s, provider)),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True)
        # The timer bounds the whole read: killing the group ends the stream.
        guard = threading.Timer(timeout, _kill_group, [proc])
        guard.start()
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line.rstrip("\n"))
                if line.startswith("ERROR") or "Reconnecting" in line:
                    break
        finally:
            guard.cancel()
            _kill_group(proc)
    warnings: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("warning: Ignoring malformed agent role definition"):
            text = line
            # A TOML parse error continues on the following indented lines.
            for cont in lines[i + 1:]:
                if not cont.strip() or cont.startswith(("warning:", "ERROR")):
                    break
                text += "\n" + cont
            if text not in warnings:
                warnings.append(text)
    return warnings


# --------------------------------------------------------------------------- Pi


def pi_load(project_dir: str | os.PathLike[str], *,
            timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """Run ``pi_agents.mjs`` (see module doc) and return its JSON.

    Keys: ``pi_version``, ``extension_version``, ``errors`` (non-empty if a
    loader could not be imported), ``pi_subagents`` (``custom``,
    ``available_types``, ``default_types``, ``builtin_tool_names``) and
    ``example_subagent`` (``agents`` list).
    """
    entry = require("pi")
    root = str(Path(entry["bin"]).resolve().parent.parent)
    with _scratch(project_dir) as s:
        env = {"PI_CODING_AGENT_DIR": str(s.home / ".pi" / "agent"), "PI_OFFLINE": "1"}
        cp = _run([entry["node"], str(PI_SCRIPT), root, str(s.project)], s, env=env,
                  timeout=timeout)
    if cp.returncode != 0:
        raise HarnessError("pi_agents.mjs failed", cmd=cp.args, returncode=cp.returncode,
                           stdout=cp.stdout, stderr=cp.stderr)
    data: dict[str, Any] = json.loads(cp.stdout)
    if data.get("errors"):
        raise HarnessError("a Pi agent loader failed to import: " + "\n".join(data["errors"]),
                           cmd=cp.args, returncode=cp.returncode, stdout=cp.stdout,
                           stderr=cp.stderr)
    return data


def pi_agents(project_dir: str | os.PathLike[str], *, builtin: bool = False,
              timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Agents ``@tintinweb/pi-subagents`` loads from the project (file name = agent name).

    With ``builtin`` the list is what its Agent tool offers: its defaults
    (general-purpose, Explore, Plan) overlaid by the project's enabled agents.
    """
    subagents = pi_load(project_dir, timeout=timeout)["pi_subagents"]
    if builtin:
        return list(subagents["available_types"])
    return list(subagents["custom"])


def pi_agent(project_dir: str | os.PathLike[str], name: str, *,
             timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The AgentConfig pi-subagents built for ``name`` (``builtinToolNames``, ``model``,
    ``thinking``, ``skills``, ``promptMode``, ``systemPrompt``, ...)."""
    custom = pi_load(project_dir, timeout=timeout)["pi_subagents"]["custom"]
    if name not in custom:
        raise KeyError(f"pi-subagents loaded no agent {name!r}; it loaded {sorted(custom)}")
    config: dict[str, Any] = custom[name]
    return config


class _LoopbackChatServer:
    """A tiny OpenAI-compatible chat-completions server on 127.0.0.1 that answers
    every request with the streamed text ``done`` and records the request bodies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # model listing, if a client asks
                self._send("application/json", json.dumps(
                    {"object": "list", "data": [{"id": "oac-fake", "object": "model"}]}).encode())

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                with contextlib.suppress(ValueError):
                    outer.requests.append(json.loads(self.rfile.read(size)))
                chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0,
                         "model": "oac-fake"}
                events = [
                    dict(chunk, choices=[{"index": 0, "finish_reason": None,
                                          "delta": {"role": "assistant", "content": "done"}}]),
                    dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}],
                         usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
                ]
                body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events)
                self._send("text/event-stream", body + b"data: [DONE]\n\n")

            def _send(self, ctype: str, body: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> _LoopbackChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def pi_run_requests(project_dir: str | os.PathLike[str], prompt: str = "hello", *,
                    timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
    """Run ``pi -p PROMPT`` with pi-subagents loaded against a scripted model on
    127.0.0.1 and return the chat-completion request bodies Pi sent.

    This is the end-to-end check that the installed Pi really loads the
    extension: the requests carry the system prompt and the tools offered to the
    model, among them ``Agent`` (see :func:`pi_agent_tool_types`).
    """
    entry = require("pi")
    with _scratch(project_dir) as s, _LoopbackChatServer() as server:
        agent_dir = s.home / ".pi" / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"oac": {
            "baseUrl": f"http://127.0.0.1:{server.port}/v1", "api": "openai-completions",
            "apiKey": "dummy", "compat": {"supportsDeveloperRole": False},
            "models": [{"id": "oac-fake", "name": "oac-fake", "reasoning": False,
                        "input": ["text"], "contextWindow": 100000, "maxTokens": 1000,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
        }}}))
        (agent_dir / "settings.json").write_text(json.dumps(
            {"defaultProvider": "oac", "defaultModel": "oac-fake"}))
        cp = _run([entry["bin"], "--offline", "--no-session", "-e", entry["extension"],
                   "-p", prompt], s, env={"PI_CODING_AGENT_DIR": str(agent_dir)},
                  timeout=timeout)
        requests = list(server.requests)
    if cp.returncode != 0 or not requests:
        raise HarnessError("pi -p against the loopback model failed", cmd=cp.args,
                           returncode=cp.returncode, stdout=cp.stdout, stderr=cp.stderr)
    return requests


_PI_TYPES = re.compile(r"Available types: (?P<types>[^.]*)\.")


def pi_agent_tool_types(project_dir: str | os.PathLike[str], *,
                        timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """The agent types a real Pi run offers the model in the ``Agent`` tool.

    Parsed from ``parameters.properties.subagent_type.description``, which reads
    ``The type of specialized agent to use. Available types: general-purpose,
    Explore, Plan, scout, writer. Custom agents from ...``.
    """
    for request in pi_run_requests(project_dir, timeout=timeout):
        for tool in request.get("tools", []):
            function = tool.get("function", tool)
            if function.get("name") == "Agent":
                desc = (function.get("parameters", {}).get("properties", {})
                        .get("subagent_type", {}).get("description", ""))
                m = _PI_TYPES.search(desc)
                if m:
                    return [t.strip() for t in m["types"].split(",") if t.strip()]
                raise HarnessError("Agent tool without 'Available types:': " + desc[:500])
    raise HarnessError("Pi offered the model no Agent tool: pi-subagents did not load")


def pi_example_agents(project_dir: str | os.PathLike[str], *,
                      timeout: float = DEFAULT_TIMEOUT) -> list[str]:
    """Agent names Pi's bundled example ``subagent`` extension finds.

    That loader needs both ``name`` and ``description`` in the frontmatter.
    """
    return [a["name"] for a in pi_load(project_dir, timeout=timeout)["example_subagent"]["agents"]]

