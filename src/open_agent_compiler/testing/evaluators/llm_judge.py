"""`llm_judge`: a pluggable `JudgeClient` scores the target against `criteria`; `pass_threshold` gates."""

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Literal

from pydantic import Field

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import show, truncate


class LLMJudgeEvaluator(Evaluator):
    """Skips when no judge is wired or there is no target. A judge that raises, or returns no finite numeric
    `score`, fails with that in the evidence. Scores outside [0, 1] are clamped."""

    kind: Literal["llm_judge"] = "llm_judge"
    criteria: str = Field(min_length=1)
    pass_threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.judge is None:
            return self.skip("no judge wired")
        if context.target is None:
            return self.skip("no target to judge")
        try:
            verdict = context.judge.judge(criteria=self.criteria, target=context.target)
        except Exception as exc:
            return self.result(False, truncate(f"judge raised {type(exc).__name__}: {exc}"))
        if isinstance(verdict, Mapping):  # the {pass, score, reasoning} form (see testing.judges)
            verdict = SimpleNamespace(score=verdict.get("score"), reasoning=verdict.get("reasoning", ""),
                                      passed=verdict.get("pass", verdict.get("passed")))
        raw = getattr(verdict, "score", None)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            return self.result(False, f"judge returned no finite score: {show(repr(verdict))}")
        score = min(1.0, max(0.0, float(raw)))
        passed = score >= self.pass_threshold and getattr(verdict, "passed", None) is not False
        relation = "≥" if score >= self.pass_threshold else "<"
        reasoning = str(getattr(verdict, "reasoning", "") or "")
        evidence = f"judge score {score:.3f} {relation} threshold {self.pass_threshold:.3f}"
        if getattr(verdict, "passed", None) is False:
            evidence += " (judge said fail)"
        if reasoning:
            evidence += f": {truncate(reasoning)}"
        return self.result(passed, evidence, score=score)
