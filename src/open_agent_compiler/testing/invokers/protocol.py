"""The invoker protocol: how an agent test talks to whatever runs the compiled agent.

An `Invoker` opens one `InvokerSession` per agent test (all turns share it, and one `ToolDispatcher` whose
`MockSession` carries sequence/stateful mock state across turns); `InvokerSession.turn` plays one user prompt
and returns a `TurnResult`. Invokers raise `InvokerError` for a problem of one test (named in that test's FAIL)
and `InvokerTimeout` when the test's deadline passes (the invoker has already stopped what it started).
"""

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.evaluator import ToolCall
from open_agent_compiler.model.core.mock import MockProfile
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.model.core.tool import ToolDefinition
from open_agent_compiler.execution.deadline import Deadline as _Deadline
from open_agent_compiler.execution.deadline import TimedOut
from open_agent_compiler.testing.mocks import MockSession, resolve_mock


class InvokerError(Exception):
    """One agent test cannot go on; the message (one line) becomes its FAIL evidence."""


class InvokerNotRunnable(InvokerError):
    """The test cannot run with this invoker as set up (e.g. no cassette and recording off): not_runnable."""


class InvokerTimeout(InvokerError, TimedOut):
    """The test's `timeout_s` passed; whatever the invoker started is already stopped."""


class CompiledAgent(BaseModel):
    """What an invoker runs: one compiled agent of the build."""

    model_config = ConfigDict(frozen=True)

    dialect: str
    build_dir: Path
    project_root: Path
    slot: str
    compiled_name: str
    primary: bool = True  # the config's primary agent (Codex runs only that one: its main thread)
    model: str | None = None
    tools: Mapping[str, ToolDefinition] = {}  # tools the agent may call, by name

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(self.tools)


class SubagentCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    prompt: str = ""
    output: str = ""


class TurnResult(BaseModel):
    """One turn as the invoker saw it: the final text, the tool calls in order, subagent delegations."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    trajectory: tuple[ToolCall, ...] = ()
    subagent_calls: tuple[SubagentCall, ...] = ()


class InvokerInfo(BaseModel):
    """Who ran a test; `key()` is part of the test's cache key and of its JSONL record."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str | None = None
    model: str | None = None
    script_digest: str | None = None  # content of the model script, when the invoker uses one
    record: str | None = None  # --record MODE (cassettes): a recording run re-runs the tests it selects

    def key(self) -> str:
        parts = [self.name]
        parts += [f"{label}={value}" for label, value in (("version", self.version), ("model", self.model),
                                                          ("script", self.script_digest),
                                                          ("record", self.record)) if value]
        return " ".join(parts)


class ToolDispatcher:
    """Answers the agent's tool calls for one test, through the same mock resolution as tool tests.

    A tool with no mock runs its real handler, unless the run is hermetic (then the call errors). Every call is
    logged in order, so invokers can read back what really ran.
    """

    def __init__(self, tools: Mapping[str, ToolDefinition], profile: MockProfile | None, session: MockSession, *,
                 hermetic: bool, timeout: float,
                 run_handler: Callable[[ToolDefinition, dict[str, Any]], tuple[Any, str | None]] | None = None) -> None:
        self.tools = dict(tools)
        self.profile = profile
        self.session = session
        self.hermetic = hermetic
        self.timeout = timeout
        self._run_handler = run_handler
        self.log: list[ToolCall] = []

    def dispatch(self, tool_name: str, arguments: dict[str, Any]) -> ToolCall:
        tool = self.tools.get(tool_name)
        output: Any = None
        error: str | None = None
        if tool is None:
            error = f"unknown tool {tool_name!r}"
        else:
            response, source = resolve_mock(tool_name, tool.mock, self.profile)
            if response is not None:
                try:
                    output = self.session.call(tool_name, response, dict(arguments))
                except Exception as exc:  # noqa: BLE001 - a broken mock is an error result, like a failing tool
                    error = f"mock {source} raised {type(exc).__name__}: {exc}"
            elif self.hermetic:
                error = f"--hermetic: tool {tool_name!r} has no mock and would run its real handler"
            else:
                output, error = (self._run_handler or _real_handler(self))(tool, dict(arguments))
        call = ToolCall(tool_name=tool_name, arguments=dict(arguments), output=output, error=error)
        self.log.append(call)
        return call


def _real_handler(dispatcher: ToolDispatcher) -> Callable[[ToolDefinition, dict[str, Any]], tuple[Any, str | None]]:
    def run(tool: ToolDefinition, payload: dict[str, Any]) -> tuple[Any, str | None]:
        from open_agent_compiler.execution.handlers import start_handler  # only when a real handler is needed

        root = dispatcher.session.project_root or Path.cwd()
        outcome = start_handler(tool=tool, payload=payload, project_root=root, timeout=dispatcher.timeout).outcome()
        return (outcome.output, None) if outcome.ok else (None, outcome.error)
    return run


class Deadline(_Deadline):
    """The end of one agent test's time budget (`AgentTest.timeout_s`): the one deadline (`execution.deadline`),
    raising `InvokerTimeout`."""

    error = InvokerTimeout


class InvokerSession(Protocol):
    def turn(self, index: int, prompt: str) -> TurnResult:
        """Play turn `index` (1-based) of the session's conversation."""
        ...


@runtime_checkable
class Invoker(Protocol):
    """Runs compiled agents. `info` identifies it in keys and records; `session` opens one test's session and
    must stop everything it started when the context exits (also on errors and timeouts)."""

    @property
    def info(self) -> InvokerInfo: ...

    def session(self, agent: CompiledAgent, test: AgentTest, dispatcher: ToolDispatcher,
                deadline: Deadline) -> AbstractContextManager[InvokerSession]: ...
