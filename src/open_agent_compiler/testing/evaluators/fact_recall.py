"""`fact_recall`: graded retrieval — the score is the fraction of `facts` found in the target's text; any
`forbidden` string found zeroes the score and fails (a hallucination guard)."""

from typing import Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult, FactSpec
from open_agent_compiler.testing.evaluators._show import NO_TARGET, search_text, show, truncate

_TOLERANCE = 1e-9


class FactRecallEvaluator(Evaluator):
    """A fact is a `FactSpec` (recalled when any of its spellings appears, case-insensitively unless its
    `case_sensitive`) or a plain string (one spelling, case-sensitive when the evaluator's `case_sensitive`).
    `forbidden` strings are matched case-sensitively when `forbidden_case_sensitive` (or `case_sensitive`).
    With no facts the recall is 1.0 (only `forbidden` is checked). Passes when the score reaches `pass_threshold`
    (default: all facts). Skips when there is no target (`None`); a non-string target is searched as sorted-key
    JSON and as its `str()`."""

    kind: Literal["fact_recall"] = "fact_recall"
    facts: tuple[FactSpec | str, ...] = ()
    forbidden: tuple[str, ...] = ()
    forbidden_case_sensitive: bool = False
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _well_formed(self) -> "FactRecallEvaluator":
        if not self.facts and not self.forbidden:
            raise ValueError("fact_recall needs at least one fact or forbidden string")
        if any(not item for item in (*self.facts, *self.forbidden)):
            raise ValueError("fact_recall facts and forbidden strings must be non-empty")
        return self

    def specs(self) -> tuple[FactSpec, ...]:
        """Every fact as a FactSpec."""
        return tuple(
            fact if isinstance(fact, FactSpec) else FactSpec(any_of=(fact,), case_sensitive=self.case_sensitive)
            for fact in self.facts
        )

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.target is None:
            return self.skip(NO_TARGET)
        # A non-string output is searched as sorted-key JSON and also in its Python str() form, the text 1.16.5
        # searches, so a fact written for either (`"status": "done"` / `'status': 'done'`) is found.
        texts = [search_text(context.target)]
        if not isinstance(context.target, str):
            texts.append(str(context.target))
        folded = [text.casefold() for text in texts]

        def found(word: str, case_sensitive: bool) -> bool:
            return any(word in text for text in texts) if case_sensitive else any(
                word.casefold() in text for text in folded)

        recalled: list[str] = []  # the spelling that was found
        missing: list[str] = []  # the first spelling of a fact not found
        for fact in self.specs():
            spelling = next((a for a in fact.any_of if found(a, fact.case_sensitive)), None)
            if spelling is None:
                missing.append(fact.any_of[0])
            else:
                recalled.append(spelling)
        strict = self.forbidden_case_sensitive or self.case_sensitive
        hits = [word for word in self.forbidden if found(word, strict)]
        recall = len(recalled) / len(self.facts) if self.facts else 1.0
        score = 0.0 if hits else recall
        passed = not hits and score >= self.pass_threshold - _TOLERANCE
        parts = [f"recalled {len(recalled)}/{len(self.facts)} fact(s), threshold {self.pass_threshold:.3f}"]
        if missing:
            parts.append(f"missing: {truncate(', '.join(show(fact, 60) for fact in missing))}")
        if hits:
            parts.append(f"forbidden present (score zeroed): {truncate(', '.join(show(word, 60) for word in hits))}")
        details: dict[str, list[str]] = {"fabricated": hits} if hits else {"recalled": recalled, "missing": missing}
        return self.result(passed, "; ".join(parts), score=score, details=details if hits or self.facts else {})
