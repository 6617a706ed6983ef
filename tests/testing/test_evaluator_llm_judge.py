"""llm_judge delegates to a pluggable JudgeClient."""

from typing import Any

from open_agent_compiler.model.core.evaluator import EvaluationContext, JudgeVerdict
from open_agent_compiler.testing.evaluation import LLMJudgeEvaluator


class FixedJudge:
    def __init__(self, score: Any, reasoning: str = "") -> None:
        self.score = score
        self.reasoning = reasoning
        self.seen: list[tuple[str, Any]] = []

    def judge(self, *, criteria: str, target: Any) -> JudgeVerdict:
        self.seen.append((criteria, target))
        return JudgeVerdict(score=self.score, reasoning=self.reasoning)


class BrokenJudge:
    def judge(self, *, criteria: str, target: Any) -> JudgeVerdict:
        raise RuntimeError("rate limited")


class SloppyJudge:
    def judge(self, *, criteria: str, target: Any) -> Any:
        return {"verdict": "great"}


EVALUATOR = LLMJudgeEvaluator(criteria="answers politely", pass_threshold=0.6)


def test_judge_receives_criteria_and_target_and_its_score_is_used() -> None:
    judge = FixedJudge(0.8, "friendly tone")
    result = EVALUATOR.evaluate(EvaluationContext(target="Hello!", judge=judge))
    assert judge.seen == [("answers politely", "Hello!")]
    assert result.passed and result.score == 0.8 and "friendly tone" in result.evidence


def test_score_below_threshold_fails_and_at_threshold_passes() -> None:
    below = EVALUATOR.evaluate(EvaluationContext(target="x", judge=FixedJudge(0.59)))
    assert not below.passed and below.score == 0.59 and "<" in below.evidence
    assert EVALUATOR.evaluate(EvaluationContext(target="x", judge=FixedJudge(0.6))).passed


def test_default_threshold_is_one_half() -> None:
    evaluator = LLMJudgeEvaluator(criteria="c")
    assert evaluator.evaluate(EvaluationContext(target="x", judge=FixedJudge(0.5))).passed
    assert not evaluator.evaluate(EvaluationContext(target="x", judge=FixedJudge(0.49))).passed


def test_out_of_range_scores_are_clamped() -> None:
    high = EVALUATOR.evaluate(EvaluationContext(target="x", judge=FixedJudge(7.0)))
    low = EVALUATOR.evaluate(EvaluationContext(target="x", judge=FixedJudge(-2.0)))
    assert (high.passed, high.score, low.passed, low.score) == (True, 1.0, False, 0.0)


def test_raising_judge_fails_with_the_exception_in_evidence() -> None:
    result = EVALUATOR.evaluate(EvaluationContext(target="x", judge=BrokenJudge()))
    assert not result.passed and not result.skipped and result.score == 0.0
    assert "RuntimeError: rate limited" in result.evidence


def test_judge_without_a_score_fails() -> None:
    result = EVALUATOR.evaluate(EvaluationContext(target="x", judge=SloppyJudge()))
    assert not result.passed and "no finite score" in result.evidence


def test_skips_without_judge_or_target() -> None:
    no_judge = EVALUATOR.evaluate(EvaluationContext(target="x"))
    assert no_judge.skipped and "no judge" in no_judge.evidence
    judge = FixedJudge(1.0)
    no_target = EVALUATOR.evaluate(EvaluationContext(judge=judge))
    assert no_target.skipped and judge.seen == []
