"""The evaluator registry: the one table of kinds, plus running a test's evaluators and combining their results.

Adding a kind = one module under `testing/evaluators/` and one import + table line here. Importing this module
registers every kind with `Evaluator`, so `Evaluator.model_validate({"kind": ...})` (and tests validated from
dicts) produce the right subclass.
"""

import math
from collections.abc import Iterable
from typing import Literal

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import truncate
from open_agent_compiler.testing.evaluators.equals import EqualsEvaluator
from open_agent_compiler.testing.evaluators.fact_recall import FactRecallEvaluator
from open_agent_compiler.testing.evaluators.json_path import JsonPathEvaluator
from open_agent_compiler.testing.evaluators.llm_judge import LLMJudgeEvaluator
from open_agent_compiler.testing.evaluators.path_order import PathOrderEvaluator
from open_agent_compiler.testing.evaluators.permission_absent import PermissionAbsentEvaluator
from open_agent_compiler.testing.evaluators.permission_present import PermissionPresentEvaluator
from open_agent_compiler.testing.evaluators.regex import RegexEvaluator
from open_agent_compiler.testing.evaluators.substring import SubstringEvaluator
from open_agent_compiler.testing.evaluators.tool_called import ToolCalledEvaluator
from open_agent_compiler.testing.evaluators.tool_not_called import ToolNotCalledEvaluator
from open_agent_compiler.testing.run_context import EvaluationResult, RunContext, ToolCallRecord

EVALUATORS: dict[str, type[Evaluator]] = {
    "equals": EqualsEvaluator,
    "substring": SubstringEvaluator,
    "regex": RegexEvaluator,
    "json_path": JsonPathEvaluator,
    "tool_called": ToolCalledEvaluator,
    "tool_not_called": ToolNotCalledEvaluator,
    "path_order": PathOrderEvaluator,
    "permission_present": PermissionPresentEvaluator,
    "permission_absent": PermissionAbsentEvaluator,
    "llm_judge": LLMJudgeEvaluator,
    "fact_recall": FactRecallEvaluator,
}

AggregateStatus = Literal["pass", "fail", "skipped"]

__all__ = [
    "EVALUATORS",
    "AggregateStatus",
    "EqualsEvaluator",
    "EvaluationResult",
    "FactRecallEvaluator",
    "JsonPathEvaluator",
    "LLMJudgeEvaluator",
    "PathOrderEvaluator",
    "PermissionAbsentEvaluator",
    "PermissionPresentEvaluator",
    "RegexEvaluator",
    "RunContext",
    "SubstringEvaluator",
    "ToolCalledEvaluator",
    "ToolCallRecord",
    "ToolNotCalledEvaluator",
    "aggregate",
    "evaluate",
    "run_evaluator",
    "run_evaluators",
]


def _failure(evaluator: Evaluator, evidence: str) -> EvaluatorResult:
    return EvaluatorResult(
        evaluator_kind=evaluator.kind, name=evaluator.label, passed=False, score=0.0, evidence=truncate(evidence)
    )


def run_evaluator(evaluator: Evaluator, context: EvaluationContext) -> EvaluatorResult:
    """One evaluator's result. Never raises: an exception or a malformed result becomes a FAIL with the reason."""
    try:
        outcome = evaluator.evaluate(context)
    except NotImplementedError:  # a kind with no implementation checks nothing: never a silent skip
        return _failure(evaluator, f"no implementation for evaluator kind {evaluator.kind!r}: it fails here "
                                   "(1.16.5 would skip it)")
    except Exception as exc:
        return _failure(evaluator, f"evaluator raised {type(exc).__name__}: {exc}".replace("\n", " "))
    if not isinstance(outcome, EvaluatorResult):
        return _failure(evaluator, f"evaluator returned {type(outcome).__name__}, not an EvaluatorResult")
    if not math.isfinite(outcome.score) or not 0.0 <= outcome.score <= 1.0:
        return _failure(evaluator, f"evaluator returned score {outcome.score!r} outside [0, 1]: {outcome.evidence}")
    return outcome


def run_evaluators(evaluators: Iterable[Evaluator], context: EvaluationContext) -> tuple[EvaluatorResult, ...]:
    """Every evaluator's result, in order. Never raises."""
    return tuple(run_evaluator(evaluator, context) for evaluator in evaluators)


def aggregate(results: Iterable[EvaluatorResult]) -> tuple[AggregateStatus, float]:
    """(status, score) over the non-skipped results: "pass" if all passed, else "fail"; score = their mean.

    With no non-skipped result (all skipped, or none at all) the status is "skipped" and the score 0.0 —
    the caller decides whether other checks it ran (e.g. a capability test's `must_*` lists) make it a pass.
    """
    counted = [result for result in results if not result.skipped]
    if not counted:
        return "skipped", 0.0
    score = sum(result.score for result in counted) / len(counted)
    status: AggregateStatus = "pass" if all(result.passed for result in counted) else "fail"
    return status, score


def evaluate(evaluator: Evaluator, context: RunContext) -> EvaluationResult:
    """The public package's entry point: one evaluator on one run. Never raises (see `run_evaluator`)."""
    result = run_evaluator(evaluator, context.evaluation_context())
    return EvaluationResult.of(result, evaluator.name or "")
