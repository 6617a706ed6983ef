"""`llm_judge`: a pluggable `JudgeClient` scores the target against `criteria`; `pass_threshold` gates."""

import inspect
import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import show, truncate


class LLMJudgeEvaluator(Evaluator):
    """Skips when no judge is wired or there is no target. A judge that raises, or returns no finite numeric
    `score`, fails with that in the evidence. Scores outside [0, 1] are clamped.

    The judge returns a verdict with `score` (+ `reasoning`) attributes, or a mapping with "score", "reasoning"
    and optionally "pass" (which then decides instead of the threshold). A judge whose `judge` takes a `model`
    keyword is asked with `judge_model`."""

    kind: Literal["llm_judge"] = "llm_judge"
    criteria: str = Field(min_length=1)
    judge_model: str | None = None  # asked of the judge when set; its default model otherwise
    pass_threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.judge is None:
            return self.skip("no judge wired")
        if context.target is None:
            return self.skip("no target to judge")
        try:
            verdict = context.judge.judge(criteria=self.criteria, target=context.target, **self._model_kwarg(context))
        except Exception as exc:
            return self.result(False, truncate(f"judge raised {type(exc).__name__}: {exc}"))
        field = verdict.get if isinstance(verdict, Mapping) else lambda key, default=None: getattr(verdict, key, default)
        raw = field("score", None)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            return self.result(False, f"judge returned no finite score: {show(repr(verdict))}")
        score = min(1.0, max(0.0, float(raw)))
        explicit = field("pass", field("passed", None))
        if explicit is not None and not isinstance(explicit, bool):  # "false" is a non-empty string, not a fail
            return self.result(False, f"judge's pass is not a boolean: {show(repr(verdict))}")
        passed = score >= self.pass_threshold if explicit is None else bool(explicit)
        reasoning = str(field("reasoning", "") or "")
        relation = "≥" if score >= self.pass_threshold else "<"
        evidence = f"judge score {score:.3f} {relation} threshold {self.pass_threshold:.3f}"
        if explicit is not None:
            evidence += f", judge says {'pass' if passed else 'fail'}"
        if reasoning:
            evidence += f": {truncate(reasoning)}"
        response = dict(verdict) if isinstance(verdict, Mapping) else {"score": raw, "reasoning": reasoning}
        details = {"criteria": self.criteria, "pass_threshold": self.pass_threshold, "judge_response": response}
        return self.result(passed, evidence, score=score, details=details)

    def _model_kwarg(self, context: EvaluationContext) -> dict[str, Any]:
        if self.judge_model is None:
            return {}
        try:
            parameters = inspect.signature(context.judge.judge).parameters.values()
        except (TypeError, ValueError):
            return {}
        takes = any(p.name == "model" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
        return {"model": self.judge_model} if takes else {}
