"""run_evaluators never raises; aggregate combines results."""

from typing import Literal

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluation import (
    EqualsEvaluator,
    LLMJudgeEvaluator,
    SubstringEvaluator,
    aggregate,
    run_evaluators,
)


class ExplodingEvaluator(Evaluator):
    kind: Literal["test_exploding"] = "test_exploding"

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        raise KeyError("boom\nsecond line")


class OutOfRangeEvaluator(Evaluator):
    kind: Literal["test_out_of_range"] = "test_out_of_range"

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        return self.result(True, "too good", score=3.0)


# keep these test-only kinds out of the shared registry other tests may inspect
Evaluator.kinds.pop("test_exploding")
Evaluator.kinds.pop("test_out_of_range")


def result(passed: bool, score: float, skipped: bool = False) -> EvaluatorResult:
    return EvaluatorResult(evaluator_kind="k", name="n", passed=passed, score=score, skipped=skipped)


def test_run_evaluators_keeps_order_and_turns_exceptions_into_failures() -> None:
    evaluators = (
        EqualsEvaluator(expected="hi", name="greeting"),
        ExplodingEvaluator(),
        OutOfRangeEvaluator(),
        SubstringEvaluator(needle="h"),
    )
    results = run_evaluators(evaluators, EvaluationContext(target="hi"))
    assert [r.name for r in results] == ["greeting", "test_exploding", "test_out_of_range", "substring"]
    assert [r.passed for r in results] == [True, False, False, True]
    assert "KeyError" in results[1].evidence and "boom" in results[1].evidence and "\n" not in results[1].evidence
    assert "outside [0, 1]" in results[2].evidence


def test_aggregate_pass_fail_and_mean_of_non_skipped_scores() -> None:
    assert aggregate([result(True, 1.0), result(True, 0.5), result(True, 0.0, skipped=True)]) == ("pass", 0.75)
    assert aggregate([result(True, 1.0), result(False, 0.0)]) == ("fail", 0.5)
    assert aggregate([result(False, 0.9)]) == ("fail", 0.9)


def test_aggregate_all_skipped_or_nothing_is_skipped() -> None:
    assert aggregate([result(True, 0.0, skipped=True)]) == ("skipped", 0.0)
    assert aggregate([]) == ("skipped", 0.0)


def test_end_to_end_judge_skip_does_not_fail_the_test() -> None:
    results = run_evaluators(
        [SubstringEvaluator(needle="ok"), LLMJudgeEvaluator(criteria="c")], EvaluationContext(target="ok")
    )
    assert aggregate(results) == ("pass", 1.0)
