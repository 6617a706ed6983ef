"""Run one agent test through an invoker: turns in one session, per-turn expectations and evaluators, then the
test's own evaluators over the whole conversation, all within `AgentTest.timeout_s`."""

import time
from typing import Any

from open_agent_compiler.model.core.evaluator import EvaluationContext, EvaluatorResult, ToolCall
from open_agent_compiler.model.core.test_model import AgentTest
from open_agent_compiler.model.registry import ResolvedConfig
from open_agent_compiler.testing.discovery import TestCase
from open_agent_compiler.testing.evaluation import aggregate, run_evaluators
from open_agent_compiler.testing.evaluators.path_order import matched_prefix
from open_agent_compiler.testing.evaluators.tool_called import trajectory_names
from open_agent_compiler.testing.invokers.protocol import (CompiledAgent, Deadline, Invoker, InvokerError,
                                                           InvokerNotRunnable, ToolDispatcher, TurnResult)
from open_agent_compiler.testing.mocks import MockSession
from open_agent_compiler.history.log import TestOutcome


def _check(name: str, passed: bool, evidence: str) -> EvaluatorResult:
    return EvaluatorResult(evaluator_kind="agent", name=name, passed=passed, score=1.0 if passed else 0.0,
                           evidence=evidence)


def expected_calls_check(index: int, expected: tuple[str, ...], trajectory: tuple[ToolCall, ...]) -> EvaluatorResult:
    """`expected` must occur in order (other calls may come between) in the turn's trajectory."""
    names = [call.tool_name for call in trajectory]
    matched = matched_prefix(expected, names)
    seen = f"trajectory: {trajectory_names(trajectory)}"
    if matched == len(expected):
        return _check(f"turn {index}: expected_tool_calls", True, f"{' → '.join(expected)} called in order; {seen}")
    missing = expected[matched]
    after = f" after {expected[matched - 1]!r}" if matched else ""
    return _check(f"turn {index}: expected_tool_calls", False,
                  f"expected call {missing!r}{after} was not made; {seen}")


def _named(results: list[EvaluatorResult], prefix: str) -> list[EvaluatorResult]:
    return [r.model_copy(update={"name": f"{prefix}{r.name}"}) for r in results]


def compiled_agent(case: TestCase, resolved: ResolvedConfig, settings: Any) -> CompiledAgent:
    agent = resolved.agent(case.slot or "")
    model = agent.model_parameters.model_name if agent.model_parameters else None
    return CompiledAgent(dialect=settings.dialect, build_dir=settings.build_dir, project_root=settings.project_root,
                         slot=agent.slot, compiled_name=agent.compiled_name, primary=agent.primary, model=model,
                         tools={reachable.tool.name: reachable.tool for reachable in agent.tools})


def _with_call_errors(checks: list[EvaluatorResult], trajectory: tuple[ToolCall, ...]) -> list[EvaluatorResult]:
    """A failing check of a turn also says which of the turn's calls failed and why (a harness refusing an
    `ask` command, a broken mock): often the reason the check failed."""
    errors = [f"{call.tool_name}: {' '.join(call.error.split())}" for call in trajectory if call.error]
    if not errors:
        return checks
    note = "; failed calls: " + "; ".join(errors)
    return [check if check.passed or check.skipped else check.model_copy(update={"evidence": check.evidence + note})
            for check in checks]


def run_agent_test(case: TestCase, resolved: ResolvedConfig, settings: Any, invoker: Invoker,
                   deadline: Deadline | None = None) -> TestOutcome:
    """`settings`: the run's RunSettings (project_root, build_dir, dialect, timeout, hermetic, judge);
    `deadline`: the test's (`timeout_s`), which `runner.run_case` enforces around this call."""
    started = time.perf_counter()
    test = case.test
    assert isinstance(test, AgentTest)
    agent = compiled_agent(case, resolved, settings)
    profile = resolved.mock_profiles.get(case.mock_profile) if case.mock_profile else None
    dispatcher = ToolDispatcher(agent.tools, profile, MockSession(project_root=settings.project_root),
                                hermetic=settings.hermetic, timeout=settings.timeout)
    deadline = deadline or Deadline(test.timeout_s)
    results: list[EvaluatorResult] = []
    turns: list[TurnResult] = []
    index = 0
    try:
        with invoker.session(agent, test, dispatcher, deadline) as session:
            for index, turn in enumerate(test.conversation(), start=1):
                result = session.turn(index, turn.prompt)
                turns.append(result)
                checks = []
                if turn.expected_tool_calls:
                    checks.append(expected_calls_check(index, turn.expected_tool_calls, result.trajectory))
                context = EvaluationContext(target=result.text, trajectory=result.trajectory, judge=settings.judge)
                checks += _named(run_evaluators(turn.evaluators, context), f"turn {index}: ")
                results += _with_call_errors(checks, result.trajectory)
    except InvokerNotRunnable as exc:
        return TestOutcome(status="not_runnable", score=0.0, skip_reason=str(exc),
                           duration_s=time.perf_counter() - started)
    except InvokerError as exc:
        where = f"turn {index}: " if index else ""
        results.append(_check("invoker", False, f"{where}{' '.join(str(exc).split())}"))
        return _finish(results, started, turns)
    calls = tuple(call for result in turns for call in result.trajectory)
    text = "\n".join(result.text for result in turns)
    context = EvaluationContext(target=text, trajectory=calls, judge=settings.judge)
    results += run_evaluators(test.evaluators, context)
    return _finish(results, started, turns)


def _finish(results: list[EvaluatorResult], started: float, turns: list[TurnResult]) -> TestOutcome:
    duration = time.perf_counter() - started
    calls = tuple(tuple(call.tool_name for call in turn.trajectory) for turn in turns)
    if not results:  # every turn ran and nothing was asserted: the conversation completing is the check
        return TestOutcome(status="pass", score=1.0, duration_s=duration, turns=calls)
    status, score = aggregate(results)
    reason = None
    if status == "skipped":
        reason = "every evaluator skipped: " + "; ".join(f"{r.name}: {r.evidence}" for r in results)
    return TestOutcome(status=status, score=score, evidence=tuple(results), skip_reason=reason, duration_s=duration,
                       turns=calls)
