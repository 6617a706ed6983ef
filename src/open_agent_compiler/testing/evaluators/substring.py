"""`substring`: `needle` occurs in the target's text (a non-string target is searched as sorted-key JSON)."""

from typing import Literal

from pydantic import Field

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import NO_TARGET, excerpt, search_text, show


class SubstringEvaluator(Evaluator):
    """Skips when there is no target (`None`)."""

    kind: Literal["substring"] = "substring"
    needle: str = Field(min_length=1)
    case_sensitive: bool = True

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.target is None:
            return self.skip(NO_TARGET)
        text = search_text(context.target)
        haystack, needle = (text, self.needle) if self.case_sensitive else (text.casefold(), self.needle.casefold())
        mode = "case-sensitive" if self.case_sensitive else "case-insensitive"
        position = haystack.find(needle)
        details = {"case_sensitive": self.case_sensitive}
        if position < 0:
            return self.result(False, f"needle {show(self.needle)} ({mode}) not found in {show(text)}", details=details)
        found = excerpt(text, position, position + len(needle))
        return self.result(True, f"needle {show(self.needle)} ({mode}) found: {found}", details=details)
