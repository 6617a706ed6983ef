"""`fact_recall`: graded retrieval — the score is the fraction of `facts` found in the target's text; any
`forbidden` string found zeroes the score and fails (a hallucination guard)."""

from typing import Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import search_text, show, truncate

_TOLERANCE = 1e-9


class FactRecallEvaluator(Evaluator):
    """Facts are plain substrings, matched case-insensitively unless `case_sensitive`. With no facts the recall
    is 1.0 (only `forbidden` is checked). Passes when the score reaches `pass_threshold` (default: all facts).
    Skips when there is no target (`None`); a non-string target is searched as sorted-key JSON."""

    kind: Literal["fact_recall"] = "fact_recall"
    facts: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _well_formed(self) -> "FactRecallEvaluator":
        if not self.facts and not self.forbidden:
            raise ValueError("fact_recall needs at least one fact or forbidden string")
        if any(not item for item in (*self.facts, *self.forbidden)):
            raise ValueError("fact_recall facts and forbidden strings must be non-empty")
        return self

    def _fold(self, text: str) -> str:
        return text if self.case_sensitive else text.casefold()

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.target is None:
            return self.skip("no target to search")
        text = self._fold(search_text(context.target))
        recalled = [fact for fact in self.facts if self._fold(fact) in text]
        missing = [fact for fact in self.facts if self._fold(fact) not in text]
        hits = [word for word in self.forbidden if self._fold(word) in text]
        recall = len(recalled) / len(self.facts) if self.facts else 1.0
        score = 0.0 if hits else recall
        passed = not hits and score >= self.pass_threshold - _TOLERANCE
        parts = [f"recalled {len(recalled)}/{len(self.facts)} fact(s), threshold {self.pass_threshold:.3f}"]
        if missing:
            parts.append(f"missing: {truncate(', '.join(show(fact, 60) for fact in missing))}")
        if hits:
            parts.append(f"forbidden present (score zeroed): {truncate(', '.join(show(word, 60) for word in hits))}")
        return self.result(passed, "; ".join(parts), score=score)
