"""`regex`: `re.search(pattern, text)` finds a match in the target's text (non-strings as sorted-key JSON)."""

import re
from typing import Literal

from pydantic import Field, model_validator

from open_agent_compiler.model.core.evaluator import EvaluationContext, Evaluator, EvaluatorResult
from open_agent_compiler.testing.evaluators._show import search_text, show

RegexFlag = Literal["IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII"]


class RegexEvaluator(Evaluator):
    """`flags` are `re` flag names. An invalid pattern is rejected when the evaluator is defined.

    Skips when there is no target (`None`).
    """

    kind: Literal["regex"] = "regex"
    pattern: str = Field(min_length=1)
    flags: tuple[RegexFlag, ...] = ()

    @model_validator(mode="after")
    def _compiles(self) -> "RegexEvaluator":
        try:
            self.compiled()
        except re.error as exc:
            raise ValueError(f"regex {self.pattern!r} does not compile: {exc}") from exc
        return self

    def compiled(self) -> re.Pattern[str]:
        value = 0
        for name in self.flags:
            value |= getattr(re, name)
        return re.compile(self.pattern, value)

    def evaluate(self, context: EvaluationContext) -> EvaluatorResult:
        if context.target is None:
            return self.skip("no target to search")
        text = search_text(context.target)
        match = self.compiled().search(text)
        if match is None:
            return self.result(False, f"pattern {show(self.pattern)} has no match in {show(text)}")
        return self.result(True, f"pattern {show(self.pattern)} matched {show(match.group(0))} at {match.start()}")
