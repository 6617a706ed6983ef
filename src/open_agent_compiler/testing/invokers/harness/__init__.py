"""Harness invokers: the real harness binary runs the compiled agent against the scripted model server on
127.0.0.1, in a scratch HOME with a mock build (tool commands answer from the test's mocks)."""

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from open_agent_compiler.errors import OacError
from open_agent_compiler.execution import leftovers
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.testing.invokers.harness.base import (HarnessBinary, ModelEndpoint, Scratch,
                                                                endpoint_from_env, find_binary)
from open_agent_compiler.testing.invokers.harness.progress import ProgressSession, progress_stream
from open_agent_compiler.testing.invokers.model_server import MODEL_ID, ScriptedModelServer
from open_agent_compiler.testing.invokers.cassette import Tape, Upstream, locate
from open_agent_compiler.testing.invokers.protocol import (CompiledAgent, Deadline, InvokerError, InvokerInfo,
                                                           InvokerNotRunnable, InvokerSession, ToolDispatcher)
from open_agent_compiler.testing.invokers.script import ModelView, ScriptedModel, script_entry


# invoker name → (executable, dialect whose build it runs, session class in this package: "module.Class")
HARNESSES: dict[str, tuple[str, str, str]] = {
    "opencode": ("opencode", "opencode", "opencode.OpenCodeSession"),
    "claude": ("claude", "claude", "claude.ClaudeSession"),
    "codex": ("codex", "codex", "codex.CodexSession"),
    "pi": ("pi", "pi", "pi.PiSession"),
}


def session_class(name: str) -> Callable[..., InvokerSession]:
    """The session class of harness `name`, imported only when that harness runs."""
    module, _, cls = HARNESSES[name][2].rpartition(".")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def _no_script(view: ModelView) -> Any:
    raise InvokerError("the harness asked the scripted model although a real endpoint is configured")


class HarnessInvoker:
    """With `endpoint` the harness talks to that real model; the loopback server then only answers the mock
    shims' tool calls."""

    def __init__(self, name: str, binary: HarnessBinary, scripts: Mapping[str, Any], spec: str,
                 script_digest: str | None, endpoint: ModelEndpoint | None = None) -> None:
        self.name = name
        self.binary = binary
        self.scripts = scripts
        self.spec = spec
        self.endpoint = endpoint
        self.started: list[int] = []  # process group ids of every harness run (see tests)
        self.last_server: ScriptedModelServer | None = None  # what the last session's harness sent
        self.progress = progress_stream()  # per-turn progress lines on a terminal (None: quiet)
        self._info = InvokerInfo(name=name, version=binary.version, model=endpoint.model if endpoint else MODEL_ID,
                                 script_digest=None if endpoint else script_digest)

        self.record: str | None = None  # --record MODE (see `cassette`)
        self.upstream: Upstream | None = None

    @property
    def info(self) -> InvokerInfo:
        return self._info

    def use_cassettes(self, record: str | None, upstream: Upstream | None) -> None:
        self.record, self.upstream = record, upstream
        self._info = self._info.model_copy(update={"record": record})

    def tape(self, agent: CompiledAgent, test: AgentTest) -> Tape | None:
        """The cassette this test plays or records, or None to run as before (its script, or the real endpoint).
        Without --record a test's cassette, when it has one, is replayed."""
        where = locate(agent.project_root, test, agent.slot)
        mode = self.record
        if mode is None:
            if where.found is not None:
                mode = "none"
            elif self.endpoint is not None or test.name in self.scripts:
                return None
            else:
                raise InvokerNotRunnable(f"no cassette {where.rel} and no model script for {test.name!r}: record "
                                         "one with --record")
        if mode == "none" and where.found is None:
            raise InvokerNotRunnable(f"no cassette {where.rel} (recording is off): record it with --record")
        return Tape(where, test.name, mode, self.upstream)

    @contextmanager
    def session(self, agent: CompiledAgent, test: AgentTest, dispatcher: ToolDispatcher,
                deadline: Deadline) -> Iterator[InvokerSession]:
        tape = self.tape(agent, test)
        model = (ScriptedModel(function=_no_script) if self.endpoint or tape is not None
                 else script_entry(self.scripts, test.name, self.spec))
        scratch = Scratch(agent)
        try:
            with ScriptedModelServer(model, agent, dispatcher) as server:
                self.last_server = server
                if tape is not None:
                    server.tape = tape
                    tape.volatile = ((server.base_url, "<server>"), (str(scratch.root), "<scratch>"),
                                     (server.token, "<token>"),  # another run's folder, echoed from an answer:
                                     (leftovers.sibling_pattern(scratch.root), "<scratch>"))
                scratch.write_shims(agent, server.base_url)
                session = session_class(self.name)(self.binary, agent, server, scratch, deadline, self.started,
                                                   self.endpoint)
                if self.progress is not None:
                    session = ProgressSession(session, self.progress, f"agent {test.name!r} ({self.name})",
                                              len(test.conversation()), dispatcher)
                yield session
                if tape is not None:
                    tape.save()
        finally:
            scratch.remove()


def harness_invoker(name: str, scripts: Mapping[str, Any], spec: str, script_digest: str | None,
                    dialect: str, endpoint: ModelEndpoint | None = None) -> HarnessInvoker:
    executable, wanted, _ = HARNESSES[name]
    if dialect != wanted:
        raise OacError(f"--invoker {name} runs the {wanted} build: pass --dialect {wanted} (got {dialect})")
    return HarnessInvoker(name, find_binary(name, executable), scripts, spec, script_digest, endpoint)
