"""Run one discovered test and return its outcome. Knows nothing of doit or of how results are stored."""

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from open_agent_compiler.model.core.evaluator import EvaluationContext, EvaluatorResult
from open_agent_compiler.model.core.mock import MockResponse
from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing.capability import NOTHING_TO_CHECK, capability_checks
from open_agent_compiler.testing.readback import read_back
from open_agent_compiler.execution import watchdog
from open_agent_compiler.execution.deadline import Deadline, TimedOut
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.evaluation import aggregate, run_evaluators
from open_agent_compiler.execution.handlers import StartedHandler, start_handler
from open_agent_compiler.testing.mocks import MockSession, resolve_mock
from open_agent_compiler.usercode.project_imports import note_files
from open_agent_compiler.history.log import TestOutcome
from open_agent_compiler.testing.schema_check import input_violation, output_violation
from open_agent_compiler.testing.strict import strictly

NOT_RUNNABLE = "no invoker wired: agent tests need one to run"


class RunSettings(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    project_root: Path
    build_dir: Path
    dialect: str = "opencode"
    timeout: float = 60.0
    hermetic: bool = False
    strict: bool = False  # not_runnable and nothing-checked tests fail (testing.strict)
    judge: Any = None
    invoker: Any = None  # an `invokers.protocol.Invoker`; None: agent tests are not runnable


def _check(kind: str, passed: bool, evidence: str) -> EvaluatorResult:
    return EvaluatorResult(evaluator_kind="capability", name=kind, passed=passed, score=1.0 if passed else 0.0,
                           evidence=evidence)


def _outcome(results: list[EvaluatorResult], *, empty_status: str, empty_reason: str, started: float,
             mock_source: str | None = None) -> TestOutcome:
    duration = time.perf_counter() - started
    if not results:
        status = empty_status
        return TestOutcome(status=status, score=1.0 if status == "pass" else 0.0, skip_reason=
                           None if status == "pass" else empty_reason, duration_s=duration, mock_source=mock_source)
    status, score = aggregate(results)
    reason = None
    if status == "skipped":
        reason = "every evaluator skipped: " + "; ".join(f"{r.name}: {r.evidence}" for r in results)
    return TestOutcome(status=status, score=score, evidence=tuple(results), skip_reason=reason, duration_s=duration,
                       mock_source=mock_source)


def run_capability_test(case: TestCase, resolved: ResolvedConfig, settings: RunSettings,
                        artifact_paths: tuple[str, ...], artifacts: Mapping[str, bytes] | None = None) -> TestOutcome:
    """`artifacts`: this run's compiled bytes in memory (the engine passes them, so a test never judges another
    run's build); without them the files are read from `settings.build_dir`."""
    started = time.perf_counter()
    assert isinstance(case.test, CapabilityTest)
    files = dict(artifacts) if artifacts is not None else {}
    for path in artifact_paths if artifacts is None else ():
        try:
            files[path] = (settings.build_dir / path).read_bytes()
        except FileNotFoundError:
            continue  # optional files (e.g. a settings file no agent needs) are simply absent
        except OSError as exc:
            failure = _check("artifact", False, f"compiled file {path} unreadable: {exc.strerror}")
            return TestOutcome(status="fail", score=0.0, evidence=(failure,), duration_s=time.perf_counter() - started)
    read = read_back(settings.dialect, case.target_name, files)  # once per artifact, by its bytes' digest
    caps = read.capabilities
    results = capability_checks(case.test, read, resolved.config.postfix)
    context = EvaluationContext(target=read.target(), permissions=caps, judge=settings.judge)
    results += run_evaluators(case.test.evaluators, context)
    return _outcome(results, empty_status="skipped", empty_reason=NOTHING_TO_CHECK, started=started)


def _mock_of(case: TestCase, resolved: ResolvedConfig) -> tuple[MockResponse | None, str | None]:
    """The mock a tool test answers from (None: its real handler) and where that mock came from."""
    assert case.tool is not None
    profile = resolved.mock_profiles.get(case.mock_profile) if case.mock_profile else None
    return resolve_mock(case.tool.name, case.tool.mock, profile)


def _handler_args(case: TestCase, settings: RunSettings) -> dict[str, Any]:
    assert case.tool is not None
    return {"tool": case.tool, "payload": dict(case.test.input), "project_root": settings.project_root,
            "timeout": settings.timeout}


def handler_call(case: TestCase, resolved: ResolvedConfig, settings: RunSettings) -> dict[str, Any] | None:
    """The real handler a tool test would run (its `start_handler` arguments), or None when it answers from a
    mock or --hermetic forbids it."""
    if case.kind != "tool" or case.tool is None or settings.hermetic or _mock_of(case, resolved)[0] is not None:
        return None
    if input_violation(case.tool, case.test.input):  # the test FAILs before its handler would start
        return None
    return _handler_args(case, settings)


def run_tool_test(case: TestCase, resolved: ResolvedConfig, settings: RunSettings,
                  handler: StartedHandler | None = None) -> TestOutcome:
    started = time.perf_counter()
    assert isinstance(case.test, ToolTest) and case.tool is not None
    if broken := input_violation(case.tool, case.test.input):
        if handler is not None:
            handler.cancel()
        return TestOutcome(status="fail", score=0.0, evidence=(_check("input_schema", False, broken),),
                           duration_s=time.perf_counter() - started)
    response, source = _mock_of(case, resolved)
    if response is not None:
        try:
            output = MockSession(project_root=settings.project_root).call(case.tool.name, response, dict(case.test.input))
        except Exception as exc:  # noqa: BLE001 - a broken mock fails its test, the run goes on
            failure = _check("mock", False, f"mock {source} raised {type(exc).__name__}: {exc}")
            return TestOutcome(status="fail", score=0.0, evidence=(failure,), duration_s=time.perf_counter() - started,
                               mock_source=source)
    elif settings.hermetic:
        failure = _check("hermetic", False, f"--hermetic: tool {case.tool.name!r} has no mock and would run its real handler")
        return TestOutcome(status="fail", score=0.0, evidence=(failure,), duration_s=time.perf_counter() - started,
                           mock_source=source)
    else:
        handled = (handler or start_handler(**_handler_args(case, settings))).outcome()
        if not handled.ok:
            failure = _check("handler", False, handled.error)
            return TestOutcome(status="fail", score=0.0, evidence=(failure,), duration_s=time.perf_counter() - started,
                               mock_source=source)
        output = handled.output
        note_files(handled.imported)  # the project files the handler loaded: part of the test's next key
    results = list(run_evaluators(case.test.evaluators, EvaluationContext(target=output, judge=settings.judge)))
    if broken := output_violation(case.tool, output, source):
        results.insert(0, _check("output_schema", False, broken))
    return _outcome(results, empty_status="pass", empty_reason="", started=started, mock_source=source)


def test_deadline(case: TestCase, settings: RunSettings) -> Deadline:
    """The one wall-clock deadline of a test: `timeout_s` for agent tests, `--timeout` for the others."""
    if isinstance(case.test, AgentTest):
        from open_agent_compiler.testing.invokers.protocol import Deadline as InvokerDeadline

        return InvokerDeadline(case.test.timeout_s)
    return Deadline(settings.timeout)


def _runs_user_code(case: TestCase, resolved: ResolvedConfig) -> bool:
    """Whether the test may run user code in this process (which may block): an agent test (scripts, invokers),
    a callable mock, a project evaluator or an LLM judge. Tests without are not worth a thread (~0.1 ms each)."""
    if case.kind == "agent":
        return True
    evaluators = list(case.test.evaluators)
    if any(evaluator.kind == "llm_judge" or not type(evaluator).__module__.startswith("open_agent_compiler.")
           for evaluator in evaluators):
        return True
    if case.kind == "tool" and case.tool is not None:
        mock = _mock_of(case, resolved)[0]
        return mock is not None and mock.kind not in ("fixed", "sequence", "echo")
    return False


def run_case(case: TestCase, resolved: ResolvedConfig, settings: RunSettings,
             artifact_paths: tuple[str, ...] = (), handler: StartedHandler | None = None,
             artifacts: Mapping[str, bytes] | None = None) -> TestOutcome:
    """`handler`: this test's real handler, already started (see `execution.prefetch`). Everything the test runs
    (mocks, handlers, scripts, evaluators, judges, invokers) is bounded by its deadline, enforced from here: at
    the deadline the test FAILs `timed out after Ns` whatever still blocks, and the run goes on."""
    started = time.perf_counter()
    deadline = test_deadline(case, settings)
    if not _runs_user_code(case, resolved):  # only our own code in this process (a handler has its keeper)
        outcome = _run_case(case, resolved, settings, artifact_paths, handler, artifacts, deadline)
        return strictly(outcome) if settings.strict else outcome
    try:
        with watchdog.armed(case.test_id, deadline.seconds):  # the deadline, also from outside: C code holding the GIL
            outcome = deadline.run(_run_case, case, resolved, settings, artifact_paths, handler, artifacts,
                                   deadline, what="")
    except TimedOut as exc:
        if handler is not None:
            handler.stop()  # (the deadline's stoppers already did, if its wait had begun)
        late = exc.late[1] if exc.late is not None and exc.late[0] else None
        if isinstance(late, TestOutcome) and late.status == "fail":  # its own words: e.g. which turn hung
            return strictly(late) if settings.strict else late
        outcome = TestOutcome(status="fail", score=0.0, evidence=(_check("deadline", False, str(exc)),),
                              duration_s=time.perf_counter() - started)
    return strictly(outcome) if settings.strict else outcome


def _run_case(case: TestCase, resolved: ResolvedConfig, settings: RunSettings, artifact_paths: tuple[str, ...],
              handler: StartedHandler | None, artifacts: Mapping[str, bytes] | None,
              deadline: Deadline) -> TestOutcome:
    if case.kind == "capability":
        return run_capability_test(case, resolved, settings, artifact_paths, artifacts)
    if case.kind == "tool":
        return run_tool_test(case, resolved, settings, handler)
    if settings.invoker is None:
        return TestOutcome(status="not_runnable", score=0.0, skip_reason=NOT_RUNNABLE)
    from open_agent_compiler.testing.agent_runner import run_agent_test  # imported only when agent tests run
    return run_agent_test(case, resolved, settings, settings.invoker, deadline)
